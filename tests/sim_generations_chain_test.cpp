// Chains from Apple's compiler on H14 (mil-hwx-compiler research/
// mint_chain_probes.py: the shape-matched single operations, the two
// projection orders and the adjacent-operation pairs at [1, 64, 256];
// tests/fixtures/oracles/h14/chain, README there). Their constants are
// BLOBFILE matrices whose every value is fp16 bits 0x3400 + the constant's
// index. For every record:
//  * the constant section rebuilds from that formula: H13's convolution
//    packing of each projection's weights (and fused bias) at the lanes its
//    task names, and the table of the record's activation where its table
//    DMA points, hashing to the record's SHA-256;
//  * the simulator runs it on random inputs and agrees with the MIL in
//    double within a bound carried through the chain op by op, or refuses
//    it by name.
#include <algorithm>
#include <cmath>
#include <functional>
#include <iostream>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ane/fp16.h"
#include "ane/program.h"
#include "ane/sha256.h"
#include "ane/sim.h"
#include "oracle_fixture.h"
#include "packed_conv_kernel.h"
#include "packed_fixture.h"
#include "support.h"

namespace ane {
namespace {

constexpr uint64_t kRows = 64, kWidth = 256;  // [1, sequence, width] of every record here
constexpr double kUlp = 1.0 / 1024;

// The values of a [kRows, kWidth] tensor in double, each with a bound on
// how far the simulator's fp16 value may be from it.
struct Values {
  std::vector<double> v, e;
};

// Half an fp16 spacing at v: what rounding a result to fp16 may add.
double half_ulp(double v) { return std::ldexp(1.0, std::max(std::ilogb(std::max(std::fabs(v), 0x1p-14)), -14) - 11); }

Values input(const std::vector<uint16_t>& x) {
  Values r{std::vector<double>(x.size()), std::vector<double>(x.size(), 0)};
  for (size_t i = 0; i < x.size(); ++i) r.v[i] = fp16_to_float(x[i]);
  return r;
}

// x @ W^T (+ b) for a W whose every value is w: fp32 accumulation of kWidth
// exact products errs by at most kWidth 2^-24 sum |w x| (the bias starts
// the accumulator), the inputs' errors move each sum by |w| sum e, and the
// result is rounded once.
Values project(const Values& x, double w, std::optional<double> bias = {}) {
  Values r{std::vector<double>(x.v.size()), std::vector<double>(x.v.size())};
  for (uint64_t s = 0; s < kRows; ++s) {
    double sum = 0, mag = 0, carried = 0;
    for (uint64_t k = 0; k < kWidth; ++k) {
      sum += w * x.v[s * kWidth + k];
      mag += std::fabs(w * x.v[s * kWidth + k]);
      carried += std::fabs(w) * x.e[s * kWidth + k];
    }
    if (bias) sum += *bias;
    for (uint64_t n = 0; n < kWidth; ++n) {
      r.v[s * kWidth + n] = sum;
      r.e[s * kWidth + n] = carried + double(kWidth) * 0x1p-24 * mag + half_ulp(sum);
    }
  }
  return r;
}

Values add(const Values& a, const Values& b) {
  Values r = a;
  for (size_t i = 0; i < r.v.size(); ++i) {
    r.v[i] = a.v[i] + b.v[i];
    r.e[i] = a.e[i] + b.e[i] + half_ulp(r.v[i]);
  }
  return r;
}

// x times a power of two: exact (no subnormal results at these magnitudes).
Values scaled(const Values& x, double by) {
  Values r = x;
  for (size_t i = 0; i < r.v.size(); ++i) r.v[i] *= by, r.e[i] *= std::fabs(by);
  return r;
}

Values relu(const Values& x) {
  Values r = x;
  for (double& v : r.v) v = std::max(v, 0.0);
  return r;
}

// A table activation: f's slope carries the input's error (at most `lip`),
// the table adds what the unary records' bound allows (h = 1/4 for gelu,
// 1/2 for silu: h^2/8 max|f''| plus node rounding; sim_generations_test.cpp),
// and the result is rounded.
Values table(const Values& x, const std::function<double(double)>& f, double lip, double abs, double rel) {
  Values r = x;
  for (size_t i = 0; i < r.v.size(); ++i) {
    r.v[i] = f(x.v[i]);
    r.e[i] = lip * x.e[i] + abs + rel * std::fabs(r.v[i]) + kUlp * std::fabs(r.v[i]);
  }
  return r;
}
Values gelu(const Values& x) {
  return table(x, [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }, 1.13, 7e-3, kUlp);
}
Values silu(const Values& x) {
  return table(x, [](double v) { return v / (1 + std::exp(-v)); }, 1.1, 1.7e-2, 2 * kUlp);
}

// softmax along each row. Apple's steps err by y (2.5e-3 + 8e-4 |d|) + 2^-22
// (d = x - max; sim_generations_norm_test.cpp); an input error e moves
// exp(x_i) / sum exp(x_j) by at most y 2 max e of its row.
Values softmax(const Values& x) {
  Values r = x;
  for (uint64_t s = 0; s < kRows; ++s) {
    const double* row = &x.v[s * kWidth];
    double max = -INFINITY, sum = 0, worst_e = 0;
    for (uint64_t k = 0; k < kWidth; ++k) max = std::max(max, row[k]), worst_e = std::max(worst_e, x.e[s * kWidth + k]);
    for (uint64_t k = 0; k < kWidth; ++k) sum += std::exp(row[k] - max);
    for (uint64_t k = 0; k < kWidth; ++k) {
      const double d = row[k] - max, y = std::exp(d) / sum;
      r.v[s * kWidth + k] = y;
      r.e[s * kWidth + k] = y * (2.5e-3 + 8e-4 * std::fabs(d) + 2 * worst_e) + 0x1p-22;
    }
  }
  return r;
}

// layer_norm along each row (epsilon 1e-5, no affine). Apple's steps err by
// 2.5e-3 |y| + 2^-10 r |m| + 2^-24 (r = 1 / sqrt(var + epsilon), m the mean;
// sim_generations_norm_test.cpp); an input error e moves r (x_i - m) by at
// most r (2 + |y|) max e of its row.
Values layer_norm(const Values& x) {
  Values r = x;
  for (uint64_t s = 0; s < kRows; ++s) {
    const double* row = &x.v[s * kWidth];
    double mean = 0, var = 0, worst_e = 0;
    for (uint64_t k = 0; k < kWidth; ++k) mean += row[k] / kWidth, worst_e = std::max(worst_e, x.e[s * kWidth + k]);
    for (uint64_t k = 0; k < kWidth; ++k) var += (row[k] - mean) * (row[k] - mean) / kWidth;
    const double rs = 1 / std::sqrt(var + 1e-5);
    for (uint64_t k = 0; k < kWidth; ++k) {
      const double y = (row[k] - mean) * rs;
      r.v[s * kWidth + k] = y;
      r.e[s * kWidth + k] =
          2.5e-3 * std::fabs(y) + 0x1p-10 * rs * std::fabs(mean) + 0x1p-24 + rs * (2 + std::fabs(y)) * worst_e;
    }
  }
  return r;
}

// The constant with index i: every value fp16 bits 0x3400 + i.
uint16_t constant_bits(uint32_t i) { return static_cast<uint16_t>(0x3400 + i); }
double constant(uint32_t i) { return fp16_to_float(constant_bits(i)); }

// The chain's MIL (mint_chain_probes.py) in double. Constants are taken in
// MIL order; `none` when the case is not one of these.
std::optional<Values> reference(const std::string& name, const Values& x, const Values& z) {
  const double c0 = constant(0), c1 = constant(1);
  auto is = [&](const char* stem) { return name.rfind(stem, 0) == 0; };
  if (is("chain_base_matmul_")) return project(x, c0);
  if (is("chain_base_add_")) return add(x, z);
  if (is("chain_base_mul_scalar_")) return scaled(x, 0.125);
  if (is("chain_base_relu_")) return relu(x);
  if (is("chain_base_gelu_")) return gelu(x);
  if (is("chain_base_silu_")) return silu(x);
  if (is("chain_base_softmax_")) return softmax(x);
  if (is("chain_base_layer_norm_")) return layer_norm(x);
  if (is("chain_pair_ln_gelu_")) return gelu(layer_norm(x));
  if (is("chain_pair_ln_ln_")) return layer_norm(layer_norm(x));
  if (is("chain_pair_add_ln_")) return layer_norm(add(x, project(x, c0)));
  if (is("chain_branch_")) return add(project(x, c0), project(x, c1));
  if (is("chain_serial_")) {
    const Values left = project(x, c0);
    return add(left, project(left, c1));
  }
  if (is("chain_pair_mm_relu_")) return relu(project(x, c0));
  if (is("chain_pair_mm_gelu_")) return gelu(project(x, c0));
  if (is("chain_pair_mm_silu_")) return silu(project(x, c0));
  if (is("chain_pair_mm_bias_relu_")) return relu(project(x, c0, c1));
  if (is("chain_pair_mm_bias_")) return project(x, c0, c1);
  if (is("chain_pair_mm_add_")) return add(x, project(x, c0));
  if (is("chain_pair_mm_mm_")) return project(project(x, c0), c1);
  if (is("chain_pair_gelu_mm_")) return project(gelu(x), c0);
  if (is("chain_pair_mm_softmax_")) return softmax(project(x, c0));
  if (is("chain_pair_softmax_mm_")) return project(softmax(x), c0);
  if (is("chain_pair_mul_mm_")) return project(scaled(x, 0.125), c0);
  if (is("chain_pair_mm_mul_")) return scaled(project(x, c0), 0.125);
  return std::nullopt;
}

// What the simulator refuses, by name: a tensor constant read from the
// blob (docs/simulator.md, "Constants").
const std::map<std::string, std::string> kRefused = {
    {"chain_base_bias_d256_s64", "reads the constant section"},
};

std::string name_of(const ::testing::TestParamInfo<std::string>& info) { return packed::test_name(info.param); }

// The table words of the single-operation record of the same function (its
// constant section is the table alone, listed word by word).
std::map<uint32_t, double> table_of(const std::string& function) {
  const std::string path = fmt::format("{}/tests/fixtures/oracles/h14/chain/chain_base_{}_d256_s64.fx",
                                       LIBANE_SOURCE_DIR, function);
  auto f = packed::load(path);
  EXPECT_TRUE(f.ok()) << path;
  return f ? f->constant_fp16 : std::map<uint32_t, double>{};
}

// The constant section from the weight formula: each projection's weights
// (and bias) packed at its lanes, each table task's table at the offset its
// table DMA names (0x19f4), a projection's own table before each of its
// lanes' weights (U15).
std::optional<Bytes> rebuild_section(const packed::Fixture& f, const Program& program) {
  if (f.constant.size == 0 || !f.constant_fp16.empty()) return std::nullopt;  // listed words: assemble_hwx has them
  // Not from this formula: a blob tensor constant's copy (header first), a
  // table appended to each weight lane.
  if (kRefused.count(f.name)) return std::nullopt;
  Bytes section(f.constant.size, 0);
  // The one table function of each chain that has one (softmax: its exp2).
  std::string function;
  for (const char* fn : {"gelu", "silu", "softmax"})
    if (f.name.find(fn) != std::string::npos) function = fn;
  Bytes table_bytes;
  if (!function.empty()) {
    table_bytes.assign(128, 0);
    for (const auto& [index, value] : table_of(function)) {
      const uint16_t h = double_to_fp16(value);
      table_bytes.at(2 * index) = static_cast<uint8_t>(h);
      table_bytes.at(2 * index + 1) = static_cast<uint8_t>(h >> 8);
    }
  }
  for (const Task& t : program.tasks) {
    // H14's table DMA has no names in the tables yet: 0x19e4 its enable,
    // 0x19f4 the table's offset in the section.
    const bool table = t.regs.written_value("NE.MACCfg.NonlinearMode").value_or(0) == 2 && t.regs.written(0x19e4);
    if (!table || table_bytes.empty()) continue;
    std::copy(table_bytes.begin(), table_bytes.end(), section.begin() + t.regs.word(0x19f4));
  }
  const std::vector<const Task*> convs = test::packed_conv_tasks(program);
  if (convs.empty()) return section;
  oracle::ConvRecord c;
  c.cin = c.cout = static_cast<uint32_t>(kWidth);
  c.hin = c.hout = 1;
  c.win = c.wout = static_cast<uint32_t>(kRows);
  std::vector<oracle::Constants> per_task;
  uint32_t next = 0;  // the constants in MIL order: weights, then a fused bias
  for (const Task* t : convs) {
    oracle::Constants k;
    k.weights.assign(kWidth * kWidth, constant_bits(next++));
    if (t->regs.written_value("NE.MACCfg.BiasMode").value_or(0)) k.bias.assign(kWidth, constant_bits(next++));
    per_task.push_back(std::move(k));
  }
  c.bias = !per_task.front().bias.empty();
  // Apple may run independent projections in another order than the MIL's
  // (chain_branch: the second first): of the orders of the tasks' weights,
  // the one whose packing hashes to the record. The reference follows the
  // MIL's data flow either way, so a wrong pairing could not pass.
  std::vector<size_t> order(per_task.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::optional<Bytes> first;
  do {
    std::vector<oracle::Constants> ordered;
    for (size_t i : order) ordered.push_back(per_task[i]);
    auto s = test::pack_conv_sections(program, c, ordered, f.constant.size, f.name, &section,
                                      table_bytes.empty() ? nullptr : &table_bytes);
    EXPECT_TRUE(s.section) << s.refusal;
    if (!s.section) return std::nullopt;
    if (sha256_hex(*s.section) == f.constant.sha256) return s.section;
    if (!first) first = std::move(s.section);
  } while (std::next_permutation(order.begin(), order.end()));
  return first;
}

class H14Chain : public ::testing::TestWithParam<std::string> {};

TEST_P(H14Chain, RunsTheMilOrRefusesByName) {
  auto fx = packed::load(GetParam());
  ASSERT_TRUE(fx.ok()) << fx.error().str();
  auto bare = parse_program(packed::assemble_hwx(*fx), fx->file);
  ASSERT_TRUE(bare.ok()) << bare.error().str();
  const std::optional<Bytes> section = rebuild_section(*fx, *bare);
  if (section) EXPECT_EQ(sha256_hex(*section), fx->constant.sha256) << "the rebuilt constant section differs";
  auto program = parse_program(packed::assemble_hwx(*fx, section ? &*section : nullptr), fx->file);
  ASSERT_TRUE(program.ok()) << program.error().str();

  // A task the planner refuses stops the program at create, one the units
  // refuse at run: either way by name.
  auto sim = sim::Simulator::create(*program);
  std::map<std::string, std::vector<uint16_t>> in;
  uint32_t seed = 61;
  for (const Buffer& b : sim ? sim->inputs() : std::vector<Buffer>{}) {
    sim::Tensor t;
    t.nchw = {1, 1, static_cast<uint32_t>(kRows), static_cast<uint32_t>(kWidth)};
    t.data = test::uniform_fp16(t.elements(), -1, 1, seed++);
    in[b.name] = t.data;
    ASSERT_TRUE(sim->set_input(b.name, t).ok());
  }
  Status st = sim ? sim->run() : Status(sim.error());
  if (const auto refused = kRefused.find(fx->name); refused != kRefused.end()) {
    ASSERT_FALSE(st.ok()) << fx->name << " ran, but the test expects a refusal";
    EXPECT_EQ(st.error().message.rfind("unsupported: ", 0), 0u) << st.error().message;
    EXPECT_NE(st.error().message.find(refused->second), std::string::npos) << st.error().message;
    std::cout << "[ refused  ] " << fx->name << ": " << st.error().message << "\n";
    return;
  }
  ASSERT_TRUE(st.ok()) << st.error().str();
  ASSERT_EQ(sim->outputs().size(), 1u);
  auto out = sim->read_buffer(sim->outputs().front().name);
  ASSERT_TRUE(out.ok()) << out.error().str();
  const Values x = input(in.at("x"));
  const Values z = in.count("z") ? input(in.at("z")) : x;
  const auto want = reference(fx->name, x, z);
  ASSERT_TRUE(want) << fx->name << ": no reference for this case";
  ASSERT_EQ(out->data.size(), want->v.size());
  double worst = 0;
  for (size_t i = 0; i < want->v.size(); ++i) {
    const double got = fp16_to_float(out->data[i]);
    const double bound = want->e[i] + 0x1p-24;
    worst = std::max(worst, std::fabs(got - want->v[i]) / bound);
    ASSERT_LE(std::fabs(got - want->v[i]), bound) << fx->name << " element " << i << ": " << got << ", want "
                                                   << want->v[i];
  }
  std::cout << "[ ran      ] " << fx->name << ": worst error " << fmt::format("{:.2f}", worst) << " of tolerance\n";
}

INSTANTIATE_TEST_SUITE_P(Records, H14Chain, ::testing::ValuesIn(packed::operation_fixture_files("chain")), name_of);

}  // namespace
}  // namespace ane
