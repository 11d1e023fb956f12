// acc=q15.16, the fixed-point MAC measured on M4 and M6 (751K/Apple-Neural-
// Engine-Microarchitecture-Study-M6 notes/numerics.md). Each case is one of
// the notes' measurements: one output of a 1x1 convolution whose products
// are listed, against the value the notes report for the ANE (not the CPU's).
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "ane/fp16.h"
#include "ane/sim.h"
#include "../src/sim/mac.h"

namespace ane {
namespace {

// sum over i of w[i] x[i] (+ bias) through the fixed-point MAC: one output
// channel, one position, the products in list order.
double mac(const std::vector<double>& w, const std::vector<double>& x, const float* bias = nullptr) {
  std::vector<float> wf, xf;
  for (double v : w) wf.push_back(fp16_to_float(double_to_fp16(v)));
  for (double v : x) xf.push_back(fp16_to_float(double_to_fp16(v)));
  EXPECT_EQ(wf.size(), xf.size());
  double y = 0;
  sim::detail::mac_fixed_q16(xf.data(), wf.data(), bias, 1, static_cast<uint32_t>(wf.size()), 1, &y);
  return y;
}

const double inf = HUGE_VAL;

TEST(MacFixedQ16, TheAccumulatorOverflowsToAStickyInfinityAt32768) {
  EXPECT_EQ(mac({1}, {32752}), 32752);
  EXPECT_EQ(mac({1}, {32768}), inf);
  EXPECT_EQ(mac({1}, {-32768}), -inf);
  EXPECT_EQ(mac({1, 1}, {16384, 16376}), 32760);  // fp16 output rounds this to 32768; the sum did not overflow
  EXPECT_EQ(mac({1, 1}, {16384, 16384}), inf);
  EXPECT_EQ(mac({1, 1, -1, -1, 1}, {16384, 16384, 16384, 16384, 1}), inf);  // sticky
}

TEST(MacFixedQ16, SumsKeepSixteenFractionBits) {
  EXPECT_EQ(mac({1, 1, -1}, {16384, std::ldexp(1, -16), 16384}), std::ldexp(1, -16));
  EXPECT_EQ(mac({1, 1, -1}, {16384, std::ldexp(1, -18), 16384}), 0);
  EXPECT_EQ(mac({1, 1}, {2048, 1}), 2049);  // exact here; the output rounding makes 2050 (half away)
}

TEST(MacFixedQ16, AProductRoundsHalfAwayOrIsDroppedByItsExponents) {
  // Subnormal inputs count as exponent -14.
  EXPECT_EQ(mac({1}, {std::ldexp(1, -17)}), std::ldexp(1, -16));  // 0.5 unit, exponents -14 + 0
  EXPECT_EQ(mac({1}, {std::ldexp(1, -18)}), 0);                   // 0.25 unit
  // Exponents adding to -17: dropped whole, even at 1.76 and 1.98 units.
  EXPECT_EQ(mac({1.875 * std::ldexp(1, -3)}, {1.875 * std::ldexp(1, -14)}), 0);
  EXPECT_EQ(mac({1.9375 * std::ldexp(1, -5)}, {1.9375 * std::ldexp(1, -12)}), 0);
  EXPECT_EQ(mac({1.5 * std::ldexp(1, -4)}, {1.9 * std::ldexp(1, -13)}), 0);
  // -16: 1.5 units -> 2; a subnormal x, 0.5 unit -> 1.
  EXPECT_EQ(mac({0.125}, {1.5 * std::ldexp(1, -13)}), 2 * std::ldexp(1, -16));
  EXPECT_EQ(mac({0.25}, {0.5 * std::ldexp(1, -14)}), std::ldexp(1, -16));
  EXPECT_EQ(mac({-0.125}, {1.5 * std::ldexp(1, -13)}), -2 * std::ldexp(1, -16));
}

TEST(MacFixedQ16, TheBiasStartsTheAccumulator) {
  const float minus = -16384, plus = 32, tiny = std::ldexp(1.0f, -17), tinier = std::ldexp(1.0f, -20);
  EXPECT_EQ(mac({1, 1}, {16384, 16384}, &minus), 16384);  // no overflow on the way
  EXPECT_EQ(mac({1, 1, 1}, {16384, 16384, 16384}, &minus), inf);
  EXPECT_EQ(mac({1}, {32752}, &plus), inf);
  EXPECT_EQ(mac({1}, {0}, &tiny), std::ldexp(1, -16));
  EXPECT_EQ(mac({1}, {0}, &tinier), 0);
  EXPECT_EQ(mac({1}, {std::ldexp(1, -17)}, &tiny), 2 * std::ldexp(1, -16));  // each rounded to one unit
  // A bias of 32768 or more in magnitude (infinity included) overflows at once.
  const float big = 32768, minus_inf = -HUGE_VALF;
  EXPECT_EQ(mac({1}, {-1}, &big), inf);
  EXPECT_EQ(mac({1}, {1}, &minus_inf), -inf);
}

TEST(MacFixedQ16, ExponentThirtyOneDecodesAsAnOrdinaryExponent) {
  // 65504 x 2^-4 = 4094 stays in range; infinity is 2^16 and a NaN (0x7e00)
  // 1.5 x 2^16: with weight 2^-4, 4096 and 6144.
  EXPECT_EQ(mac({0.0625}, {65504}), 4094);
  EXPECT_EQ(mac({0.0625}, {inf}), 4096);
  const float nan = fp16_to_float(0x7e00);
  float y_bias = 0;
  std::vector<float> w = {0.0625f}, x = {nan};
  double y = 0;
  sim::detail::mac_fixed_q16(x.data(), w.data(), &y_bias, 1, 1, 1, &y);
  EXPECT_EQ(y, 6144);
  EXPECT_EQ(mac({1}, {inf}), inf);  // 65536 overflows the accumulator: NaN and inf inputs give +inf
}

TEST(MacFixedQ16, IsTheDefaultOnH16ToH18Only) {
  sim::Options o;
  for (Generation g : {Generation::H13, Generation::H14, Generation::H15})
    EXPECT_EQ(o.for_generation(g).numerics.accumulator, sim::Numerics::Accumulator::Fp32);
  for (Generation g : {Generation::H16, Generation::H17, Generation::H18})
    EXPECT_EQ(o.for_generation(g).numerics.accumulator, sim::Numerics::Accumulator::FixedQ16);
  ASSERT_TRUE(sim::apply_option(o, "acc=fp32").ok());
  EXPECT_EQ(o.for_generation(Generation::H16).numerics.accumulator, sim::Numerics::Accumulator::Fp32);
}

}  // namespace
}  // namespace ane
