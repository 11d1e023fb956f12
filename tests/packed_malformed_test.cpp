// Hostile H14 - H18 input: files assembled from the record fixtures, then
// truncated, bit-flipped or given a specific defect. Each must parse (and
// round-trip) or fail with a one-line error naming the offset; never crash.
#include <gtest/gtest.h>

#include <random>

#include "ane/dump.h"
#include "ane/hwx.h"
#include "ane/program.h"
#include "packed_fixture.h"

namespace ane {
namespace {

void put32(Bytes& b, uint64_t off, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[off + i] = static_cast<uint8_t>(v >> (8 * i));
}
uint32_t get32(const Bytes& b, uint64_t off) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{b[off + i]} << (8 * i);
  return v;
}

OpenOptions hwx_only() {
  OpenOptions o;
  o.format = ContainerFormat::Hwx;
  return o;
}

// Parses and expects a clean outcome: a program that round-trips and dumps,
// or a one-line error.
bool parses_cleanly(const Bytes& b, const std::string& what) {
  auto p = parse_program(b, "x.hwx", hwx_only());
  if (p.ok()) {
    EXPECT_TRUE(write_hwx(*p->hwx) == b) << what << ": parsed but does not round-trip";
    (void)dump_text(*p);
    (void)dump_json(*p);
    return true;
  }
  EXPECT_FALSE(p.error().message.empty()) << what;
  EXPECT_EQ(p.error().str().find('\n'), std::string::npos) << what << ": " << p.error().str();
  return false;
}

void expect_error(const Bytes& b, uint64_t offset, const std::string& what) {
  auto p = parse_program(b, "x.hwx", hwx_only());
  ASSERT_FALSE(p.ok()) << "expected an error containing '" << what << "'";
  EXPECT_EQ(p.error().offset, offset) << p.error().str();
  EXPECT_NE(p.error().message.find(what), std::string::npos) << p.error().str();
}

packed::Fixture fixture(const std::string& gen) {
  auto f = packed::load(std::string(LIBANE_SOURCE_DIR) + "/tests/fixtures/oracles/" + gen + "/binary_add_1x64x8x8.fx");
  EXPECT_TRUE(f.ok()) << f.error().str();
  return f.ok() ? std::move(f).value() : packed::Fixture{};
}

constexpr uint64_t kText = 0x4000;  // where assemble_hwx puts __text

TEST(PackedMalformed, TruncatedAnywhere) {
  for (const auto& path : packed::malformed_sample()) {
    SCOPED_TRACE(path);
    auto f = packed::load(path);
    ASSERT_TRUE(f.ok());
    const Bytes full = packed::assemble_hwx(*f);
    int rejected = 0;
    for (uint64_t cut = 0; cut < full.size(); cut += (cut < kText + 0x400 ? 4 : 0x1000)) {
      const Bytes b(full.begin(), full.begin() + static_cast<ptrdiff_t>(cut));
      if (!parses_cleanly(b, "cut at " + std::to_string(cut))) ++rejected;
    }
    EXPECT_GT(rejected, 0);
  }
}

TEST(PackedMalformed, RandomMutationsNeverCrash) {
  std::mt19937_64 rng(2026);
  int parsed = 0, rejected = 0;
  for (const auto& path : packed::malformed_sample()) {
    auto f = packed::load(path);
    ASSERT_TRUE(f.ok());
    const Bytes full = packed::assemble_hwx(*f);
    const uint64_t text = 4 * uint64_t{f->text_words};
    for (int iter = 0; iter < 400; ++iter) {
      Bytes b = full;
      const int flips = 1 + static_cast<int>(rng() % 3);
      for (int k = 0; k < flips; ++k) {
        // Mostly the task text, else the load commands (descriptors included).
        const uint64_t off = (rng() % 3) ? kText + rng() % text : rng() % 0x1000;
        if (rng() % 2)
          b[off] ^= static_cast<uint8_t>(1u << (rng() % 8));
        else if (off + 4 <= b.size())
          put32(b, off, static_cast<uint32_t>(rng()));
      }
      (parses_cleanly(b, path + " mutation " + std::to_string(iter)) ? parsed : rejected)++;
    }
  }
  EXPECT_GT(parsed, 0);
  EXPECT_GT(rejected, 0);
}

TEST(PackedMalformed, SpecificDefectsNameTheirOffset) {
  const packed::Fixture f = fixture("h16");
  const Bytes good = packed::assemble_hwx(f);
  const uint64_t task = kText + 16;  // after the frame

  // Task 0 claims more words than __text holds.
  Bytes b = good;
  put32(b, task, (get32(b, task) & 0xffff) | (0x400u << 16));
  expect_error(b, task, "runs past the end of __text");

  // A record whose count runs past its task: the last record (1 word) claims 4.
  b = good;
  const uint64_t last = task + f.tasks[0].size - 8;
  put32(b, last, get32(b, last) | (3u << 15));
  expect_error(b, last, "runs past the end of the task");

  // Fewer words than the header.
  b = good;
  put32(b, task, (get32(b, task) & 0xffff) | (4u << 16));
  expect_error(b, task, "fewer than its 9 header words");

  // The extended-word rule with no room for the word.
  const packed::Fixture h14 = fixture("h14");
  b = packed::assemble_hwx(h14);
  put32(b, task, (get32(b, task) & 0xffff) | (8u << 16));
  put32(b, task + 28, get32(b, task + 28) | 3);
  expect_error(b, task + 28, "extended header word");

  // The descriptor's task count disagrees with __text.
  b = good;
  uint64_t desc = 0;
  auto file = read_hwx(good);
  ASSERT_TRUE(file.ok());
  for (const auto& lc : file->commands)
    if (const auto* t = lc.as<ThreadCommand>(); t && t->flavor == 4) desc = lc.offset;
  ASSERT_NE(desc, 0u);
  put32(b, desc + 0x830, 2);
  expect_error(b, desc + 0x830, "program descriptor says 2 tasks but __text holds 1");
}

}  // namespace
}  // namespace ane
