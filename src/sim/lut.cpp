// The lookup-table reading of lut.h, and the sigmoid table of corpus
// sigmoid.hwx rebuilt from its facts.
#include "lut.h"

#include <cmath>

#include <fmt/format.h>

#include "ane/fp16.h"
#include "ane/sim.h"
#include "numerics.h"

namespace ane::sim {

const std::array<uint16_t, 64>& sigmoid_lut() {
  static const std::array<uint16_t, 64> table = [] {
    std::array<uint16_t, 64> t{};
    t[0] = 0xC8F8;  // -9.9375: below it the output is slot 2
    t[1] = 0x4829;  // 8.3203: above it the output is slot 3
    t[2] = 0x0000;  // 0.0
    t[3] = 0x3C00;  // 1.0
    for (int i = 0; i < 33; ++i) t[4 + i] = double_to_fp16(1.0 / (1.0 + std::exp(-(-8.0 + 0.5 * i))));
    t[37] = 0x09AC;  // left line: slope
    t[38] = 0x170C;  // left line: intercept
    t[39] = 0x163E;  // right line: slope
    t[40] = 0x3BE6;  // right line: intercept
    t[41] = 0x0001;  // step 2^-1
    t[42] = 0x0001;  // grid centred on 0
    return t;        // 43-63 stay 0
  }();
  return table;
}

}  // namespace ane::sim

namespace ane::sim::detail {

namespace {

using T = LutReading::Transform;

constexpr uint16_t kNegativeZero = 0x80, kAbsInput = 0x40, kOdd = 0x20, kTransformMask = 0x0f;
constexpr int kFirstNode = 4, kNodes = 33, kLeftSlope = 37, kStepSlot = 41, kModeSlot = 42, kFirstUnused = 43;

double value(uint16_t h) { return fp16_to_float(h); }

Error bad_slot(const LutTable& t, int slot, const char* why, uint32_t task) {
  return make_error(fmt::format("unsupported: LUT[{}]={:#06x} ({}) in task {}", slot, t[slot], why, task));
}

// Grid origin and the value the grid is indexed by, per transform.
double origin_of(const LutReading& r) {
  switch (r.transform) {
    case T::Centred: return -16.0 * std::ldexp(1.0, -r.log2_inv_step);
    case T::Recip:
    case T::Log2: return 0.5;  // mantissa in [0.5, 1)
    default: return 0.0;
  }
}

double interpolate(const LutReading& r, double u) {
  const double p = (u - r.origin) * r.inv_step;
  if (p < 0) return r.left_slope * u + r.left_intercept;
  if (p > kNodes - 1) return r.right_slope * u + r.right_intercept;
  int i = static_cast<int>(std::floor(p));
  if (i > kNodes - 2) i = kNodes - 2;
  const double f = p - i;
  return r.nodes[i] + f * (r.nodes[i + 1] - r.nodes[i]);
}

}  // namespace

Expected<LutReading> read_lut(const LutTable& t, uint32_t task) {
  LutReading r;
  const uint16_t mode = t[kModeSlot];
  r.negative_zero = mode & kNegativeZero;
  r.abs_input = mode & kAbsInput;
  r.odd = mode & kOdd;
  if ((mode & ~(kNegativeZero | kAbsInput | kOdd | kTransformMask)) || (r.odd && !r.abs_input))
    return bad_slot(t, kModeSlot, "mode bits", task);
  switch (mode & kTransformMask) {
    case 0: r.transform = T::Plain; break;
    case 1: r.transform = T::Centred; break;
    case 3: r.transform = T::Fraction; break;
    case 4: r.transform = T::Integer; break;
    case 5: r.transform = T::Sqrt; break;
    case 6: r.transform = T::Rsqrt; break;
    case 7: r.transform = T::Recip; break;
    case 9: r.transform = T::Log2; break;
    case 10: r.transform = T::Exp2; break;
    default: return bad_slot(t, kModeSlot, "transform", task);
  }
  r.log2_inv_step = static_cast<int16_t>(t[kStepSlot]);
  if (r.log2_inv_step < -15 || r.log2_inv_step > 64) return bad_slot(t, kStepSlot, "grid step", task);
  r.inv_step = std::ldexp(1.0, r.log2_inv_step);
  r.origin = origin_of(r);
  for (int i = kFirstUnused; i < kLutSlots; ++i)
    if (t[i]) return bad_slot(t, i, "a slot no table uses", task);
  for (int i = 0; i < kFirstNode + kNodes + 4; ++i)
    if (fp16_is_nan(t[i])) return bad_slot(t, i, "NaN", task);
  r.lo = value(t[0]);
  r.hi = value(t[1]);
  r.below = value(t[2]);
  r.above = value(t[3]);
  bool table_used = false;
  for (int i = 0; i < kNodes; ++i) {
    r.nodes[i] = value(t[kFirstNode + i]);
    table_used |= t[kFirstNode + i] != 0;
  }
  r.left_slope = value(t[kLeftSlope]);
  r.left_intercept = value(t[kLeftSlope + 1]);
  r.right_slope = value(t[kLeftSlope + 2]);
  r.right_intercept = value(t[kLeftSlope + 3]);
  for (int i = kLeftSlope; i < kLeftSlope + 4; ++i) table_used |= t[i] != 0;
  // The fraction and integer transforms appear only with empty tables (eiln
  // ceil): what nodes would add to them is unknown.
  if ((r.transform == T::Fraction || r.transform == T::Integer) && table_used)
    return bad_slot(t, kModeSlot, "fraction/integer transform with a non-empty table", task);
  r.is_sigmoid = t == sigmoid_lut();
  return r;
}

double lut_eval(const LutReading& r, double x) {
  if (std::isnan(x)) x = INFINITY;
  if (x == 0) x = 0.0;  // -0 reads as +0
  if (r.negative_zero && x < 0) return 0.0;
  const double sign = x < 0 ? -1.0 : 1.0;
  if (r.abs_input) x = std::fabs(x);
  double y = 0;  // every transform case sets it
  if (x <= r.lo) {
    y = r.below;
  } else if (x >= r.hi) {
    y = r.above;
  } else {
    switch (r.transform) {
      case T::Plain:
      case T::Centred: y = interpolate(r, x); break;
      case T::Fraction: y = x - std::floor(x); break;
      case T::Integer: y = std::floor(x); break;
      case T::Exp2: {
        const double n = std::floor(x);
        y = std::ldexp(interpolate(r, x - n), static_cast<int>(n));
        break;
      }
      case T::Recip:
      case T::Log2: {
        int e = 0;
        const double m = std::frexp(x, &e);  // x = m 2^e, m in [0.5, 1)
        y = r.transform == T::Recip ? std::ldexp(interpolate(r, m), -e) : interpolate(r, m) + e;
        break;
      }
      case T::Sqrt:
      case T::Rsqrt: {
        int e = 0;
        double m = std::frexp(x, &e);
        if (e % 2) {  // an even exponent is left: m in [0.5, 2)
          m *= 2;
          --e;
        }
        y = std::ldexp(interpolate(r, m), r.transform == T::Sqrt ? e / 2 : -e / 2);
        break;
      }
    }
  }
  return r.odd ? sign * y : y;
}

double lut_ideal_sigmoid(double x) {
  if (std::isnan(x)) return x;
  return 1.0 / (1.0 + std::exp(-x));
}

bool lut_at_node(const LutReading& r, double x) {
  if (r.transform != T::Centred && r.transform != T::Plain) return false;
  const double p = (x - r.origin) * r.inv_step;
  return p >= 0 && p <= kNodes - 1 && p == std::floor(p);
}

std::string lut_describe(const LutReading& r) {
  const double step = std::ldexp(1.0, -r.log2_inv_step);
  const double first = origin_of(r), last = first + 32 * step;
  std::string s;
  if (r.is_sigmoid) s = "sigmoid.hwx's ";
  if (r.negative_zero) s += "x<0 -> 0, ";
  if (r.odd) s += "odd, ";
  else if (r.abs_input) s += "|x|, ";
  const std::string grid = r.log2_inv_step >= 60 ? "lines only" : fmt::format("grid {:g}..{:g}", first, last);
  switch (r.transform) {
    case T::Plain:
    case T::Centred: s += grid; break;
    case T::Fraction: return s + "fraction x - floor(x)";
    case T::Integer: return s + "integer part floor(x)";
    case T::Sqrt: s += "sqrt: T(m) 2^(e/2), " + grid; break;
    case T::Rsqrt: s += "rsqrt: T(m) 2^(-e/2), " + grid; break;
    case T::Recip: s += "reciprocal: T(m) 2^-e, " + grid; break;
    case T::Log2: s += "log2: T(m) + e, " + grid; break;
    case T::Exp2: s += "exp2: T(frac) 2^int, " + grid; break;
  }
  return s + fmt::format(", x in ({:g}, {:g})", r.lo, r.hi);
}

}  // namespace ane::sim::detail
