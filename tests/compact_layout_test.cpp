// The compact task layout of the current macOS compiler (126-word tasks whose
// kernel-DMA block skips the lane address and size registers), from a real
// Apple-compiled task: joshuaswarren/mil-hwx-compiler (MIT), record
// research/oracles/h13/binary_add_1x64x1x1.json at commit 1f6392ea (macOS
// 26.6.2, M1 Ultra): y = x + z on [1,64,1,1]. The record lists the header
// words, the stream records and every word they write; they are transcribed
// below and cross-checked against the record's own figures (stream headers,
// 504-byte task, the constant section's SHA-256), so that a copying slip
// cannot pass.
#include <random>

#include <gtest/gtest.h>

#include "ane/fp16.h"
#include "ane/sha256.h"
#include "ane/sim.h"
#include "support.h"

namespace ane {
namespace {

struct Record {
  uint32_t header;  // as the record gives it
  uint32_t address;
  std::vector<uint32_t> words;
};

constexpr uint32_t kHeaderWords[10] = {0x02000000, 0, 0x0000042a, 0, 0x00fff86a, 0, 0x30009800, 0, 0x000259a4, 0};

const std::vector<Record>& records() {
  static const std::vector<Record> r = {
      {0x4401f800, 0x1f800,
       {0, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80}},
      {0x2c01f8c8, 0x1f8c8, {0x80, 0x80, 0x80, 0x80, 0, 0, 0, 0, 0x40, 0x40, 0x40, 0x40}},
      {0x3c000000, 0x00000,
       {0x00010001, 1, 0x2a, 0x40, 0x40, 0x00010001, 1, 0x5000a021, 0x2041, 0x00010001, 1, 4, 0, 0x33, 0, 0}},
      {0x6c013800, 0x13800,
       {0x00033881, 0x00033880, 0, 0x40, 0x40, 0x1000, 0x1000, 0, 0x40, 0x40, 0x1000, 0x1000, 0, 0, 0x01002031,
        0x2030, 0x100, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
      {0x44004800, 0x04800,
       {0, 0x01500172, 0, 0x10, 0x420, 0x400, 0x400, 0x440, 0x10, 0x420, 0x400, 0x400, 0x0050017a, 0x860, 0, 0, 0,
        0}},
      {0x0c008800, 0x08800, {0x00080000, 0x3c000000, 0x3c000000, 0x3f800000}},
      {0x1000c800, 0x0c800, {0x80, 0x00100000, 0, 0, 0}},
      {0x18017800, 0x17800, {0x040000c1, 0, 0x40, 0x40, 0x1000, 0x1000, 0x01302031}},
  };
  return r;
}

constexpr uint32_t kTaskBytes = 504;      // the record's size_bytes
constexpr uint64_t kConstBytes = 16384;   // its constant section
constexpr const char* kConstSha256 = "4fe7b59af6de3b665b67788cc2f99892ab827efae3a467342b3bb4e3bc8e5bfe";

// The task as the compiler wrote it, then the constant section, as an anec image.
Bytes image() {
  Bytes b;
  for (int i = 0; i < 10; ++i) put_u32(b, 4 * i, kHeaderWords[i]);
  for (const auto& r : records()) {
    put_u32(b, b.size(), r.header);
    for (uint32_t w : r.words) put_u32(b, b.size(), w);
  }
  b.resize((b.size() + 15) / 16 * 16, 0);
  b.resize(b.size() + kConstBytes, 0);
  return b;
}

TEST(CompactLayout, TheTranscriptionMatchesTheRecord) {
  uint32_t bytes = 40;
  for (const auto& r : records()) {
    EXPECT_EQ(r.header, ((static_cast<uint32_t>(r.words.size()) - 1) << 26) | r.address) << std::hex << r.address;
    bytes += 4 + 4 * static_cast<uint32_t>(r.words.size());
  }
  EXPECT_EQ(bytes, kTaskBytes);
  EXPECT_EQ(sha256_hex(Bytes(kConstBytes, 0)), kConstSha256) << "the record's constant section is all zero";
}

TEST(CompactLayout, AnAppleCompiledCompactTaskRuns) {
  const Bytes img = image();
  auto p = parse_program(img, "binary_add_1x64x1x1.anec");
  ASSERT_TRUE(p.ok()) << p.error().str();
  ASSERT_EQ(p->tasks.size(), 1u);
  EXPECT_EQ(p->tasks[0].size, kTaskBytes);
  EXPECT_EQ(p->tasks[0].streams.size(), 8u);
  // Exactly the 32 lane address and size registers are skipped.
  int unwritten = 0;
  const auto& db = RegisterDatabase::h13();
  for (uint32_t k = 0; k < db.register_count(); ++k) {
    const uint32_t a = db.register_address(static_cast<int>(k));
    if (!p->tasks[0].regs.written(a)) {
      ++unwritten;
      EXPECT_TRUE(a >= 0x1F848 && a < 0x1F8C8) << std::hex << a;
    }
  }
  EXPECT_EQ(unwritten, 32);
  // By the task's own DMAs: x in slot 4, z in slot 6, y in slot 5.
  auto sim = sim::Simulator::create(*p);
  ASSERT_TRUE(sim.ok()) << sim.error().str();
  ASSERT_EQ(sim->inputs().size(), 2u);
  EXPECT_EQ(sim->inputs()[0].slot, 4);
  EXPECT_EQ(sim->inputs()[1].slot, 6);
  ASSERT_EQ(sim->outputs().size(), 1u);
  EXPECT_EQ(sim->outputs()[0].slot, 5);
  EXPECT_EQ(sim->outputs()[0].layout->nchw, (std::array<uint64_t, 4>{1, 64, 1, 1}));
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-100, 100);
  sim::Tensor x, z;
  x.nchw = z.nchw = {1, 64, 1, 1};
  for (int i = 0; i < 64; ++i) {
    x.data.push_back(float_to_fp16(u(rng)));
    z.data.push_back(float_to_fp16(u(rng)));
  }
  ASSERT_TRUE(sim->set_input("src0", x).ok());
  ASSERT_TRUE(sim->set_input("src1", z).ok());
  std::string summary;
  ASSERT_TRUE(sim->run([&](const sim::TraceRecord& r) { summary = r.op; }).ok());
  EXPECT_EQ(summary, "add");
  auto y = sim->read_buffer("dst0");
  ASSERT_TRUE(y.ok());
  for (int i = 0; i < 64; ++i)
    EXPECT_EQ(y->data[i], double_to_fp16(double(fp16_to_float(x.data[i])) + fp16_to_float(z.data[i]))) << i;
}

}  // namespace
}  // namespace ane
