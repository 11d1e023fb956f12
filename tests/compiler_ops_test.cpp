// Everything hwx-build writes for the Neuron and element-wise vocabulary runs
// on the simulator and equals the op's reference:
//  * every Neuron type with a table, on every fp16 input, bit for bit against
//    the independent table reading of tests/reference/lut_ref applied to the
//    table the compiler placed in the program, and within the table's
//    approximation error of the true function (double precision);
//  * ElementWise Add, Sub, Mul, Max, Min against the operation in double,
//    rounded once.
#include <cmath>
#include <functional>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "ane/fp16.h"
#include "ane/program.h"
#include "ane/sim.h"
#include "compile_net.h"
#include "plist_builder.h"
#include "reference/lut_ref.h"
#include "support.h"

namespace ane {
namespace {

using namespace test::pl;

// 65536 values (every fp16 pattern once), as one row per channel and as a
// tensor taller than one row (the strip layout, docs/compiler.md).
struct Shape {
  uint32_t c, h, w;
};
constexpr Shape kShapes[] = {{64, 1, 1024}, {4, 64, 256}};

// Runs a one-output program on the given inputs; returns the output's fp16 values.
std::vector<uint16_t> run(const Program& p, const Shape& shape,
                          const std::vector<std::pair<std::string, std::vector<uint16_t>>>& in) {
  auto s = sim::Simulator::create(p);
  EXPECT_TRUE(s.ok()) << (s ? "" : s.error().str());
  if (!s) return {};
  for (const auto& [name, values] : in) {
    sim::Tensor t;
    t.nchw = {1, shape.c, shape.h, shape.w};
    t.data = values;
    auto st = s->set_input(name, t);
    EXPECT_TRUE(st.ok()) << (st ? "" : st.error().str());
  }
  auto st = s->run();
  EXPECT_TRUE(st.ok()) << (st ? "" : st.error().str());
  if (!st) return {};
  auto out = s->read_buffer(s->outputs().at(0).name);
  EXPECT_TRUE(out.ok());
  return out ? out->data : std::vector<uint16_t>{};
}

std::vector<uint16_t> every_pattern() {
  std::vector<uint16_t> v(65536);
  for (uint32_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint16_t>(i);
  return v;
}

// The table in the compiled program's kernel data (lane 0 of the one task).
ane_ref::lut::Table table_of(const Program& p) {
  ane_ref::lut::Table t{};
  const auto k = p.kernel_bytes();
  EXPECT_GE(k.size(), 0x80u);
  for (int i = 0; i < 64 && k.size() >= 0x80; ++i) t[i] = static_cast<uint16_t>(k[2 * i] | k[2 * i + 1] << 8);
  return t;
}

struct NeuronCase {
  const char* type;
  std::function<double(double)> f;  // the true function
  double lo, hi;                    // the domain the tolerance is checked on
  double abs_tol, rel_tol;          // |y - f| <= abs_tol + rel_tol |f|
  double input_scale = 1.0;         // PostScale the task applies first (Exp)
};

double gelu(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }

TEST(CompiledOps, EveryNeuronTableRunsAsItsFunction) {
  const NeuronCase cases[] = {
      {"Sigmoid", [](double x) { return 1 / (1 + std::exp(-x)); }, -20, 20, 3e-3, 0},
      {"Tanh", [](double x) { return std::tanh(x); }, -20, 20, 2e-3, 0},
      {"Exp2", [](double x) { return std::exp2(x); }, -14, 15.9, 1e-7, 2e-3},
      {"Exp", [](double x) { return std::exp(x); }, -9, 11, 1e-7, 4e-3, 1.4426950408889634},
      {"Log2", [](double x) { return std::log2(x); }, 1e-4, 6e4, 8e-3, 0},
      {"Inv", [](double x) { return 1 / x; }, 1e-3, 6e4, 0, 2e-3},
      {"Sqrt", [](double x) { return std::sqrt(x); }, 0, 6e4, 1e-7, 2e-3},
      {"Rsqrt", [](double x) { return 1 / std::sqrt(x); }, 1e-3, 6e4, 0, 2e-3},
      {"Sign", [](double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0; }, -6e4, 6e4, 0, 0},
      {"ReLU6", [](double x) { return std::min(std::max(x, 0.0), 6.0); }, -6e4, 6e4, 0, 1e-3},
      {"LeakyReLU", [](double x) { return x > 0 ? x : 0.01 * x; }, -6e4, 6e4, 1e-7, 1e-3},
      {"Frac", [](double x) { return x - std::trunc(x); }, -6e4, 6e4, 1e-3, 0},
      {"Int", [](double x) { return std::trunc(x); }, -6e4, 6e4, 0, 0},
      {"GELU", gelu, -20, 20, 7e-3, 1e-3},
      // Apple's fitted nodes at step 1/2 (h^2/8 max|silu''| = 1.6e-2), x - 2^-8 above 8.
      {"SiLU", [](double x) { return x / (1 + std::exp(-x)); }, -20, 20, 1.7e-2, 0},
      {"Clip", [](double x) { return std::min(std::max(x, -1.0), 1.0); }, -6e4, 6e4, 0, 0},
  };
  for (const Shape& shape : kShapes)
  for (const NeuronCase& c : cases) {
    SCOPED_TRACE(fmt::format("{} on {}x{}x{}", c.type, shape.c, shape.h, shape.w));
    Net n;
    n.inputs = {{"x", input(shape.c, shape.w, shape.h)}};
    n.units = {{"y", unit("x", "Neuron", {{"Type", str(c.type)}})}};
    n.outputs = {{"y@output", output("y")}};
    test::TempDir dir;
    auto p = test::compile_net(n, dir);
    ASSERT_TRUE(p.ok()) << p.error().str();
    const auto table = table_of(*p);
    std::string why;
    ASSERT_TRUE(ane_ref::lut::valid(table, &why)) << why;
    const auto x = every_pattern();
    const auto y = run(*p, shape, {{"x", x}});
    ASSERT_EQ(y.size(), x.size());
    int exact_bad = 0, tol_bad = 0;
    double worst = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double xv = fp16_to_float(x[i]);
      if (std::isnan(xv)) continue;
      // The task: x (times PostScale, in double) through the table, rounded once.
      const double scaled = xv * fp16_to_float(double_to_fp16(c.input_scale));
      const uint16_t want = ane_ref::lut::double_to_half(ane_ref::lut::eval(table, scaled));
      const bool both_nan = fp16_is_nan(want) && fp16_is_nan(y[i]);
      if (!both_nan && y[i] != want && exact_bad++ < 3)
        ADD_FAILURE() << fmt::format("x = {:#06x}: simulated {:#06x}, reference reading {:#06x}", x[i], y[i], want);
      if (!(xv >= c.lo && xv <= c.hi)) continue;
      const double truth = c.f(xv), got = fp16_to_float(y[i]);
      // Beyond fp16's range the truth is compared as the fp16 result would be.
      const double t = std::fabs(truth) > 65504 ? std::copysign(INFINITY, truth) : truth;
      const double err = std::fabs(got - t);
      if (std::isinf(t) && got == t) continue;
      worst = std::max(worst, err / (c.abs_tol + c.rel_tol * std::fabs(t) + 1e-300));
      if (!(err <= c.abs_tol + c.rel_tol * std::fabs(t) + std::ldexp(std::fabs(t), -11)) && tol_bad++ < 3)
        ADD_FAILURE() << fmt::format("x = {}: {} gives {}, true {}", xv, c.type, got, truth);
    }
    RecordProperty(std::string(c.type) + "_worst_over_tolerance", std::to_string(worst));
  }
}

TEST(CompiledOps, ElementWiseOperationsRunAsTheirDefinition) {
  struct Case {
    const char* op;
    std::function<double(double, double)> f;
  } cases[] = {
      {"Add", [](double a, double b) { return a + b; }},
      {"Sub", [](double a, double b) { return a - b; }},
      {"Mul", [](double a, double b) { return a * b; }},
      {"Max", [](double a, double b) { return std::max(a, b); }},
      {"Min", [](double a, double b) { return std::min(a, b); }},
  };
  // Two inputs that meet every pattern against a spread of partners.
  std::vector<uint16_t> a = every_pattern(), b(a.size());
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint16_t>((i * 40503u + 12345u) & 0xffffu);
  for (const Shape& shape : kShapes)
  for (const char* type : {"ElementWise", "ScaledElementWise"})
    for (const Case& c : cases) {
      SCOPED_TRACE(fmt::format("{} {} on {}x{}x{}", type, c.op, shape.c, shape.h, shape.w));
      Net n;
      n.inputs = {{"a", input(shape.c, shape.w, shape.h)}, {"b", input(shape.c, shape.w, shape.h)}};
      n.units = {{"y", unit2("a", "b", type, {{"Type", str(c.op)}})}};
      n.outputs = {{"y@output", output("y")}};
      test::TempDir dir;
      auto p = test::compile_net(n, dir);
      ASSERT_TRUE(p.ok()) << p.error().str();
      const auto y = run(*p, shape, {{"a", a}, {"b", b}});
      ASSERT_EQ(y.size(), a.size());
      int bad = 0;
      for (size_t i = 0; i < a.size(); ++i) {
        const double av = fp16_to_float(a[i]), bv = fp16_to_float(b[i]);
        if (std::isnan(av) || std::isnan(bv)) continue;
        const double r = c.f(av, bv);
        if (std::isnan(r)) continue;  // inf - inf, 0 x inf
        const uint16_t want = double_to_fp16(r);
        if (y[i] != want && !(r == 0 && (y[i] & 0x7fff) == 0) && bad++ < 3)
          ADD_FAILURE() << fmt::format("{} {} {}: got {:#06x}, want {:#06x}", av, c.op, bv, y[i], want);
      }
    }
}

// A chain on tensors taller than one row, through scratch memory: a table,
// an element-wise op, a channel concat and a reshape copy, each result
// checked against the reference steps (each task rounds once to fp16).
TEST(CompiledOps, TallChainThroughScratchMemory) {
  constexpr uint32_t c = 3, h = 37, w = 45;
  Net n;
  n.inputs = {{"x", input(c, w, h)}, {"z", input(c, w, h)}};
  n.units = {{"t", unit("x", "Neuron", {{"Type", str("Tanh")}})},
             {"s", unit2("t", "z", "ElementWise", {{"Type", str("Sub")}})},
             {"j", unit2("s", "x", "Concat", {})},
             {"r", unit("j", "Reshape",
                        {{"ReshapedChannel", integer(2 * c)}, {"ReshapedHeight", integer(h)},
                         {"ReshapedWidth", integer(w)}})}};
  n.outputs = {{"r@output", output("r")}};
  test::TempDir dir;
  auto p = test::compile_net(n, dir);
  ASSERT_TRUE(p.ok()) << p.error().str();
  ASSERT_EQ(p->tasks.size(), 5u);  // table, sub, two concat pieces, reshape copy
  const auto table = table_of(*p);
  std::vector<uint16_t> x(c * h * w), z(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = double_to_fp16(std::sin(0.37 * static_cast<double>(i)) * 3.0);
    z[i] = double_to_fp16(std::cos(0.11 * static_cast<double>(i)));
  }
  auto s = sim::Simulator::create(*p);
  ASSERT_TRUE(s.ok()) << s.error().str();
  for (auto& [name, v] : {std::pair{"x", &x}, std::pair{"z", &z}}) {
    sim::Tensor t;
    t.nchw = {1, c, h, w};
    t.data = *v;
    ASSERT_TRUE(s->set_input(name, t).ok());
  }
  ASSERT_TRUE(s->run().ok());
  auto out = s->read_buffer("r@output");
  ASSERT_TRUE(out.ok());
  ASSERT_EQ(out->data.size(), 2 * x.size());
  int bad = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double t = fp16_to_float(ane_ref::lut::double_to_half(ane_ref::lut::eval(table, fp16_to_float(x[i]))));
    const uint16_t want = double_to_fp16(t - fp16_to_float(z[i]));
    if (out->data[i] != want && bad++ < 3) ADD_FAILURE() << fmt::format("element {}: {:#06x}, want {:#06x}", i, out->data[i], want);
    if (out->data[x.size() + i] != x[i] && bad++ < 3) ADD_FAILURE() << fmt::format("copied element {} differs", i);
  }
}

}  // namespace
}  // namespace ane
