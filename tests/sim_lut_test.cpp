// The lookup-table unit, through the whole simulator (an NE pass task with
// the table in kernel lane 0), against the independent reading of
// tests/reference/lut_ref on every fp16 input: every transform the corpus
// shows (grid from 0 or centred, |x| and odd symmetry, sqrt, rsqrt,
// reciprocal, log2, exp2, fraction and integer part) and the corpus tables
// themselves.
#include <cmath>

#include <gtest/gtest.h>

#include "ane/dump.h"
#include "reference/lut_ref.h"
#include "sim_support.h"
#include "support.h"

namespace ane {
namespace {

namespace lut = ane_ref::lut;
using test::error_of;
using test::set;

constexpr uint32_t kH = 256, kW = 256;  // 65536 inputs: every fp16 pattern once

// Every fp16 pattern through a table task (`copies` times over, one after the
// other); returns the outputs in input order.
std::vector<uint16_t> run_table(const lut::Table& t, std::string* error = nullptr, uint32_t copies = 1) {
  const uint32_t rows = kH * copies;
  RegisterImage r = test::pass_task(1, rows, kW, 2);
  sim::Machine m;
  std::vector<uint8_t> k(0x80);
  for (int i = 0; i < 64; ++i) test::put16(k, 2 * i, t[i]);
  m.set_slot(1, k);
  std::vector<uint8_t> x(rows * test::row_bytes(kW));
  for (uint32_t i = 0; i < rows * kW; ++i) test::put16(x, i * 2, static_cast<uint16_t>(i));
  m.set_slot(5, x);
  m.set_slot(4, x.size());
  const std::string e = error_of(m.run_task(r, 0));
  if (error) *error = e;
  std::vector<uint16_t> out;
  if (!e.empty()) return out;
  for (uint32_t i = 0; i < rows * kW; ++i) out.push_back(test::get16(*m.slot(4), i * 2));
  return out;
}

// Bit-exact agreement (both compute in double and round once); NaN results
// compare as NaN.
void expect_same(const lut::Table& t, const char* name, uint32_t copies = 1) {
  SCOPED_TRACE(name);
  std::string why;
  ASSERT_TRUE(lut::valid(t, &why)) << why;
  const auto got = run_table(t, nullptr, copies);
  ASSERT_EQ(got.size(), 65536u * copies);
  int bad = 0;
  for (uint32_t x = 0; x < 65536u * copies; ++x) {
    const uint16_t want = lut::eval_fp16(t, static_cast<uint16_t>(x));
    const bool both_nan = fp16_is_nan(want) && fp16_is_nan(got[x]);
    if (!both_nan && got[x] != want && bad++ < 5)
      ADD_FAILURE() << "x = " << std::hex << x << ": simulated " << got[x] << ", reference " << want;
  }
}

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

TEST(SimLutTable, EveryTransformAgreesWithTheReferenceOnEveryFp16Input) {
  expect_same(lut::exp2_table(), "exp2");
  expect_same(lut::log2_table(), "log2");
  expect_same(lut::recip_table(), "reciprocal");
  expect_same(lut::sqrt_table(), "sqrt");
  expect_same(lut::rsqrt_table(), "rsqrt");
  expect_same(lut::tanh_table(), "tanh (odd, |x|)");
  expect_same(lut::centred_table(sigmoid, 1, -9, 9, 0, 0x3c00), "centred");
  // Fraction and integer part (eiln ceil): empty tables, the transform alone.
  lut::Table frac{}, integer{};
  frac[0] = 0xfc00, frac[1] = 0x7c00, frac[42] = 0x63;
  integer[0] = 0xfc00, integer[1] = 0x7c00, integer[2] = 0xfc00, integer[3] = 0x7c00;
  integer[41] = 5, integer[42] = 0x64;
  expect_same(frac, "fraction");
  expect_same(integer, "integer part");
  // A plain grid from 0 with both lines in use, and a negative step exponent (k = -1: step 2).
  lut::Table plain = lut::centred_table(sigmoid, 1, -20, 20, 0, 0x3c00);
  plain[42] = 0;
  plain[37] = 0x2000, plain[38] = 0x1000, plain[39] = 0x2400, plain[40] = 0x3800;
  expect_same(plain, "plain grid with lines");
  plain[41] = 0xffff;
  expect_same(plain, "step 2");
}

// Large tensors take another path (the chain evaluated once per fp16 pattern,
// then looked up): the same bits, on every pattern, in every copy.
TEST(SimLutTable, LargeTensorsGiveTheSameBitsAsSmallOnes) {
  expect_same(lut::exp2_table(), "exp2, 4 copies", 4);
  expect_same(lut::recip_table(), "reciprocal, 4 copies", 4);
  expect_same(lut::tanh_table(), "tanh, 4 copies", 4);
  expect_same(lut::centred_table(sigmoid, 1, -9, 9, 0, 0x3c00), "centred, 4 copies", 4);
}

TEST(SimLutTable, EveryCorpusTableAgreesWithTheReference) {
  ANE_REQUIRE_CORPUS();
  int tables = 0;
  for (const char* f : {"activation/gelu", "activation/leakyrelu", "activation/relu6", "activation/silu",
                        "activation/softmax", "activation/logsoftmax", "binary/div", "unary/atan", "unary/ceil",
                        "unary/exp", "unary/inv", "unary/log", "unary/log2", "unary/norm", "unary/sigmoid",
                        "unary/sign", "unary/sqrt", "unary/tanh"}) {
    auto p = open_program(test::corpus_dir() + "/anec/" + f + ".bin");
    ASSERT_TRUE(p.ok()) << f;
    const auto k = p->kernel_bytes();
    for (size_t off = 0; off + 0x80 <= k.size(); off += 0x80) {
      lut::Table t;
      for (int i = 0; i < 64; ++i) t[i] = static_cast<uint16_t>(k[off + 2 * i] | k[off + 2 * i + 1] << 8);
      SCOPED_TRACE(std::string(f) + " table at +" + std::to_string(off));
      expect_same(t, f);
      ++tables;
    }
  }
  EXPECT_EQ(tables, 24);
}

TEST(SimLutTable, TablesOutsideTheEvidenceAreRefusedBySlot) {
  lut::Table t = lut::tanh_table();
  std::string error;
  t[42] = 0x08;  // transform 8: in no table
  run_table(t, &error);
  EXPECT_EQ(error, "unsupported: LUT[42]=0x0008 (transform) in task 0");
  t[42] = 0x20;  // odd without |x|
  run_table(t, &error);
  EXPECT_EQ(error, "unsupported: LUT[42]=0x0020 (mode bits) in task 0");
  t = lut::tanh_table();
  t[41] = 100;
  run_table(t, &error);
  EXPECT_EQ(error, "unsupported: LUT[41]=0x0064 (grid step) in task 0");
  t = lut::tanh_table();
  t[10] = 0x7e00;
  run_table(t, &error);
  EXPECT_EQ(error, "unsupported: LUT[10]=0x7e00 (NaN) in task 0");
  lut::Table frac{};
  frac[42] = 0x63;
  frac[20] = 0x3c00;  // a node in a fraction table: what it adds is unknown
  run_table(frac, &error);
  EXPECT_EQ(error, "unsupported: LUT[42]=0x0063 (fraction/integer transform with a non-empty table) in task 0");
}

}  // namespace
}  // namespace ane
