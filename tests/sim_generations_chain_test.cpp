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

constexpr double kUlp = 1.0 / 1024;

// A [rows, cols] tensor in double (the MIL's last axis along cols), each
// value with a bound on how far the simulator's fp16 value may be from it.
struct Values {
  uint64_t rows = 0, cols = 0;
  std::vector<double> v, e;
  Values(uint64_t r, uint64_t c) : rows(r), cols(c), v(r * c), e(r * c) {}
  double* row(uint64_t i) { return &v[i * cols]; }
  const double* row(uint64_t i) const { return &v[i * cols]; }
  double worst_error(uint64_t i) const { return *std::max_element(e.begin() + i * cols, e.begin() + (i + 1) * cols); }
};

// Half an fp16 spacing at v: what rounding a result to fp16 may add.
double half_ulp(double v) { return std::ldexp(1.0, std::max(std::ilogb(std::max(std::fabs(v), 0x1p-14)), -14) - 11); }

Values input(const std::vector<uint16_t>& x, uint64_t cols) {
  Values r(x.size() / cols, cols);
  for (size_t i = 0; i < x.size(); ++i) r.v[i] = fp16_to_float(x[i]);
  return r;
}

// x @ W^T (+ b) for an [n, cols] W whose every value is w: fp32
// accumulation of exact products errs by at most cols 2^-24 sum |w x| (the
// bias starts the accumulator), the inputs' errors move each sum by
// |w| sum e, and the result is rounded once.
Values project_to(const Values& x, double w, uint64_t n, std::optional<double> bias = {}) {
  Values r(x.rows, n);
  for (uint64_t s = 0; s < x.rows; ++s) {
    double sum = 0, mag = 0, carried = 0;
    for (uint64_t k = 0; k < x.cols; ++k) {
      sum += w * x.v[s * x.cols + k];
      mag += std::fabs(w * x.v[s * x.cols + k]);
      carried += std::fabs(w) * x.e[s * x.cols + k];
    }
    if (bias) sum += *bias;
    for (uint64_t j = 0; j < n; ++j) {
      r.v[s * n + j] = sum;
      r.e[s * n + j] = carried + double(x.cols) * 0x1p-24 * mag + half_ulp(sum);
    }
  }
  return r;
}
Values project(const Values& x, double w, std::optional<double> bias = {}) { return project_to(x, w, x.cols, bias); }

Values add(const Values& a, const Values& b) {
  Values r = a;
  for (size_t i = 0; i < r.v.size(); ++i) {
    r.v[i] = a.v[i] + b.v[i];
    r.e[i] = a.e[i] + b.e[i] + half_ulp(r.v[i]);
  }
  return r;
}

// x plus a constant tensor of value c (a bias from the weight blob, every
// value the same constant), rounded once.
Values add_constant(const Values& x, double c) {
  Values k(x.rows, x.cols);
  std::fill(k.v.begin(), k.v.end(), c);
  return add(x, k);
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
  for (uint64_t s = 0; s < x.rows; ++s) {
    const double* row = x.row(s);
    const double worst_e = x.worst_error(s);
    double max = -INFINITY, sum = 0;
    for (uint64_t k = 0; k < x.cols; ++k) max = std::max(max, row[k]);
    for (uint64_t k = 0; k < x.cols; ++k) sum += std::exp(row[k] - max);
    for (uint64_t k = 0; k < x.cols; ++k) {
      const double d = row[k] - max, y = std::exp(d) / sum;
      r.v[s * x.cols + k] = y;
      r.e[s * x.cols + k] = y * (2.5e-3 + 8e-4 * std::fabs(d) + 2 * worst_e) + 0x1p-22;
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
  for (uint64_t s = 0; s < x.rows; ++s) {
    const double* row = x.row(s);
    const double worst_e = x.worst_error(s), n = double(x.cols);
    double mean = 0, var = 0;
    for (uint64_t k = 0; k < x.cols; ++k) mean += row[k] / n;
    for (uint64_t k = 0; k < x.cols; ++k) var += (row[k] - mean) * (row[k] - mean) / n;
    const double rs = 1 / std::sqrt(var + 1e-5);
    for (uint64_t k = 0; k < x.cols; ++k) {
      const double y = (row[k] - mean) * rs;
      r.v[s * x.cols + k] = y;
      r.e[s * x.cols + k] =
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
  if (is("chain_base_bias_")) return add_constant(x, c0);
  // mint_chain_probes.py's feed-forward: hidden 4 x width, gelu by default;
  // a bias after each projection ("bcast" along the rows or "full": every
  // value the same constant either way). Apple fuses a bias along the rows
  // into the projection's accumulator and adds a full one in a task of its
  // own, after the projection's rounding.
  auto ffn = [&](const Values& in, const std::string& activation, bool bias, bool full) {
    uint32_t next = 0;
    auto take = [&] { return constant(next++); };
    auto biased = [&](const Values& in, double w, uint64_t n) {
      if (!bias) return project_to(in, w, n);
      const double b = take();
      return full ? add_constant(project_to(in, w, n), b) : project_to(in, w, n, b);
    };
    const double w1 = take();
    const Values h = biased(in, w1, 4 * in.cols);
    const Values a = activation == "relu" ? relu(h) : activation == "silu" ? silu(h) : gelu(h);
    const double w2 = take();
    return biased(a, w2, in.cols);
  };
  if (is("chain_ffn_")) {
    const std::string activation = name.find("_relu") != std::string::npos   ? "relu"
                                   : name.find("_silu") != std::string::npos ? "silu"
                                                                             : "gelu";
    return ffn(x, activation, name.find("_bias") != std::string::npos, name.find("_biasfull") != std::string::npos);
  }
  if (is("chain_lnproj_")) return project(layer_norm(x), c0);
  if (is("chain_resffn_")) return add(x, ffn(x, "gelu", false, false));
  if (is("chain_res_relu_")) return add(x, relu(x));
  if (is("chain_res_gelu_")) return add(x, gelu(x));
  if (is("chain_res_silu_")) return add(x, silu(x));
  return std::nullopt;
}

// What the simulator refuses, by name.
const std::map<std::string, std::string> kRefused = {
    // A matmul of two function inputs (q k^T, then the probabilities times
    // v): interleaved formats and a kernel read from a tile-DMA tensor, as
    // the envelope campaign's runtime matmuls (each by the first word it
    // meets).
    {"chain_attn_s64_dh64", ""},
    {"chain_attn_s128_dh64_h4", ""},
    {"chain_attn_s128_dh64_noscale", ""},
    {"chain_resattn_s64_d256", ""},
    // x + relu(x) over [1, 256, 1, 1]: the add through tile DMA with L2Cfg
    // bit 4, which H13's table leaves unnamed.
    {"chain_res_relu_d256", "L2.L2Cfg"},
};

// The table words of the single-operation record of the same function (its
// constant section is the table alone, listed word by word).
std::map<uint32_t, double> table_of(const std::string& function) {
  const std::string path = fmt::format("{}/tests/fixtures/oracles/h14/chain/chain_base_{}_d256_s64.fx",
                                       LIBANE_SOURCE_DIR, function);
  auto f = packed::load(path);
  EXPECT_TRUE(f.ok()) << path;
  return f ? f->constant_fp16 : std::map<uint32_t, double>{};
}

// Where tile DMA reads the constant section, task by task: a tensor
// constant's bytes (a bias from the blob), from a run of the program with
// zero inputs and its section as assembled (the DMA ranges do not depend on
// the values).
struct ConstantRead {
  uint32_t task = 0;
  uint64_t begin = 0, end = 0;
};
std::vector<ConstantRead> constant_reads(const Program& program) {
  int slot = -1;
  for (const ProgramSlot& s : program.slots)
    if (s.role == SlotRole::Kernels) slot = s.index;
  std::vector<ConstantRead> reads;
  auto sim = sim::Simulator::create(program);
  if (slot < 0 || !sim) return reads;
  for (const Buffer& b : sim->inputs()) {
    const auto shape = b.shape();
    if (!shape) return reads;
    sim::Tensor t;
    for (int k = 0; k < 4; ++k) t.nchw[k] = static_cast<uint32_t>(shape->nchw[k]);
    t.data.assign(t.elements(), 0);
    if (!sim->set_input(b.name, t).ok()) return reads;
  }
  const Status st = sim->run([&](const sim::TraceRecord& r) {
    for (const sim::DmaRecord& d : r.dma)
      if ((d.unit == "TileDMASrc" || d.unit == "TileDMASrc2") && d.slot == slot) reads.push_back({r.task, d.begin, d.end});
  });
  if (!st) reads.clear();
  return reads;
}

// The constant section from the weight formula: each projection's weights
// (and bias) packed at its lanes, each table task's table at the offset its
// table DMA names (0x19f4), a projection's own table before each of its
// lanes' weights (U15).
std::optional<Bytes> rebuild_section(const packed::Fixture& f, const Program& program) {
  if (f.constant.size == 0 || !f.constant_fp16.empty()) return std::nullopt;  // listed words: assemble_hwx has them
  // Not from this formula: a blob tensor constant's copy (header first).
  if (kRefused.count(f.name)) return std::nullopt;
  Bytes section(f.constant.size, 0);
  // The one table function of each chain that has one (softmax: its exp2).
  std::string function;
  for (const char* fn : {"gelu", "silu", "softmax"})
    if (f.name.find(fn) != std::string::npos) function = fn;
  // A feed-forward's activation is gelu unless its name says otherwise.
  const bool ffn = f.name.rfind("chain_ffn_", 0) == 0 || f.name.rfind("chain_resffn_", 0) == 0;
  if (ffn && function.empty() && f.name.find("_relu") == std::string::npos) function = "gelu";
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
    const uint64_t at = t.regs.word(0x19f4);
    if (at + table_bytes.size() > section.size()) {
      ADD_FAILURE() << f.name << " task " << t.index << ": the table at " << at << " ends past the section";
      return std::nullopt;
    }
    std::copy(table_bytes.begin(), table_bytes.end(), section.begin() + static_cast<ptrdiff_t>(at));
  }
  const std::vector<const Task*> convs = test::packed_conv_tasks(program);
  const std::vector<ConstantRead> reads = constant_reads(program);
  if (convs.empty() && reads.empty()) return section;
  // Each projection as H13's packer sees it: a 1x1 convolution over the rows.
  std::vector<oracle::ConvRecord> records;
  for (const Task* t : convs) {
    oracle::ConvRecord c;
    c.cin = test::packed_conv_value(t->regs, "Common.Cin.Cin");
    c.cout = test::packed_conv_value(t->regs, "Common.Cout.Cout");
    c.hin = c.hout = 1;
    c.win = c.wout = test::packed_conv_value(t->regs, "Common.InDim.Win");
    c.bias = t->regs.written_value("NE.MACCfg.BiasMode").value_or(0) != 0;
    records.push_back(c);
  }
  // The constants in MIL order, a group per projection: its weights, then
  // a fused bias.
  struct Group {
    uint16_t weights;
    std::optional<uint16_t> bias;
  };
  std::vector<Group> groups;
  uint32_t next = 0;
  // With tensor constants read from the section (a bias added in a task of
  // its own), the constants go in task order: each projection's weights
  // (and fused bias), each tensor the value of its place.
  for (const Task& t : program.tasks) {
    for (size_t i = 0; i < convs.size(); ++i) {
      if (convs[i] != &t) continue;
      Group g{constant_bits(next++), std::nullopt};
      if (records[i].bias) g.bias = constant_bits(next++);
      groups.push_back(g);
    }
    for (const ConstantRead& r : reads) {
      if (r.task != t.index) continue;
      const uint16_t bits = constant_bits(next++);
      for (uint64_t a = r.begin; a + 1 < r.end && a + 1 < section.size(); a += 2) {
        section[a] = static_cast<uint8_t>(bits);
        section[a + 1] = static_cast<uint8_t>(bits >> 8);
      }
    }
  }
  if (convs.empty()) return section;
  // Apple may run independent projections in another order than the MIL's
  // (chain_branch: the second first): of the pairings of tasks and groups,
  // the one whose packing hashes to the record. The reference follows the
  // MIL's data flow either way, so a wrong pairing could not pass.
  std::vector<size_t> order(groups.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::optional<Bytes> first;
  do {
    std::vector<test::TaskWeights> per_task;
    bool fits = true;
    for (size_t i = 0; i < records.size(); ++i) {
      const oracle::ConvRecord& c = records[i];
      const Group& g = groups[order[i]];
      fits &= c.bias == g.bias.has_value();
      test::TaskWeights tw{c, {}};
      tw.constants.weights.assign(uint64_t{c.cin} * c.cout, g.weights);
      if (g.bias) tw.constants.bias.assign(c.cout, *g.bias);
      per_task.push_back(std::move(tw));
    }
    if (!fits) continue;
    auto s = test::pack_conv_sections(program, per_task, f.constant.size, f.name, &section,
                                      table_bytes.empty() ? nullptr : &table_bytes);
    EXPECT_TRUE(s.section) << s.refusal;
    if (!s.section) return std::nullopt;
    if (sha256_hex(*s.section) == f.constant.sha256) return s.section;
    if (!first) first = std::move(s.section);
  } while (reads.empty() && std::next_permutation(order.begin(), order.end()));
  return first;
}

class H14Chain : public ::testing::TestWithParam<std::string> {};

TEST_P(H14Chain, RunsTheMilOrRefusesByName) {
  auto fx = packed::load(GetParam());
  ASSERT_TRUE(fx.ok()) << fx.error().str();
  auto bare = parse_program(packed::assemble_hwx(*fx), fx->file);
  ASSERT_TRUE(bare.ok()) << bare.error().str();
  const std::optional<Bytes> section = rebuild_section(*fx, *bare);
  if (section) {
    EXPECT_EQ(sha256_hex(*section), fx->constant.sha256) << "the rebuilt constant section differs";
  }
  auto program = parse_program(packed::assemble_hwx(*fx, section ? &*section : nullptr), fx->file);
  ASSERT_TRUE(program.ok()) << program.error().str();

  // A task the planner refuses stops the program at create, one the units
  // refuse at run: either way by name.
  auto sim = sim::Simulator::create(*program);
  std::map<std::string, std::vector<uint16_t>> in;
  uint64_t cols = 0;  // the MIL's last axis: W
  uint32_t seed = 61;
  for (const Buffer& b : sim ? sim->inputs() : std::vector<Buffer>{}) {
    const auto shape = b.shape();
    ASSERT_TRUE(shape.has_value()) << b.name;
    sim::Tensor t;
    for (int k = 0; k < 4; ++k) t.nchw[k] = static_cast<uint32_t>(shape->nchw[k]);
    cols = t.nchw[3];
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
  const Values x = input(in.at("x"), cols);
  const Values z = in.count("z") ? input(in.at("z"), cols) : x;
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

INSTANTIATE_TEST_SUITE_P(Records, H14Chain, ::testing::ValuesIn(packed::operation_fixture_files("chain")), packed::ParamName());

}  // namespace
}  // namespace ane
