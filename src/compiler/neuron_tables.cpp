// Neuron lookup tables from their function (neuron_tables.h). The slot
// layout is the simulator's reading (docs/simulator.md, "Lookup tables").
// Each spec below names the Apple-compiled table it reproduces byte for byte
// (tests/neuron_tables_test.cpp); a spec without one is marked as such.
#include "ane/neuron_tables.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "ane/fp16.h"

namespace ane {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Mode bits (slot 42) and transforms.
constexpr uint16_t kNegativeZero = 0x80, kAbsInput = 0x40, kOdd = 0x20;
enum Transform : uint16_t { kPlain = 0, kCentred = 1, kFraction = 3, kInteger = 4, kSqrt = 5, kRsqrt = 6,
                            kRecip = 7, kLog2 = 9, kExp2 = 10 };
constexpr int16_t kNoGrid = 64;  // a step of 2^-64: every input is on a line or beyond the range

// A line beside the grid: given, or joining the end node to the range edge
// (lo, below) / (hi, above); when the edge is the end node itself, the flat
// line at the edge value.
struct Line {
  bool join = false;
  double slope = 0, intercept = 0;
};
constexpr Line joined{true, 0, 0};
constexpr Line line(double s, double b) { return Line{false, s, b}; }

struct Spec {
  const char* type;      // plist Params.Type
  const char* function;  // for --explain
  double (*f)(double);   // the nodes: f at the grid positions (null: empty grid)
  uint16_t mode;
  int16_t k;  // grid step 2^-k
  double lo, hi, below, above;
  Line left, right;
  const char* evidence;
};

double tanh_f(double x) { return std::tanh(x); }
double sigmoid_f(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double exp2_f(double x) { return std::exp2(x); }
double log2_f(double x) { return std::log2(x); }
double recip_f(double x) { return 1.0 / x; }
// sqrt and rsqrt see mantissas in [0.5, 2): nodes below 0.5 are never read (zero).
double sqrt_f(double x) { return x >= 0.5 ? std::sqrt(x) : 0.0; }
double rsqrt_f(double x) { return x >= 0.5 ? 1.0 / std::sqrt(x) : 0.0; }

// Grid positions, by transform: the value the table is indexed with.
double position(uint16_t mode, int16_t k, int i) {
  const double step = std::ldexp(1.0, -k);
  switch (mode & 0x0f) {
    case kCentred: return (i - 16) * step;
    case kRecip:
    case kLog2: return 0.5 + i * step;  // the mantissa m in [0.5, 1)
    default: return i * step;
  }
}

// The specs. Values not computed from f are the function's constants as
// Apple's tables hold them.
const Spec kSpecs[] = {
    {"Sigmoid", "1 / (1 + e^-x), grid -8..8 step 1/2, lines to (lo, 0) and (hi, 1)", sigmoid_f, kCentred, 1,
     -9.9375, 8.3203125, 0, 1, joined, joined, "corpus sigmoid.hwx (v4.2.1)"},
    {"Tanh", "tanh(x), odd, grid 0..4 step 1/8, 1 beyond", tanh_f, kAbsInput | kOdd | kPlain, 3, 0, 4, 0, 1,
     line(0, 0), line(0, 1), "eiln tanh"},
    {"Exp2", "2^x: 2^int(x) x 2^frac(x), frac grid 0..1 step 1/32, 0 below -25, inf from 16", exp2_f, kExp2, 5,
     -25, 16, 0, kInf, line(0, 0), line(0, 0), "eiln exp (its table; exp adds PostScale log2(e))"},
    {"Log2", "log2(x): log2(m) + e, m grid 0.5..1 step 1/64; -inf at 0, 0 for x < 0", log2_f,
     kNegativeZero | kAbsInput | kLog2, 6, 0, kInf, -kInf, 0, line(0, 0), line(0, 0), "eiln log2, log, logsoftmax"},
    {"Inv", "1/x: 1/m x 2^-e, odd, m grid 0.5..1 step 1/64; inf at 0", recip_f, kAbsInput | kOdd | kRecip, 6, 0,
     kInf, kInf, 0, line(0, 0), line(0, 0), "eiln inv, div, norm"},
    {"Sqrt", "sqrt(x): sqrt(m) x 2^(e/2), m grid 0.5..2 step 1/16; 0 for x < 0", sqrt_f,
     kNegativeZero | kAbsInput | kSqrt, 4, 0, kInf, 0, kInf, line(0, 0), line(0, 0), "eiln sqrt, norm"},
    {"Rsqrt", "1/sqrt(x): 1/sqrt(m) x 2^(-e/2), m grid 0.5..2 step 1/16; inf at 0, 0 for x < 0", rsqrt_f,
     kNegativeZero | kAbsInput | kRsqrt, 4, 0, kInf, kInf, 0, line(0, 0), line(0, 0),
     "none in the corpus (the Sqrt rule with transform 6, as mil-hwx-compiler's published rsqrt table)"},
    {"Sign", "sign(x): odd, 0 at 0, 1 above", nullptr, kAbsInput | kOdd | kPlain, kNoGrid, 0, 1, 0, 1, line(0, 0),
     line(0, 1), "eiln sign"},
    {"Frac", "x - trunc(x) (odd fraction transform)", nullptr, kAbsInput | kOdd | kFraction, 0, -kInf, kInf, 0, 0,
     line(0, 0), line(0, 0), "eiln ceil, task 0"},
    {"Int", "trunc(x) (odd integer-part transform)", nullptr, kAbsInput | kOdd | kInteger, 5, -kInf, kInf, -kInf,
     kInf, line(0, 0), line(0, 0), "eiln ceil, task 1"},
};

// GELU's nodes are not gelu(x) at the grid (gelu(-4) = -1.3e-4, node 0 is
// 0; node 1 is -4.0e-4 against -3.3e-4): Apple fitted them, by a method
// unknown. Its table, as the eiln gelu kernel holds it.
constexpr uint16_t kGeluApple[43] = {
    0xc466, 0x7c00, 0x0000, 0x7c00, 0x0000, 0x8e8a, 0x9230, 0x9757, 0x9bf0, 0xa011, 0xa3bf, 0xa6ec, 0xa9bf,
    0xac75, 0xae67, 0xb03d, 0xb11e, 0xb184, 0xb104, 0xaecf, 0x922d, 0x3098, 0x357e, 0x389f, 0x3ab8, 0x3c78,
    0x3d9a, 0x3eb9, 0x3fd2, 0x4072, 0x40f8, 0x417c, 0x41fe, 0x427f, 0x4300, 0x4380, 0x4400, 0x0000, 0x0000,
    0x3c00, 0x0000, 0x0002, 0x0001
};

// SiLU's nodes are fitted the same way (node 16 at x = 0 is -0.0017, node 17
// at 0.5 is 0.2964 against silu 0.3112; the line above 8 is x - 2^-8). The
// table of Apple's macOS 26 compiler (centred grid -8..8 step 1/2), as
// mil-hwx-compiler publishes it; padded with zeros to 2048 bytes it hashes to
// the constant SHA-256 of the H13 records unary_silu_c64 / _c512
// (tests/mil_network_test.cpp compares).
constexpr uint16_t kSiluApple[43] = {
    0xc91a, 0x7c00, 0x0000, 0x7c00, 0x98cd, 0x9c5e, 0x9e65, 0xa0ef, 0xa37b, 0xa5a9, 0xa83b, 0xaa45, 0xac8e,
    0xae85, 0xb088, 0xb210, 0xb3a9, 0xb470, 0xb460, 0xb284, 0x96fb, 0x34be, 0x39d0, 0x3ce4, 0x3f0b, 0x409f,
    0x41b7, 0x42cc, 0x43dc, 0x4473, 0x44f8, 0x457a, 0x45fc, 0x467e, 0x46fe, 0x477f, 0x47ff, 0x945d, 0xa191,
    0x3c00, 0x9c00, 0x0001, 0x0001
};

uint16_t h(double v) { return double_to_fp16(v); }
double v16(uint16_t bits) { return fp16_to_float(bits); }

NeuronTable generate(const Spec& s) {
  NeuronTable t;
  t.rule = s.function;
  t.evidence = s.evidence;
  auto& a = t.slots;
  a[0] = h(s.lo), a[1] = h(s.hi), a[2] = h(s.below), a[3] = h(s.above);
  for (int i = 0; i < 33; ++i) a[4 + i] = s.f ? h(s.f(position(s.mode, s.k, i))) : 0;
  // A joined line runs from the end node (as stored) to the range edge.
  auto join = [](double x_end, double node, double x_edge, double edge) {
    if (x_edge == x_end || !std::isfinite(x_edge)) return line(0, edge);
    const double slope = (edge - node) / (x_edge - x_end);
    return line(slope, node - slope * x_end);
  };
  const double x0 = position(s.mode, s.k, 0), x32 = position(s.mode, s.k, 32);
  const Line left = s.left.join ? join(x0, v16(a[4]), v16(a[0]), v16(a[2])) : s.left;
  const Line right = s.right.join ? join(x32, v16(a[36]), v16(a[1]), v16(a[3])) : s.right;
  a[37] = h(left.slope), a[38] = h(left.intercept), a[39] = h(right.slope), a[40] = h(right.intercept);
  a[41] = static_cast<uint16_t>(s.k);
  a[42] = s.mode;
  const uint16_t transform = s.mode & 0x0f;
  t.clears_debug_event_13 = transform == kSqrt || transform == kRsqrt || transform == kRecip || transform == kLog2;
  return t;
}

}  // namespace

std::optional<NeuronTable> neuron_table(std::string_view type, const NeuronArgs& args) {
  if (type == "GELU") {
    NeuronTable t;
    std::copy(std::begin(kGeluApple), std::end(kGeluApple), t.slots.begin());
    t.generated = false;
    t.rule = "Apple's GELU table (fitted nodes, grid -4..4 step 1/4, y = x above; copied, not generated)";
    t.evidence = "eiln gelu";
    return t;
  }
  if (type == "SiLU") {
    NeuronTable t;
    std::copy(std::begin(kSiluApple), std::end(kSiluApple), t.slots.begin());
    t.generated = false;
    t.rule = "Apple's SiLU table (x / (1 + e^-x); fitted nodes, grid -8..8 step 1/2, x - 2^-8 above; copied, not "
             "generated)";
    t.evidence = "the H13 records unary_silu_c64 / _c512 (macOS 26; their constant's SHA-256)";
    return t;
  }
  if (type == "LeakyReLU") {
    // The lines alone: alpha x below 0, x above (eiln leakyrelu: alpha 0.01).
    const Spec s{"LeakyReLU", "", nullptr, kCentred, kNoGrid, -kInf, kInf, -kInf, kInf,
                 line(args.alpha, 0), line(1, 0), "eiln leakyrelu (alpha 0.01)"};
    NeuronTable t = generate(s);
    t.rule = fmt::format("x above 0, {} x below (the two lines, no grid)", args.alpha);
    return t;
  }
  if (type == "Clip" || type == "ReLU6") {
    // y = x inside [min, max], the edges beyond; ReLU6 is Clip 0..6.
    const double lo = type == "ReLU6" ? 0 : args.min, hi = type == "ReLU6" ? 6 : args.max;
    const Spec s{"Clip", "", nullptr, kCentred, kNoGrid, lo, hi, lo, hi, line(1, 0), line(1, 0), "eiln relu6"};
    NeuronTable t = generate(s);
    // The grid is empty (every input is on a line or beyond the range); its
    // nodes hold the range's value at 0, clamp(0, lo, hi): 0 in eiln's relu6,
    // the scalar in the max(x, 0.5) records, 0 in the min(x, 0.5) ones.
    const uint16_t node = h(std::clamp(0.0, lo, hi));
    for (int i = 0; i < 33; ++i) t.slots[4 + i] = node;
    t.rule = fmt::format("min(max(x, {}), {}): the line y = x inside the range", lo, hi);
    if (type == "Clip") t.evidence = "eiln relu6 (Clip 0..6)";
    return t;
  }
  if (type == "Exp") {
    // e^x = 2^(x log2 e): the Exp2 table after PostScale fp16(log2 e) (eiln exp).
    NeuronTable t = *neuron_table("Exp2");
    t.post_scale = double_to_fp16(1.4426950408889634);
    t.rule = "e^x: x log2(e) (PostScale), then the Exp2 table";
    t.evidence = "eiln exp";
    return t;
  }
  for (const Spec& s : kSpecs)
    if (type == s.type) return generate(s);
  return std::nullopt;
}

std::vector<std::string> neuron_table_types() {
  std::vector<std::string> v = {"Clip", "Exp", "GELU", "LeakyReLU", "ReLU6", "SiLU"};
  for (const Spec& s : kSpecs) v.push_back(s.type);
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace ane
