// Neural engine: pass-through, ReLU, post-scale, the lookup table, the
// convolution MAC, bias, and every numerics option that changes a result.
// Expected values are worked out by hand in the comments.
#include <cmath>

#include <gtest/gtest.h>

#include "sim_support.h"

namespace ane {
namespace {

using sim::Machine;
using test::error_of;
using test::set;

// Runs a single-task machine: input tensor in slot 5, kernel bytes in slot 1.
struct Run {
  std::vector<float> out;
  std::vector<uint16_t> bits;
  sim::TraceRecord trace;
  std::string error;
};

Run run(const RegisterImage& r, uint32_t cin, uint32_t cout, uint32_t h, uint32_t w, const std::vector<float>& x,
        const std::vector<uint8_t>& kernel = {}, sim::Options o = {}, const std::vector<uint16_t>& xbits = {}) {
  Machine m(o);
  auto in = test::tensor_bytes(cin, h, w, x);
  if (!xbits.empty())  // exact fp16 patterns instead of rounded floats
    for (uint32_t i = 0; i < xbits.size(); ++i) test::put16(in, i * test::row_bytes(w) * h, xbits[i]);
  m.set_slot(5, in);
  m.set_slot(4, test::row_bytes(w) * h * cout);
  if (!kernel.empty()) m.set_slot(1, kernel);
  Run res;
  res.error = error_of(m.run_task(r, 0, 0, [&](const sim::TraceRecord& t) { res.trace = t; }));
  if (!res.error.empty()) return res;
  res.out = test::tensor_values(*m.slot(4), cout, h, w);
  for (uint32_t c = 0; c < cout; ++c)
    for (uint32_t y = 0; y < h; ++y)
      for (uint32_t i = 0; i < w; ++i)
        res.bits.push_back(test::get16(*m.slot(4), (c * h + y) * test::row_bytes(w) + 2 * i));
  return res;
}

std::vector<uint8_t> lane_bits(uint64_t lane_bytes, const std::vector<std::vector<uint16_t>>& lanes) {
  std::vector<uint8_t> m(lane_bytes * lanes.size(), 0);
  for (size_t i = 0; i < lanes.size(); ++i)
    for (size_t k = 0; k < lanes[i].size(); ++k) test::put16(m, i * lane_bytes + 2 * k, lanes[i][k]);
  return m;
}

std::vector<uint8_t> sigmoid_kernel() {
  std::vector<uint8_t> m(0x80);
  for (int i = 0; i < 64; ++i) test::put16(m, 2 * i, sim::sigmoid_lut()[i]);
  return m;
}

bool has_note(const sim::TraceRecord& t, const std::string& prefix) {
  for (const auto& n : t.notes)
    if (n.rfind(prefix, 0) == 0) return true;
  return false;
}

TEST(SimNe, PassThroughCopies) {
  const auto r = run(test::pass_task(1, 1, 4), 1, 1, 1, 4, {-3, 5, -1, 2});
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.out, (std::vector<float>{-3, 5, -1, 2}));  // H6: NonlinearMode 0 leaves values alone
  EXPECT_EQ(r.trace.engine, "NE");
  EXPECT_EQ(r.trace.op, "pass");
}

TEST(SimNe, ElementwiseMultiplyModeTakesTheProductOfEachChannelPair) {
  // 4 channels in, 2 out: out 0 = in 0 * in 1, out 1 = in 2 * in 3 (the
  // layout pow's last task reads: z and log2 x side by side).
  RegisterImage r = test::pass_task(4, 1, 2);
  set(r, "Common.Cout.Cout", 2);
  set(r, "NE.MACCfg.OpMode", 2);
  set(r, "Common.GroupConvCfg.ElemMultMode", 1);
  set(r, "Common.GroupConvCfg.UnicastEn", 1);
  set(r, "Common.GroupConvCfg.UnicastCin", 2);
  const auto res = run(r, 4, 2, 1, 2, {1.5f, -2, 3, 0.25f, -4, 0.5f, 6, 8});
  ASSERT_EQ(res.error, "");
  EXPECT_EQ(res.out, (std::vector<float>{4.5f, -0.5f, -24, 4}));  // 1.5 * 3, -2 * 0.25, -4 * 6, 0.5 * 8
  EXPECT_EQ(res.trace.op, "channel-product");
}

TEST(SimNe, ReluClampsNegativesToZero) {
  const auto r = run(test::pass_task(1, 1, 4, 1), 1, 1, 1, 4, {-3, 5, -1, 2});
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.out, (std::vector<float>{0, 5, 0, 2}));  // H4
  EXPECT_EQ(r.bits[0], 0x0000) << "+0, not -0";
  EXPECT_EQ(r.trace.op, "relu");
}

TEST(SimNe, PostScaleMultiplies) {
  RegisterImage t = test::pass_task(1, 1, 2, 1);
  set(t, "NE.PostScale.PostScale", 0);  // H7: scale 0 makes everything 0
  auto r = run(t, 1, 1, 1, 2, {-3, 5});
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.out, (std::vector<float>{0, 0}));
  t = test::pass_task(1, 1, 3);
  set(t, "NE.PostScale.PostScale", test::h16(0.5f));
  r = run(t, 1, 1, 1, 3, {3, -5, 0.25f});
  EXPECT_EQ(r.out, (std::vector<float>{1.5f, -2.5f, 0.125f}));
}

TEST(SimNe, SigmoidTableAtEveryNodeIsTheNodeValue) {
  std::vector<float> x;
  for (int i = 0; i < 33; ++i) x.push_back(-8.0f + 0.5f * i);
  const auto r = run(test::pass_task(1, 1, 33, 2), 1, 1, 1, 33, x, sigmoid_kernel());
  ASSERT_EQ(r.error, "");
  for (int i = 0; i < 33; ++i) EXPECT_EQ(r.bits[i], sim::sigmoid_lut()[4 + i]) << x[i];
  EXPECT_EQ(r.bits[22], 0x3B9F) << "H8: sigmoid(3) = 0.95263671875";
  EXPECT_EQ(r.trace.op, "sigmoid");
  EXPECT_FALSE(has_note(r.trace, "lut=")) << "nodes: every LUT model agrees";
}

TEST(SimNe, SigmoidBetweenNodesFollowsTheLutOption) {
  // x = 0.25: linear = (0.5 + RN(sigmoid(0.5))) / 2 = (0.5 + 0.62255859375) / 2
  // = 0.561279296875, 1149.5 ulps of 2^-11: a tie, to even -> 0.5615234375.
  // ideal = RN(sigmoid(0.25)) = RN(0.56218) = 0.56201171875.
  auto r = run(test::pass_task(1, 1, 2, 2), 1, 1, 1, 2, {0.25f, 3.0f}, sigmoid_kernel());
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.out[0], 0.5615234375f);
  EXPECT_TRUE(has_note(r.trace, "lut=linear"));
  EXPECT_NEAR(r.out[0], 1 / (1 + std::exp(-0.25)), 0.0035);
  sim::Options o;
  o.numerics.lut = sim::Numerics::Lut::Ideal;
  r = run(test::pass_task(1, 1, 2, 2), 1, 1, 1, 2, {0.25f, 3.0f}, sigmoid_kernel(), o);
  EXPECT_EQ(r.out[0], 0.56201171875f);
  EXPECT_EQ(r.bits[1], 0x3B9F);
  EXPECT_TRUE(has_note(r.trace, "lut=ideal"));
}

TEST(SimNe, SigmoidBeyondTheNodesUsesTheLinesAndTheRange) {
  // x = -9: the left line slope37 * x + intercept38; x = -12: at or below
  // slot 0 (-9.9375) -> slot 2 = 0; x = 12: at or above slot 1 -> slot 3 = 1.
  const auto& t = sim::sigmoid_lut();
  const auto r = run(test::pass_task(1, 1, 3, 2), 1, 1, 1, 3, {-9, -12, 12}, sigmoid_kernel());
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.bits[0], double_to_fp16(double(test::f32(t[37])) * -9 + test::f32(t[38])));
  EXPECT_EQ(r.out[1], 0.0f);
  EXPECT_EQ(r.out[2], 1.0f);
}

TEST(SimNe, AnyTableIsReadByTheGeneralReading) {
  // Another node value is just another table: node 6 (x = -5) now reads 0x1234.
  auto k = sigmoid_kernel();
  test::put16(k, 2 * 10, 0x1234);
  auto r = run(test::pass_task(1, 1, 1, 2), 1, 1, 1, 1, {-5}, k);
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.bits[0], 0x1234);
  EXPECT_EQ(r.trace.op, "table");
  // Mode bits no table shows are refused by slot.
  test::put16(k, 2 * 42, 0x0012);
  r = run(test::pass_task(1, 1, 1, 2), 1, 1, 1, 1, {0}, k);
  EXPECT_EQ(r.error, "unsupported: LUT[42]=0x0012 (mode bits) in task 0");
  test::put16(k, 2 * 42, 0x0002);
  r = run(test::pass_task(1, 1, 1, 2), 1, 1, 1, 1, {0}, k);
  EXPECT_EQ(r.error, "unsupported: LUT[42]=0x0002 (transform) in task 0");
  test::put16(k, 2 * 42, 0x0001);
  test::put16(k, 2 * 50, 0x0001);
  r = run(test::pass_task(1, 1, 1, 2), 1, 1, 1, 1, {0}, k);
  EXPECT_EQ(r.error, "unsupported: LUT[50]=0x0001 (a slot no table uses) in task 0");
}

TEST(SimNe, TwoChannelConvolutionByHand) {
  // W = [[1, 2], [3, 4]], x0 = [1, 2, 3], x1 = [4, 5, 6] (H = 1, W = 3):
  // y0 = 1*x0 + 2*x1 = [9, 12, 15], y1 = 3*x0 + 4*x1 = [19, 26, 33].
  const auto k = lane_bits(64, {{test::h16(1), test::h16(2)}, {test::h16(3), test::h16(4)}});
  const auto r = run(test::conv_task(2, 2, 1, 3), 2, 2, 1, 3, {1, 2, 3, 4, 5, 6}, k);
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.out, (std::vector<float>{9, 12, 15, 19, 26, 33}));
  EXPECT_EQ(r.trace.op, "conv");
  EXPECT_EQ(r.trace.in_shape, (std::array<uint32_t, 4>{1, 2, 1, 3}));
  EXPECT_TRUE(has_note(r.trace, "acc=fp32"));
}

TEST(SimNe, ConvolutionAtEveryPixelOfA2DImage) {
  // 1 -> 1 channel, weight -2, H = 2, W = 40 (80-byte rows in 128-byte strides).
  std::vector<float> x(80);
  for (int i = 0; i < 80; ++i) x[i] = float(i - 40);
  const auto r = run(test::conv_task(1, 1, 2, 40), 1, 1, 2, 40, x, lane_bits(64, {{test::h16(-2)}}));
  ASSERT_EQ(r.error, "");
  for (int i = 0; i < 80; ++i) EXPECT_EQ(r.out[i], -2.0f * x[i]) << i;
}

TEST(SimNe, AccumulatorWidthDecidesATie) {
  // Products 1, 2^-11 and 2^-30 (= 2^-15 * 2^-15). fp32 loses 2^-30, leaving
  // 1 + 2^-11, a tie that rounds to even: 1.0. fp64 keeps it: 1 + 2^-10.
  const auto k = lane_bits(64, {{0x3c00, 0x3c00, 0x0200}});
  const std::vector<uint16_t> xb = {0x3c00, 0x1000, 0x0200};
  auto r = run(test::conv_task(3, 1, 1, 1), 3, 1, 1, 1, {0, 0, 0}, k, {}, xb);
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.bits[0], 0x3c00);
  EXPECT_TRUE(has_note(r.trace, "acc=fp32"));
  EXPECT_TRUE(has_note(r.trace, "subnormal=keep")) << "2^-15 is an fp16 subnormal";
  sim::Options o;
  o.numerics.accumulator = sim::Numerics::Accumulator::Fp64;
  r = run(test::conv_task(3, 1, 1, 1), 3, 1, 1, 1, {0, 0, 0}, k, o, xb);
  EXPECT_EQ(r.bits[0], 0x3c01);
  EXPECT_TRUE(has_note(r.trace, "acc=fp64"));
}

// acc=fp32-ordered is section 9's model to the letter: bias first, then one
// product at a time in input-channel order, each addition rounded to fp32.
// Large products that cancel make the order visible; the blocked kernel must
// match a plain loop bit for bit across block edges (Cout 15, 4100 pixels,
// enough work for two threads).
TEST(SimNe, OrderedAccumulationMatchesAPlainLoop) {
  const uint32_t cin = 70, cout = 15, h = 41, w = 100;
  std::vector<float> x(cin * h * w);
  std::vector<std::vector<uint16_t>> lanes(cout, std::vector<uint16_t>(cin + 1));
  uint32_t seed = 1;
  auto rnd = [&] {
    seed = seed * 1664525u + 1013904223u;
    return static_cast<float>(static_cast<int32_t>(seed >> 16) % 2000 - 1000) / 7.0f;
  };
  for (float& v : x) v = test::f32(test::h16(rnd()));
  for (auto& l : lanes)
    for (auto& v : l) v = test::h16(rnd());
  sim::Options o;
  o.numerics.accumulator = sim::Numerics::Accumulator::Fp32Ordered;
  const auto k = lane_bits(192, lanes);
  const auto r = run(test::conv_task(cin, cout, h, w, true), cin, cout, h, w, x, k, o);
  ASSERT_EQ(r.error, "");
  EXPECT_TRUE(has_note(r.trace, "acc=fp32-ordered"));
  for (uint32_t oc = 0; oc < cout; ++oc)
    for (uint32_t p = 0; p < h * w; ++p) {
      float s = test::f32(lanes[oc][0]);
      for (uint32_t ic = 0; ic < cin; ++ic) s += test::f32(lanes[oc][1 + ic]) * x[ic * h * w + p];
      ASSERT_EQ(r.bits[oc * h * w + p], float_to_fp16(s)) << oc << " " << p;
    }
}

TEST(SimNe, RoundedProductsOption) {
  // 3 * (1 + 2^-10) = 3.0029296875 and 1 * -3: exact sum 3 * 2^-10 = 0.0029296875.
  // products=fp16 rounds the first product to 3.00390625 first: sum 2^-8.
  const auto k = lane_bits(64, {{test::h16(3), test::h16(1)}});
  const std::vector<uint16_t> xb = {0x3c01, test::h16(-3)};
  auto r = run(test::conv_task(2, 1, 1, 1), 2, 1, 1, 1, {0, 0}, k, {}, xb);
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.out[0], 0.0029296875f);
  sim::Options o;
  o.numerics.products = sim::Numerics::Products::Fp16;
  r = run(test::conv_task(2, 1, 1, 1), 2, 1, 1, 1, {0, 0}, k, o, xb);
  EXPECT_EQ(r.out[0], 0.00390625f);
  EXPECT_TRUE(has_note(r.trace, "products=fp16"));
}

TEST(SimNe, BiasPointOption) {
  // (1 + 2^-10)^2 = 1 + 2^-9 + 2^-20, bias 2^-11. In the accumulator:
  // 1 + 2.5 ulp + tiny -> 1 + 3 ulp (0x3c03). After rounding: RN(sum) = 1 + 2 ulp,
  // + 2^-11 = 1 + 2.5 ulp, a tie -> even: 0x3c02.
  const auto k = lane_bits(64, {{0x1000, 0x3c01}});
  const std::vector<uint16_t> xb = {0x3c01};
  auto r = run(test::conv_task(1, 1, 1, 1, true), 1, 1, 1, 1, {0}, k, {}, xb);
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.bits[0], 0x3c03);
  EXPECT_TRUE(has_note(r.trace, "bias=in-acc"));
  sim::Options o;
  o.numerics.bias = sim::Numerics::BiasPoint::AfterRound;
  r = run(test::conv_task(1, 1, 1, 1, true), 1, 1, 1, 1, {0}, k, o, xb);
  EXPECT_EQ(r.bits[0], 0x3c02);
  EXPECT_TRUE(has_note(r.trace, "bias=after-round"));
}

TEST(SimNe, OverflowOption) {
  // 2 * 60000 = 120000 > 65504.
  const auto k = lane_bits(64, {{test::h16(2)}});
  auto r = run(test::conv_task(1, 1, 1, 1), 1, 1, 1, 1, {60000}, k);
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.bits[0], 0x7c00);
  EXPECT_EQ(r.trace.inf, 1u);
  EXPECT_TRUE(has_note(r.trace, "overflow=inf (1 values)"));
  sim::Options o;
  o.numerics.overflow = sim::Numerics::Overflow::Saturate;
  r = run(test::conv_task(1, 1, 1, 1), 1, 1, 1, 1, {-60000}, k, o);
  EXPECT_EQ(r.bits[0], 0xfbff);
  EXPECT_TRUE(has_note(r.trace, "overflow=saturate"));
}

TEST(SimNe, SubnormalOption) {
  // 2^-20 is subnormal in fp16 (0x0010).
  auto r = run(test::pass_task(1, 1, 1), 1, 1, 1, 1, {0}, {}, {}, {0x0010});
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.bits[0], 0x0010);
  EXPECT_EQ(r.trace.subnormal, 1u);
  sim::Options o;
  o.numerics.subnormals = sim::Numerics::Subnormals::FlushToZero;
  r = run(test::pass_task(1, 1, 1), 1, 1, 1, 1, {0}, {}, o, {0x8010});
  EXPECT_EQ(r.bits[0], 0x8000);
  EXPECT_TRUE(has_note(r.trace, "subnormal=ftz"));
}

TEST(SimNe, NanPropagates) {
  auto r = run(test::pass_task(1, 1, 1, 1), 1, 1, 1, 1, {0}, {}, {}, {0x7e00});
  ASSERT_EQ(r.error, "");
  EXPECT_TRUE(fp16_is_nan(r.bits[0]));
  EXPECT_EQ(r.trace.nan, 1u);
}

TEST(SimNe, PostChainAssumptionOrdersBiasScaleAndNonlinearity) {
  // A3: y = relu((b + w*x) * s) with b = -4, w = 1, s = 2: x = 3 -> 0, x = 5 -> 2.
  RegisterImage t = test::conv_task(1, 1, 1, 2, true);
  set(t, "NE.MACCfg.NonlinearMode", 1);
  set(t, "NE.PostScale.PostScale", test::h16(2));
  const auto k = lane_bits(64, {{test::h16(-4), test::h16(1)}});
  auto r = run(t, 1, 1, 1, 2, {3, 5}, k);
  EXPECT_EQ(r.error, "unsupported: NE.MACCfg.NonlinearMode=1 with NE.MACCfg.OpMode=0 in task 0");
  sim::Options o;
  o.assume.post_chain = true;
  r = run(t, 1, 1, 1, 2, {3, 5}, k, o);
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.out, (std::vector<float>{0, 2}));
  EXPECT_TRUE(has_note(r.trace, "A3 post-chain"));
}

TEST(SimNe, TraceRecordDescribesTheTask) {
  const auto k = lane_bits(64, {{test::h16(2)}, {test::h16(3)}});
  const auto r = run(test::conv_task(1, 2, 1, 1), 1, 2, 1, 1, {1}, k);
  ASSERT_EQ(r.error, "");
  const auto& t = r.trace;
  EXPECT_EQ(t.min, 2.0f);
  EXPECT_EQ(t.max, 3.0f);
  ASSERT_EQ(t.dma.size(), 4u);
  EXPECT_EQ(t.dma[0].unit, "TileDMASrc");
  EXPECT_EQ(t.dma[1].unit, "KernelDMA");
  EXPECT_EQ(t.dma[1].lane, 0);
  EXPECT_EQ(t.dma[3].unit, "TileDMADst");
  EXPECT_EQ(t.dma[3].slot, 4);
  EXPECT_EQ(t.dma[3].end, 0x42u);
  // FNV-1a 64 over the bytes 00 40 00 42 (2.0 and 3.0, little-endian).
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t b : {0x00, 0x40, 0x00, 0x42}) h = (h ^ b) * 0x100000001b3ull;
  EXPECT_EQ(t.checksum, h);
  const std::string line = t.line();
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_NE(line.find("NE conv in 1x1x1x1 out 1x2x1x1"), std::string::npos) << line;
  EXPECT_NE(line.find("KernelDMA s1 lanes 0-1[0x0,0x80)"), std::string::npos) << line;
}

}  // namespace
}  // namespace ane
