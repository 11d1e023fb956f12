// Each numerics option (section 9) changes the result where it should, and
// only there; the reference computes what each option promises.
// Programs with modified registers run two ways: through Simulator on a
// re-encoded copy of the file, and through Machine::run_task on slots built
// from the slot table (section 2.2). Both must give the expected result.
#include "reference/sim_harness.h"

namespace {

using namespace ane_ref::harness;

// ===== numerics options (§9): each changes the result where it should, and only there =====

TEST(SimReferenceOptions, LutIdealIsRoundedSigmoidForEveryFp16Value) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("sigmoid");
  const Options ideal = numerics([](Numerics& n) { n.lut = Numerics::Lut::Ideal; });
  for (const auto& in : all_fp16_in_chunks(kRow))
    ASSERT_TRUE(values_equal(run_sim(p, {{"image", in}}, ideal), map1(in, ref::sigmoid_ideal), in));
}

// At the nodes Linear and Ideal agree; at 1.25 the straight line between the
// nodes 1.0 and 1.5 is exactly 0.7744140625 (0x3A32), RN(sigmoid(1.25)) is 0x3A38.
TEST(SimReferenceOptions, LutIdealDiffersFromLinearOnlyOffTheNodes) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("sigmoid");
  const auto t = sigmoid_table(p);
  Fp16 nodes;
  for (int i = 0; i <= 32; ++i) nodes.push_back(h(-8 + 0.5 * i));
  const Options ideal = numerics([](Numerics& n) { n.lut = Numerics::Lut::Ideal; });
  const Fp16 in = padded(kRow, nodes);  // the zeros of the padding are a node too
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", in}}), map1(in, ref::sigmoid_ideal), in));
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", in}}, ideal), map1(in, ref::sigmoid_ideal), in));
  ASSERT_EQ(ref::sigmoid_lut(t, h(1.25)), 0x3a32);
  ASSERT_EQ(ref::sigmoid_ideal(h(1.25)), 0x3a38);
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", filled(kRow, h(1.25))}}), filled(kRow, 0x3a32)));
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", filled(kRow, h(1.25))}}, ideal), filled(kRow, 0x3a38)));
}

const Options kFtz = numerics([](Numerics& n) { n.subnormals = Numerics::Subnormals::FlushToZero; });
const Options kSaturate = numerics([](Numerics& n) { n.overflow = Numerics::Overflow::Saturate; });

// FlushToZero flushes subnormal inputs and results (§9: inputs, weights, results).
// The reference: flush(op(flush(a), flush(b))).
TEST(SimReferenceOptions, FlushToZeroOnPlanarAdd) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("sum");
  // subnormal + subnormal; normals whose difference is subnormal; subnormal
  // inputs next to normal ones, whose flushing changes the result.
  Fp16 a{0x0001, 0x0600, 0x0400, 0x03ff, 0x8200}, b{0x0001, 0x8400, 0x83ff, 0x0400, 0x0500};
  auto keep = [](uint16_t x, uint16_t y) { return ref::pe_add(x, y); };
  auto ftz = [](uint16_t x, uint16_t y) { return ref::flush(ref::pe_add(ref::flush(x), ref::flush(y))); };
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_FALSE(same(keep(a[i], b[i]), ftz(a[i], b[i]))) << i;  // cases that matter
  // Normal inputs with normal (or zero / infinite) results: FlushToZero must change nothing.
  std::mt19937 rng(91);
  while (a.size() < 64) {
    const uint16_t x = random_fp16(rng), y = random_fp16(rng);
    if (ref::is_subnormal(x) || ref::is_subnormal(y) || ref::is_subnormal(keep(x, y))) continue;
    a.push_back(x), b.push_back(y);
  }
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", a}, {"image2", b}}), map2(a, b, keep), a));
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", a}, {"image2", b}}, kFtz), map2(a, b, ftz), a));
}

TEST(SimReferenceOptions, FlushToZeroOnReluEveryFp16Value) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("relu");
  for (const auto& in : all_fp16_in_chunks(kRow))
    ASSERT_TRUE(values_equal(run_sim(p, {{"image", in}}, kFtz),
                             map1(in, [](uint16_t x) { return ref::flush(ref::relu(ref::flush(x))); }), in));
}

TEST(SimReferenceOptions, FlushToZeroOnConcatCopy) {
  ANE_REQUIRE_CORPUS();
  std::mt19937 rng(92);
  const ref::Tensor3 a{16384, 1, 1, random_vector(rng, 16384)},
      b{16, 1, 1, padded(16, {0x0001, 0x8001, 0x03ff, 0x83ff, 0x0400})};
  const Fp16 want = ref::concat_channels(a, b).v;
  const auto p = load("concat");
  EXPECT_TRUE(values_equal(run_sim(p, {{"input_0", a.v}, {"input_1", b.v}}), want));
  EXPECT_TRUE(values_equal(run_sim(p, {{"input_0", a.v}, {"input_1", b.v}}, kFtz), map1(want, ref::flush)));
}

// Subnormal inputs, subnormal weights and subnormal results of a convolution.
TEST(SimReferenceOptions, FlushToZeroOnConvolution) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("conv");
  const Fp16 w = conv_weights(p, 3, 3);
  const ref::Tensor3 tiny{3, 1, 1, {0x0001, 0x0001, 0x0001}};  // 2 * 3 * 2^-24: subnormal in and out
  ASSERT_EQ(ref::conv1x1(tiny, w, 3).v, filled(3, 0x0006));
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", tiny.v}}), filled(3, 0x0006)));
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", tiny.v}}, kFtz), filled(3, 0)));
  const ref::Tensor3 normal{3, 1, 1, {h(1.5), h(-0.25), h(1000)}};  // nothing subnormal: no change
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", normal.v}}, kFtz), ref::conv1x1(normal, w, 3).v));
  // A subnormal weight (2^-24) times 1024 is the normal 2^-14: kept, or 0 when weights flush.
  std::map<uint64_t, Fp16> lanes;
  for (int oc = 0; oc < 3; ++oc) lanes[lane_offset(p, oc)] = padded(32, {0x0001, 0, 0});
  const Inputs in{{"image", {h(1024), h(1), h(1)}}};
  run_both(
      p, regs_of(p), in, {}, [](const Outcome& r) { EXPECT_TRUE(values_equal(r, filled(3, 0x0400))); }, lanes);
  run_both(
      p, regs_of(p), in, kFtz, [](const Outcome& r) { EXPECT_TRUE(values_equal(r, filled(3, 0))); }, lanes);
}

// sigmoid(-17) = 4.1e-8 rounds to the subnormal 2^-24 (Lut::Ideal); FlushToZero makes it 0.
TEST(SimReferenceOptions, FlushToZeroOnSigmoidResult) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("sigmoid");
  Options ideal = numerics([](Numerics& n) { n.lut = Numerics::Lut::Ideal; });
  const Fp16 in = padded(kRow, {h(-17), h(-1), h(0), h(2.5)});
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", in}}, ideal), map1(in, ref::sigmoid_ideal), in));
  ideal.numerics.subnormals = Numerics::Subnormals::FlushToZero;
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", in}}, ideal),
                           map1(in, [](uint16_t x) { return ref::flush(ref::sigmoid_ideal(x)); }), in));
  EXPECT_EQ(ref::flush(ref::sigmoid_ideal(h(-17))), 0);
}

// Saturate gives +-65504 where the default gives +-Inf, and changes nothing else.
TEST(SimReferenceOptions, SaturateOnPlanarAddAndMultiply) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("sum");
  Fp16 a{0x7bff, 0xfbff, 0x7bff, h(40000), h(256)}, b{0x7bff, 0xfbff, 0x4c00, h(30000), h(256)};
  std::mt19937 rng(93);
  while (a.size() < 64) {
    const uint16_t x = random_fp16(rng, false), y = random_fp16(rng, false);
    a.push_back(x), b.push_back(y);
  }
  auto sat_add = [](uint16_t x, uint16_t y) { return ref::saturate(ref::pe_add(x, y)); };
  auto sat_mul = [](uint16_t x, uint16_t y) { return ref::saturate(ref::pe_mul(x, y)); };
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(ref::is_inf(ref::pe_add(a[i], b[i]))) << i;  // overflow cases
  EXPECT_TRUE(ref::is_inf(ref::pe_mul(a[4], b[4])));                                   // 256 * 256 = 65536
  const Inputs in{{"image", a}, {"image2", b}};
  EXPECT_TRUE(values_equal(run_sim(p, in), map2(a, b, ref::pe_add), a));
  EXPECT_TRUE(values_equal(run_sim(p, in, kSaturate), map2(a, b, sat_add), a));
  const auto mul = modified(p, {{"PE.Cfg.OpMode", 1}});
  run_both(p, mul, in, {}, [&](const Outcome& r) { EXPECT_TRUE(values_equal(r, map2(a, b, ref::pe_mul), a)); });
  run_both(p, mul, in, kSaturate, [&](const Outcome& r) { EXPECT_TRUE(values_equal(r, map2(a, b, sat_mul), a)); });
}

TEST(SimReferenceOptions, SaturateOnConvolution) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("conv");
  const Fp16 w = conv_weights(p, 3, 3);
  for (const Fp16& in :
       {Fp16{h(60000), h(60000), h(0)}, Fp16{h(-60000), h(-1), h(-60000)}, Fp16{h(100), h(-7), h(0.5)}}) {
    const Fp16 want = ref::conv1x1(ref::Tensor3{3, 1, 1, in}, w, 3).v;
    EXPECT_TRUE(values_equal(run_sim(p, {{"image", in}}), want, in));
    EXPECT_TRUE(values_equal(run_sim(p, {{"image", in}}, kSaturate), map1(want, ref::saturate), in));
  }
}

// Accumulator: with x = [2^14, 2^-12, -2^14] and weights 2, an fp32
// accumulator in input-channel order loses 2^-11 next to 2^15 (§9 default
// acc=fp32) and returns 0; an fp64 one keeps it: 2^-11.
TEST(SimReferenceOptions, AccumulatorPrecision) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("conv");
  const Fp16 w = conv_weights(p, 3, 3);
  const ref::Tensor3 x{3, 1, 1, {h(0x1p14), h(0x1p-12), h(-0x1p14)}};
  const Fp16 f32 = ref::conv1x1(x, w, 3, {}, 0x3c00, ref::Acc::Float).v;
  const Fp16 f64 = ref::conv1x1(x, w, 3, {}, 0x3c00, ref::Acc::Double).v;
  ASSERT_EQ(f32, filled(3, 0));
  ASSERT_EQ(f64, filled(3, h(0x1p-11)));
  const Options acc64 = numerics([](Numerics& n) { n.accumulator = Numerics::Accumulator::Fp64; });
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", x.v}}), f32));
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", x.v}}, acc64), f64));
  const ref::Tensor3 exact{3, 1, 1, {h(1.5), h(-0.25), h(1000)}};  // exact sums: no difference
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", exact.v}}, acc64), ref::conv1x1(exact, w, 3).v));
}

// The §9 default acc=fp32 sums in input-channel order, also over 512 channels.
// gemm.hwx (A2 for the lane order) with weights and inputs in [1, 2] on the
// 2^-10 grid, built to cancel: x[ic + 256] = -x[ic] and W[oc][ic + 256] =
// W[oc][ic] + {0, +-2^-10}. Partial sums reach ~600, where fp32 keeps nothing
// below 2^-14, while the exact result is ~2^-5. So acc=fp64 gives RN(exact sum)
// (exact in double: multiples of 2^-20 below 2^11), acc=fp32 in input-channel
// order gives the reference's sequential float sum, and any order lies within
// conv_range.
TEST(SimReferenceOptions, AccumulatorOrderOver512Channels) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("gemm");
  const int n = 32;  // 2^OCGSize output channels per lane (A2, §11.2)
  std::mt19937 rng(112);
  auto pick = [&] { return h(1 + (rng() % 1024) / 1024.0); };
  ref::Tensor3 x{512, 1, 1, Fp16(512)};
  for (int ic = 0; ic < 256; ++ic) x.v[ic] = pick(), x.v[ic + 256] = x.v[ic] ^ 0x8000;
  Fp16 w(512 * 512);
  for (int oc = 0; oc < 512; ++oc)
    for (int ic = 0; ic < 256; ++ic) {
      const uint16_t a = pick();
      w[oc * 512 + ic] = a;
      w[oc * 512 + ic + 256] = h(d(a) + (static_cast<int>(rng() % 3) - 1) * 0x1p-10);
    }
  std::map<uint64_t, Fp16> lanes;
  for (int g = 0; g < 16; ++g) {
    Fp16 l(512 * n);
    for (int j = 0; j < n; ++j)
      for (int ic = 0; ic < 512; ++ic) l[ic * n + j] = w[(g * n + j) * 512 + ic];
    lanes[lane_offset(p, g)] = l;
  }
  const auto range = conv_range(x, w, 512);
  const auto& lo = range.first;
  const auto& hi = range.second;
  const Fp16 f32 = ref::conv1x1(x, w, 512, {}, 0x3c00, ref::Acc::Float).v;
  const Fp16 f64 = ref::conv1x1(x, w, 512, {}, 0x3c00, ref::Acc::Double).v;
  size_t differ = 0;
  for (size_t i = 0; i < f32.size(); ++i) differ += f32[i] != f64[i];
  EXPECT_GT(differ, 400u);  // the accumulator matters for nearly every output
  Options a2;  // numerics settings on the gemm lanes (no assumption needed)
  // Default acc=fp32: fp32 sums in the BLAS's own (blocked) order: inside the
  // any-order bound, not necessarily equal to the sequential sum.
  run_both(
      p, regs_of(p), {{"image", x.v}}, a2, [&](const Outcome& r) { EXPECT_TRUE(values_within(r, lo, hi)); }, lanes);
  // acc=fp32-ordered: fp32 sums in input-channel order (section 9), bit for bit.
  a2.numerics.accumulator = Numerics::Accumulator::Fp32Ordered;
  run_both(
      p, regs_of(p), {{"image", x.v}}, a2,
      [&](const Outcome& r) {
        EXPECT_TRUE(values_within(r, lo, hi));
        EXPECT_TRUE(values_equal(r, f32));
      },
      lanes);
  a2.numerics.accumulator = Numerics::Accumulator::Fp64;
  run_both(
      p, regs_of(p), {{"image", x.v}}, a2, [&](const Outcome& r) { EXPECT_TRUE(values_equal(r, f64)); }, lanes);
}

// Products: 2 * 40000 = 80000 is exact in fp32 but Inf in fp16, so with
// products rounded to fp16 the sum 80000 - 80000 + 2 becomes Inf - Inf = NaN.
TEST(SimReferenceOptions, ProductsRoundedToFp16) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("conv");
  const Fp16 w = conv_weights(p, 3, 3);
  const ref::Tensor3 x{3, 1, 1, {h(40000), h(-40000), h(1)}};
  ASSERT_TRUE(ref::is_inf(ref::pe_mul(w[0], x.v[0])));
  const Options fp16_products = numerics([](Numerics& n) { n.products = Numerics::Products::Fp16; });
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", x.v}}), ref::conv1x1(x, w, 3).v));
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", x.v}}, fp16_products), filled(3, 0x7e00)));
  const ref::Tensor3 exact{3, 1, 1, {h(1.5), h(-0.25), h(1000)}};  // products exact in fp16: no difference
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", exact.v}}, fp16_products), ref::conv1x1(exact, w, 3).v));
}

// Bias point: lanes [b=1, 1, 1, 1] and x = [2048, 1, 0]: in the accumulator
// 1 + 2049 = 2050; after rounding RN(2049) = 2048, then RN(2048 + 1) = 2048.
TEST(SimReferenceOptions, BiasInAccumulatorOrAfterRounding) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("conv");
  std::map<uint64_t, Fp16> lanes;
  for (int oc = 0; oc < 3; ++oc) lanes[lane_offset(p, oc)] = padded(32, {h(1), h(1), h(1), h(1)});
  const Fp16 w(9, h(1)), b(3, h(1));
  const auto regs = modified(p, {{"NE.MACCfg.BiasMode", 1}});
  const Options after = numerics([](Numerics& n) { n.bias = Numerics::BiasPoint::AfterRound; });
  for (const Fp16& in : {Fp16{h(2048), h(1), h(0)}, Fp16{h(3), h(-0.5), h(10)}}) {
    const ref::Tensor3 x{3, 1, 1, in};
    const Fp16 in_acc = ref::conv1x1(x, w, 3, b).v;
    const Fp16 after_round = map2(ref::conv1x1(x, w, 3).v, b, ref::pe_add);
    run_both(
        p, regs, {{"image", in}}, {}, [&](const Outcome& r) { EXPECT_TRUE(values_equal(r, in_acc, in)); }, lanes);
    run_both(
        p, regs, {{"image", in}}, after, [&](const Outcome& r) { EXPECT_TRUE(values_equal(r, after_round, in)); },
        lanes);
  }
  EXPECT_EQ(ref::conv1x1(ref::Tensor3{3, 1, 1, {h(2048), h(1), h(0)}}, w, 3, b).v[0], h(2050));
  EXPECT_EQ(ref::pe_add(ref::conv1x1(ref::Tensor3{3, 1, 1, {h(2048), h(1), h(0)}}, w, 3).v[0], h(1)), h(2048));
}

}  // namespace
