// Planar engine: a op b with one rounding; operand b through its own strides.
#include <gtest/gtest.h>

#include <bit>
#include <random>

#include "../src/sim/numerics.h"
#include "../src/sim/pe.h"
#include "sim_support.h"

namespace ane {
namespace {

using sim::Machine;
using test::error_of;
using test::set;

struct PeRun {
  std::vector<float> out;
  sim::TraceRecord trace;
  std::string error;
};

PeRun run_pe(const RegisterImage& r, uint32_t c, uint32_t w, const std::vector<float>& a, const std::vector<float>& b,
             sim::Options o = {}) {
  Machine m(o);
  m.set_slot(5, test::tensor_bytes(c, 1, w, a));
  m.set_slot(6, test::tensor_bytes(c, 1, w, b));
  m.set_slot(4, test::row_bytes(w) * c);
  PeRun res;
  res.error = error_of(m.run_task(r, 0, 0, [&](const sim::TraceRecord& t) { res.trace = t; }));
  if (res.error.empty()) res.out = test::tensor_values(*m.slot(4), c, 1, w);
  return res;
}

// pe_elementwise on many values (both threads, the AVX2 path and its tails)
// against the definition, one value at a time: the fp64 result, stored as its
// fp16 proxy. Scales such as log2(e) make most results inexact in fp32, which
// the vector path rounds to fp16 itself (to odd in fp32, then to nearest even);
// values near 65504 and NaNs take the scalar proxy.
TEST(SimPe, ElementwiseOverManyValuesIsTheDefinitionForEachValue) {
  constexpr size_t kN = (size_t{1} << 17) + 7;
  std::mt19937 rng(5);
  std::vector<float> a(kN), b(kN);
  for (size_t i = 0; i < kN; ++i) {
    a[i] = test::f32(static_cast<uint16_t>(rng()));
    b[i] = test::f32(static_cast<uint16_t>(rng() % 0x7c00 | (rng() & 0x8000)));  // finite
  }
  for (size_t i = 0; i < kN; i += 1013) a[i] = 65504.0f * (i % 2 ? 1.0f : -1.0f);
  for (uint32_t op : {0u, 1u})
    for (uint16_t scale : {uint16_t{0x3c00}, uint16_t{0x3dc5}, uint16_t{0x3555}, uint16_t{0x0001}})
      for (auto round : {sim::Numerics::Round::NearestEven, sim::Numerics::Round::HalfAway}) {
        sim::detail::PePlan pe;
        pe.op = op;
        pe.second = op == 0 ? 3 : 2;
        pe.scale = scale;
        pe.bias = op == 0 ? 0x3400 : 0;
        pe.pre_scale = 0x3e00;
        std::vector<float> out(kN);
        sim::detail::pe_elementwise(pe, a.data(), b.data(), out.data(), kN, round);
        const double pre = test::f32(pe.pre_scale), s = test::f32(scale), bias = test::f32(pe.bias);
        const double sign = pe.second == 3 ? -1.0 : 1.0;
        size_t bad = 0;
        for (size_t i = 0; i < kN; ++i) {
          const double x = pre * a[i], y = sign * b[i];
          const double v = s * (op == 1 ? x * y : x + y) + bias;
          bad += std::bit_cast<uint32_t>(out[i]) != std::bit_cast<uint32_t>(sim::detail::fp16_proxy(v, round));
        }
        EXPECT_EQ(bad, 0u) << "op " << op << " scale " << std::hex << scale;
      }
}

TEST(SimPe, AddAndMultiply) {
  auto r = run_pe(test::pe_task(2, 1, 2, 0), 2, 2, {3, 3, 1, -1}, {2, 2, 2, 0.5f});
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.out, (std::vector<float>{5, 5, 3, -0.5f}));  // H1, H2
  EXPECT_EQ(r.trace.engine, "PE");
  EXPECT_EQ(r.trace.op, "add");
  r = run_pe(test::pe_task(2, 1, 2, 1), 2, 2, {3, 3, 1, -1}, {2, 2, 2, 0.5f});
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.out, (std::vector<float>{6, 6, 2, -0.5f}));  // H15
  EXPECT_EQ(r.trace.op, "mul");
}

TEST(SimPe, TheExactSumIsRoundedToNearestEven) {
  // 1 + 2^-11 is the tie between 1 and 1 + 2^-10: to even, 1. One more bit
  // (b = 2^-11 + 2^-21, an fp16 value) puts it above the tie: 1 + 2^-10.
  // 2048 + 1 is the tie between 2048 and 2050 (ulp 2): to even, 2048.
  auto r = run_pe(test::pe_task(1, 1, 3, 0), 1, 3, {1, 1, 2048}, {0x1p-11f, 0x1p-11f + 0x1p-21f, 1});
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.out, (std::vector<float>{1.0f, 1.0f + 0x1p-10f, 2048.0f}));
}

TEST(SimPe, SecondSourceUsesItsOwnStrides) {
  // b is stored with 128-byte rows and a 256-byte plane; a with the defaults.
  RegisterImage t = test::pe_task(2, 2, 1, 0);
  set(t, "TileDMASrc.Src2RowStride.Stride", 2);
  set(t, "TileDMASrc.Src2PlaneStride.PlaneStride", 4);
  Machine m;
  m.set_slot(5, test::tensor_bytes(2, 2, 1, {1, 2, 3, 4}));
  std::vector<uint8_t> b(512, 0xff);
  const float bv[] = {10, 20, 30, 40};
  for (int c = 0; c < 2; ++c)
    for (int h = 0; h < 2; ++h) test::put16(b, c * 256 + h * 128, test::h16(bv[c * 2 + h]));
  m.set_slot(6, b);
  m.set_slot(4, 256);
  ASSERT_EQ(error_of(m.run_task(t, 0)), "");
  EXPECT_EQ(test::tensor_values(*m.slot(4), 2, 2, 1), (std::vector<float>{11, 22, 33, 44}));
}

TEST(SimPe, MaxAndMin) {
  // OpMode 2 is eiln's max kernel, 3 mil-hwx-compiler's minimum record.
  auto r = run_pe(test::pe_task(1, 1, 2, 2), 1, 2, {1, 5}, {3, 2});
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.out, (std::vector<float>{3, 5}));
  EXPECT_EQ(r.trace.op, "max");
  EXPECT_TRUE(r.trace.notes.empty());
  r = run_pe(test::pe_task(1, 1, 2, 3), 1, 2, {1, 5}, {3, 2});
  EXPECT_EQ(r.out, (std::vector<float>{1, 2}));
  r = run_pe(test::pe_task(1, 1, 2, 4), 1, 2, {1, 5}, {3, 2});
  EXPECT_EQ(r.error, "unsupported: PE.Cfg.OpMode=4 in task 0");
}

TEST(SimPe, ScalesSubtractionAndAbsoluteValue) {
  // y = Scale * op(PreScale * a, +-b) + Bias: 0.5 * (2a + b) + 1 with a = 3, b = -4 -> 2.
  RegisterImage t = test::pe_task(1, 1, 1, 0);
  set(t, "PE.PreScale.PreScale", test::h16(2));
  set(t, "PE.BiasScale.Scale", test::h16(0.5f));
  set(t, "PE.BiasScale.Bias", test::h16(1));
  auto r = run_pe(t, 1, 1, {3}, {-4});
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.out, (std::vector<float>{2}));
  // SecSrc 3: a - b (eiln softmax subtracts the row maximum this way).
  t = test::pe_task(1, 1, 2, 0);
  set(t, "PE.Cfg.SecSrc", 3);
  r = run_pe(t, 1, 2, {3, 1}, {5, -2});
  EXPECT_EQ(r.out, (std::vector<float>{-2, 3}));
  EXPECT_EQ(r.trace.op, "sub");
  // One operand (TaskType 2, no second source): Scale * a + Bias; Cond: |a|.
  t = test::pe_task(1, 1, 2, 0);
  set(t, "Header[8].RBE1", 0);
  set(t, "Common.Cfg.TaskType", 2);
  set(t, "PE.Cfg.SecSrc", 0);
  set(t, "PE.BiasScale.Bias", test::h16(0.5f));
  r = run_pe(t, 1, 2, {3, -1}, {0, 0});
  EXPECT_EQ(r.out, (std::vector<float>{3.5f, -0.5f}));
  EXPECT_EQ(r.trace.op, "affine");
  set(t, "PE.BiasScale.Bias", 0);
  set(t, "PE.Cfg.Cond", 1);
  r = run_pe(t, 1, 2, {3, -1}, {0, 0});
  EXPECT_EQ(r.out, (std::vector<float>{3, 1}));
  EXPECT_EQ(r.trace.op, "abs");
}

TEST(SimPe, NeRegistersAreIgnoredOnPeTasks) {
  // macOS 14 leaves MACCfg 0x00100000, KernelCfg 0x80 and disabled lanes 0x80 on PE tasks.
  RegisterImage t = test::pe_task(1, 1, 1, 1);
  set(t, "NE.MACCfg.UnkBit20", 1);
  set(t, "NE.KernelCfg.PalettizedBits", 8);
  for (int i = 0; i < 16; ++i) {
    set(t, "KernelDMASrc.CoeffDMAConfig[" + std::to_string(i) + "].CacheHint", 2);
    set(t, "KernelDMASrc.CoeffBaseAddr[" + std::to_string(i) + "].Addr", 2);
  }
  const auto r = run_pe(t, 1, 1, {3}, {2});
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.out, (std::vector<float>{6}));
}

}  // namespace
}  // namespace ane
