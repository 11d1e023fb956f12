// Task decoding checked against independent references: Apple's register
// print of the sigmoid task, words stated in the docs, and hand-decoded words.
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include <gtest/gtest.h>

#include "ane/dump.h"
#include "ane/task.h"
#include "support.h"

namespace ane {
namespace {

Program open(const std::string& name) {
  auto p = open_program(test::corpus_hwx_path(name));
  EXPECT_TRUE(p.ok()) << name << ": " << (p ? "" : p.error().str());
  return p ? std::move(p).value() : Program{};
}

uint32_t field(const Task& t, const char* name) {
  auto v = t.regs.get(name);
  EXPECT_TRUE(v.ok()) << name;
  return v ? *v : 0xdeadbeef;
}

// Reads little-endian word `index` of the task straight from the file bytes:
// an independent path to the same values.
uint32_t file_word(const std::string& name, uint64_t offset) {
  const auto b = test::read_or_die(test::corpus_hwx_path(name));
  return b[offset] | b[offset + 1] << 8 | b[offset + 2] << 16 | static_cast<uint32_t>(b[offset + 3]) << 24;
}

TEST(Tasks, EveryCorpusTaskHasSevenStreamsOf0x274Bytes) {
  ANE_REQUIRE_CORPUS();
  const std::vector<uint32_t> expect_addr{0x1F800, 0x0, 0x13800, 0x4800, 0x8800, 0xC800, 0x17800};
  const std::vector<uint32_t> expect_count{62, 16, 28, 18, 4, 5, 7};
  for (const auto& name : test::corpus_hwx_names()) {
    SCOPED_TRACE(name);
    const Program p = open(name);
    ASSERT_FALSE(p.tasks.empty());
    for (const auto& t : p.tasks) {
      EXPECT_EQ(t.size, 0x274u);
      ASSERT_EQ(t.streams.size(), 7u);
      for (size_t i = 0; i < 7; ++i) {
        EXPECT_EQ(t.streams[i].address, expect_addr[i]);
        EXPECT_EQ(t.streams[i].count, expect_count[i]);
      }
      EXPECT_TRUE(t.regs.unknown_words().empty());
    }
  }
}

TEST(Tasks, EncodeReproducesEveryCorpusTask) {
  ANE_REQUIRE_CORPUS();
  for (const auto& name : test::corpus_hwx_names()) {
    SCOPED_TRACE(name);
    const Program p = open(name);
    const auto* text = p.hwx->find_section("__TEXT", "__text");
    const auto bytes = p.hwx->section_data(*text);
    for (const auto& t : p.tasks) {
      const Bytes enc = encode_task(t.regs, t.streams);
      ASSERT_EQ(enc.size(), t.size);
      EXPECT_TRUE(std::equal(enc.begin(), enc.end(), bytes.begin() + t.text_offset));
      // The v4.2.1 default layout is what Apple wrote.
      EXPECT_TRUE(encode_task(t.regs, default_stream_layout()) == enc);
    }
  }
}

TEST(Tasks, ConcatChainOfTwo) {
  ANE_REQUIRE_CORPUS();
  const Program p = open("concat");
  ASSERT_EQ(p.tasks.size(), 2u);
  EXPECT_EQ(p.tasks[0].text_offset, 0u);
  EXPECT_EQ(p.tasks[1].text_offset, 0x300u);
  EXPECT_EQ(p.tasks[1].file_offset, 0x4300u);
  EXPECT_EQ(field(p.tasks[0], "Header[7].NextPointer"), 0x300u);
  EXPECT_EQ(field(p.tasks[0], "Header[1].NextSize"), 0x9cu);
  EXPECT_EQ(field(p.tasks[0], "Header[8].TBE"), 1u);
  EXPECT_EQ(field(p.tasks[0], "Header[0].EON"), 0u);
  EXPECT_EQ(field(p.tasks[1], "Header[0].EON"), 1u);
  EXPECT_EQ(field(p.tasks[1], "Header[0].LNID"), 1u);
  EXPECT_EQ(field(p.tasks[1], "Header[0].TID"), 1u);
  EXPECT_EQ(field(p.tasks[1], "Header[7].NextPointer"), 0u);
  EXPECT_EQ(field(p.tasks[1], "Header[4].DebugLogEvents"), 0x6au);  // 0x68 + 2 on the last task
  EXPECT_EQ(field(p.tasks[1], "Common.TaskInfo.TaskID"), 0u);
  // The last piece has the planar alias bits clear.
  EXPECT_EQ(field(p.tasks[1], "L2.SourceCfg.AliasPlanarSrc"), 0u);
  EXPECT_EQ(field(p.tasks[0], "L2.SourceCfg.AliasPlanarSrc"), 1u);
}

TEST(Tasks, HeaderWordsStatedInTheDocs) {
  ANE_REQUIRE_CORPUS();
  // plist-to-hwx.md 6.1: conv word 8 = 0x03024025, sum word 8 = 0x00024966.
  const Program conv = open("conv");
  EXPECT_EQ(conv.tasks[0].regs.header[8], 0x03024025u);
  EXPECT_EQ(field(conv.tasks[0], "Header[8].RBase0"), 5u);
  EXPECT_EQ(field(conv.tasks[0], "Header[8].WBase"), 4u);
  EXPECT_EQ(field(conv.tasks[0], "Header[8].ENE"), 3u);
  EXPECT_EQ(field(conv.tasks[0], "Header[9].KBase0"), 1u);
  EXPECT_EQ(field(conv.tasks[0], "Header[9].KBE0"), 1u);
  const Program sum = open("sum");
  EXPECT_EQ(sum.tasks[0].regs.header[8], 0x00024966u);
  EXPECT_EQ(field(sum.tasks[0], "Header[8].RBase0"), 6u);
  EXPECT_EQ(field(sum.tasks[0], "Header[8].RBase1"), 5u);
  EXPECT_EQ(field(sum.tasks[0], "Header[8].RBE1"), 1u);
  EXPECT_EQ(field(sum.tasks[0], "Header[6].SrcLoc"), 1u);
  EXPECT_EQ(sum.tasks[0].regs.header[6], 0x30009800u);
  // 6.3: Common.Cfg words.
  EXPECT_EQ(conv.tasks[0].regs.word(0x34), 0x04144405u);
  EXPECT_EQ(open("gemm").tasks[0].regs.word(0x34), 0x00244405u);
  EXPECT_EQ(open("relu").tasks[0].regs.word(0x34), 0x04010101u);
  EXPECT_EQ(sum.tasks[0].regs.word(0x34), 0x33u);
}

TEST(Tasks, ConvRegistersDecodedByHand) {
  ANE_REQUIRE_CORPUS();
  const Program p = open("conv");
  const Task& t = p.tasks[0];
  // Word at task offset 0x144 (Common.ConvCfg, 0x1C) read straight from the file.
  const uint32_t convcfg = file_word("conv", 0x4000 + 0x144);
  EXPECT_EQ(t.regs.word(0x1C), convcfg);
  EXPECT_EQ(field(t, "Common.ConvCfg.Kw"), convcfg & 0x1f);
  EXPECT_EQ(field(t, "Common.ConvCfg.Kh"), (convcfg >> 5) & 0x1f);
  EXPECT_EQ(field(t, "Common.ConvCfg.Oy"), convcfg >> 30);
  EXPECT_EQ(field(t, "Common.Cin.Cin"), 3u);
  EXPECT_EQ(field(t, "Common.Cout.Cout"), 3u);
  for (int i = 0; i < 3; ++i) {
    const std::string lane = "KernelDMASrc.CoeffDMAConfig[" + std::to_string(i) + "]";
    EXPECT_EQ(t.regs.word(0x1F808 + 4 * i), 0x81u);
    EXPECT_EQ(field(t, (lane + ".En").c_str()), 1u);
    EXPECT_EQ(field(t, (lane + ".CacheHint").c_str()), 2u);
    EXPECT_EQ(t.regs.word(0x1F848 + 4 * i), 0x40u * i);  // CoeffBaseAddr: bytes inside __const
    EXPECT_EQ(t.regs.word(0x1F888 + 4 * i), 0x40u);      // CoeffBfrSize
  }
  EXPECT_EQ(field(t, "KernelDMASrc.CoeffDMAConfig[3].En"), 0u);
  EXPECT_EQ(t.regs.word(0x1F800), 0x40u);
  EXPECT_EQ(t.regs.word(0x13838), 0x01002031u);  // TileDMASrc.Fmt
  EXPECT_EQ(t.regs.word(0x17818), 0x01302031u);  // TileDMADst.Fmt
  EXPECT_EQ(field(t, "TileDMADst.Fmt.ZeroPadFirst"), 1u);
}

TEST(Tasks, PlanarEngineWordsOfSum) {
  ANE_REQUIRE_CORPUS();
  const Program p = open("sum");
  const Task& t = p.tasks[0];
  EXPECT_EQ(t.regs.word(0x8800), 0x80000u);
  EXPECT_EQ(t.regs.word(0x8804), 0x3c000000u);
  EXPECT_EQ(t.regs.word(0x8808), 0x3c000000u);
  EXPECT_EQ(t.regs.word(0x880C), 0x3f800000u);
  EXPECT_EQ(t.regs.word(0x13804), 0x33880u);
  EXPECT_EQ(t.regs.word(0x2C), 4u);
  EXPECT_EQ(field(t, "Common.ChCfg.InFmt"), 2u);
  EXPECT_EQ(field(t, "Common.ChCfg.OutFmt"), 2u);
}

// Parses Apple's register print (corpus aneregs-h13-annotated.txt).
std::map<std::string, uint32_t> apple_register_print() {
  std::ifstream in(test::corpus_dir() + "/aneregs-h13-annotated.txt");
  std::map<std::string, uint32_t> out;
  std::regex re(R"(^ane(?:TD|Regs)\.(\S+) = (\d+))");
  std::string line;
  std::smatch m;
  while (std::getline(in, line))
    if (std::regex_search(line, m, re)) out[m[1]] = static_cast<uint32_t>(std::stoul(m[2]));
  return out;
}

TEST(Tasks, SigmoidAgreesWithApplesRegisterPrint) {
  ANE_REQUIRE_CORPUS();
  const auto apple = apple_register_print();
  ASSERT_GT(apple.size(), 150u);
  const Program p = open("sigmoid");
  const Task& t = p.tasks[0];
  // Fields the docs say were set by a later compiler stage than the print.
  const std::set<std::string> later_stage{"Header[0].LNID",
                                          "Header[6].SPL",
                                          "Header[6].TSR",
                                          "Header[6].TSE",
                                          "L2.SourceCfg.AliasConvSrc",
                                          "L2.SourceCfg.AliasConvRslt",
                                          "L2.SourceCfg.AliasPlanarSrc",
                                          "L2.SourceCfg.AliasPlanarRslt",
                                          "L2.ResultCfg.AliasConvSrc",
                                          "L2.ResultCfg.AliasConvRslt",
                                          "L2.ResultCfg.AliasPlanarSrc",
                                          "L2.ResultCfg.AliasPlanarRslt"};
  int compared = 0, agreed = 0, differed_later = 0;
  for (const auto& [name, value] : apple) {
    if (name.find("Spare") != std::string::npos) continue;  // not in the field table
    auto v = t.regs.get(name);
    ASSERT_TRUE(v.ok()) << "field of Apple's print missing from the database: " << name;
    ++compared;
    if (*v == value) {
      ++agreed;
    } else {
      EXPECT_TRUE(later_stage.count(name)) << name << ": file " << *v << ", Apple's print " << value;
      ++differed_later;
    }
  }
  // hwx-format.md 8.1: 168 of 180 agree; the other 12 are the later-stage bits.
  EXPECT_EQ(compared, 180);
  EXPECT_EQ(agreed, 168);
  EXPECT_EQ(differed_later, 12);
}

}  // namespace
}  // namespace ane

namespace ane {
namespace {

// Newer compilers (v9.509) split the KernelDMASrc stream and skip
// CoeffBaseAddr/CoeffBfrSize; decoding by address must still find every
// register the streams do write, wherever they sit in the task.
TEST(Tasks, SplitAndReorderedStreamsDecodeByAddress) {
  ANE_REQUIRE_CORPUS();
  const Program p = open("conv");
  const RegisterImage& regs = p.tasks[0].regs;
  std::vector<RegisterStream> layout{{0x0C800, 5, 0},  {0x1F800, 18, 0}, {0x00000, 16, 0}, {0x13800, 28, 0},
                                     {0x1F8C8, 12, 0}, {0x04800, 18, 0}, {0x08800, 4, 0},  {0x17800, 7, 0}};
  const Bytes bytes = encode_task(regs, layout);
  EXPECT_EQ(bytes.size(), 4u * (10 + 18 + 12 + 16 + 28 + 18 + 4 + 5 + 7 + 8));
  auto t = decode_task(bytes, 0);
  ASSERT_TRUE(t.ok()) << t.error().str();
  ASSERT_EQ(t->streams.size(), layout.size());
  EXPECT_EQ(t->streams[1].task_offset, 0x28u + 4 + 20);
  for (const auto& f : RegisterDatabase::h13().fields()) {
    SCOPED_TRACE(f.name);
    const bool skipped = f.block == Block::KernelDMASrc && f.address >= 0x1F848 && f.address < 0x1F8C8;
    EXPECT_EQ(t->regs.field_written(f), !skipped);
    EXPECT_EQ(t->regs.get(f), skipped ? 0u : regs.get(f));
  }
  // Lane 1's base address is 0x40 in the file and not written here.
  EXPECT_EQ(regs.word(0x1F84C), 0x40u);
  EXPECT_FALSE(t->regs.written(0x1F84C));
}

TEST(Tasks, StreamHeaderEncoding) {
  RegisterImage regs;
  regs.header[0] = 0x02000000;
  regs.set_word(0x13800, 0x33881);
  regs.set_word(0x13804, 7);
  const Bytes b = encode_task(regs, {{0x13800, 2, 0}});
  ASSERT_EQ(b.size(), 0x28u + 12);
  // (count - 1) << 26 | address, little-endian.
  EXPECT_EQ(*ByteView(b).u32(0x28), (1u << 26) | 0x13800);
  EXPECT_EQ(*ByteView(b).u32(0x2c), 0x33881u);
  EXPECT_EQ(*ByteView(b).u32(0x30), 7u);
  auto t = decode_task(b, 0x4000);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->regs, regs);
  // A stream header at an address no block covers lands in unknown_words().
  Bytes odd = b;
  put_u32(odd, 0x28, (1u << 26) | 0x3FFF0);
  t = decode_task(odd, 0x4000);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->regs.unknown_words().size(), 2u);
  EXPECT_EQ(t->regs.unknown_words().at(0x3FFF4), 7u);
  // Too short for the header, or not whole words.
  EXPECT_FALSE(decode_task(Bytes(0x24, 0), 0x4000).ok());
  EXPECT_EQ(decode_task(Bytes(0x2a, 0), 0x4000).error().offset, 0x4000u);
}

}  // namespace
}  // namespace ane

namespace ane {
namespace {

TEST(Tasks, StreamsLongerThan64WordsAreSplit) {
  RegisterImage regs;
  for (uint32_t k = 0; k < 100; ++k) regs.set_word(0x1F800 + 4 * k, k * 3 + 1);
  const Bytes b = encode_task(regs, {{0x1F800, 100, 0}});
  ASSERT_EQ(b.size(), 0x28u + 4 + 64 * 4 + 4 + 36 * 4);
  EXPECT_EQ(*ByteView(b).u32(0x28), (63u << 26) | 0x1F800);
  EXPECT_EQ(*ByteView(b).u32(0x28 + 4 + 256), (35u << 26) | (0x1F800 + 256));
  auto t = decode_task(b, 0);
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->streams.size(), 2u);
  for (uint32_t k = 0; k < 100; ++k) EXPECT_EQ(t->regs.word(0x1F800 + 4 * k), k * 3 + 1) << k;
}

}  // namespace
}  // namespace ane
