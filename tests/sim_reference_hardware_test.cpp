// The reference checks itself, then the simulator reproduces the hardware
// observations of simulator-semantics.md section 10 exactly.
// Programs with modified registers run two ways: through Simulator on a
// re-encoded copy of the file, and through Machine::run_task on slots built
// from the slot table (section 2.2). Both must give the expected result.
#include "reference/sim_harness.h"

namespace {

using namespace ane_ref::harness;

// ===== the reference itself ==============================================================

TEST(SimReferenceSelf, Fp16ConversionKnownValues) {
  EXPECT_EQ(d(0x3c00), 1.0);
  EXPECT_EQ(d(0x0001), 0x1p-24);
  EXPECT_EQ(d(0x03ff), 1023 * 0x1p-24);
  EXPECT_EQ(d(0x0400), 0x1p-14);
  EXPECT_EQ(d(0x7bff), 65504.0);
  EXPECT_EQ(d(0xfbff), -65504.0);
  EXPECT_EQ(d(0x3b9f), 0.95263671875);  // sigmoid(3) on hardware (§3, H8)
  EXPECT_TRUE(std::isinf(d(0x7c00)) && d(0x7c00) > 0);
  EXPECT_TRUE(std::isnan(d(0x7e00)));
  EXPECT_TRUE(std::signbit(d(0x8000)));
  // Round to nearest, ties to even.
  EXPECT_EQ(h(2049), 0x6800);       // tie between 2048 and 2050 -> 2048
  EXPECT_EQ(h(2051), 0x6802);       // tie between 2050 and 2052 -> 2052
  EXPECT_EQ(h(2049.0001), 0x6801);  // just above the tie
  EXPECT_EQ(h(65519.99), 0x7bff);
  EXPECT_EQ(h(65520), 0x7c00);  // tie between 65504 and 65536 -> Inf
  EXPECT_EQ(h(1e10), 0x7c00);
  EXPECT_EQ(h(-1e10), 0xfc00);
  EXPECT_EQ(h(0x1p-25), 0x0000);    // tie between 0 and 2^-24 -> 0
  EXPECT_EQ(h(0x1.8p-24), 0x0002);  // tie between 1 and 2 subnormal steps -> 2
  EXPECT_EQ(h(0x1.0000001p-25), 0x0001);
  EXPECT_EQ(h(0x1.ff8p-15), 0x03ff);  // largest subnormal
  EXPECT_EQ(h(0x1.ffcp-15), 0x0400);  // tie between 0x03ff and 0x0400 -> even, a normal
  EXPECT_EQ(h(-0.0), 0x8000);
  EXPECT_TRUE(is_tie(2049) && is_tie(0x1p-25) && is_tie(65520));  // the test helper
  EXPECT_FALSE(is_tie(2048) || is_tie(2050) || is_tie(2049.5));
  EXPECT_TRUE(ref::is_nan(h(NAN)));
  for (uint32_t x = 0; x < 0x10000; ++x)
    if (!ref::is_nan(static_cast<uint16_t>(x))) {
      ASSERT_EQ(h(d(static_cast<uint16_t>(x))), x);
    }
}

TEST(SimReferenceSelf, ReferenceOpsOnKnownValues) {
  EXPECT_EQ(ref::pe_add(h(3), h(2)), h(5));
  EXPECT_EQ(ref::pe_add(0x7bff, 0x7bff), 0x7c00);
  EXPECT_EQ(ref::pe_add(h(2048), h(1)), h(2048));
  EXPECT_EQ(ref::pe_mul(h(3), h(2)), h(6));
  EXPECT_EQ(ref::pe_mul(h(0x1p-12), h(0x1p-13)), 0x0000);  // 2^-25: tie -> 0
  EXPECT_EQ(ref::relu(h(-3)), 0x0000);
  EXPECT_EQ(ref::relu(h(5)), h(5));
  EXPECT_EQ(ref::pass(h(5), 0x0000), 0x0000);
  EXPECT_EQ(ref::sigmoid_ideal(h(3)), 0x3b9f);
  EXPECT_EQ(ref::sigmoid_ideal(h(-17)), 0x0001);  // 4.1e-8 rounds to the smallest subnormal
  const ref::Tensor3 x{3, 1, 1, {h(1), h(2), h(3)}};
  EXPECT_EQ(ref::conv1x1(x, Fp16(9, h(2)), 3).v, Fp16(3, h(12)));
  EXPECT_EQ(ref::conv1x1(x, {h(1), h(0), h(0), h(0), h(1), h(0), h(0), h(0), h(1)}, 3, {h(1), h(1), h(1)}).v,
            (Fp16{h(2), h(3), h(4)}));
  const ref::Tensor3 y{1, 1, 1, {h(7)}};
  EXPECT_EQ(ref::concat_channels(x, y).v, (Fp16{h(1), h(2), h(3), h(7)}));
}

// §6.6: slots 4..36 are RN(sigmoid(-8 + i/2)), bit for bit, and the slopes
// reach the clamps at slots 0 / 1; straight lines miss sigmoid by < 0.0035 (§9).
TEST(SimReferenceSelf, SigmoidTableReadingMatchesTheDocs) {
  ANE_REQUIRE_CORPUS();
  const auto t = sigmoid_table(load("sigmoid"));
  EXPECT_EQ(t[2], 0x0000);
  EXPECT_EQ(t[3], 0x3c00);
  for (int i = 0; i <= 32; ++i) {
    const uint16_t x = h(-8 + 0.5 * i);
    EXPECT_EQ(t[4 + i], ref::sigmoid_ideal(x)) << "node " << i;
    EXPECT_EQ(ref::sigmoid_lut(t, x), t[4 + i]) << "node " << i;
  }
  EXPECT_NEAR(d(t[4]) + d(t[37]) * (d(t[0]) + 8), 0.0, 1e-6);
  EXPECT_NEAR(d(t[36]) + d(t[39]) * (d(t[1]) - 8), 1.0, 1e-3);
  for (const auto& chunk : all_fp16_in_chunks(1024))
    for (uint16_t x : chunk)
      if (!ref::is_inf(x)) {
        ASSERT_LE(std::fabs(d(ref::sigmoid_lut(t, x)) - 1 / (1 + std::exp(-d(x)))), 0.0035) << hex(x);
      }
}

// ===== hardware observations (§10) ===========================================================

TEST(SimReferenceHardware, H1_SumThreePlusTwo) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("sum");
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", filled(64, h(3))}, {"image2", filled(64, h(2))}}), filled(64, h(5))));
}

TEST(SimReferenceHardware, H2_SumOnePlusTwo) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("sum");
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", filled(64, h(1))}, {"image2", filled(64, h(2))}}), filled(64, h(3))));
}

TEST(SimReferenceHardware, H3_ReluOfThree) {
  ANE_REQUIRE_CORPUS();
  EXPECT_TRUE(values_equal(run_sim(load("relu"), {{"image", filled(kRow, h(3))}}), filled(kRow, h(3))));
}

TEST(SimReferenceHardware, H4_H5_ReluMixedSigns) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("relu");
  for (const auto& [in, want] :
       std::vector<std::pair<Fp16, Fp16>>{{{h(-3), h(5), h(-1), h(2)}, {h(0), h(5), h(0), h(2)}},  // H4
                                          {{h(-3), h(5)}, {h(0), h(5)}}}) {                        // H5
    Outcome r = run_sim(p, {{"image", padded(kRow, in)}});
    if (r.ok) r.out.resize(want.size());  // the observation covers these elements
    EXPECT_TRUE(values_equal(r, want, in));
  }
}

// H6: relu with MACCfg 0x0000000C (NonlinearMode 0, bit 20 clear) passes [-3, 5] through.
TEST(SimReferenceHardware, H6_ReluWithNonlinearModeZero) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("relu");
  const auto regs = modified(p, {{"NE.MACCfg.NonlinearMode", 0}, {"NE.MACCfg.UnkBit20", 0}});
  EXPECT_EQ(regs[0].word(0xc804), 0x0000000cu);
  run_both(p, regs, {{"image", padded(kRow, {h(-3), h(5)})}}, {}, [](const Outcome& r) {
    Outcome head = r;
    if (head.ok) head.out.resize(2);
    EXPECT_TRUE(values_equal(head, {h(-3), h(5)}));
  });
}

// H7: relu with PostScale 0 gives [0, 0].
TEST(SimReferenceHardware, H7_ReluWithPostScaleZero) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("relu");
  run_both(p, modified(p, {{"NE.PostScale.PostScale", 0}}), {{"image", padded(kRow, {h(-3), h(5)})}}, {},
           [](const Outcome& r) {
             Outcome head = r;
             if (head.ok) head.out.resize(2);
             EXPECT_TRUE(values_equal(head, {h(0), h(0)}));
           });
}

TEST(SimReferenceHardware, H8_SigmoidOfThreeIs0x3B9F) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("sigmoid");
  const Outcome r = run_sim(p, {{"image", filled(kRow, h(3))}});
  EXPECT_TRUE(values_equal(r, filled(kRow, 0x3b9f)));
  EXPECT_TRUE(values_equal(r, filled(kRow, ref::sigmoid_lut(sigmoid_table(p), h(3)))));
}

// H9: [-5, 0, 5] -> [0.007, 0.5, 0.993] to 3 digits. All three are table nodes,
// where every interpolation model gives RN(sigmoid(x)) (§9), so also exactly that.
TEST(SimReferenceHardware, H9_SigmoidAtNodes) {
  ANE_REQUIRE_CORPUS();
  const Fp16 in{h(-5), h(0), h(5)};
  Outcome r = run_sim(load("sigmoid"), {{"image", padded(kRow, in)}});
  ASSERT_TRUE(r.ok) << r.error;
  r.out.resize(3);
  const double printed[] = {0.007, 0.5, 0.993};
  for (int i = 0; i < 3; ++i) EXPECT_EQ(std::round(d(r.out[i]) * 1000) / 1000, printed[i]) << i;
  EXPECT_TRUE(values_equal(r, map1(in, ref::sigmoid_ideal), in));
}

// H10: sigmoid.hwx with MACCfg 0x0011000C / 0x0010000C / 0x0001000C / 0x0000000C
// (ReLU or nothing, bit 20 set or clear; the table lane stays enabled) returns 3.0 for 3.0.
TEST(SimReferenceHardware, H10_SigmoidProgramWithOtherMacCfg) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("sigmoid");
  for (const auto& [mode, bit20, word] : std::vector<std::tuple<uint32_t, uint32_t, uint32_t>>{
           {1, 1, 0x0011000c}, {0, 1, 0x0010000c}, {1, 0, 0x0001000c}, {0, 0, 0x0000000c}}) {
    SCOPED_TRACE(hex(static_cast<uint16_t>(word >> 16)) + " in MACCfg[31:16]");
    const auto regs = modified(p, {{"NE.MACCfg.NonlinearMode", mode}, {"NE.MACCfg.UnkBit20", bit20}});
    EXPECT_EQ(regs[0].word(0xc804), word);
    run_both(p, regs, {{"image", filled(kRow, h(3))}}, {},
             [](const Outcome& r) { EXPECT_TRUE(values_equal(r, filled(kRow, h(3)))); });
  }
}

TEST(SimReferenceHardware, H11_ConvOfThrees) {
  ANE_REQUIRE_CORPUS();
  EXPECT_TRUE(values_equal(run_sim(load("conv"), {{"image", filled(3, h(3))}}), filled(3, h(18))));
}

// H12 ("raw": the TD's register values written by hand): [1, 2, 3] -> 12 per
// channel. Run also through Machine::run_task with the decoded registers.
TEST(SimReferenceHardware, H12_ConvOfOneTwoThree) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("conv");
  const Inputs in{{"image", {h(1), h(2), h(3)}}};
  EXPECT_TRUE(values_equal(run_sim(p, in), filled(3, h(12))));
  EXPECT_TRUE(values_equal(run_machine(p, regs_of(p), in), filled(3, h(12))));
}

TEST(SimReferenceHardware, H13_GemmWithZeroWeights) {
  ANE_REQUIRE_CORPUS();
  EXPECT_TRUE(values_equal(run_sim(load("gemm"), {{"image", filled(512, h(3))}}), filled(512, h(0))));
}

TEST(SimReferenceHardware, H14_ConcatTwoTasks) {
  ANE_REQUIRE_CORPUS();
  Fp16 want = filled(16384, h(2));
  want.resize(16400, h(3));
  EXPECT_TRUE(
      values_equal(run_sim(load("concat"), {{"input_0", filled(16384, h(2))}, {"input_1", filled(16, h(3))}}), want));
}

// H15-style: sum.hwx's task with PE.Cfg.OpMode = 1 (multiply, §7) gives 6.0 for 3 x 2.
TEST(SimReferenceHardware, H15_PeMultiply) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("sum");
  const auto regs = modified(p, {{"PE.Cfg.OpMode", 1}});
  EXPECT_EQ(regs[0].word(0x8800), 0x00080004u);  // mul.hwx's PE.Cfg (§7)
  run_both(p, regs, {{"image", filled(64, h(3))}, {"image2", filled(64, h(2))}}, {},
           [](const Outcome& r) { EXPECT_TRUE(values_equal(r, filled(64, h(6)))); });
}

}  // namespace
