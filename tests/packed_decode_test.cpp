// H14 - H18: every transcribed record, assembled into a synthetic .hwx and
// read back through libane (container, packed codec, register database,
// Program), against the record's own words and figures.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "ane/hwx.h"
#include "ane/sha256.h"
#include "ane/program.h"
#include "ane/task.h"
#include "packed_fixture.h"

namespace ane {
namespace {

using packed::Fixture;

std::string name_of(const ::testing::TestParamInfo<std::string>& info) { return packed::test_name(info.param); }

class PackedRecord : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    auto f = packed::load(GetParam());
    ASSERT_TRUE(f.ok()) << f.error().str();
    fx_ = std::move(f).value();
    bytes_ = packed::assemble_hwx(fx_);
    // For looking at one by hand: LIBANE_WRITE_ASSEMBLED=dir writes each file.
    if (const char* dir = std::getenv("LIBANE_WRITE_ASSEMBLED")) {
      const auto out = std::filesystem::path(dir) / (fx_.target + "_" + fx_.name + ".hwx");
      std::ofstream(out, std::ios::binary).write(reinterpret_cast<const char*>(bytes_.data()), bytes_.size());
    }
  }
  Expected<Program> program() const { return parse_program(bytes_, fx_.file); }
  Fixture fx_;
  Bytes bytes_;
};

// The fixture against the record's own figures (a transcription error shows
// here before it shows anywhere else).
TEST_P(PackedRecord, AgreesWithItsOwnFigures) {
  ASSERT_EQ(fx_.tasks.size(), fx_.task_count);
  uint64_t text = 16;
  for (size_t i = 0; i < fx_.tasks.size(); ++i) {
    SCOPED_TRACE(fmt::format("task {}", i));
    const auto& t = fx_.tasks[i];
    const uint32_t fixed = fx_.header_words();
    ASSERT_GE(t.header.size(), fixed);
    EXPECT_EQ(t.header.size(), fixed + ((t.header[fixed - 1] & 3) == 3 ? 1 : 0)) << "extended-word rule";
    EXPECT_EQ((t.header[0] >> 16) & 0x7ff, t.size / 4) << "header word 0 names the task's words";
    EXPECT_EQ(t.header[0] & 0xffff, i) << "TID";
    std::set<uint32_t> written;
    uint64_t words = t.header.size();
    for (const auto& r : t.records) {
      const auto addrs = packed::record_addresses(r.header);
      EXPECT_EQ(addrs.front(), r.address) << fmt::format("record {:#010x}", r.header);
      EXPECT_EQ(addrs.size(), r.count) << fmt::format("record {:#010x}", r.header);
      for (uint32_t a : addrs) written.insert(a);  // a register may be written again (H17 add)
      words += 1 + addrs.size();
    }
    EXPECT_EQ(4 * words, t.size);
    std::set<uint32_t> held;
    for (const auto& [a, v] : t.words) held.insert(a);
    EXPECT_EQ(written, held) << "the records' addresses are the blocks' words";
    text = (i + 1 < fx_.tasks.size()) ? (text + t.size + 15) / 16 * 16 : text + t.size;
  }
  EXPECT_EQ(text, 4 * uint64_t{fx_.text_words});
  ASSERT_GE(fx_.trailing.size(), 9u);
  EXPECT_EQ(fx_.trailing[0], fx_.text_address);
  EXPECT_EQ(fx_.trailing[5], fx_.text_words);
  EXPECT_EQ(fx_.trailing[8], fx_.task_count);
  if (!fx_.descriptor.empty()) {
    EXPECT_EQ(fx_.descriptor.at(0x010), fx_.text_address);
    EXPECT_EQ(fx_.descriptor.at(0x020), fx_.constant_address);
    EXPECT_EQ(fx_.descriptor.at(0x824), fx_.text_words);
    EXPECT_EQ(fx_.descriptor.at(0x830), fx_.task_count);
  }
}

TEST_P(PackedRecord, DecodesWordForWord) {
  auto p = program();
  ASSERT_TRUE(p.ok()) << p.error().str();
  EXPECT_EQ(generation_info(p->generation).target, fx_.target);
  ASSERT_EQ(p->tasks.size(), fx_.tasks.size());
  for (size_t i = 0; i < fx_.tasks.size(); ++i) {
    SCOPED_TRACE(fmt::format("task {}", i));
    const Task& got = p->tasks[i];
    const auto& want = fx_.tasks[i];
    EXPECT_EQ(got.generation, p->generation);
    EXPECT_EQ(got.size, want.size);
    EXPECT_EQ(got.regs.header, want.header);
    // Exactly the record's written set, with its values ("not written" is
    // not "written zero").
    std::map<uint32_t, uint32_t> words;
    for (const auto& [a, v] : got.regs.written_words()) words[a] = v;
    EXPECT_EQ(words, want.words);
    ASSERT_EQ(got.streams.size(), want.records.size());
    for (size_t k = 0; k < want.records.size(); ++k) {
      const auto& s = got.streams[k];
      EXPECT_EQ(s.header_word(), want.records[k].header);
      EXPECT_EQ(s.address, want.records[k].address);
      EXPECT_EQ(s.count, want.records[k].count);
      EXPECT_EQ(s.kind, (want.records[k].header >> 31) ? RecordKind::Masked : RecordKind::Burst);
    }
  }
}

TEST_P(PackedRecord, ReencodesToTheSameBytes) {
  auto file = read_hwx(bytes_);
  ASSERT_TRUE(file.ok()) << file.error().str();
  EXPECT_TRUE(write_hwx(*file) == bytes_) << "whole-file round trip";
  auto text = decode_packed_tasks(*file);
  ASSERT_TRUE(text.ok()) << text.error().str();
  EXPECT_TRUE(encode_packed_text(*text) == packed::text_bytes(fx_)) << "__text round trip";
  for (size_t i = 0; i < text->tasks.size(); ++i) {
    const auto stream = packed::task_stream(fx_.tasks[i]);
    Bytes want(4 * stream.size());
    for (size_t k = 0; k < stream.size(); ++k)
      for (int b = 0; b < 4; ++b) want[4 * k + b] = static_cast<uint8_t>(stream[k] >> (8 * b));
    EXPECT_TRUE(encode_packed_task(text->tasks[i]) == want) << "task " << i;
  }
}

// The sections the assembled file holds are the record's: a section whose
// nonzero words the record lists (a lookup table) or that is all zero hashes
// to the record's SHA-256.
TEST_P(PackedRecord, SectionsHashToTheRecords) {
  auto hwx = read_hwx(bytes_);
  ASSERT_TRUE(hwx.ok()) << hwx.error().str();
  auto check = [&](const char* segment, const char* section, const packed::Section& want,
                   const std::map<uint32_t, double>& words) {
    if (!want.present || (want.nonzero != 0 && words.empty())) return;  // bytes unknown: hash only
    const auto* s = hwx->find_section(segment, section);
    ASSERT_NE(s, nullptr) << segment << "," << section;
    EXPECT_EQ(sha256_hex(hwx->section_data(*s)), want.sha256) << segment << "," << section;
  };
  check("__TEXT", "__const", fx_.constant, fx_.constant_fp16);
  check("__KERN_0", "__kern_0", fx_.kernel, fx_.kernel_fp16);
}

// The program descriptor and the tensors: sizes, shapes and strides from the
// flavor-3 descriptors, each surface bound to the descriptor entry a tag names.
TEST_P(PackedRecord, BuffersAndSlotsFromTheDescriptors) {
  auto p = program();
  ASSERT_TRUE(p.ok()) << p.error().str();
  ASSERT_EQ(p->buffers.size(), fx_.tensors.size());
  const auto entries = packed::entries(fx_);
  for (const Buffer& b : p->buffers) {
    SCOPED_TRACE(b.name);
    ASSERT_GE(b.slot, 0);
    EXPECT_EQ(entries.at(b.slot), b.address);
    EXPECT_GE(static_cast<uint32_t>(b.slot), fx_.first_surface());
  }
  const ProgramSlot* text = p->slot(0);
  ASSERT_NE(text, nullptr);
  EXPECT_EQ(text->address, fx_.text_address);
  EXPECT_EQ(text->role, SlotRole::Tasks);
  const ProgramSlot* k = p->slot(1);
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->role, SlotRole::Kernels);
  EXPECT_EQ(k->size, fx_.constant.size);
}

// The fields the generation's table names, against what the record's MIL
// program and tensor descriptors say they must hold (docs/generations.md
// cross-check): dimensions, channels, strides, L2 layout, the PE op, the
// task type and which tensor each DMA base is bound to.
TEST_P(PackedRecord, NamedFieldsAgreeWithTheRecord) {
  auto p = program();
  ASSERT_TRUE(p.ok()) << p.error().str();
  const auto shape = fx_.params.count("shape") ? fx_.params.at("shape") : "";
  if (shape.empty()) GTEST_SKIP() << "no shape parameter to check against";
  if (fx_.params.count("axes")) GTEST_SKIP() << "a reduction: judged by running it (sim_generations_reduce_test.cpp)";
  std::vector<uint32_t> nchw;
  for (size_t pos = 0; pos <= shape.size();) {
    const size_t comma = std::min(shape.find(',', pos), shape.size());
    nchw.push_back(static_cast<uint32_t>(std::stoul(shape.substr(pos, comma - pos))));
    pos = comma + 1;
  }
  ASSERT_EQ(nchw.size(), 4u);
  // A program of several tasks (real_div, pow) computes through intermediate
  // tensors whose sizes are not the MIL tensors': its records are judged by
  // running them (sim_generations_test.cpp).
  if (p->tasks.size() > 1) GTEST_SKIP() << p->tasks.size() << " tasks";
  const Task& t = p->tasks.back();  // the task that writes the result
  auto written = [&](const char* name) {
    const FieldInfo* f = t.regs.database().find(name);
    return f && t.regs.field_written(*f);
  };
  auto field = [&](const char* name) -> uint32_t {
    auto v = t.regs.get(name);
    EXPECT_TRUE(v.ok()) << name << " is not named on " << fx_.target;
    EXPECT_TRUE(written(name)) << name << " is not written";
    return v.ok() ? *v : ~0u;
  };
  EXPECT_EQ(field("Common.InDim.Win"), nchw[3]);
  EXPECT_EQ(field("Common.InDim.Hin"), nchw[2]);
  EXPECT_EQ(field("Common.OutDim.Wout"), nchw[3]);
  EXPECT_EQ(field("Common.OutDim.Hout"), nchw[2]);
  // The records leave Cin and Cout unwritten at 16 channels, and only there
  // (H14's 1x16x1x1 and 1x16x128x128 records; 1, 3, 64 ... 4096 are written).
  for (const char* channels : {"Common.Cin.Cin", "Common.Cout.Cout"}) {
    if (written(channels))
      EXPECT_EQ(field(channels), nchw[1]) << channels;
    else
      EXPECT_EQ(nchw[1], 16u) << channels << " unwritten";
  }
  // Tile DMA strides are bytes / 64; the descriptors give them in bytes.
  const auto& in = fx_.tensors.front();
  const auto& out = fx_.tensors.back();
  if (nchw[1] > 1) {
    EXPECT_EQ(uint64_t{field("TileDMADst.PlaneStride.PlaneStride")} * 64, out.strides[1]);
  }
  if (nchw[2] > 1) {
    EXPECT_EQ(uint64_t{field("TileDMASrc.PlaneStride.PlaneStride")} * 64, in.strides[1]);
    EXPECT_EQ(uint64_t{field("TileDMASrc.RowStride.Stride")} * 64, in.strides[2]);
  }

  // Which tensor each base reads or writes: the relocation tag of the record
  // that writes the named base register names a descriptor entry.
  auto bound = [&](const char* name) -> std::string {
    const FieldInfo* f = t.regs.database().find(name);
    if (!f) return "(not named)";
    for (const auto& s : t.streams)
      for (uint32_t k = 0; k < s.count; ++k)
        if (s.word_address(k) == f->address) {
          if (!s.relocated()) return "(not relocated)";
          for (const Buffer& b : p->buffers)
            if (b.slot == static_cast<int>(s.relocation())) return b.name;
          return "(entry without a tensor)";
        }
    return "(not written)";
  };
  std::vector<std::string> inputs, outputs;
  for (const auto& [n, is_in] : fx_.io) (is_in ? inputs : outputs).push_back(n);
  ASSERT_FALSE(inputs.empty());
  ASSERT_FALSE(outputs.empty());
  EXPECT_EQ(bound("TileDMASrc.BaseAddr.Addr"), inputs[0]);
  EXPECT_EQ(bound("TileDMADst.BaseAddr.Addr"), outputs[0]);

  const std::string op = fx_.params.at("operation");
  static const std::map<std::string, std::pair<uint32_t, uint32_t>> kPeOps{
      {"add", {0, 2}}, {"mul", {1, 2}}, {"maximum", {2, 2}}, {"minimum", {3, 2}}, {"sub", {0, 3}}};
  if (fx_.family == "binary_runtime") {
    ASSERT_EQ(inputs.size(), 2u);
    EXPECT_EQ(bound("TileDMASrc.Src2BaseAddr.Addr"), inputs[1]);
    EXPECT_EQ(field("Common.Cfg.TaskType"), 3u) << "PE, two operands";
    ASSERT_TRUE(kPeOps.count(op)) << op;
    EXPECT_EQ(field("PE.Cfg.OpMode"), kPeOps.at(op).first);
    EXPECT_EQ(field("PE.Cfg.SecSrc"), kPeOps.at(op).second);
    // Both operands and the result are staged in L2 one after another, H
    // rows of SourceRowStride each (bytes / 16), each channel's W values on
    // whole 16-byte lines.
    const uint32_t row = field("L2.SourceRowStride.Stride");
    EXPECT_EQ(field("L2.Source2RowStride.Stride"), row);
    EXPECT_GE(field("L2.Source2Base.Addr"), nchw[2] * row);
    EXPECT_GE(field("L2.ResultBase.Addr"), field("L2.Source2Base.Addr") + nchw[2] * row);
    EXPECT_EQ(field("L2.SourceChannelStride.Stride") * 16, (2 * nchw[3] + 15) / 16 * 16) << "whole 16-byte lines";
  } else if (fx_.family == "unary" && op == "sigmoid") {
    EXPECT_EQ(field("Common.Cfg.TaskType"), 0u) << "an NE task";
    EXPECT_EQ(field("NE.MACCfg.NonlinearMode"), 2u) << "a lookup-table activation";
  }
}

INSTANTIATE_TEST_SUITE_P(Records, PackedRecord, ::testing::ValuesIn(packed::fixture_files()), name_of);
INSTANTIATE_TEST_SUITE_P(ConvRecords, PackedRecord, ::testing::ValuesIn(packed::operation_fixture_files("conv")),
                         name_of);
INSTANTIATE_TEST_SUITE_P(ReduceRecords, PackedRecord, ::testing::ValuesIn(packed::operation_fixture_files("reduce")),
                         name_of);
INSTANTIATE_TEST_SUITE_P(NormRecords, PackedRecord, ::testing::ValuesIn(packed::operation_fixture_files("norm")),
                         name_of);
INSTANTIATE_TEST_SUITE_P(MatmulRecords, PackedRecord, ::testing::ValuesIn(packed::operation_fixture_files("matmul")),
                         name_of);

TEST(PackedRecords, EveryGenerationHasFixtures) {
  std::map<std::string, int> per;
  for (const auto& f : packed::fixture_files()) per[std::filesystem::path(f).parent_path().filename().string()]++;
  for (const char* g : {"h14", "h15", "h16", "h17", "h18"}) EXPECT_GT(per[g], 0) << g;
}

// The bundled example is the assembled record, byte for byte.
// The example programs are the assembled records, byte for byte.
TEST(PackedExamples, ExamplesAreTheAssembledRecords) {
  const std::string root = LIBANE_SOURCE_DIR;
  const std::pair<const char*, const char*> examples[] = {
      {"h16/binary_add_1x64x8x8.fx", "h16/add_1x64x8x8.hwx"},
      {"h14/binary_add_1x64x8x8.fx", "h14/add_1x64x8x8.hwx"},
      {"h14/unary_tanh_c64.fx", "h14/tanh_c64.hwx"},
  };
  for (const auto& [fixture, example] : examples) {
    SCOPED_TRACE(example);
    auto f = packed::load(root + "/tests/fixtures/oracles/" + fixture);
    ASSERT_TRUE(f.ok()) << f.error().str();
    std::ifstream in(root + "/examples/" + example, std::ios::binary);
    const Bytes bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_TRUE(bytes == packed::assemble_hwx(*f)) << "regenerate with LIBANE_WRITE_ASSEMBLED=dir libane_tests";
  }
}

}  // namespace
}  // namespace ane
