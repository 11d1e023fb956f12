// H14 softmax and layer_norm from Apple's compiler (mil-hwx-compiler
// research/oracles/h14: softmax_1x64x8x8 and layer_norm_1x64x8x8 of the base
// campaign, and every 8th name of the h14norm_ campaign's 118 softmax and
// layer_norm cases; tests/fixtures/oracles/h14/norm, README there). Each
// record, assembled into a .hwx, runs on random inputs and must agree with
// softmax evaluated in double, or be refused by name.
#include <cmath>
#include <iostream>
#include <map>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ane/fp16.h"
#include "ane/program.h"
#include "ane/sim.h"
#include "packed_fixture.h"
#include "support.h"

namespace ane {
namespace {

// The records the simulator refuses, each by a word docs/simulator.md names:
// layer_norm over the three axes of [1,64,8,8] (InDepth 8).
bool norm_refused(const std::string& name) {
  static const std::set<std::string> kRefused = {
      "layer_norm_1x64x8x8",
  };
  return kRefused.count(name) != 0;
}

// softmax(x) along `axis` of an [N,C,H,W] tensor, in double; d receives
// x - max along the axis (the exponent's argument).
void reference_softmax(const std::array<uint64_t, 4>& shape, int axis, const std::vector<uint16_t>& x,
                       std::vector<double>& y, std::vector<double>& d) {
  const uint64_t n = x.size();
  y.assign(n, 0);
  d.assign(n, 0);
  uint64_t stride = 1;
  for (int k = 3; k > axis; --k) stride *= shape[k];
  const uint64_t len = shape[axis];
  for (uint64_t i = 0; i < n; ++i) {
    if ((i / stride) % len != 0) continue;  // i starts one line along the axis
    double max = -INFINITY, sum = 0;
    for (uint64_t j = 0; j < len; ++j) max = std::max(max, double(fp16_to_float(x[i + j * stride])));
    for (uint64_t j = 0; j < len; ++j) {
      d[i + j * stride] = fp16_to_float(x[i + j * stride]) - max;
      sum += std::exp(d[i + j * stride]);
    }
    for (uint64_t j = 0; j < len; ++j) y[i + j * stride] = std::exp(d[i + j * stride]) / sum;
  }
}

// Apple's softmax: t = fp16(log2e * (x - max)) on the planar engine, exp2(t)
// by the neural engine's table, 1 / sum by a planar-engine reduction, and
// the product. The exponent is off by the fp16 log2e (2.2e-4 low: 2.2e-4 |d|
// relative after exp2) and t's rounding (|t| 2^-11: 4.9e-4 |d|): 8e-4 |d|
// in all. The table (nodes h = 1/32 on [0, 1): h^2/8 max|(2^f)''| = 1.2e-4),
// its node and result roundings, the reciprocal's and the product's (2^-11
// each): 2.5e-3. A result in fp16's subnormal range: 2^-22 absolute. Over C
// the sum and its reciprocal are the neural engine's, the reciprocal by
// Apple's table (mantissa nodes h = 1/16 on [0.5, 1): h^2/8 max|(1/m)''| m =
// 3.9e-3 relative at m = 0.5), not a division.
double softmax_bound(double y, double d, bool over_c) {
  return y * (2.5e-3 + (over_c ? 3.9e-3 : 0) + 8e-4 * std::fabs(d)) + 0x1p-22;
}

// layer_norm(x) over `axes` (epsilon 1e-5, no affine) in double; r receives
// 1 / sqrt(var + epsilon) and m the mean, per element.
void reference_layer_norm(const std::array<uint64_t, 4>& shape, const std::vector<uint64_t>& axes,
                          const std::vector<uint16_t>& x, std::vector<double>& y, std::vector<double>& r,
                          std::vector<double>& m) {
  const uint64_t n = x.size();
  y.assign(n, 0), r.assign(n, 0), m.assign(n, 0);
  std::array<bool, 4> reduced{};
  for (uint64_t a : axes) reduced[a] = true;
  // Each element's line: its index with the reduced axes zeroed.
  auto key = [&](uint64_t i) {
    uint64_t k = 0, stride = 1, rest = i;
    for (int d = 3; d >= 0; --d) {
      const uint64_t at = rest % shape[d];
      rest /= shape[d];
      if (!reduced[d]) k += at * stride;
      stride *= shape[d];
    }
    return k;
  };
  std::map<uint64_t, std::pair<double, double>> sums;  // key -> (sum, count)
  for (uint64_t i = 0; i < n; ++i) {
    auto& s = sums[key(i)];
    s.first += fp16_to_float(x[i]);
    s.second += 1;
  }
  std::map<uint64_t, double> var;
  for (uint64_t i = 0; i < n; ++i) {
    const auto& s = sums[key(i)];
    const double d = fp16_to_float(x[i]) - s.first / s.second;
    var[key(i)] += d * d / s.second;
  }
  for (uint64_t i = 0; i < n; ++i) {
    const auto& s = sums[key(i)];
    m[i] = s.first / s.second;
    r[i] = 1 / std::sqrt(var[key(i)] + 1e-5);
    y[i] = (fp16_to_float(x[i]) - m[i]) * r[i];
  }
}

// Apple's layer_norm over W: the mean (fp32 sum, times 1/n, rounded to
// fp16: 2^-11 |m|), x - mean rounded (2^-11 |d|), 1 / sqrt(mean of squares +
// epsilon) from the rounded differences (their errors move the variance by
// at most 2^-10 relative plus the mean's share, half of that in r) rounded
// (2^-11), the product rounded (2^-11): 2.5e-3 |y| plus the mean's error
// carried through r, 2^-10 r |m|, and 2^-24 absolute.
double layer_norm_bound(double y, double r, double m) { return 2.5e-3 * std::fabs(y) + 0x1p-10 * r * std::fabs(m) + 0x1p-24; }

class H14Norm : public ::testing::TestWithParam<std::string> {};

TEST_P(H14Norm, SimulatorRunsTheProgramOrRefusesByName) {
  auto fx = packed::load(GetParam());
  ASSERT_TRUE(fx.ok()) << fx.error().str();
  EXPECT_EQ(fx->target, "h14");
  auto program = parse_program(packed::assemble_hwx(*fx), fx->file);
  ASSERT_TRUE(program.ok()) << program.error().str();
  const auto dims = packed::number_list(fx->params.at("shape"));
  ASSERT_EQ(dims.size(), 4u);
  const std::array<uint64_t, 4> shape{dims[0], dims[1], dims[2], dims[3]};

  sim::Tensor x;
  for (int k = 0; k < 4; ++k) x.nchw[k] = static_cast<uint32_t>(shape[k]);
  x.data = test::uniform_fp16(x.elements(), -4, 4, 29);
  auto run = test::run_one_input(*program, x);
  if (norm_refused(fx->name)) {
    ASSERT_FALSE(run.ok()) << fx->name << " ran, but the simulator does not claim it";
    EXPECT_EQ(run.error().message.rfind("unsupported: ", 0), 0u) << run.error().message;
    std::cout << "[ refused  ] " << fx->name << ": " << run.error().message << "\n";
    return;
  }
  ASSERT_TRUE(run.ok()) << run.error().str();
  if (fx->params.at("operation") == "layer_norm") {
    const auto axes_param = fx->params.find("axes");
    const auto axes = axes_param == fx->params.end() ? std::vector<uint64_t>{1, 2, 3} : packed::number_list(axes_param->second);
    std::vector<double> ref, r, m;
    reference_layer_norm(shape, axes, x.data, ref, r, m);
    ASSERT_EQ(run->data.size(), ref.size());
    double worst = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
      const double got = fp16_to_float(run->data[i]), bound = layer_norm_bound(ref[i], r[i], m[i]);
      worst = std::max(worst, std::fabs(got - ref[i]) / bound);
      ASSERT_LE(std::fabs(got - ref[i]), bound) << fx->name << " element " << i << ": " << got << ", want " << ref[i];
    }
    std::cout << "[ ran      ] " << fx->name << ": worst error " << fmt::format("{:.2f}", worst) << " of tolerance\n";
    return;
  }
  ASSERT_EQ(fx->params.at("operation"), "softmax");
  const auto axis_param = fx->params.find("axis");
  const int axis = axis_param == fx->params.end() ? 3 : (std::stoi(axis_param->second) + 4) % 4;
  std::vector<double> ref, d;
  reference_softmax(shape, axis, x.data, ref, d);
  ASSERT_EQ(run->data.size(), ref.size());
  double worst = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double got = fp16_to_float(run->data[i]), bound = softmax_bound(ref[i], d[i], axis == 1);
    worst = std::max(worst, std::fabs(got - ref[i]) / bound);
    ASSERT_LE(std::fabs(got - ref[i]), bound) << fx->name << " element " << i << ": " << got << ", want " << ref[i];
  }
  std::cout << "[ ran      ] " << fx->name << ": worst error " << fmt::format("{:.2f}", worst) << " of tolerance\n";
}

INSTANTIATE_TEST_SUITE_P(Records, H14Norm, ::testing::ValuesIn(packed::operation_fixture_files("norm")), packed::ParamName());

}  // namespace
}  // namespace ane
