// Chains through L2, reductions and broadcasting, on hand-made register
// images: a result kept in L2 (ResultType 3, no TileDMADst) is what a later
// task reads (SourceType 3); a PE reduction leaves one value per H x W plane;
// Common.Broadcast repeats such a value along W.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <random>

#include "sim_support.h"

namespace ane {
namespace {

using sim::Machine;
using test::error_of;
using test::set;

// The result stays in L2 at `address` instead of going out through tile DMA.
void keep_in_l2(RegisterImage& r, uint32_t address) {
  set(r, "L2.ResultCfg.ResultType", 3);
  set(r, "Header[8].WBE", 0);
  set(r, "TileDMADst.DMAConfig.En", 0);
  set(r, "L2.ResultBase.Addr", address >> 4);
}

// The first source is the result an earlier task left in L2 at `address`.
void read_l2(RegisterImage& r, uint32_t address) {
  set(r, "L2.SourceCfg.SourceType", 3);
  set(r, "Header[8].RBE0", 0);
  set(r, "TileDMASrc.DMAConfig.En", 0);
  set(r, "L2.SourceBase.Addr", address >> 4);
}

// A one-operand PE task: y = scale * a + bias.
RegisterImage affine(uint32_t c, uint32_t h, uint32_t w, float scale, float bias) {
  RegisterImage r = test::pe_task(c, h, w, 0);
  set(r, "Header[8].RBE1", 0);
  set(r, "L2.SourceCfg.Source2Type", 0);
  set(r, "Common.Cfg.TaskType", 2);
  set(r, "PE.Cfg.SecSrc", 0);
  set(r, "PE.BiasScale.Scale", test::h16(scale));
  set(r, "PE.BiasScale.Bias", test::h16(bias));
  return r;
}

TEST(SimChain, AResultKeptInL2FeedsTheNextTask) {
  // Task 0: x * 2 (NE PostScale) into L2 at 0x100; task 1: 0.5 * that + 1 out.
  RegisterImage t0 = test::pass_task(1, 1, 4);
  set(t0, "NE.PostScale.PostScale", test::h16(2));
  keep_in_l2(t0, 0x100);
  RegisterImage t1 = affine(1, 1, 4, 0.5f, 1);
  read_l2(t1, 0x100);
  Machine m;
  m.set_slot(5, test::tensor_bytes(1, 1, 4, {1, -2, 3.5f, 0}));
  m.set_slot(4, 64);
  std::vector<sim::TraceRecord> trace;
  auto hook = [&](const sim::TraceRecord& r) { trace.push_back(r); };
  ASSERT_EQ(error_of(m.run_task(t0, 0, 0, hook)), "");
  ASSERT_EQ(error_of(m.run_task(t1, 1, 0, hook)), "");
  EXPECT_EQ(test::tensor_values(*m.slot(4), 1, 1, 4), (std::vector<float>{2, -1, 4.5f, 1}));
  ASSERT_EQ(trace.size(), 2u);
  EXPECT_NE(trace[0].line().find("L2[0x100,0x108)"), std::string::npos) << trace[0].line();
  EXPECT_NE(trace[1].line().find("L2[0x100,0x108)"), std::string::npos) << trace[1].line();
  EXPECT_EQ(trace[1].op, "affine");
  // A read where nothing was left, or of another size, is an error.
  RegisterImage t2 = affine(1, 1, 4, 1, 0);
  read_l2(t2, 0x200);
  EXPECT_EQ(error_of(m.run_task(t2, 2)), "task 2: the first source reads L2 at 0x200, where no earlier task left a result");
  RegisterImage t3 = affine(1, 1, 8, 1, 0);
  read_l2(t3, 0x100);
  EXPECT_EQ(error_of(m.run_task(t3, 3)), "task 3: the first source reads 8 values from L2 at 0x100, where task 0 left 4");
  m.clear_l2();
  EXPECT_EQ(error_of(m.run_task(t1, 1)), "task 1: the first source reads L2 at 0x100, where no earlier task left a result");
}

// A reduction over `groups` groups (rows) of `w` values (4 of 8 unless
// given), read with a group stride of one row.
RegisterImage reduce_task(uint32_t pool, bool reciprocal, uint32_t groups = 4, uint32_t w = 8) {
  RegisterImage r = test::pe_task(1, 1, w, 0);
  set(r, "Header[8].RBE1", 0);
  set(r, "L2.SourceCfg.Source2Type", 0);
  set(r, "Common.Cfg.TaskType", 5);
  set(r, "PE.Cfg.SecSrc", 0);
  set(r, "PE.Cfg.PoolMode", pool);
  set(r, "PE.Cfg.Reciprocal", reciprocal ? 1 : 0);
  set(r, "Common.GroupConvCfg.NumGroups", groups);
  set(r, "TileDMASrc.GroupStride.Stride", static_cast<uint32_t>(test::row_bytes(w) >> 6));
  keep_in_l2(r, 0);
  return r;
}

std::vector<float> four_rows() {
  std::vector<float> v;
  for (int g = 0; g < 4; ++g)
    for (int i = 0; i < 8; ++i) v.push_back(static_cast<float>((g + 1) * (i - 2)));
  return v;  // row g: (g+1) * [-2, -1, 0, 1, 2, 3, 4, 5]: sum 12 (g+1), max 5 (g+1)
}

// Then x * (the row's value), the row value repeated along W (Broadcast.Src1W).
std::vector<float> reduce_and_scale(const RegisterImage& reduce, std::string* op = nullptr) {
  RegisterImage mul = test::pe_task(1, 4, 8, 1);
  read_l2(mul, 0);
  set(mul, "Common.Broadcast.Src1W", 1);
  set(mul, "Header[8].RBase1", 5);         // b: the input itself, by tile DMA
  set(mul, "TileDMASrc.DMAConfig.En", 1);  // on for the second source (eiln softmax task 4)
  Machine m;
  m.set_slot(5, test::tensor_bytes(1, 4, 8, four_rows()));
  m.set_slot(4, 4 * 64);
  EXPECT_EQ(error_of(m.run_task(reduce, 0, 0, [&](const sim::TraceRecord& r) { if (op) *op = r.op; })), "");
  EXPECT_EQ(error_of(m.run_task(mul, 1)), "");
  return test::tensor_values(*m.slot(4), 1, 4, 8);
}

TEST(SimChain, ReductionsAndWBroadcast) {
  const auto x = four_rows();
  std::string op;
  auto y = reduce_and_scale(reduce_task(0, false), &op);
  EXPECT_EQ(op, "reduce-sum");
  for (int i = 0; i < 32; ++i) EXPECT_EQ(y[i], x[i] * 12 * (i / 8 + 1)) << i;
  y = reduce_and_scale(reduce_task(2, false), &op);
  EXPECT_EQ(op, "reduce-max");
  for (int i = 0; i < 32; ++i) EXPECT_EQ(y[i], x[i] * 5 * (i / 8 + 1)) << i;
  // Reciprocal (eiln softmax): x / sum, rounded twice (1/sum to fp16, then the product).
  y = reduce_and_scale(reduce_task(0, true), &op);
  EXPECT_EQ(op, "reduce-sum-reciprocal");
  for (int i = 0; i < 32; ++i) {
    const float r = test::f32(test::h16(1.0f / (12.0f * static_cast<float>(i / 8 + 1))));
    EXPECT_EQ(y[i], test::f32(test::h16(x[i] * r))) << i;
  }
  // FinalScale 1/8: the mean.
  RegisterImage mean = reduce_task(0, false);
  set(mean, "PE.FinalScale.FinalScale", 0x3e000000);  // fp32 0.125
  y = reduce_and_scale(mean, &op);
  EXPECT_EQ(op, "reduce-mean");
  for (int i = 0; i < 32; ++i) EXPECT_EQ(y[i], x[i] * 1.5f * static_cast<float>(i / 8 + 1)) << i;
  // Refused: other pool modes, a reciprocal mean, a broadcast read through tile DMA.
  RegisterImage r = reduce_task(1, false);
  Machine m;
  m.set_slot(5, 4 * 64);
  EXPECT_EQ(error_of(m.run_task(r, 0)), "unsupported: PE.Cfg.PoolMode=1 in task 0");
  r = reduce_task(0, true);
  set(r, "PE.FinalScale.FinalScale", 0x3e000000);
  EXPECT_EQ(error_of(m.run_task(r, 0)),
            "unsupported: PE.FinalScale.FinalScale=0x3e000000 with PE.Cfg.Reciprocal=1 in task 0");
  RegisterImage b = test::pe_task(1, 1, 8, 0);
  set(b, "Common.Broadcast.Src2W", 1);
  EXPECT_EQ(error_of(m.run_task(b, 0)), "unsupported: Common.Broadcast=0x10 with a tile-DMA second source in task 0");
}

// Large reductions run plane by plane from fp16 rows (stream.h) unless a
// trace asks for the whole-tensor path: both give the same bits, and the bits
// of the definition (fp32 sums in W order; the maximum, NaN propagating).
TEST(SimChain, LargeReductionsGiveTheWholeTensorPathsBits) {
  constexpr uint32_t kG = 66, kW = 2048;  // 135,168 values: streamed, on two threads; planes not in fours
  std::mt19937 rng(21);
  std::uniform_real_distribution<float> dist(-8.0f, 8.0f);
  std::vector<float> x(uint64_t{kG} * kW);
  for (float& v : x) v = test::f32(test::h16(dist(rng)));
  x[5 * kW + 77] = NAN;
  // Row 9: the largest fp16 subnormal, which subnormal=ftz reads as zero
  // (the sum, 0.125, is a normal number: the output does not flush it).
  std::fill_n(x.begin() + 9 * kW, kW, test::f32(0x03ff));
  for (uint32_t pool : {0u, 2u})
    for (bool ftz : {false, true}) {
      SCOPED_TRACE(testing::Message() << "PoolMode " << pool << (ftz ? ", ftz" : ""));
      const RegisterImage reduce = reduce_task(pool, false, kG, kW);
      RegisterImage copy = affine(1, kG, 1, 1, 0);  // the kG values out through tile DMA
      read_l2(copy, 0);
      sim::Options o;
      if (ftz) o.numerics.subnormals = sim::Numerics::Subnormals::FlushToZero;
      auto run = [&](bool traced) {
        Machine m(o);
        m.set_slot(5, test::tensor_bytes(1, kG, kW, x));
        m.set_slot(4, kG * test::row_bytes(1));
        sim::TraceHook hook;
        if (traced) hook = [](const sim::TraceRecord&) {};
        EXPECT_EQ(error_of(m.run_task(reduce, 0, 0, hook)), "");
        EXPECT_EQ(error_of(m.run_task(copy, 1)), "");
        return test::tensor_values(*m.slot(4), 1, kG, 1);
      };
      const auto streamed = run(false), whole = run(true);
      // An input as the source DMA reads it: fp16 subnormals are zeros under ftz.
      auto in = [&](uint64_t i) { return ftz && std::fabs(x[i]) < 6.1035156e-05f ? 0.0f * x[i] : x[i]; };
      for (uint32_t g = 0; g < kG; ++g) {
        const uint64_t row = uint64_t{g} * kW;
        float want = pool == 2 ? in(row) : 0.0f;
        for (uint32_t i = pool == 2 ? 1 : 0; i < kW; ++i) {
          const float v = in(row + i);
          if (pool == 2)
            want = std::isnan(want) || std::isnan(v) ? NAN : std::max(want, v);
          else
            want += v;
        }
        want = test::f32(test::h16(want));
        EXPECT_EQ(std::bit_cast<uint32_t>(streamed[g]), std::bit_cast<uint32_t>(whole[g])) << g;
        if (std::isnan(want))
          EXPECT_TRUE(std::isnan(streamed[g])) << g;
        else
          EXPECT_EQ(streamed[g], want) << g;
      }
    }
}

TEST(SimChain, SubtractingABroadcastRowValue) {
  // eiln softmax's second step: (x - rowmax) * log2(e), the max from L2
  // through the second source, repeated along W (Broadcast.Src2W).
  RegisterImage sub = test::pe_task(1, 4, 8, 0);
  set(sub, "PE.Cfg.SecSrc", 3);
  set(sub, "Header[8].RBE1", 0);
  set(sub, "L2.SourceCfg.Source2Type", 0);
  set(sub, "L2.Source2Base.Addr", 0);
  set(sub, "Common.Broadcast.Src2W", 1);
  set(sub, "PE.BiasScale.Scale", 0x3dc5);  // fp16 log2(e)
  Machine m;
  m.set_slot(5, test::tensor_bytes(1, 4, 8, four_rows()));
  m.set_slot(4, 4 * 64);
  ASSERT_EQ(error_of(m.run_task(reduce_task(2, false), 0)), "");
  std::string line;
  ASSERT_EQ(error_of(m.run_task(sub, 1, 0, [&](const sim::TraceRecord& r) { line = r.line(); })), "");
  const auto x = four_rows();
  const auto y = test::tensor_values(*m.slot(4), 1, 4, 8);
  for (int i = 0; i < 32; ++i) {
    const double want = (double(x[i]) - 5.0 * (i / 8 + 1)) * test::f32(0x3dc5);
    EXPECT_EQ(y[i], test::f32(double_to_fp16(want))) << i;
  }
  EXPECT_NE(line.find("PE sub"), std::string::npos) << line;
}

TEST(SimChain, AccumulatorBiasBeforeTheTable) {
  // OpMode 0 + KernelMode 1 (eiln inv): x + AccBias, then PostScale.
  RegisterImage r = test::pass_task(1, 1, 3);
  set(r, "NE.MACCfg.OpMode", 0);
  set(r, "NE.AccBias.AccBias", test::h16(0.25f));
  set(r, "NE.PostScale.PostScale", test::h16(2));
  Machine m;
  m.set_slot(5, test::tensor_bytes(1, 1, 3, {1, -0.25f, 8}));
  m.set_slot(4, 64);
  ASSERT_EQ(error_of(m.run_task(r, 0)), "");
  EXPECT_EQ(test::tensor_values(*m.slot(4), 1, 1, 3), (std::vector<float>{2.5f, 0, 16.5f}));
}

}  // namespace
}  // namespace ane
