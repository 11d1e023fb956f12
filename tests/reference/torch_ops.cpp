// Reference implementations of PyTorch ops from their definitions; see torch_ops.h.
#include "torch_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace ane::ref::torch {

// ---------------------------------------------------------------------------------------------
// IEEE 754 binary16: 1 sign bit, 5 exponent bits (bias 15), 10 fraction bits.

namespace {

constexpr int kFractionBits = 10;
constexpr int kExponentBias = 15;
constexpr int kMinNormalExponent = -14;
constexpr int kMaxExponent = 15;

// Round a non-negative value (< 2^52, so its fraction is exact in double) to the nearest integer,
// ties to even, without depending on the FPU's current rounding mode.
double round_half_even(double q) {
  double whole = std::floor(q);
  double rest = q - whole;
  if (rest > 0.5 || (rest == 0.5 && std::fmod(whole, 2.0) != 0.0)) whole += 1.0;
  return whole;
}

}  // namespace

uint16_t to_fp16(double x) {
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0x0000;
  if (std::isnan(x)) return sign | 0x7E00;
  const double magnitude = std::fabs(x);
  if (std::isinf(magnitude)) return sign | 0x7C00;
  if (magnitude == 0.0) return sign;

  int binary_exponent = 0;  // magnitude = m * 2^binary_exponent, m in [0.5, 1)
  std::frexp(magnitude, &binary_exponent);
  const int exponent = binary_exponent - 1;  // magnitude in [2^exponent, 2^(exponent+1))

  if (exponent < kMinNormalExponent) {
    // Subnormal range: a fixed quantum of 2^-24. Rounding up to 1024 quanta lands exactly on
    // the smallest normal's encoding, so no special case is needed.
    const double quanta = round_half_even(std::ldexp(magnitude, -(kMinNormalExponent - kFractionBits)));
    return sign | static_cast<uint16_t>(quanta);
  }

  // Normal range: 11 significant bits, so the quantum is 2^(exponent-10).
  int biased = exponent + kExponentBias;
  double significand = round_half_even(std::ldexp(magnitude, kFractionBits - exponent));
  if (significand == 2048.0) {  // rounding carried into the next binade
    significand = 1024.0;
    ++biased;
  }
  if (biased > kMaxExponent + kExponentBias) return sign | 0x7C00;  // overflow -> infinity
  const auto fraction = static_cast<uint16_t>(significand - 1024.0);
  return sign | static_cast<uint16_t>(biased << kFractionBits) | fraction;
}

double from_fp16(uint16_t h) {
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  const int biased = (h >> kFractionBits) & 0x1F;
  const int fraction = h & 0x3FF;
  if (biased == 0x1F) {
    return fraction == 0 ? sign * std::numeric_limits<double>::infinity()
                         : std::copysign(std::numeric_limits<double>::quiet_NaN(), sign);
  }
  if (biased == 0) return sign * std::ldexp(fraction, kMinNormalExponent - kFractionBits);
  return sign * std::ldexp(1024 + fraction, biased - kExponentBias - kFractionBits);
}

// ---------------------------------------------------------------------------------------------
// Op definitions.

namespace {

constexpr double kFp16Max = 65504.0;
constexpr double kFp16MinNormal = 0x1p-14;
constexpr double kFp16MinSubnormal = 0x1p-24;

// Core ML MIL `inverse` computes 1 / (x + epsilon) with default epsilon 1e-4; eiln's "inv" lowers
// to it, so the reference includes the epsilon (inv(0) = 10000, not infinity).
constexpr double kInverseEpsilon = 1e-4;

// SELU constants from Klambauer et al., as torch.nn.functional.selu uses them.
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

// rrelu in evaluation mode is a leaky relu with the mean of its default [1/8, 1/3] slope range.
constexpr double kRreluEvalSlope = (1.0 / 8.0 + 1.0 / 3.0) / 2.0;

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Snap a decimal to its nearest fp16 so edge values are representable by construction.
double nearest_fp16(double x) { return from_fp16(to_fp16(x)); }

// Numerically stable softmax / log-softmax over one row: shifting by the max keeps exp() <= 1.
void softmax_row(const double* row, double* out, size_t n, bool negate, bool take_log) {
  if (n == 0) return;
  const double sign = negate ? -1.0 : 1.0;
  double largest = -std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < n; ++i) largest = std::max(largest, sign * row[i]);
  double sum = 0.0;
  for (size_t i = 0; i < n; ++i) sum += std::exp(sign * row[i] - largest);
  const double log_sum = std::log(sum);
  for (size_t i = 0; i < n; ++i) {
    const double shifted = sign * row[i] - largest;
    out[i] = take_log ? shifted - log_sum : std::exp(shifted) / sum;
  }
}

// torch.nn.functional.normalize(p=2, dim=-1, eps=1e-12): x / max(||row||_2, eps).
void normalize_row(const double* row, double* out, size_t n) {
  double sum_of_squares = 0.0;
  for (size_t i = 0; i < n; ++i) sum_of_squares += row[i] * row[i];
  const double divisor = std::max(std::sqrt(sum_of_squares), 1e-12);
  for (size_t i = 0; i < n; ++i) out[i] = row[i] / divisor;
}

OpRef unary_op(std::string name, std::function<double(double)> f, double lo, double hi,
               std::vector<double> edges) {
  OpRef op{std::move(name), 1, false, std::move(f), {}, {}, lo, hi, 0.0, 0.0, std::move(edges)};
  return op;
}

OpRef binary_op(std::string name, std::function<double(double, double)> f, double lo, double hi,
                double lo2, double hi2, std::vector<double> edges) {
  OpRef op{std::move(name), 2, false, {}, std::move(f), {}, lo, hi, lo2, hi2, std::move(edges)};
  return op;
}

OpRef row_op(std::string name, std::function<void(const double*, double*, size_t)> f, double lo,
             double hi, std::vector<double> edges) {
  OpRef op{std::move(name), 1, true, {}, {}, std::move(f), lo, hi, 0.0, 0.0, std::move(edges)};
  return op;
}

std::vector<OpRef> build_ops() {
  const double M = kFp16Max, tiny = kFp16MinSubnormal, small = kFp16MinNormal;
  // Smooth activations saturate or become linear well inside [-12, 12] at fp16 precision.
  const std::vector<double> smooth_edges = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 12.0, -12.0, 17.0,
                                            -17.0, tiny, -tiny, M, -M};
  // Piecewise-linear activations: probe both sides of each kink and the extremes.
  const std::vector<double> kink_edges = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0,
                                          tiny, -tiny, M, -M};
  std::vector<OpRef> ops;

  // --- activations ---
  // gelu via erfc so the far-negative tail keeps its relative precision.
  ops.push_back(unary_op("gelu", [](double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); },
                         -12, 12, smooth_edges));
  // Domain covers both clamp points with room either side.
  ops.push_back(unary_op("hardtanh", [](double x) { return x < -1.0 ? -1.0 : (x > 1.0 ? 1.0 : x); },
                         -12, 12, kink_edges));
  // Negative side shrinks 100x, so a wide domain still exercises it.
  ops.push_back(unary_op("leakyrelu", [](double x) { return x > 0.0 ? x : 0.01 * x; }, -12, 12,
                         kink_edges));
  ops.push_back(unary_op("relu", [](double x) { return x > 0.0 ? x : 0.0; }, -12, 12, kink_edges));
  // Both kinks (0 and 6) inside the domain; edges straddle 6.
  ops.push_back(unary_op("relu6", [](double x) { return x < 0.0 ? 0.0 : (x > 6.0 ? 6.0 : x); },
                         -12, 12, {0.0, -0.0, 1.0, -1.0, 6.0, 5.99609375, 6.0078125, M, -M, tiny}));
  ops.push_back(unary_op("rrelu", [](double x) { return x > 0.0 ? x : kRreluEvalSlope * x; }, -12,
                         12, kink_edges));
  // selu(65504) = 68825 overflows fp16 while selu(62336) = 65497 does not: both are edges.
  ops.push_back(unary_op("selu",
                         [](double x) {
                           return kSeluScale * (x > 0.0 ? x : kSeluAlpha * std::expm1(x));
                         },
                         -12, 12,
                         {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 12.0, -12.0, tiny, -tiny, 62336.0, M,
                          -M}));
  ops.push_back(unary_op("silu", [](double x) { return x * sigmoid(x); }, -12, 12, smooth_edges));
  // Row ops are shift-invariant (stable form), so [-16, 16] is as good as any; extremes test that
  // the implementation really subtracts the max instead of overflowing exp().
  const std::vector<double> row_edges = {0.0, -0.0, 1.0, -1.0, 16.0, -16.0, 11.5, 12.0, M, -M};
  ops.push_back(row_op("softmax",
                       [](const double* r, double* o, size_t n) { softmax_row(r, o, n, false, false); },
                       -16, 16, row_edges));
  ops.push_back(row_op("logsoftmax",
                       [](const double* r, double* o, size_t n) { softmax_row(r, o, n, false, true); },
                       -16, 16, row_edges));
  ops.push_back(row_op("softmin",
                       [](const double* r, double* o, size_t n) { softmax_row(r, o, n, true, false); },
                       -16, 16, row_edges));

  // --- unary ---
  // abs is exact anywhere; a wide domain covers many binades.
  ops.push_back(unary_op("abs", [](double x) { return std::fabs(x); }, -1000, 1000,
                         {0.0, -0.0, 1.0, -1.0, tiny, -tiny, small, -small, M, -M}));
  // atan flattens past |x| ~ 100 at fp16 precision.
  ops.push_back(unary_op("atan", [](double x) { return std::atan(x); }, -100, 100,
                         {0.0, -0.0, 1.0, -1.0, tiny, -tiny, 0.5, -0.5, 100.0, -100.0, M, -M}));
  // fp16 has fractional bits only below 1024, so [-1000, 1000] covers every rounding case.
  // 2.998046875 is the largest fp16 below 3; ceil(-0.5) is -0.
  const std::vector<double> rounding_edges = {0.0,  -0.0, 1.0,         -1.0,         0.5,
                                              -0.5, 1.5,  -1.5,        2.998046875,  -2.998046875,
                                              3.0,  -3.0, 1023.5,      -1023.5,      tiny,
                                              -tiny, M,   -M};
  ops.push_back(unary_op("ceil", [](double x) { return std::ceil(x); }, -1000, 1000, rounding_edges));
  // |x|^3 < 65504 needs |x| < 40.3: 40.25 fits, 40.5 overflows.
  ops.push_back(unary_op("cube", [](double x) { return x * x * x; }, -30, 30,
                         {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 40.25, -40.25, 40.5, -40.5, tiny}));
  // exp(11) = 59874 is the last integer below fp16 max; [-10, 10] keeps random results finite.
  // exp(11.0859375) = 65250 fits, exp(11.09375) = 65762 overflows; exp(-17) is subnormal,
  // exp(-18) underflows to 0.
  ops.push_back(unary_op("exp", [](double x) { return std::exp(x); }, -10, 10,
                         {0.0, -0.0, 1.0, -1.0, 10.0, -10.0, 11.0, 11.0859375, 11.09375, 12.0,
                          -17.0, -18.0, M, -M}));
  // 2^x is finite in fp16 for x < 16 and normal for x >= -14; -24 is the smallest subnormal.
  ops.push_back(unary_op("exp2", [](double x) { return std::exp2(x); }, -14, 15,
                         {0.0, -0.0, 1.0, -1.0, 0.5, -14.0, -24.0, -26.0, 15.0, 15.9375, 16.0,
                          M, -M}));
  // torch.frac = x - trunc(x), which keeps the sign of x.
  ops.push_back(unary_op("frac", [](double x) { return x - std::trunc(x); }, -1000, 1000,
                         rounding_edges));
  // Random draws stay away from the pole at -1e-4 (|x| >= 1e-2, see min_abs below); 0 checks the
  // epsilon is applied (result 10000), 65504 gives a subnormal result.
  {
    const double hundredth = nearest_fp16(0.01);
    OpRef inv = unary_op("inv", [](double x) { return 1.0 / (x + kInverseEpsilon); }, -100, 100,
                         {0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, hundredth, -hundredth, 100.0,
                          -100.0, M, -M});
    inv.min_abs = 1e-2;
    ops.push_back(std::move(inv));
  }
  // Logs: positive normal fp16 inputs up to 60000; 0 (-inf) and a subnormal are boundary edges.
  const std::vector<double> positive_edges = {1.0, 2.0, 0.5, 4.0, 0.25, 10.0, small, tiny, 0.0,
                                              60000.0, M};
  ops.push_back(unary_op("log", [](double x) { return std::log(x); }, small, 60000, positive_edges));
  ops.push_back(unary_op("log10", [](double x) { return std::log10(x); }, small, 60000,
                         positive_edges));
  ops.push_back(unary_op("log2", [](double x) { return std::log2(x); }, small, 60000,
                         positive_edges));
  // normalize is scale-invariant; tiny and huge rows test eps handling and sum-of-squares overflow.
  ops.push_back(row_op("norm", normalize_row, -100, 100,
                       {0.0, -0.0, 1.0, -1.0, 0.5, tiny, -tiny, small, 100.0, M, -M}));
  // rsqrt(0) = +inf; rsqrt(2^-24) = 4096 still fits.
  ops.push_back(unary_op("rsqrt", [](double x) { return 1.0 / std::sqrt(x); }, small, 60000,
                         positive_edges));
  ops.push_back(unary_op("sigmoid", sigmoid, -12, 12, smooth_edges));
  // torch.sign is (0 < x) - (x < 0): zeros map to +0. Smallest subnormals must not read as 0.
  ops.push_back(unary_op("sign", [](double x) { return double((0.0 < x) - (x < 0.0)); }, -1000, 1000,
                         {0.0, -0.0, tiny, -tiny, small, -small, 1.0, -1.0, M, -M}));
  // sqrt(-0) = -0 per IEEE; same positive domain as the logs.
  {
    std::vector<double> sqrt_edges = positive_edges;
    sqrt_edges.push_back(-0.0);
    ops.push_back(unary_op("sqrt", [](double x) { return std::sqrt(x); }, small, 60000, sqrt_edges));
  }
  // x^2 < 65504 needs |x| < 255.9: 255.875 fits, 256 overflows; 2^-12 squares to the smallest
  // subnormal, 2^-13 underflows.
  ops.push_back(unary_op("square", [](double x) { return x * x; }, -200, 200,
                         {0.0, -0.0, 1.0, -1.0, 0.5, 255.875, -255.875, 256.0, -256.0, 0x1p-12,
                          0x1p-13}));
  ops.push_back(unary_op("tanh", [](double x) { return std::tanh(x); }, -12, 12, smooth_edges));

  // --- binary (input-0 edges paired with input 1 = 1.5) ---
  // Sums of two |x| <= 1000 stay far from overflow; -1.5 + 1.5 checks exact cancellation and
  // 65504 + 1.5 checks rounding back to fp16 max.
  const std::vector<double> additive_edges = {0.0, -0.0, 1.0, -1.0, 1.5, -1.5, tiny, -tiny,
                                              small, M, -M};
  ops.push_back(binary_op("add", [](double a, double b) { return a + b; }, -1000, 1000, -1000, 1000,
                          additive_edges));
  // Same domain as add; ave(65504, 1.5) = 32752.75 probes the top of the range.
  ops.push_back(binary_op("ave", [](double a, double b) { return (a + b) / 2.0; }, -1000, 1000,
                          -1000, 1000, additive_edges));
  // Quotients of |a| <= 100 by |b| >= 1e-2 stay below 1e4; divisor edges live in edges2.
  {
    const double hundredth = nearest_fp16(0.01);
    OpRef div = binary_op("div", [](double a, double b) { return a / b; }, -100, 100, -100, 100,
                          {0.0, -0.0, 1.0, -1.0, 1.5, tiny, 100.0, M, -M});
    div.min_abs2 = 1e-2;
    div.edges2 = {1.0, -1.0, 2.0, -2.0, 0.5, -0.5, hundredth, -hundredth, 100.0, M, -M};
    ops.push_back(std::move(div));
  }
  // torch.maximum / torch.minimum propagate NaN; inputs here are finite, so plain compares suffice.
  const std::vector<double> order_edges = {0.0, -0.0, 1.5, -1.5, 1.4990234375, 1.5009765625, tiny,
                                           M, -M};
  ops.push_back(binary_op("max", [](double a, double b) { return a > b ? a : b; }, -1000, 1000,
                          -1000, 1000, order_edges));
  ops.push_back(binary_op("min", [](double a, double b) { return a < b ? a : b; }, -1000, 1000,
                          -1000, 1000, order_edges));
  // Products of |x| <= 200 stay below 40000. 43680 * 1.5 = 65520 ties to even -> inf;
  // 43648 * 1.5 = 65472 fits; 2^-24 * 1.5 ties to even -> 2^-23.
  ops.push_back(binary_op("mul", [](double a, double b) { return a * b; }, -200, 200, -200, 200,
                          {0.0, -0.0, 1.0, -1.0, 43648.0, 43680.0, -43680.0, tiny, -tiny, M, -M}));
  ops.push_back(binary_op("sub", [](double a, double b) { return a - b; }, -1000, 1000, -1000, 1000,
                          additive_edges));
  return ops;
}

}  // namespace

const std::vector<OpRef>& all_ops() {
  static const std::vector<OpRef> ops = build_ops();
  return ops;
}

const OpRef* find_op(const std::string& name) {
  for (const OpRef& op : all_ops()) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

}  // namespace ane::ref::torch
