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
#include "ane/program.h"
#include "ane/task.h"
#include "packed_fixture.h"

namespace ane {
namespace {

using packed::Fixture;

std::string name_of(const ::testing::TestParamInfo<std::string>& info) {
  const std::filesystem::path p(info.param);
  std::string n = p.parent_path().filename().string() + "_" + p.stem().string();
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

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
      for (uint32_t a : addrs) EXPECT_TRUE(written.insert(a).second) << fmt::format("{:#x} written twice", a);
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

INSTANTIATE_TEST_SUITE_P(Records, PackedRecord, ::testing::ValuesIn(packed::fixture_files()), name_of);

TEST(PackedRecords, EveryGenerationHasFixtures) {
  std::map<std::string, int> per;
  for (const auto& f : packed::fixture_files()) per[std::filesystem::path(f).parent_path().filename().string()]++;
  for (const char* g : {"h14", "h15", "h16", "h17", "h18"}) EXPECT_GT(per[g], 0) << g;
}

}  // namespace
}  // namespace ane
