// The simulator against the independent reference (reference/ane_ref.h) on
// random inputs and fp16 edge values, for every corpus program.
// Programs with modified registers run two ways: through Simulator on a
// re-encoded copy of the file, and through Machine::run_task on slots built
// from the slot table (section 2.2). Both must give the expected result.
#include "reference/sim_harness.h"

namespace {

using namespace ane_ref::harness;

// ===== random inputs against the reference =======================================================

TEST(SimReferenceRandom, ReluRandomAndEdges) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("relu");
  for (unsigned seed : {1u, 2u, 3u, 4u}) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    const Fp16 in = random_vector(rng, kRow);
    EXPECT_TRUE(values_equal(run_sim(p, {{"image", in}}), map1(in, ref::relu), in));
  }
}

TEST(SimReferenceRandom, ReluEveryFp16Value) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("relu");
  for (const auto& in : all_fp16_in_chunks(kRow))
    ASSERT_TRUE(values_equal(run_sim(p, {{"image", in}}), map1(in, ref::relu), in));
}

TEST(SimReferenceRandom, SigmoidRandomAndEdges) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("sigmoid");
  for (unsigned seed : {11u, 12u, 13u, 14u}) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    Fp16 in = random_vector(rng, kRow);
    for (int i = 0; i < 20; ++i) in[i] = h(-10 + (rng() % 41) * 0.5);  // nodes and beyond
    check_sigmoid_linear(p, in);
  }
}

TEST(SimReferenceRandom, SigmoidEveryFp16Value) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("sigmoid");
  for (const auto& in : all_fp16_in_chunks(kRow)) {
    check_sigmoid_linear(p, in);
    if (HasFailure()) break;
  }
}

TEST(SimReferenceRandom, SumRandomTiesOverflowUnderflow) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("sum");
  for (unsigned seed : {21u, 22u, 23u, 24u, 25u}) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    const auto [a, b] = pe_pairs(rng, 64, false);
    // sum.hwx reads image through RBase0 and image2 through RBase1 (§12); a + b is symmetric.
    EXPECT_TRUE(values_equal(run_sim(p, {{"image", a}, {"image2", b}}), map2(a, b, ref::pe_add), a));
  }
}

TEST(SimReferenceRandom, MultiplyRandomTiesOverflowUnderflow) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("sum");
  const auto regs = modified(p, {{"PE.Cfg.OpMode", 1}});
  for (unsigned seed : {31u, 32u, 33u}) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    // Plain names, not a structured binding: clang 14 cannot capture those in lambdas.
    const auto pairs = pe_pairs(rng, 64, true);
    const auto& a = pairs.first;
    const auto& b = pairs.second;
    run_both(p, regs, {{"image", a}, {"image2", b}}, {},
             [&](const Outcome& r) { EXPECT_TRUE(values_equal(r, map2(a, b, ref::pe_mul), a)); });
  }
}

TEST(SimReferenceRandom, ConcatRandomAndEdges) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("concat");
  for (unsigned seed : {41u, 42u}) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    const ref::Tensor3 a{16384, 1, 1, random_vector(rng, 16384)}, b{16, 1, 1, random_vector(rng, 16)};
    EXPECT_TRUE(values_equal(run_sim(p, {{"input_0", a.v}, {"input_1", b.v}}), ref::concat_channels(a, b).v));
  }
}

// Sums every model computes exactly: x = k/8 with |k| <= 256, weights 2.0, so
// products are multiples of 1/4, |partial sums| <= 192 < 512, exact in fp16 and fp32.
TEST(SimReferenceRandom, ConvExactSums) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("conv");
  const Fp16 w = conv_weights(p, 3, 3);
  EXPECT_EQ(w, Fp16(9, h(2)));  // §12: conv.hwx has W = 2.0
  for (unsigned seed : {51u, 52u, 53u, 54u, 55u, 56u, 57u, 58u}) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    ref::Tensor3 x{3, 1, 1, {}};
    for (int i = 0; i < 3; ++i) x.v.push_back(h((static_cast<int>(rng() % 513) - 256) / 8.0));
    EXPECT_TRUE(values_equal(run_sim(p, {{"image", x.v}}), ref::conv1x1(x, w, 3).v, x.v));
  }
}

TEST(SimReferenceRandom, ConvRandomFp16AndEdges) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("conv");
  const Fp16 w = conv_weights(p, 3, 3);
  for (unsigned seed = 60; seed < 100; ++seed) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    const ref::Tensor3 x{3, 1, 1, random_vector(rng, 3)};
    const auto [lo, hi] = conv_range(x, w, 3);
    EXPECT_TRUE(values_within(run_sim(p, {{"image", x.v}}), lo, hi, x.v));
  }
}

// conv.hwx with other kernel bytes and BiasMode = 1: lane oc = [b, W[oc][0..2]]
// (§6.3, §6.4; orientation from the ramp build). Values chosen so every sum is
// exact (weights k/2, |k| <= 8; x = k/4, |k| <= 32; bias k/8, |k| <= 32:
// multiples of 1/8 below 256), so all models agree: exact comparison.
TEST(SimReferenceRandom, ConvOwnWeightsAndBias) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("conv");
  for (bool bias : {false, true}) {
    for (unsigned seed : {61u, 62u, 63u, 64u}) {
      SCOPED_TRACE(std::to_string(seed) + (bias ? " with bias" : " without bias"));
      std::mt19937 rng(seed);
      auto pick = [&](int range, double unit) { return h((static_cast<int>(rng() % (2 * range + 1)) - range) * unit); };
      Fp16 w, b;
      std::map<uint64_t, Fp16> lanes;
      for (int oc = 0; oc < 3; ++oc) {
        Fp16 l(32, 0);  // 0x40 bytes
        if (bias) b.push_back(l[0] = pick(32, 0.125));
        for (int ic = 0; ic < 3; ++ic) w.push_back(l[bias + ic] = pick(8, 0.5));
        lanes[lane_offset(p, oc)] = l;
      }
      ref::Tensor3 x{3, 1, 1, {}};
      for (int i = 0; i < 3; ++i) x.v.push_back(pick(32, 0.25));
      run_both(
          p, modified(p, {{"NE.MACCfg.BiasMode", bias}}), {{"image", x.v}}, {},
          [&](const Outcome& r) { EXPECT_TRUE(values_equal(r, ref::conv1x1(x, w, 3, b).v, x.v)); }, lanes);
    }
  }
}

// Random full-range weights and inputs through own kernel bytes: the range of conv_range.
TEST(SimReferenceRandom, ConvOwnRandomWeights) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("conv");
  for (unsigned seed : {71u, 72u, 73u, 74u, 75u, 76u}) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    Fp16 w;
    std::map<uint64_t, Fp16> lanes;
    for (int oc = 0; oc < 3; ++oc) {
      Fp16 l(32, 0);
      for (int ic = 0; ic < 3; ++ic) w.push_back(l[ic] = random_fp16(rng, false));
      lanes[lane_offset(p, oc)] = l;
    }
    const ref::Tensor3 x{3, 1, 1, random_vector(rng, 3)};
    const auto range = conv_range(x, w, 3);
    const auto& lo = range.first;
    const auto& hi = range.second;
    run_both(
        p, regs_of(p), {{"image", x.v}}, {}, [&](const Outcome& r) { EXPECT_TRUE(values_within(r, lo, hi, x.v)); },
        lanes);
  }
}

// §6.2: the same sum applies at every pixel (CE; no hardware run had W*H > 1).
// conv.hwx with InDim = OutDim = 4x1: each 64-byte plane of its buffers holds
// the 4-pixel row. Read and written directly in the slots (the named buffers
// are declared 1x1). Exact-sum values as in ConvExactSums.
TEST(SimReferenceRandom, ConvEveryPixel) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("conv");
  const auto regs = modified(p, {{"Common.InDim.Win", 4}, {"Common.OutDim.Wout", 4}});
  const Fp16 w = conv_weights(p, 3, 3);
  const auto in = buffer(p, "image"), out = buffer(p, output_name(p));
  const uint64_t in_plane = in.shape()->strides[1], out_plane = out.shape()->strides[1];
  for (unsigned seed : {65u, 66u, 67u}) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    ref::Tensor3 x{3, 1, 4, {}};
    for (int i = 0; i < 12; ++i) x.v.push_back(h((static_cast<int>(rng() % 513) - 256) / 8.0));
    ane::sim::Machine m = machine_for(p, {});
    for (int c = 0; c < 3; ++c)
      for (int px = 0; px < 4; ++px) {
        uint8_t* at = m.slot(in.slot)->data() + c * in_plane + 2 * px;  // in range: machine_for sized the slot
        at[0] = static_cast<uint8_t>(x.at(c, px));
        at[1] = static_cast<uint8_t>(x.at(c, px) >> 8);
      }
    const auto st = m.run_task(regs[0], 0);
    ASSERT_TRUE(st.ok()) << st.error().str();
    Outcome r{true, "", {}};
    const auto& mem = *m.slot(out.slot);
    for (int c = 0; c < 3; ++c)
      for (int px = 0; px < 4; ++px) {
        const uint64_t o = c * out_plane + 2 * px;
        r.out.push_back(static_cast<uint16_t>(mem[o] | mem[o + 1] << 8));
      }
    EXPECT_TRUE(values_equal(r, ref::conv1x1(x, w, 3).v, x.v));
  }
}

// §6 / §7: the tile DMA reads at slot[RBase0] + TileDMASrc.BaseAddr. Concat's
// task 1 moved one 64-byte channel up (BaseAddr 0x40, 15 channels) copies
// input_1[1..15]; the last output channel keeps its initial zero (§2.2).
TEST(SimReferenceRandom, ConcatSourceBaseAddress) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("concat");
  const auto regs = modified(p, {{"TileDMASrc.BaseAddr.Addr", 1}, {"Common.Cin.Cin", 15}, {"Common.Cout.Cout", 15}}, 1);
  std::mt19937 rng(68);
  const Fp16 a = random_vector(rng, 16384), b = random_vector(rng, 16);
  Fp16 want = a;
  want.insert(want.end(), b.begin() + 1, b.end());
  want.push_back(0);
  run_both(p, regs, {{"input_0", a}, {"input_1", b}}, {},
           [&](const Outcome& r) { EXPECT_TRUE(values_equal(r, want)); });
}

// gemm.hwx: every weight is 0 (§12), so finite inputs give exactly 0.
TEST(SimReferenceRandom, GemmZeroWeightsGiveZero) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("gemm");
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(lane(p, p.tasks[0].regs, i), Fp16(0x4000, 0)) << "lane " << i;  // 0x8000 bytes of +0
  for (unsigned seed : {81u, 82u, 83u}) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    const Fp16 in = random_vector(rng, 512, false);
    EXPECT_TRUE(values_equal(run_sim(p, {{"image", in}}), filled(512, 0)));
  }
}

// Products are exact IEEE products (§9) and NaN propagates (§9 default
// nan=propagate): 0 x Inf is NaN, so one infinite input makes every output
// channel NaN, since each output sums over all 512 inputs.
TEST(SimReferenceRandom, GemmZeroTimesInfinityIsNaN) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("gemm");
  for (uint16_t inf : {uint16_t{0x7c00}, uint16_t{0xfc00}}) {
    Fp16 in = filled(512, h(1));
    in[100] = inf;
    const Fp16 want = ref::conv1x1(ref::Tensor3{512, 1, 1, in}, Fp16(512 * 512, 0), 512).v;
    EXPECT_TRUE(ref::is_nan(want[0]));
    EXPECT_TRUE(values_equal(run_sim(p, {{"image", in}}), want));
  }
}

// §9 NaN: propagate. NaN inputs give NaN outputs on every engine and op.
TEST(SimReferenceRandom, NaNPropagates) {
  ANE_REQUIRE_CORPUS();
  const Fp16 nans{0x7e00, 0xfe00, 0x7c01, 0x7fff};
  const Fp16 in = padded(kRow, nans);
  EXPECT_TRUE(values_equal(run_sim(load("relu"), {{"image", in}}), map1(in, ref::relu), in));
  const auto sig = load("sigmoid");
  EXPECT_TRUE(values_equal(run_sim(sig, {{"image", in}}),
                           map1(in, [&](uint16_t x) { return ref::sigmoid_lut(sigmoid_table(sig), x); }), in));
  const Fp16 nan64 = filled(64, 0x7e00);
  EXPECT_TRUE(values_equal(run_sim(load("sum"), {{"image", nan64}, {"image2", filled(64, h(1))}}), nan64));
  EXPECT_TRUE(values_equal(run_sim(load("conv"), {{"image", {0x7e00, h(1), h(1)}}}), filled(3, 0x7e00)));
  EXPECT_TRUE(
      values_equal(run_sim(load("concat"), {{"input_0", filled(16384, 0x7e00)}, {"input_1", filled(16, 0x7e00)}}),
                   filled(16400, 0x7e00)));
}

}  // namespace
