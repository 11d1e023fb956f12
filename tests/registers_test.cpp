// The H13 register database against the published field table
// (corpus aneregs.json), the v4.2.1 task layout (hwx-format.md 8.1), the
// register words of the Apple-compiled corpus, and docs/registers.md.
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ane/registers.h"
#include "support.h"

namespace ane {
namespace {

const RegisterDatabase& db() { return RegisterDatabase::h13(); }

// ---- the v4.2.1 task layout, written down independently of the library ------

struct Stream {
  Block block;
  const char* name;
  uint32_t task_offset;  // of the stream header word
  uint32_t base;         // first register address
  uint32_t words;        // data words
};

constexpr Stream kStreams[] = {
    {Block::KernelDMASrc, "KernelDMASrc", 0x028, 0x1F800, 62},
    {Block::Common, "Common", 0x124, 0x00000, 16},
    {Block::TileDMASrc, "TileDMASrc", 0x168, 0x13800, 28},
    {Block::L2, "L2", 0x1dc, 0x04800, 18},
    {Block::PE, "PE", 0x228, 0x08800, 4},
    {Block::NE, "NE", 0x23c, 0x0C800, 5},
    {Block::TileDMADst, "TileDMADst", 0x254, 0x17800, 7},
};
constexpr uint32_t kTaskBytes = 0x274;
constexpr uint32_t kHeaderWords = 10;

struct Location {
  Block block;
  uint32_t address;  // register address (header: 4 * word)
  uint32_t bit;      // inside the 32-bit word
};

// aneregs.json gives (byte offset in the task, bit inside that byte).
bool locate(uint32_t byte, uint32_t bit_in_byte, Location* out) {
  const uint32_t word_offset = byte / 4 * 4;
  const uint32_t bit = (byte - word_offset) * 8 + bit_in_byte;
  if (word_offset < 4 * kHeaderWords) {
    *out = {Block::Header, word_offset, bit};
    return true;
  }
  for (const Stream& s : kStreams) {
    const uint32_t data = s.task_offset + 4;
    if (word_offset >= data && word_offset < data + 4 * s.words) {
      *out = {s.block, s.base + (word_offset - data), bit};
      return true;
    }
  }
  return false;
}

nlohmann::json load_aneregs() {
  std::ifstream f(test::corpus_dir() + "/aneregs.json");
  EXPECT_TRUE(f.good()) << "cannot open aneregs.json";
  return nlohmann::json::parse(f, nullptr, /*allow_exceptions=*/false);
}

std::string strip_prefix(const std::string& name) {
  for (const char* p : {"aneTD.", "aneRegs."}) {
    const std::string prefix = p;
    if (name.rfind(prefix, 0) == 0) return name.substr(prefix.size());
  }
  return name;
}

// ---- aneregs.json ------------------------------------------------------------

TEST(Registers, EveryPublishedFieldMatchesAneregsJson) {
  ANE_REQUIRE_CORPUS();
  const nlohmann::json table = load_aneregs();
  ASSERT_TRUE(table.is_array());
  ASSERT_EQ(table.size(), 258u);

  std::set<std::string> json_names;
  for (const auto& entry : table) {
    const std::string name = strip_prefix(entry[0].get<std::string>());
    const uint32_t byte = entry[1][0].get<uint32_t>();
    const uint32_t bit = entry[1][1].get<uint32_t>();
    const uint32_t width = entry[1][2].get<uint32_t>();
    SCOPED_TRACE(name);
    json_names.insert(name);

    Location loc{};
    ASSERT_TRUE(locate(byte, bit, &loc)) << fmt::format("byte {:#x} is in no stream", byte);
    const FieldInfo* f = db().find(name);
    ASSERT_NE(f, nullptr) << "no database field of that name";
    EXPECT_EQ(f->block, loc.block);
    EXPECT_EQ(f->address, loc.address) << fmt::format("{:#x} vs {:#x}", f->address, loc.address);
    EXPECT_EQ(f->bit, loc.bit);
    EXPECT_EQ(f->width, width);
    EXPECT_EQ(f->confidence, Confidence::Published);
  }
  EXPECT_EQ(json_names.size(), 258u);

  size_t published = 0;
  for (const FieldInfo& f : db().fields()) {
    if (f.confidence != Confidence::Published) continue;
    ++published;
    EXPECT_TRUE(json_names.contains(f.name)) << f.name << " is Published but not in aneregs.json";
  }
  EXPECT_EQ(published, 258u);
}

TEST(Registers, DocumentedAddressesOfPublishedRegisters) {
  // The conversions spelled out in hwx-format.md 8.1 and the brief.
  auto addr = [](const char* name) {
    const FieldInfo* f = db().find(name);
    return f ? f->address : 0xdeadbeefu;
  };
  EXPECT_EQ(addr("Common.InDim.Win"), 0x0u);
  for (uint32_t i = 0; i < 16; ++i) {
    EXPECT_EQ(addr(fmt::format("KernelDMASrc.CoeffDMAConfig[{}].En", i).c_str()), 0x1F808 + 4 * i);
    EXPECT_EQ(addr(fmt::format("KernelDMASrc.CoeffBaseAddr[{}].Addr", i).c_str()), 0x1F848 + 4 * i);
    EXPECT_EQ(addr(fmt::format("KernelDMASrc.CoeffBfrSize[{}].MemBfrSize", i).c_str()),
              0x1F888 + 4 * i);
  }
  EXPECT_EQ(addr("TileDMASrc.Fmt.FmtMode"), 0x13838u);
  EXPECT_EQ(addr("TileDMASrc.PixelOffset[3].Offset"), 0x1385Cu);
  EXPECT_EQ(addr("Header[9].KBE3"), 0x24u);
  EXPECT_EQ(db().find("KernelDMASrc.CoeffDMAConfig[16].En"), nullptr);
}

// ---- blocks and coverage -----------------------------------------------------

TEST(Registers, BlocksFollowTheV421Streams) {
  const auto blocks = db().blocks();
  ASSERT_EQ(blocks.size(), 1 + std::size(kStreams));
  EXPECT_EQ(blocks[0].id, Block::Header);
  EXPECT_STREQ(blocks[0].name, "Header");
  EXPECT_EQ(blocks[0].base, 0u);
  EXPECT_EQ(blocks[0].words, kHeaderWords);
  uint32_t total = 0;
  for (size_t i = 0; i < std::size(kStreams); ++i) {
    const Stream& s = kStreams[i];
    SCOPED_TRACE(s.name);
    EXPECT_EQ(blocks[i + 1].id, s.block);
    EXPECT_STREQ(blocks[i + 1].name, s.name);
    EXPECT_STREQ(block_name(s.block), s.name);
    EXPECT_EQ(blocks[i + 1].base, s.base);
    EXPECT_EQ(blocks[i + 1].words, s.words);
    EXPECT_EQ(db().block(s.block).base, s.base);
    // Streams are packed: header word + data words, back to back.
    const uint32_t next = i + 1 < std::size(kStreams) ? kStreams[i + 1].task_offset : kTaskBytes;
    EXPECT_EQ(s.task_offset + 4 + 4 * s.words, next);
    total += s.words;
  }
  EXPECT_EQ(total, 140u);
  EXPECT_EQ(db().register_count(), 140u);
}

TEST(Registers, EveryWordOfEveryBlockHasAField) {
  size_t words = 0, without_published_field = 0;
  for (const BlockInfo& b : db().blocks()) {
    for (uint32_t k = 0; k < b.words; ++k) {
      const uint32_t address = b.base + 4 * k;
      const auto fields = db().fields_at(b.id, address);
      EXPECT_FALSE(fields.empty()) << fmt::format("{} word {:#x} has no field", b.name, address);
      bool published = false;
      for (const FieldInfo* f : fields) published |= f->confidence == Confidence::Published;
      if (b.id != Block::Header && !published) ++without_published_field;
      ++words;
    }
  }
  EXPECT_EQ(words, 150u);  // 10 header words + 140 registers
  // hwx-format.md 8.1: aneregs.json names no field in 49 of the 140 words.
  EXPECT_EQ(without_published_field, 49u);
  // Whole PE block is among them, and is covered by claimed names.
  for (uint32_t a = 0x8800; a <= 0x880C; a += 4) EXPECT_FALSE(db().fields_at(Block::PE, a).empty());
}

TEST(Registers, FieldsAreWellFormedAndDoNotOverlap) {
  std::set<std::string> names;
  std::map<std::pair<Block, uint32_t>, uint32_t> used;  // bits taken per word
  for (const FieldInfo& f : db().fields()) {
    SCOPED_TRACE(f.name);
    EXPECT_TRUE(names.insert(f.name).second) << "duplicate name";
    EXPECT_GE(f.width, 1);
    EXPECT_LE(f.bit + f.width, 32) << "field crosses a 32-bit word";
    EXPECT_EQ(f.address % 4, 0u);
    const BlockInfo& b = db().block(f.block);
    EXPECT_GE(f.address, b.base);
    EXPECT_LT(f.address, b.base + 4 * b.words) << "field outside its block";
    const std::string expected =
        f.block == Block::Header ? f.reg + "." + f.field
                                 : std::string(block_name(f.block)) + "." + f.reg + "." + f.field;
    EXPECT_EQ(f.name, expected);
    EXPECT_EQ(db().find(f.name), &f);
    const uint64_t wide = ((uint64_t{1} << f.width) - 1) << f.bit;
    const uint32_t mask = static_cast<uint32_t>(wide);
    EXPECT_EQ(mask, f.mask());
    uint32_t& taken = used[{f.block, f.address}];
    EXPECT_EQ(taken & mask, 0u) << fmt::format("overlaps bits {:#010x} of {:#x}", taken & mask,
                                               f.address);
    taken |= mask;
  }
  // fields_at returns every field of the word, in bit order.
  size_t total = 0;
  for (const auto& [key, bits] : used) {
    const auto fields = db().fields_at(key.first, key.second);
    total += fields.size();
    for (size_t i = 1; i < fields.size(); ++i) EXPECT_LT(fields[i - 1]->bit, fields[i]->bit);
  }
  EXPECT_EQ(total, db().fields().size());
}

TEST(Registers, UnnamedWordsFollowTheAddressScheme) {
  const FieldInfo* f = db().find("Common.Unk00020.Value");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->address, 0x20u);
  EXPECT_EQ(f->bit, 0);
  EXPECT_EQ(f->width, 32);
  EXPECT_EQ(f->confidence, Confidence::Unknown);
  ASSERT_NE(db().find("KernelDMASrc.Unk1F800.Value"), nullptr);
  ASSERT_NE(db().find("TileDMASrc.Unk1386C.Value"), nullptr);
  for (const FieldInfo& g : db().fields()) {
    if (g.reg.rfind("Unk", 0) != 0) continue;
    EXPECT_EQ(g.reg, fmt::format("Unk{:05X}", g.address)) << g.name;
    EXPECT_EQ(g.field, "Value") << g.name;
    EXPECT_EQ(g.confidence, Confidence::Unknown) << g.name;
  }
  // Claimed and inferred names for the PE block and friends.
  const FieldInfo* scale = db().find("PE.BiasScale.Scale");
  ASSERT_NE(scale, nullptr);
  EXPECT_EQ(scale->address, 0x8804u);
  EXPECT_EQ(scale->bit, 16);
  EXPECT_EQ(scale->confidence, Confidence::Inferred);
  const FieldInfo* pre = db().find("PE.PreScale.PreScale");
  ASSERT_NE(pre, nullptr);
  EXPECT_EQ(pre->bit, 16);
  struct Expect {
    const char* name;
    uint32_t address, bit, width;
    Confidence confidence;
  };
  for (const Expect& e : {
           Expect{"PE.Cfg.OpMode", 0x8800, 2, 3, Confidence::Inferred},
           Expect{"PE.Cfg.ReluEn", 0x8800, 5, 1, Confidence::Claimed},
           Expect{"PE.Cfg.FirstSrc", 0x8800, 16, 1, Confidence::Claimed},
           Expect{"PE.Cfg.SecSrc", 0x8800, 18, 2, Confidence::Inferred},
           Expect{"PE.BiasScale.Bias", 0x8804, 0, 16, Confidence::Inferred},
           Expect{"PE.FinalScale.FinalScale", 0x880C, 0, 32, Confidence::Claimed},
           Expect{"Common.InDepth.Din", 0x4, 0, 16, Confidence::Claimed},
           Expect{"Common.OutDepth.Dout", 0x18, 0, 16, Confidence::Claimed},
           Expect{"Common.ChCfg.Src2InFmt", 0x8, 2, 2, Confidence::Inferred},
           Expect{"Common.Cfg.UnkBit0", 0x34, 0, 1, Confidence::Unknown},
           Expect{"Common.Cfg.TaskType", 0x34, 4, 3, Confidence::Inferred},
           Expect{"L2.SourceCfg.Source2Type", 0x4804, 23, 2, Confidence::Inferred},
           Expect{"NE.MACCfg.UnkBit20", 0xC804, 20, 1, Confidence::Unknown},
           Expect{"TileDMASrc.Src2RowStride.Stride", 0x13820, 6, 26, Confidence::Inferred},
           Expect{"TileDMASrc.Src2Fmt.MemFmt", 0x1383C, 12, 2, Confidence::Inferred},
           Expect{"L2.Source2Base.Addr", 0x481C, 4, 17, Confidence::Inferred},
       }) {
    SCOPED_TRACE(e.name);
    const FieldInfo* g = db().find(e.name);
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->address, e.address);
    EXPECT_EQ(g->bit, e.bit);
    EXPECT_EQ(g->width, e.width);
    EXPECT_EQ(g->confidence, e.confidence);
  }
}

TEST(Registers, RegisterIndexIsDense) {
  const uint32_t n = db().register_count();
  std::set<uint32_t> addresses;
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t a = db().register_address(static_cast<int>(i));
    EXPECT_EQ(db().register_index(a), static_cast<int>(i)) << fmt::format("{:#x}", a);
    addresses.insert(a);
  }
  EXPECT_EQ(addresses.size(), n);
  // Every stream word, and nothing else.
  for (const Stream& s : kStreams) {
    for (uint32_t k = 0; k < s.words; ++k) {
      EXPECT_TRUE(addresses.contains(s.base + 4 * k));
      EXPECT_EQ(db().block_at(s.base + 4 * k)->id, s.block);
    }
    EXPECT_EQ(db().register_index(s.base + 4 * s.words), -1) << s.name;
    EXPECT_EQ(db().register_index(s.base + 2), -1) << s.name;
  }
  EXPECT_EQ(db().register_index(0x1F7FC), -1);
  EXPECT_EQ(db().register_index(0xFFFFFFFC), -1);
  EXPECT_EQ(db().block_at(0x50000), nullptr);
}

TEST(Registers, RegisterNames) {
  EXPECT_EQ(db().register_name(Block::Common, 0x0), "Common.InDim");
  EXPECT_EQ(db().register_name(Block::Common, 0x20), "Common.Unk00020");
  EXPECT_EQ(db().register_name(Block::KernelDMASrc, 0x1F80C), "KernelDMASrc.CoeffDMAConfig[1]");
  EXPECT_EQ(db().register_name(Block::Header, 0x18), "Header[6]");
  // An address without any field gets the same scheme.
  EXPECT_EQ(db().register_name(Block::L2, 0x4900), "L2.Unk04900");
  EXPECT_STREQ(confidence_name(Confidence::Inferred), "Inferred");
}

// ---- register values observed in Apple-compiled files --------------------------

// Every set bit of every register word in the corpus lies inside some field.
TEST(Registers, EveryObservedBitIsNamed) {
  ANE_REQUIRE_CORPUS();
  size_t tasks = 0;
  for (const std::string& name : test::corpus_hwx_names()) {
    const Bytes bytes = test::read_or_die(test::corpus_hwx_path(name));
    auto u32 = [&](size_t off) {
      return uint32_t{bytes[off]} | uint32_t{bytes[off + 1]} << 8 | uint32_t{bytes[off + 2]} << 16 |
             uint32_t{bytes[off + 3]} << 24;
    };
    // A v4.2.1 task: the KernelDMASrc stream header 0xf401f800 at +0x28.
    for (size_t p = 0x28; p + kTaskBytes - 0x28 <= bytes.size(); p += 4) {
      if (u32(p) != 0xf401f800u) continue;
      const size_t task = p - 0x28;
      if (u32(task + 0x124) != 0x3c000000u || u32(task + 0x254) != 0x18017800u) continue;
      ++tasks;
      for (uint32_t off = 0; off < kTaskBytes; off += 4) {
        bool is_stream_header = false;
        for (const Stream& s : kStreams) is_stream_header |= off == s.task_offset;
        if (is_stream_header) continue;
        Location loc{};
        ASSERT_TRUE(locate(off, 0, &loc)) << fmt::format("task offset {:#x}", off);
        uint32_t named = 0;
        for (const FieldInfo* f : db().fields_at(loc.block, loc.address)) named |= f->mask();
        const uint32_t value = u32(task + off);
        EXPECT_EQ(value & ~named, 0u)
            << fmt::format("{} task at {:#x}: {} = {:#010x} has unnamed bits {:#010x}", name, task,
                           db().register_name(loc.block, loc.address), value, value & ~named);
      }
    }
  }
  EXPECT_EQ(tasks, 7u);  // concat has two tasks
}

// ---- RegisterImage -----------------------------------------------------------

const FieldInfo& field(const char* name) {
  const FieldInfo* f = db().find(name);
  EXPECT_NE(f, nullptr) << name;
  static const FieldInfo kNone{};
  return f ? *f : kNone;
}

TEST(RegisterImage, SetFieldsBuildsHandComputedWords) {
  RegisterImage img;
  img.set(field("Common.ConvCfg.Kw"), 3);
  img.set(field("Common.ConvCfg.Kh"), 2);
  EXPECT_EQ(img.word(0x1C), 0x43u);  // 3 | 2 << 5
  EXPECT_TRUE(img.written(0x1C));
  EXPECT_FALSE(img.written(0x18));

  img.set(field("Header[0].EON"), 1);
  EXPECT_EQ(img.header[0], 1u << 25);
  img.set(field("Header[0].TID"), 0x1234);
  EXPECT_EQ(img.header[0], (1u << 25) | 0x1234u);

  // pair conv, plist-to-hwx.md 6.1: Header[8] = 0x03024025.
  ASSERT_TRUE(img.set("Header[8].RBase0", 5).ok());
  ASSERT_TRUE(img.set("Header[8].RBE0", 1).ok());
  ASSERT_TRUE(img.set("Header[8].WBase", 4).ok());
  ASSERT_TRUE(img.set("Header[8].WBE", 1).ok());
  ASSERT_TRUE(img.set("Header[8].ENE", 3).ok());
  EXPECT_EQ(img.header[8], 0x03024025u);

  // pair conv Common.Cfg = 0x04144405 (plist-to-hwx.md 6.3).
  for (auto [name, value] : std::initializer_list<std::pair<const char*, uint32_t>>{
           {"Common.Cfg.UnkBit0", 1},
           {"Common.Cfg.SmallSourceMode", 1},
           {"Common.Cfg.ShPref", 4},
           {"Common.Cfg.ShMin", 4},
           {"Common.Cfg.ShMax", 4},
           {"Common.Cfg.ActiveNE", 2},
           {"Common.Cfg.AccDoubleBufEn", 1}})
    ASSERT_TRUE(img.set(name, value).ok()) << name;
  EXPECT_EQ(img.word(0x34), 0x04144405u);

  // TileDMASrc.DMAConfig = 0x33881 (En 1, CacheHint 2, Reuse 14, NoReuse 12).
  ASSERT_TRUE(img.set("TileDMASrc.DMAConfig.En", 1).ok());
  ASSERT_TRUE(img.set("TileDMASrc.DMAConfig.CacheHint", 2).ok());
  ASSERT_TRUE(img.set("TileDMASrc.DMAConfig.CacheHintReuse", 14).ok());
  ASSERT_TRUE(img.set("TileDMASrc.DMAConfig.CacheHintNoReuse", 12).ok());
  EXPECT_EQ(img.word(0x13800), 0x33881u);

  // DMA addresses hold bytes / 64, L2 ones bytes / 16: the raw word is bytes.
  img.set(field("KernelDMASrc.CoeffBaseAddr[1].Addr"), 0x40 / 64);
  EXPECT_EQ(img.word(0x1F84C), 0x40u);
  img.set(field("L2.SourceChannelStride.Stride"), 1);
  EXPECT_EQ(img.word(0x480C), 0x10u);

  // PE Add sample: BiasScale = 0x3c000000, FinalScale = fp32 1.0.
  img.set(field("PE.BiasScale.Scale"), 0x3c00);
  img.set(field("PE.FinalScale.FinalScale"), 0x3f800000);
  EXPECT_EQ(img.word(0x8804), 0x3c000000u);
  EXPECT_EQ(img.word(0x880C), 0x3f800000u);
}

TEST(RegisterImage, GetReadsFieldsOfRawWords) {
  RegisterImage img;
  img.set_word(0x0001C, 0x5000a021);  // ConvCfg of every v4.2.1 sample
  EXPECT_EQ(img.get(field("Common.ConvCfg.Kw")), 1u);
  EXPECT_EQ(img.get(field("Common.ConvCfg.Kh")), 1u);
  EXPECT_EQ(img.get(field("Common.ConvCfg.Sx")), 1u);
  EXPECT_EQ(img.get(field("Common.ConvCfg.Sy")), 1u);
  EXPECT_EQ(img.get(field("Common.ConvCfg.Ox")), 1u);
  EXPECT_EQ(img.get(field("Common.ConvCfg.Oy")), 1u);
  EXPECT_EQ(img.get(field("Common.ConvCfg.Px")), 0u);
  img.set_word(0x0C804, 0x10000c | 2 << 16);  // NE pass, sigmoid
  EXPECT_EQ(img.get(field("NE.MACCfg.OpMode")), 4u);
  EXPECT_EQ(img.get(field("NE.MACCfg.KernelMode")), 1u);
  EXPECT_EQ(img.get(field("NE.MACCfg.NonlinearMode")), 2u);
  EXPECT_EQ(img.get(field("NE.MACCfg.UnkBit20")), 1u);
  img.header[6] = 0x30009800;
  EXPECT_EQ(*img.get("Header[6].SPL"), 1u);
  EXPECT_EQ(*img.get("Header[6].TSR"), 1u);
  EXPECT_EQ(*img.get("Header[6].TSE"), 1u);
  EXPECT_EQ(*img.get("Header[6].SrcLoc"), 1u);
  EXPECT_EQ(*img.get("Header[6].DstLoc"), 1u);
  EXPECT_EQ(*img.get("Header[6].TQDis"), 0u);

  // Every field round-trips its largest value without touching its neighbours.
  for (const FieldInfo& f : db().fields()) {
    RegisterImage fresh;
    const uint32_t max = f.width >= 32 ? 0xffffffffu : (1u << f.width) - 1;
    ASSERT_TRUE(fresh.set(f.name, max).ok()) << f.name;
    EXPECT_EQ(*fresh.get(f.name), max) << f.name;
    EXPECT_TRUE(fresh.field_written(f)) << f.name;
    const uint32_t raw =
        f.block == Block::Header ? fresh.header[f.address / 4] : fresh.word(f.address);
    EXPECT_EQ(raw, f.mask()) << f.name;
  }
}

TEST(RegisterImage, UnknownNamesAndOversizedValuesAreErrors) {
  RegisterImage img;
  auto got = img.get("Common.InDim.Depth");
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.error().message.find("Common.InDim.Depth"), std::string::npos)
      << got.error().message;
  auto set = img.set("NE.Nope.Nope", 1);
  ASSERT_FALSE(set.ok());
  EXPECT_NE(set.error().message.find("NE.Nope.Nope"), std::string::npos);
  auto wide = img.set("Common.ConvCfg.Kw", 32);  // 5-bit field
  ASSERT_FALSE(wide.ok());
  EXPECT_EQ(img.word(0x1C), 0u);
  EXPECT_FALSE(img.written(0x1C));
  EXPECT_EQ(img, RegisterImage{});
}

TEST(RegisterImage, UnknownAddressesGoToTheUnknownMap) {
  RegisterImage img;
  img.set_word(0x50000, 0xabc);
  img.set_word(0x13802, 7);  // unaligned: no register
  img.set_word(0x0C810, 0x3c00);
  img.set_word(0x1F800, 0x40);  // first in stream order, last by address
  img.set_word(0x00000, 0x10001);
  EXPECT_EQ(img.unknown_words(), (std::map<uint32_t, uint32_t>{{0x13802, 7}, {0x50000, 0xabc}}));
  EXPECT_TRUE(img.written(0x50000));
  EXPECT_EQ(img.word(0x50000), 0xabcu);
  EXPECT_FALSE(img.written(0x50004));
  EXPECT_EQ(img.word(0x50004), 0u);
  EXPECT_EQ(img.written_words(),
            (std::vector<std::pair<uint32_t, uint32_t>>{{0x00000, 0x10001},
                                                        {0x0C810, 0x3c00},
                                                        {0x13802, 7},
                                                        {0x1F800, 0x40},
                                                        {0x50000, 0xabc}}));
  EXPECT_FALSE(img.field_written(field("Common.Cin.Cin")));
  EXPECT_TRUE(img.field_written(field("Common.InDim.Hin")));
  EXPECT_EQ(img.get(field("Common.InDim.Hin")), 1u);
  EXPECT_EQ(img.get(field("Common.InDim.Win")), 1u);
  RegisterImage other = img;
  EXPECT_EQ(other, img);
  other.set_word(0x50000, 0xabd);
  EXPECT_NE(other, img);
}

// ---- docs/registers.md -------------------------------------------------------

TEST(Registers, DocsAreGeneratedFromTheDatabase) {
  std::string generated;
  ASSERT_EQ(test::run_command(std::string("'") + ANE_REGDOC_EXE + "'", &generated), 0);
  std::ifstream f(std::string(LIBANE_SOURCE_DIR) + "/docs/registers.md", std::ios::binary);
  ASSERT_TRUE(f.good()) << "docs/registers.md missing";
  const std::string committed((std::istreambuf_iterator<char>(f)),
                              std::istreambuf_iterator<char>());
  EXPECT_TRUE(committed == generated)
      << "docs/registers.md is stale: regenerate with ane-regdoc -o docs/registers.md";
  // Spot checks that the generator really renders the table.
  EXPECT_NE(generated.find("| Common.ConvCfg.Kw | 0-4 | 5 | Published |"), std::string::npos);
  EXPECT_NE(generated.find("| 0x08804 | 0x230 | PE.BiasScale | 2 |"), std::string::npos);
  for (const char* gen : {"h14", "h15", "h16", "h17", "h18"}) {
    SCOPED_TRACE(gen);
    std::string page;
    ASSERT_EQ(test::run_command(std::string("'") + ANE_REGDOC_EXE + "' --target " + gen, &page), 0);
    std::ifstream g(std::string(LIBANE_SOURCE_DIR) + "/docs/registers-" + gen + ".md", std::ios::binary);
    const std::string committed_page((std::istreambuf_iterator<char>(g)), std::istreambuf_iterator<char>());
    EXPECT_TRUE(committed_page == page) << "docs/registers-" << gen << ".md is stale: regenerate with ane-regdoc --target "
                                        << gen << " -o docs/registers-" << gen << ".md";
    EXPECT_NE(page.find("Common.Cin.Cin"), std::string::npos);
  }
}

// Every generation's table: names unique, fields inside their block and
// their word, no two fields of a register overlapping.
TEST(Registers, EveryGenerationsTableIsWellFormed) {
  for (Generation g : {Generation::H14, Generation::H15, Generation::H16, Generation::H17, Generation::H18}) {
    SCOPED_TRACE(generation_name(g));
    const RegisterDatabase* d = RegisterDatabase::for_generation(g);
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->generation(), g);
    std::set<std::string> names;
    std::map<uint32_t, uint32_t> bits;
    for (const FieldInfo& f : d->fields()) {
      EXPECT_TRUE(names.insert(f.name).second) << "duplicate " << f.name;
      EXPECT_LE(uint32_t{f.bit} + f.width, 32u) << f.name;
      if (f.block == Block::Header) continue;
      const BlockInfo& b = d->block(f.block);
      EXPECT_GE(f.address, b.base) << f.name;
      EXPECT_LT(f.address, b.base + 4 * b.words) << f.name;
      EXPECT_EQ(bits[f.address] & f.mask(), 0u) << f.name << " overlaps another field";
      bits[f.address] |= f.mask();
    }
    // Every word of every block is covered.
    for (const BlockInfo& b : d->blocks())
      for (uint32_t k = 0; b.id != Block::Header && k < b.words; ++k)
        EXPECT_TRUE(bits.count(b.base + 4 * k)) << b.name << " word " << k;
  }
}

}  // namespace
}  // namespace ane
