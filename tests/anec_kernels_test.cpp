// Every Apple-compiled op kernel of the corpus (../shared/corpus/anec, eiln's
// M1 kernels) runs on the simulator and computes its PyTorch op, judged by the
// independent reference of tests/reference/torch_ops (plain loops over
// <cmath>, PyTorch's definitions and default parameters) on random inputs
// over the op's useful domain plus its edge values.
//
// The kernels approximate: activation tables interpolate between 33 nodes,
// and every task rounds to fp16. Each op's tolerance below says where its
// error comes from; docs/simulator.md lists the measured worst error per op.
#include <cmath>
#include <cstdio>
#include <map>
#include <random>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ane/anec.h"
#include "ane/fp16.h"
#include "ane/sim.h"
#include "reference/torch_ops.h"
#include "support.h"

namespace ane {
namespace {

namespace torch = ref::torch;

// |simulated - RN(true)| <= abs + rel * |true| + x_rel * |x| * |true|
// + ulps fp16 ulps of RN(true) (an extra rounding of a tiny value).
struct Tolerance {
  double abs = 0, rel = 0, x_rel = 0;
  const char* why = "";
  int ulps = 1;
};

// One fp16 ulp relative (2^-10) covers one extra rounding of an intermediate.
constexpr double kUlp = 1.0 / 1024;

const std::map<std::string, Tolerance>& tolerances() {
  static const std::map<std::string, Tolerance> t = {
      // Exact in fp16: one rounding of the exact result (or no rounding at all).
      {"abs", {0, 0, 0, "PE |a|: exact", 0}},
      {"add", {0, 0, 0, "PE a + b rounded once", 0}},
      {"sub", {0, 0, 0, "PE b + (-1)a rounded once", 0}},
      {"mul", {0, 0, 0, "PE a * b rounded once", 0}},
      {"max", {0, 0, 0, "PE max: exact", 0}},
      {"square", {0, 0, 0, "PE x * x rounded once", 0}},
      {"relu", {0, 0, 0, "NE ReLU: exact", 0}},
      {"relu6", {0, 0, 0, "lines y = x clamped by the range: exact", 0}},
      {"sign", {0, 0, 0, "range and lines give 0 or +-1 exactly", 0}},
      {"ceil", {0, 0, 0, "fraction, step and integer tables: exact for every fp16 input", 0}},
      // Lines through the origin with an fp16 slope.
      {"leakyrelu", {0, 2.2e-4 + kUlp, 0, "the slope 0.01 is stored as fp16 0.010002 (rel 2.1e-4)"}},
      // Tables: linear interpolation between nodes of spacing h misses a
      // smooth f by at most h^2/8 max|f''|, plus the fp16 rounding of the
      // nodes (half an ulp of their values) and of the output.
      {"tanh", {2.0e-3, kUlp, 0, "h = 1/8: h^2/8 max|tanh''| = 1.5e-3, plus node rounding"}},
      {"sigmoid", {1.5e-3, kUlp, 0, "0.5 tanh(x/2) + 0.5 from a table of h = 1/4: 1.2e-3"}},
      {"gelu", {6.5e-3, kUlp, 0, "h = 1/4 and nodes fitted, not sampled: up to 6.2e-3 near x = 0.25"}},
      {"silu", {2e-3, 2 * kUlp, 1.0e-3, "x times the sigmoid table: its 1e-3 error grows with |x|"}},
      {"atan", {3.5e-2, kUlp, 0, "above |x| = 2 the table steps by 2: h^2/8 max|atan''| = 3.4e-2"}},
      {"exp", {0, 1e-3 + kUlp, 2.3e-4,
               "x is scaled by fp16 log2(e) = 1.44238 (3.1e-4 low): exp(x) off by 2.2e-4 |x| relative"}},
      {"log2", {5e-3, kUlp, 0, "mantissa table h = 1/64: h^2/8 max|log2''| = 4.4e-3 near m = 0.5"}},
      {"log", {5e-3, 2 * kUlp, 0, "log2 table times fp16 ln 2 (rel 4.5e-4)"}},
      {"sqrt", {0, 1e-3 + kUlp, 0, "mantissa table h = 1/16: relative 4.9e-4 at m = 0.5"}},
      {"inv", {0, 6e-4 + 2 * kUlp, 0, "x + 1e-4 rounded to fp16, then the reciprocal table (h = 1/64: 4.4e-4)"}},
      {"div", {0, 6e-4 + 2 * kUlp, 0, "the reciprocal table (4.4e-4), then a product rounded once"}},
      {"softmax", {2e-5, 4 * kUlp, 0, "exp table (1.2e-4 rel), fp16 sums of 1600 terms, fp16 1/sum"}},
      {"logsoftmax", {1.5e-2, 2 * kUlp, 0, "softmax rounded to fp16 then the log2 table: 4.4e-3 x ln 2 + ..."}},
      {"norm", {1e-4, 4 * kUlp, 0, "fp16 squares and sum, sqrt and reciprocal tables (rel 1e-3 each)"}},
  };
  return t;
}

// The domain each kernel is judged on, where the torch reference's domain is
// wider than fp16 arithmetic allows: logsoftmax of rows whose softmax
// underflows fp16 is -inf on the ANE (log of 0), so its rows stay within +-2.
// norm squares and sums a 1600-value row in fp16, which overflows above
// 65504 (a mean square of 41): its rows stay within +-6.
double domain_limit(const std::string& op) {
  if (op == "logsoftmax") return 2.0;
  if (op == "norm") return 6.0;
  return INFINITY;
}

// One fp16 ulp of v (2^-24 for subnormals and zero).
double ulp_of(double v) {
  const double a = std::fabs(v);
  if (a < 0x1p-14) return 0x1p-24;
  return std::ldexp(1.0, std::ilogb(a) - 10);
}

struct Stats {
  double worst_abs = 0, worst_rel = 0, at_x = 0, got = 0, want = 0;
  uint64_t checked = 0, failed = 0;
  std::string examples;  // the first few values outside the tolerance
};

uint16_t draw(std::mt19937& rng, double lo, double hi, double min_abs) {
  std::uniform_real_distribution<double> u(lo, hi);
  for (;;) {
    const double v = u(rng);
    if (std::fabs(v) >= min_abs) return double_to_fp16(v);
  }
}

struct KernelRun {
  std::vector<std::vector<uint16_t>> inputs;
  std::vector<uint16_t> output;
};

KernelRun run_kernel(const std::string& file, const torch::OpRef& op, uint32_t h, uint32_t w, unsigned seed) {
  KernelRun k;
  const std::string manifest = test::corpus_dir() + "/anec/MANIFEST.json";
  OpenOptions opts;
  opts.descriptor_path = manifest;
  auto p = open_program(file, opts);
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().str());
  if (!p.ok()) return k;
  auto sim = sim::Simulator::create(*p);
  EXPECT_TRUE(sim.ok()) << (sim.ok() ? "" : sim.error().str());
  if (!sim.ok()) return k;
  EXPECT_EQ(sim->inputs().size(), static_cast<size_t>(op.inputs));
  std::mt19937 rng(seed);
  const double limit = domain_limit(op.name);
  for (int i = 0; i < op.inputs; ++i) {
    std::vector<uint16_t> v(uint64_t{h} * w);
    const double lo = std::max(i ? op.lo2 : op.lo, -limit), hi = std::min(i ? op.hi2 : op.hi, limit);
    for (auto& x : v) x = draw(rng, lo, hi, i ? op.min_abs2 : op.min_abs);
    // Edge values first (one per row for row ops, so each row keeps its
    // spread). Binary ops: input 0's edges meet the partner value 1.5 in
    // input 1, then input 1's edges meet 1.5 in input 0.
    const double partner = torch::kEdgePartner;
    const auto& own = i ? op.edges2 : op.edges;
    const size_t first = i ? op.edges.size() : 0, other = i ? 0 : op.edges.size();
    const size_t others = i ? op.edges.size() : op.edges2.size();
    for (size_t e = 0; e < own.size(); ++e) {
      if (std::fabs(own[e]) > limit) continue;
      const uint64_t at = op.row_op ? e * w + e % w : first + e;
      if (at < v.size()) v[at] = double_to_fp16(own[e]);
    }
    if (op.inputs == 2)
      for (size_t e = 0; e < others && other + e < v.size(); ++e) v[other + e] = double_to_fp16(partner);
    sim::Tensor t;
    t.nchw = {1, 1, h, w};
    t.data = v;
    const std::string name = sim->inputs()[i].name;
    EXPECT_TRUE(sim->set_input(name, t).ok()) << name;
    k.inputs.push_back(std::move(v));
  }
  const Status s = sim->run();
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().str());
  if (!s.ok()) return k;
  auto out = sim->read_buffer(sim->outputs().at(0).name);
  EXPECT_TRUE(out.ok());
  if (out.ok()) k.output = out->data;
  return k;
}

Stats compare(const torch::OpRef& op, const Tolerance& tol, const KernelRun& k, uint32_t w) {
  Stats st;
  const size_t n = k.output.size();
  std::vector<double> want(n);
  if (op.row_op) {
    std::vector<double> row(w), out(w);
    for (size_t r = 0; r < n / w; ++r) {
      for (uint32_t i = 0; i < w; ++i) row[i] = fp16_to_float(k.inputs[0][r * w + i]);
      op.row(row.data(), out.data(), w);
      std::copy(out.begin(), out.end(), want.begin() + static_cast<ptrdiff_t>(r * w));
    }
  } else {
    for (size_t i = 0; i < n; ++i) {
      const double x = fp16_to_float(k.inputs[0][i]);
      want[i] = op.inputs == 1 ? op.unary(x) : op.binary(x, fp16_to_float(k.inputs[1][i]));
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const double got = fp16_to_float(k.output[i]), rounded = fp16_to_float(torch::to_fp16(want[i]));
    const double x = fp16_to_float(k.inputs[0][i]);
    ++st.checked;
    if (std::isnan(want[i])) continue;  // no edge makes one; a NaN truth says nothing
    auto fail = [&] {
      if (st.failed++ < 4)
        st.examples += " [" + std::to_string(i) + "] x=" + std::to_string(x) +
                       (op.inputs == 2 ? " y=" + std::to_string(fp16_to_float(k.inputs[1][i])) : "") +
                       ": " + std::to_string(got) + " vs " + std::to_string(want[i]) + ";";
    };
    if (std::isinf(rounded)) {
      if (got != rounded) fail();
      continue;
    }
    const double d = std::fabs(got - rounded);
    const double bound = tol.abs + tol.rel * std::fabs(want[i]) + tol.x_rel * std::fabs(x) * std::fabs(want[i]) +
                         tol.ulps * ulp_of(rounded);
    if (!(d <= bound)) fail();
    const double rel = d / std::max(std::fabs(want[i]), 1e-3);
    if (d > st.worst_abs) {
      st.worst_abs = d;
      st.at_x = x;
      st.got = got;
      st.want = want[i];
    }
    st.worst_rel = std::max(st.worst_rel, rel);
  }
  return st;
}

struct KernelFile {
  std::string name, path;
};

std::vector<KernelFile> manifest_kernels() {
  std::vector<KernelFile> out;
  const std::string dir = test::corpus_dir() + "/anec";
  const Bytes b = test::read_or_die(dir + "/MANIFEST.json");
  const auto j = nlohmann::json::parse(b.begin(), b.end());
  for (const auto& k : j["kernels"]) out.push_back({k["name"], dir + "/" + k["file"].get<std::string>()});
  return out;
}

TEST(AnecKernels, EveryCorpusKernelComputesItsOp) {
  ANE_REQUIRE_CORPUS();
  const auto kernels = manifest_kernels();
  EXPECT_EQ(kernels.size(), 25u);
  for (const auto& k : kernels) {
    SCOPED_TRACE(k.name);
    const torch::OpRef* op = torch::find_op(k.name);
    ASSERT_NE(op, nullptr) << "no reference for " << k.name;
    const auto tol = tolerances().find(k.name);
    ASSERT_NE(tol, tolerances().end()) << "no tolerance for " << k.name;
    const KernelRun run = run_kernel(k.path, *op, 2560, 1600, 1234);
    ASSERT_EQ(run.output.size(), 2560u * 1600u);
    const Stats st = compare(*op, tol->second, run, 1600);
    EXPECT_EQ(st.failed, 0u) << st.failed << " of " << st.checked << " values outside the tolerance ("
                             << tol->second.why << "); worst |error| " << st.worst_abs << " at x = " << st.at_x
                             << ": " << st.got << " vs " << st.want << "; first:" << st.examples;
    std::printf("anec %-10s worst |error| %-10.3g (relative %-9.3g) at x = %-10g: %g vs %.6g\n", k.name.c_str(),
                st.worst_abs, st.worst_rel, st.at_x, st.got, st.want);
  }
}

}  // namespace
}  // namespace ane
