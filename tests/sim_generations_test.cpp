// H14 - H18 programs on the simulator. Every transcribed record is assembled
// into a synthetic .hwx and run on random inputs: a record of an element-wise
// family the simulator claims must give the MIL operation, evaluated here in
// double from the record's own parameters and rounded once to fp16 (not the
// simulator's arithmetic); every other record must be refused by name, with
// "unsupported: ...", never run to some other answer.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "ane/fp16.h"
#include "ane/generation.h"
#include "ane/program.h"
#include "ane/sim.h"
#include "ane/sha256.h"
#include "blob_constant.h"
#include "packed_fixture.h"
#include "support.h"

namespace ane {
namespace {

// What the simulator runs so far (docs/simulator.md, "Other generations"):
// single-task binary element-wise programs of H14 - H17 (H18's tile-DMA
// formats are not mapped), the broadcast campaign's records whose operands
// have one shape, and H14's activations. Everything else must be refused.
// "1,64,8,8" as four extents.
std::array<uint64_t, 4> shape_of(const std::string& text);

// real_div is two tasks: the neural engine's reciprocal table applied to the
// divisor, kept in L2, then the planar engine's product (over [1,C,1,1]
// with the L2 layout left unwritten on both sides: rule U6).
bool real_div_runs(const packed::Fixture& f) { return f.tasks.size() == 2; }

bool expected_to_run(const packed::Fixture& f) {
  static const std::set<std::string> kBinary = {"add", "sub", "mul", "maximum", "minimum"};
  static const std::set<std::string> kUnary = {"relu", "sigmoid", "tanh", "gelu", "silu", "exp",
                                               "sqrt", "rsqrt", "leaky_relu", "abs"};
  const auto op = f.params.find("operation");
  if (op == f.params.end()) return false;
  // H14's broadcast of another shape is two tasks: the operand copied into
  // L2 by the neural engine, then the planar engine's op reading it there.
  const bool blob = (f.family == "binary_constant" && f.params.at("constant") == "blob") ||
                    (f.family == "env_broadcast" && f.params.at("operand") == "blob");
  // A scalar divisor is a tensor of reciprocals, staged as a blob's values are.
  const bool reciprocals = f.family == "binary_constant" && op->second == "real_div";
  if (f.tasks.size() != 1 && !(f.tasks.size() <= 3 && (f.family == "env_broadcast" || f.family == "binary_runtime")) &&
      !blob && !reciprocals)
    return false;
  // A tensor constant from a weight blob: on H14 copied whole from the
  // constant section into L2, then read there as two rows (add, multiply:
  // TaskType 4) or one (maximum, minimum); H15 - H18 read the rows through
  // tile DMA. No sub of a blob is transcribed (its record's word list
  // omits -0.0), so its layout is not claimed.
  if (blob) return kBinary.count(op->second) && op->second != "sub";
  if (f.family == "binary_runtime" && op->second == "real_div") return real_div_runs(f);
  // pow is three tasks: on H14 - H17 z copied into L2, log2 x beside it,
  // then the neural engine's product of each channel pair and the exp2
  // table; on H18 log2 x into L2, the planar engine's product in its place,
  // then the exp2 table.
  // H18's pow over [1,C,1,1] lays the product's channels along W (OutChannelsW)
  // with Cfg 0x30222200: ChannelsInner (bit 28), named on H16 - H18 from
  // the matmul records.
  if (f.family == "binary_runtime" && op->second == "pow") return f.tasks.size() == 3;
  if (f.tasks.size() != 1 && f.family == "binary_runtime") return false;
  if (f.family == "binary_runtime") return kBinary.count(op->second);
  // A scalar constant folds into the task (PE bias or scale, or an NE clamp);
  // a scalar divisor becomes a tensor constant of reciprocals, multiplied
  // as a blob's is ((x + 0) * c).
  if (f.family == "binary_constant")
    return f.params.at("constant") == "scalar" && (kBinary.count(op->second) || op->second == "real_div");
  // H14 stages an operand of another shape in L2 in a task of its own; H15 -
  // H18 read it through tile DMA.
  // A batch whose operand of another shape repeats across the batch: H14
  // copies the operand into L2 once and reads that one group for every group
  // (the second source has no L2 group stride); H15 - H18 read it through
  // tile DMA once per group (its group stride unwritten, and 0xee where every
  // other record writes 0xce, TileDMASrc +0x0c).
  if (f.family == "env_broadcast") {
    if (f.params.at("operand") == "scalar") return true;
    return f.params.at("operand") == "runtime";
  }
  // The envelope campaign's gelu and silu over spatial shapes, gelu in its
  // three modes, are one table task like the unary campaign's.
  if (f.family == "env_activation") return true;
  if (f.family == "unary")
    return kUnary.count(op->second) != 0;
  return false;
}

// "1,64,8,8" as four extents.
std::array<uint64_t, 4> shape_of(const std::string& text) {
  std::array<uint64_t, 4> s{};
  size_t k = 0, pos = 0;
  while (k < 4 && pos <= text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    s[k++] = std::stoull(text.substr(pos, comma - pos));
    pos = comma + 1;
  }
  return s;
}

// fp16 of v with ties away from zero, as H16 - H18 round by default: the
// magnitude in units of its fp16 spacing, plus a half, truncated.
uint16_t fp16_ties_away(double v) {
  const double a = std::fabs(v);
  const int e = std::max(std::ilogb(std::max(a, 0x1p-14)), -14);
  const double spacing = std::ldexp(1.0, e - 10);
  const double r = std::floor(a / spacing + 0.5) * spacing;
  const uint16_t h = r >= 65520.0 ? 0x7c00 : double_to_fp16(r);  // r is an fp16 value: exact
  return static_cast<uint16_t>((std::signbit(v) ? 0x8000 : 0) | (h & 0x7fff));
}

// A unary MIL op in double, with the record's own parameters (its MIL text:
// leaky_relu(alpha = 0.125), rsqrt(epsilon = 0.000001), gelu(mode = EXACT)),
// the useful input range, and the tolerance its table allows.
struct UnaryCase {
  std::function<double(double)> f;
  double lo, hi;
  double abs, rel;  // |simulated - RN(true)| <= abs + rel * |true| + one fp16 ulp
  const char* why;
};

const UnaryCase& unary_case(const std::string& op);

// The unary case of an activation record: its op, and for gelu the mode its
// MIL names (the unary campaign's gelu is EXACT).
const UnaryCase& activation_case(const packed::Fixture& f) {
  const std::string& op = f.params.at("operation");
  const auto mode = f.params.find("mode");
  if (op == "gelu" && mode != f.params.end() && mode->second != "null" && mode->second != "EXACT")
    return unary_case("gelu_" + mode->second);
  return unary_case(op);
}

bool is_activation(const packed::Fixture& f) { return f.family == "unary" || f.family == "env_activation"; }

const UnaryCase& unary_case(const std::string& op) {
  constexpr double kUlp = 1.0 / 1024;
  // Tables interpolate linearly between nodes h apart: a smooth f is missed
  // by at most h^2/8 max|f''| (Apple's nodes are samples or fitted within
  // that), plus the fp16 rounding of the nodes and of the result.
  static const std::map<std::string, UnaryCase> cases = {
      {"relu", {[](double x) { return x > 0 ? x : 0.0; }, -6, 6, 0, 0, "exact"}},
      {"abs", {[](double x) { return std::fabs(x); }, -6, 6, 0, 0, "PE |x|: exact"}},
      {"leaky_relu", {[](double x) { return x > 0 ? x : 0.125 * x; }, -6, 6, 0, kUlp, "a line of slope 0.125: exact"}},
      {"sigmoid", {[](double x) { return 1 / (1 + std::exp(-x)); }, -8, 8, 3.3e-3, kUlp,
                   "h = 1/2: h^2/8 max|sigmoid''| = 3.0e-3, plus node rounding"}},
      {"tanh", {[](double x) { return std::tanh(x); }, -6, 6, 2e-3, kUlp,
                "h = 1/8: h^2/8 max|tanh''| = 1.5e-3, plus node rounding"}},
      {"gelu", {[](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }, -6, 6, 7e-3, kUlp,
                "h = 1/4: h^2/8 max|gelu''| = 6.2e-3, plus node rounding"}},
      // Apple's TANH_APPROXIMATION table is its EXACT table (one SHA-256):
      // the tanh form differs from erf's by at most 1e-3 (near |x| = 2), within gelu's bound.
      {"gelu_TANH_APPROXIMATION",
       {[](double x) { return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); }, -6, 6,
        7e-3, kUlp, "h = 1/4: h^2/8 max|gelu''| = 6.2e-3, the tanh form within 1e-3 of erf's"}},
      {"gelu_SIGMOID_APPROXIMATION", {[](double x) { return x / (1 + std::exp(-1.702 * x)); }, -6, 6, 7e-3, kUlp,
                                      "h = 1/4: h^2/8 max|(x sigmoid(1.702 x))''| = 6.8e-3"}},
      {"silu", {[](double x) { return x / (1 + std::exp(-x)); }, -8, 8, 1.7e-2, 2 * kUlp,
                "h = 1/2: h^2/8 max|silu''| = 1.6e-2 (the node at 0.5 is 0.2964, silu 0.3112)"}},
      {"exp", {[](double x) { return std::exp(x); }, -8, 8, 0, 2e-3,
               "x scaled by fp16 log2(e) (3.1e-4 low): 2.2e-4 |x| relative, |x| <= 8"}},
      {"sqrt", {[](double x) { return std::sqrt(x); }, 1.0 / 16, 16, 0, 2e-3,
                "a mantissa table of h = 1/16: relative 4.9e-4 at m = 0.5, plus rounding"}},
      {"rsqrt", {[](double x) { return 1 / std::sqrt(x + 1e-6); }, 1.0 / 16, 16, 0, 2e-3,
                 "a mantissa table of h = 1/16: relative 1.5e-3 at m = 0.5 (x + 1e-6 first)"}},
  };
  return cases.at(op);
}

double mil_binary(const std::string& op, double x, double z) {
  if (op == "add") return x + z;
  if (op == "sub") return x - z;
  if (op == "mul") return x * z;
  if (op == "maximum") return std::max(x, z);
  if (op == "minimum") return std::min(x, z);
  if (op == "real_div") return x / z;
  ADD_FAILURE() << "no reference for " << op;
  return 0;
}

// Units in the last place between two finite fp16 values of one sign region.
int ulps(uint16_t a, uint16_t b) {
  auto key = [](uint16_t h) { return (h & 0x8000) ? -static_cast<int>(h & 0x7fff) : static_cast<int>(h); };
  return std::abs(key(a) - key(b));
}

// x * T(z), T Apple's reciprocal table: mantissa nodes h = 1/16 apart on
// [0.5, 1), interpolated linearly, miss 1/m by at most h^2/8 max|(1/m)''| =
// 2^-8 / 8 * 16 = 7.8e-3 absolute near m = 0.5, where 1/m = 2: 3.9e-3
// relative; T's result is rounded to fp16 in L2 and the product once more
// (2^-11 relative each). H13's eiln div kernel, the same table, measures 1.6e-3.
constexpr double kRealDivRelative = 5e-3;
// exp2(z * log2 x) through two tables: log2's mantissa nodes h = 1/16 apart
// miss log2 m by h^2/8 max|(log2 m)''| = 2^-8 / 8 * 5.77 = 2.8e-3 near m =
// 0.5, and its fp16 result (|log2 x| <= 2 here) is off by up to 9.8e-4; times
// |z| <= 4 that is 1.5e-2 in the exponent, 1.05e-2 relative after exp2, whose
// own table (h = 1/16 on [0, 1)) adds 4.7e-4, and the roundings 2^-11 each.
constexpr double kPowRelative = 1.5e-2;

// A record whose constant is a tensor from the campaigns' weight blob.
bool blob_constant(const packed::Fixture& f) {
  const auto storage = f.weights.find("storage");
  return storage != f.weights.end() && storage->second == "BLOBFILE" &&
         (f.family == "binary_constant" || f.family == "env_broadcast");
}

// Its values, as Apple's compiler read them: the MIL names the metadata
// record at offset 64 of the campaign's weights.bin, and that record, read
// as MILBlob v2 lays one out, gives data offset 0 (the campaign's script
// writes the size as u64 at 68 and 128 as u64 at 76, where the format has
// a u32 data type at 68, the size at 72 and the offset at 80). So the
// values are the file's first bytes: its header, then the 0.5s. Checked by
// the record's SHA-256 of the section built from them (blob_constant.h).
std::vector<uint16_t> blob_constant_values(const packed::Fixture& f) {
  const uint64_t payload = std::stoull(f.weights.at("payload_bytes"));
  return test::blob_values(test::minted_weight_file(payload), 64, payload / 2);
}

class PackedRun : public ::testing::TestWithParam<std::string> {};

TEST_P(PackedRun, RunsTheMilOperationOrRefusesByName) {
  auto fx = packed::load(GetParam());
  ASSERT_TRUE(fx.ok()) << fx.error().str();
  Bytes section;
  const bool tensor_constant = blob_constant(*fx);
  const std::vector<uint16_t> constant_values = tensor_constant ? blob_constant_values(*fx) : std::vector<uint16_t>{};
  if (tensor_constant) {
    // The constant section rebuilt from the weight file, as the record hashes it.
    section = test::blob_constant_section(fx->params.at("operation"), constant_values);
    ASSERT_EQ(section.size(), fx->constant.size);
    ASSERT_EQ(sha256_hex(section), fx->constant.sha256) << "the section is not the blob's values laid for "
                                                          << fx->params.at("operation");
  }
  const Bytes bytes = packed::assemble_hwx(*fx, section.empty() ? nullptr : &section);
  auto program = parse_program(bytes, fx->file);
  ASSERT_TRUE(program.ok()) << program.error().str();

  auto run = [&](uint32_t seed) -> Expected<std::map<std::string, sim::Tensor>> {
    auto s = sim::Simulator::create(*program);
    if (!s) return s.error();
    std::map<std::string, sim::Tensor> values;
    double lo = -4, hi = 4;
    if (is_activation(*fx) && expected_to_run(*fx)) {
      lo = activation_case(*fx).lo;
      hi = activation_case(*fx).hi;
    }
    const auto operation = fx->params.find("operation");  // a matmul record names none
    const std::string op = operation == fx->params.end() ? "" : operation->second;
    if (op == "real_div") lo = 1.0 / 8, hi = 8;  // a divisor away from 0
    if (op == "pow") lo = 1.0 / 4, hi = 4;       // x > 0, x^z within fp16
    for (const Buffer& b : s->inputs()) {
      const auto shape = b.shape();
      if (!shape) return make_error("input without a shape: " + b.name);
      sim::Tensor t;
      for (int k = 0; k < 4; ++k) t.nchw[k] = static_cast<uint32_t>(shape->nchw[k]);
      t.data = test::uniform_fp16(t.elements(), lo, hi, seed++);
      if (auto st = s->set_input(b.name, t); !st) return st.error();
      values[b.name] = std::move(t);
    }
    if (auto st = s->run(); !st) return st.error();
    for (const Buffer& b : s->outputs()) {
      auto t = s->read_buffer(b.name);
      if (!t) return t.error();
      values[b.name] = std::move(*t);
    }
    return values;
  };
  auto values = run(7);

  // hwx-dump --summary says the same: the plan the simulator runs, or why not.
  const std::string summary = sim::describe_task(*program, program->tasks.back());
  if (!expected_to_run(*fx)) {
    ASSERT_FALSE(values.ok()) << fx->name << " (" << fx->target << ") ran, but the simulator does not claim it";
    EXPECT_EQ(values.error().str().rfind("unsupported: ", 0), 0u) << values.error().str();
    std::string every_task;  // the refused task may be any of them
    for (const Task& t : program->tasks) every_task += sim::describe_task(*program, t) + "\n";
    // A task may plan and still be refused by what it reads in L2 (a blob
    // constant's second source, read as channels along W from a copy that
    // was not laid so): the summary names the layout it reads.
    const bool l2_read = values.error().str().find("as channels laid along W") != std::string::npos;
    EXPECT_NE(every_task.find(l2_read ? "(channels along W)" : "not simulated: unsupported: "), std::string::npos)
        << every_task;
    return;
  }
  ASSERT_TRUE(values.ok()) << values.error().str();
  const std::string& operation = fx->params.at("operation");
  const bool ne = is_activation(*fx) ? operation != "abs"
                 : operation == "pow" ||
                       (fx->family == "binary_constant" && !tensor_constant &&
                        (operation == "maximum" || operation == "minimum"));
  const std::string engine = ne ? "NE " : "PE ";
  EXPECT_EQ(summary.rfind(fmt::format("task {} ({}): {}", program->tasks.back().index,
                                      generation_name(program->generation), engine),
                          0),
            0u)
      << summary;
  const std::string op = fx->params.at("operation");
  if (is_activation(*fx)) {
    std::string x, y;
    for (const auto& [name, in] : fx->io) (in ? x : y) = name;
    const UnaryCase& u = activation_case(*fx);
    double worst = 0;
    // The programs are small ([1,64,1,1]): 32 runs judge 2048 inputs.
    for (uint32_t seed = 7; seed < 7 + 32; ++seed) {
      auto v = run(seed);
      ASSERT_TRUE(v.ok()) << v.error().str();
      const auto& in = v->at(x).data;
      const auto& out = v->at(y).data;
      ASSERT_EQ(out.size(), in.size());
      for (size_t i = 0; i < out.size(); ++i) {
        const double want = u.f(fp16_to_float(in[i])), got = fp16_to_float(out[i]);
        const double rounded = fp16_to_float(double_to_fp16(want));
        const double ulp = std::ldexp(1.0, std::max(std::ilogb(std::max(std::fabs(rounded), 0x1p-14)), -14) - 10);
        const double bound = u.abs + u.rel * std::fabs(want) + ulp;
        worst = std::max(worst, std::fabs(got - rounded) / bound);
        ASSERT_LE(std::fabs(got - rounded), bound) << op << "(" << fp16_to_float(in[i]) << ") = " << got << ", want "
                                                   << want << " (" << u.why << ")";
      }
    }
    RecordProperty("worst_error_over_bound", std::to_string(worst));
    if (std::getenv("LIBANE_SHOW_WORST")) std::printf("%s worst/bound %.3f\n", op.c_str(), worst);
    return;
  }
  // The MIL program: y = op(x, z), inputs named in the record's `io` line.
  std::string x, z, y;
  for (const auto& [name, in] : fx->io) (in ? (x.empty() ? x : z) : y) = name;
  const auto& a = values->at(x).data;
  const auto& out = values->at(y).data;
  // A scalar operand (the broadcast campaign's and the constant campaign's)
  // is a constant of the MIL program, `fp16 z = const(... val =
  // fp16(0x1p-1))`: 0.5 for every element.
  std::vector<uint16_t> b(a.size(), 0x3800);
  if (!z.empty() || tensor_constant) {
    // The second operand repeated to the first's shape, numpy's broadcasting
    // (an axis of extent 1 repeats).
    const auto full = shape_of(fx->params.at("shape"));
    const auto small = fx->params.count("operand_shape") ? shape_of(fx->params.at("operand_shape")) : full;
    const auto& zv = tensor_constant ? constant_values : values->at(z).data;
    ASSERT_EQ(zv.size(), small[0] * small[1] * small[2] * small[3]);
    size_t i = 0;
    for (uint64_t n = 0; n < full[0]; ++n)
      for (uint64_t c = 0; c < full[1]; ++c)
        for (uint64_t h = 0; h < full[2]; ++h)
          for (uint64_t w = 0; w < full[3]; ++w) {
            auto at = [](uint64_t k, uint64_t extent) { return extent == 1 ? 0 : k; };
            b[i++] = zv[((at(n, small[0]) * small[1] + at(c, small[1])) * small[2] + at(h, small[2])) * small[3] +
                        at(w, small[3])];
          }
  }
  ASSERT_EQ(out.size(), a.size());
  // max / min are exact; add, sub and mul round once to fp16 here, and the
  // planar engine rounds its fp32 result once more at most: one unit apart
  // at the most, and equal almost everywhere.
  if (op == "pow") {  // within kPowRelative of the exact power
    double worst = 0;
    for (size_t i = 0; i < out.size(); ++i) {
      const double want = std::pow(fp16_to_float(a[i]), fp16_to_float(b[i])), got = fp16_to_float(out[i]);
      worst = std::max(worst, std::fabs(got - want) / want);
      ASSERT_LE(std::fabs(got - want), kPowRelative * want)
          << fp16_to_float(a[i]) << " ^ " << fp16_to_float(b[i]) << " = " << got << ", want " << want;
    }
    if (std::getenv("LIBANE_SHOW_WORST")) std::printf("pow worst relative error %.3g\n", worst);
    return;
  }
  if (op == "real_div") {  // within kRealDivRelative of the exact quotient
    double worst = 0;
    for (size_t i = 0; i < out.size(); ++i) {
      const double want = fp16_to_float(a[i]) / fp16_to_float(b[i]), got = fp16_to_float(out[i]);
      worst = std::max(worst, std::fabs(got - want) / std::fabs(want));
      ASSERT_LE(std::fabs(got - want), kRealDivRelative * std::fabs(want))
          << fp16_to_float(a[i]) << " / " << fp16_to_float(b[i]) << " = " << got << ", want " << want;
    }
    if (std::getenv("LIBANE_SHOW_WORST")) std::printf("real_div worst relative error %.3g\n", worst);
    return;
  }
  const int allowed = (op == "maximum" || op == "minimum") ? 0 : 1;
  const bool ties_away = fx->target == "h16" || fx->target == "h17" || fx->target == "h18";
  size_t differ = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    const double exact = mil_binary(op, fp16_to_float(a[i]), fp16_to_float(b[i]));
    const uint16_t want = ties_away ? fp16_ties_away(exact) : double_to_fp16(exact);
    const int d = ulps(out[i], want);
    ASSERT_LE(d, allowed) << "element " << i << ": " << fp16_to_float(out[i]) << " vs " << fp16_to_float(want);
    differ += d != 0;
  }
  EXPECT_LE(differ, out.size() / 1000) << "elements one unit apart";
}

INSTANTIATE_TEST_SUITE_P(Records, PackedRun, ::testing::ValuesIn(packed::fixture_files()), packed::ParamName());

}  // namespace
}  // namespace ane
