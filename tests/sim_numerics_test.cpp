// The output rounding rules, the option parser and the sigmoid table: the
// pieces every unit's numerics rest on (fp16 conversions: tests/core_test.cpp).
#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "../src/sim/lut.h"
#include "../src/sim/mac.h"
#include "../src/sim/numerics.h"
#include "ane/dump.h"
#include "ane/fp16.h"
#include "ane/sim.h"
#include "support.h"

namespace ane {
namespace {

TEST(SimNumerics, OverflowAndSubnormalRulesAtTheOutput) {
  sim::Numerics n;
  sim::detail::RoundCounts rc;
  EXPECT_EQ(sim::detail::finish_fp16(0x7c00, false, n, rc), 0x7c00);  // overflow=inf keeps Inf
  EXPECT_EQ(rc.overflow, 1u);
  EXPECT_EQ(sim::detail::finish_fp16(0x7c00, true, n, rc), 0x7c00);  // a true Inf is no overflow
  EXPECT_EQ(rc.overflow, 1u);
  n.overflow = sim::Numerics::Overflow::Saturate;
  EXPECT_EQ(sim::detail::finish_fp16(0xfc00, false, n, rc), 0xfbff);  // -65504
  n.subnormals = sim::Numerics::Subnormals::FlushToZero;
  EXPECT_EQ(sim::detail::finish_fp16(0x8001, false, n, rc), 0x8000);
  EXPECT_EQ(rc.subnormal, 1u);
}

TEST(SimNumerics, ReluOverAnArrayIsReluOfEachValue) {
  // relu_all works on the bits; relu() is the definition (NaN kept, -0 -> +0).
  std::vector<float> v = {0.0f, -0.0f, 1.5f, -1.5f, INFINITY, -INFINITY, NAN, -NAN, 1e-40f, -1e-40f,
                          std::bit_cast<float>(0x7f800001u), std::bit_cast<float>(0xff800001u), 65504.0f, -65504.0f};
  std::mt19937 rng(11);
  for (int i = 0; i < 1000; ++i) v.push_back(std::bit_cast<float>(static_cast<uint32_t>(rng())));
  std::vector<float> got = v;
  sim::detail::relu_all(got.data(), got.size());
  for (size_t i = 0; i < v.size(); ++i)
    EXPECT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(sim::detail::relu(v[i])))
        << std::hex << std::bit_cast<uint32_t>(v[i]);
}

TEST(SimOptions, ParsesEverySettingAndAssumption) {
  sim::Options o;
  for (const char* s : {"acc=fp64", "products=fp16", "bias=after-round", "overflow=saturate", "subnormal=ftz",
                        "lut=ideal", "round=rne", "nan=propagate", "A1", "ocg-layout", "a3", "LUT-ANY"})
    ASSERT_TRUE(sim::apply_option(o, s).ok()) << s;
  EXPECT_EQ(o.numerics.accumulator, sim::Numerics::Accumulator::Fp64);
  EXPECT_EQ(o.numerics.products, sim::Numerics::Products::Fp16);
  EXPECT_EQ(o.numerics.bias, sim::Numerics::BiasPoint::AfterRound);
  EXPECT_EQ(o.numerics.overflow, sim::Numerics::Overflow::Saturate);
  EXPECT_EQ(o.numerics.subnormals, sim::Numerics::Subnormals::FlushToZero);
  EXPECT_EQ(o.numerics.lut, sim::Numerics::Lut::Ideal);
  // A1, A2 and A4 are retired (settled by evidence): accepted, no effect.
  EXPECT_TRUE(o.assume.post_chain);
  EXPECT_FALSE(o.assume.pe_minmax || o.assume.lut_any || o.assume.ocg_layout);
  ASSERT_TRUE(sim::apply_option(o, "strict").ok());
  EXPECT_FALSE(o.assume.post_chain);
  ASSERT_TRUE(sim::apply_option(o, "all-assumptions").ok());
  EXPECT_TRUE(o.assume.post_chain);
  EXPECT_FALSE(sim::apply_option(o, "A5").ok());
}

TEST(SimOptions, DefaultsAreStrictAndDescribed) {
  const sim::Options o;
  EXPECT_EQ(sim::describe_options(o),
            (std::vector<std::string>{"acc=fp32", "products=exact", "bias=in-acc", "overflow=inf", "subnormal=keep",
                                      "lut=linear", "round=rne", "nan=propagate"}));
  sim::Options a;
  ASSERT_TRUE(sim::apply_option(a, "A3").ok());
  EXPECT_EQ(sim::describe_options(a).back(), "A3 post-chain");
}

TEST(SimOptions, UnknownSettingsAreOneLineErrors) {
  sim::Options o;
  auto e = sim::apply_option(o, "acc=fp16");
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().str(), "unknown value 'fp16' for option acc (choose fp32, fp64, fp32-ordered, q15.16)");
  e = sim::apply_option(o, "A5");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().str().find("unknown option 'A5'"), std::string::npos);
  EXPECT_EQ(e.error().str().find('\n'), std::string::npos);
}

TEST(SimLut, TableMatchesTheDocumentedSlots) {
  const auto& t = sim::sigmoid_lut();
  EXPECT_EQ(t[0], 0xC8F8);
  EXPECT_EQ(t[3], 0x3C00);
  EXPECT_EQ(t[4], double_to_fp16(1.0 / (1.0 + std::exp(8.0))));
  EXPECT_EQ(t[20], 0x3800);  // sigmoid(0) = 0.5
  EXPECT_EQ(t[37], 0x09AC);
  EXPECT_EQ(t[39], 0x163E);
  for (int i = 43; i < 64; ++i) EXPECT_EQ(t[i], 0) << i;
}

TEST(SimLut, TableIsBitIdenticalToSigmoidHwx) {
  ANE_REQUIRE_CORPUS();
  auto p = open_program(test::corpus_hwx_path("sigmoid"));
  ASSERT_TRUE(p.ok());
  const auto* sec = p->hwx->find_section("__TEXT", "__const");
  ASSERT_NE(sec, nullptr);
  const auto bytes = p->hwx->section_data(*sec);
  ASSERT_GE(bytes.size(), 128u);
  for (int i = 0; i < 64; ++i)
    EXPECT_EQ(static_cast<uint16_t>(bytes[2 * i] | (bytes[2 * i + 1] << 8)), sim::sigmoid_lut()[i]) << "slot " << i;
}

TEST(SimLut, GeneralReadingOfTheSigmoidTable) {
  const auto& t = sim::sigmoid_lut();
  auto r = sim::detail::read_lut(t, 0);
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_TRUE(r->is_sigmoid);
  auto f = [&](double x) { return sim::detail::lut_eval(*r, x); };
  auto v = [&](int slot) { return double(fp16_to_float(t[slot])); };
  // Slot 41 = 1: step 1/2; slot 42 = 1: the grid is centred, node 16 at 0.
  for (int i = 0; i < 33; ++i) EXPECT_EQ(f(-8.0 + 0.5 * i), v(4 + i)) << i;
  EXPECT_DOUBLE_EQ(f(0.25), (v(20) + v(21)) / 2);  // halfway between two nodes
  // Beyond the grid: y = slope x + intercept, slots 37/38 left, 39/40 right.
  EXPECT_DOUBLE_EQ(f(-9.0), v(37) * -9.0 + v(38));
  EXPECT_DOUBLE_EQ(f(8.25), v(39) * 8.25 + v(40));
  // At or beyond the input range [slot 0, slot 1]: slot 2 below, slot 3 above.
  EXPECT_EQ(f(-12.0), v(2));
  EXPECT_EQ(f(v(0)), v(2));
  EXPECT_EQ(f(9.0), v(3));
  EXPECT_EQ(f(INFINITY), 1.0);
  EXPECT_EQ(f(-INFINITY), 0.0);
  EXPECT_EQ(f(NAN), 1.0);  // NaN reads as +inf (measured on M1)
  EXPECT_TRUE(sim::detail::lut_at_node(*r, 3.0));
  EXPECT_FALSE(sim::detail::lut_at_node(*r, 3.25));
  EXPECT_FALSE(sim::detail::lut_at_node(*r, 9.0));
}

}  // namespace
}  // namespace ane

// The ordered MAC's vector paths (generic, AVX2, AVX-512) against a plain
// loop of section 9's definition: each output starts at its bias and adds
// w * x in input-channel order, rounding each sum to the accumulator type.
// Every path must give exactly those bits, on shapes that leave partial
// register blocks at both edges.
TEST(OrderedMac, EveryVectorPathGivesTheDefinitionsBits) {
  using ane::sim::detail::OrderedIsa;
  std::mt19937 rng(11);
  auto fp16_value = [&](float scale) {
    // Mostly ordinary values, some subnormal, some large: sums that round.
    const uint32_t pick = rng() % 16;
    const float v = pick == 0 ? ane::fp16_to_float(static_cast<uint16_t>(rng() % 0x400))
                    : pick == 1 ? 60000.0f * (rng() % 2 ? 1 : -1)
                                : std::uniform_real_distribution<float>(-scale, scale)(rng);
    return ane::fp16_to_float(ane::float_to_fp16(v));
  };
  struct Shape {
    uint32_t cout, cin;
    uint64_t hw;
  };
  for (const Shape s : {Shape{13, 7, 37}, Shape{64, 300, 250}, Shape{25, 64, 4200}, Shape{1, 1, 1}}) {
    std::vector<float> x(uint64_t{s.cin} * s.hw), w(uint64_t{s.cout} * s.cin), bias(s.cout);
    for (float& v : x) v = fp16_value(4);
    for (float& v : w) v = fp16_value(1);
    for (float& v : bias) v = fp16_value(8);
    std::vector<float> want(uint64_t{s.cout} * s.hw);
    std::vector<double> want_d(want.size());
    for (uint32_t oc = 0; oc < s.cout; ++oc)
      for (uint64_t p = 0; p < s.hw; ++p) {
        float acc = bias[oc];
        double acc_d = bias[oc];
        for (uint32_t ic = 0; ic < s.cin; ++ic) {
          acc += w[uint64_t{oc} * s.cin + ic] * x[ic * s.hw + p];
          acc_d += double(w[uint64_t{oc} * s.cin + ic]) * double(x[ic * s.hw + p]);
        }
        want[uint64_t{oc} * s.hw + p] = acc;
        want_d[uint64_t{oc} * s.hw + p] = acc_d;
      }
    for (OrderedIsa isa : {OrderedIsa::Generic, OrderedIsa::Avx2, OrderedIsa::Avx512}) {
      if (!ane::sim::detail::force_ordered_isa(isa)) continue;  // the CPU lacks it
      std::vector<float> y(want.size());
      std::vector<double> yd(want.size());
      ane::sim::detail::mac_ordered<float>(x.data(), w.data(), bias.data(), s.cout, s.cin, s.hw, false, y.data());
      ane::sim::detail::mac_ordered<double>(x.data(), w.data(), bias.data(), s.cout, s.cin, s.hw, false, yd.data());
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_EQ(std::bit_cast<uint32_t>(y[i]), std::bit_cast<uint32_t>(want[i]))
            << "isa " << int(isa) << " shape " << s.cout << "x" << s.cin << "x" << s.hw << " at " << i;
        ASSERT_EQ(std::bit_cast<uint64_t>(yd[i]), std::bit_cast<uint64_t>(want_d[i])) << "isa " << int(isa) << " at " << i;
      }
    }
    ane::sim::detail::force_ordered_isa(OrderedIsa::Best);
  }
}

namespace ane::sim {
namespace {

// round=half-away moves exact ties away from zero and nothing else; the
// values are fp16 ties worked by hand (spacing 2 at 2048, 2^-10 at 1, 2^-24
// below 2^-14, 32 at 65504).
TEST(SimNumerics, HalfAwayRoundsTiesAwayFromZero) {
  using detail::double_to_fp16_half_away;
  EXPECT_EQ(fp16_to_float(double_to_fp16_half_away(2049.0)), 2050.0f);   // nearest even: 2048
  EXPECT_EQ(fp16_to_float(double_to_fp16_half_away(-2049.0)), -2050.0f);
  EXPECT_EQ(fp16_to_float(double_to_fp16_half_away(2051.0)), 2052.0f);   // nearest even agrees
  EXPECT_EQ(fp16_to_float(double_to_fp16_half_away(2049.5)), 2050.0f);   // not a tie
  EXPECT_EQ(fp16_to_float(double_to_fp16_half_away(1.0 + 0x1p-11)), 1.0f + 0x1p-10f);
  EXPECT_EQ(fp16_to_float(double_to_fp16_half_away(0x1p-25)), 0x1p-24f);  // nearest even: 0
  EXPECT_EQ(double_to_fp16_half_away(65520.0), 0x7c00);                   // to infinity, as nearest even
  EXPECT_EQ(double_to_fp16_half_away(65519.0), 0x7bff);
  EXPECT_EQ(double_to_fp16_half_away(-0.0), 0x8000);
  EXPECT_NE(double_to_fp16_half_away(std::nan("")) & 0x7fff, 0);
}

// The round option's default is per generation; an explicit setting wins.
TEST(SimNumerics, RoundingByGeneration) {
  Options o;
  EXPECT_EQ(o.for_generation(Generation::H13).numerics.round, Numerics::Round::NearestEven);
  EXPECT_EQ(o.for_generation(Generation::H14).numerics.round, Numerics::Round::NearestEven);
  EXPECT_EQ(o.for_generation(Generation::H16).numerics.round, Numerics::Round::HalfAway);
  EXPECT_EQ(o.for_generation(Generation::H17).numerics.round, Numerics::Round::HalfAway);
  ASSERT_TRUE(apply_option(o, "round=rne").ok());
  EXPECT_EQ(o.for_generation(Generation::H16).numerics.round, Numerics::Round::NearestEven);
  ASSERT_TRUE(apply_option(o, "round=half-away").ok());
  EXPECT_EQ(o.for_generation(Generation::H13).numerics.round, Numerics::Round::HalfAway);
  const auto names = describe_options(Options{}.for_generation(Generation::H13));
  EXPECT_NE(std::find(names.begin(), names.end(), "round=rne"), names.end());
}

}  // namespace
}  // namespace ane::sim
