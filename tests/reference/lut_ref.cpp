// Independent reference model of the ANE activation lookup table; see lut_ref.h.
#include "lut_ref.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ane_ref::lut {
namespace {

constexpr uint16_t kHalfPosInf = 0x7C00;
constexpr uint16_t kHalfNegInf = 0xFC00;
constexpr uint16_t kHalfOne = 0x3C00;

bool half_is_nan(uint16_t h) { return (h & 0x7C00) == 0x7C00 && (h & 0x03FF) != 0; }

// Round a non-negative double (< 2^53) to an integer, ties to even. Done by
// hand so the result does not depend on the current FP rounding mode.
double round_even(double q) {
  double fl = std::floor(q);
  double r = q - fl;  // exact: q and fl share an exponent range
  if (r > 0.5 || (r == 0.5 && std::fmod(fl, 2.0) != 0.0)) fl += 1.0;
  return fl;
}

bool fail(std::string* why, int slot, const char* reason) {
  if (why) *why = "slot " + std::to_string(slot) + ": " + reason;
  return false;
}

double slot(const Table& t, int i) { return half_to_double(t[i]); }

int shift_of(const Table& t) { return static_cast<int16_t>(t[kSlotShift]); }

// The piecewise-linear core: nodes on a grid of step 2^-k starting at
// `origin`, with the two fallback lines outside [0, 32] grid steps.
double grid(const Table& t, double u, double origin) {
  const double p = std::ldexp(u - origin, shift_of(t));
  if (p < 0) return slot(t, kSlotLeftSlope) * u + slot(t, kSlotLeftIntercept);
  if (p > 32) return slot(t, kSlotRightSlope) * u + slot(t, kSlotRightIntercept);
  // p == 32 exactly must use the last segment with t = 1, hence the clamp.
  const int i = std::min(static_cast<int>(std::floor(p)), 31);
  const double frac = p - i;
  const double a = slot(t, kSlotNode0 + i);
  const double b = slot(t, kSlotNode0 + i + 1);
  return a + frac * (b - a);
}

// Exponent for ldexp; anything past +-4000 already saturates to inf/0 for the
// bounded values grid() can return, and the clamp keeps the int cast defined.
int clamp_exponent(double n) { return static_cast<int>(std::clamp(n, -4000.0, 4000.0)); }

Table blank(uint16_t mode, int k) {
  Table t{};
  t[kSlotShift] = static_cast<uint16_t>(static_cast<int16_t>(k));
  t[kSlotMode] = mode;
  return t;
}

void set_range(Table& t, double lo, double hi, uint16_t below, uint16_t above) {
  t[kSlotLo] = double_to_half(lo);
  t[kSlotHi] = double_to_half(hi);
  t[kSlotBelow] = below;
  t[kSlotAbove] = above;
}

template <typename F>
void set_nodes(Table& t, F node) {
  for (int i = 0; i < kNodeCount; ++i) t[kSlotNode0 + i] = double_to_half(node(i));
}

}  // namespace

double half_to_double(uint16_t h) {
  const int exp = (h >> 10) & 0x1F;
  const int man = h & 0x3FF;
  double v;
  if (exp == 0) {
    v = std::ldexp(static_cast<double>(man), -24);  // zero / subnormal
  } else if (exp == 31) {
    v = man ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else {
    v = std::ldexp(static_cast<double>(man + 1024), exp - 25);
  }
  return (h & 0x8000) ? -v : v;
}

uint16_t double_to_half(double d) {
  if (std::isnan(d)) return 0x7E00;
  const uint16_t sign = std::signbit(d) ? 0x8000 : 0;
  const double a = std::fabs(d);
  if (a < 0x1p-14) {
    // Subnormal range counts in units of 2^-24; rounding up to 1024 lands on
    // the smallest normal, whose encoding is also 1024.
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(round_even(std::ldexp(a, 24))));
  }
  // 65520 is the midpoint between 65504 and 2^16; the tie goes to the even
  // neighbour 2^16, which overflows.
  if (a >= 65520.0) return sign | kHalfPosInf;
  int e = 0;
  const double m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  double q = round_even(std::ldexp(m, 11));  // 11 significant bits: [1024, 2048]
  int biased = e - 1 + 15;
  if (q == 2048.0) {
    q = 1024.0;
    ++biased;
  }
  if (biased >= 31) return sign | kHalfPosInf;
  return static_cast<uint16_t>(sign | (biased << 10) | (static_cast<int>(q) - 1024));
}

bool valid(const Table& t, std::string* why) {
  for (int i = 43; i < 64; ++i) {
    if (t[i] != 0) return fail(why, i, "reserved slot must be 0");
  }
  for (int i = 0; i <= kSlotRightIntercept; ++i) {
    if (half_is_nan(t[i])) return fail(why, i, "NaN");
  }
  const int k = shift_of(t);
  if (k < -15 || k > 64) return fail(why, kSlotShift, "k outside [-15, 64]");
  const uint16_t mode = t[kSlotMode];
  if (mode & 0xFF00) return fail(why, kSlotMode, "mode bits 8..15 set");
  if (mode & kModeReserved) return fail(why, kSlotMode, "mode bit 4 set");
  if ((mode & kModeSignOut) && !(mode & kModeAbsIndex)) {
    return fail(why, kSlotMode, "mode bit 5 without bit 6");
  }
  const uint16_t tr = mode & kModeTransform;
  switch (tr) {
    case kPlain: case kCentred: case kSqrt: case kRsqrt:
    case kReciprocal: case kLog2: case kExp2:
      break;
    case kFraction: case kInteger:
      // These transforms ignore the grid; junk there would signal a bad table.
      for (int i = kSlotNode0; i <= kSlotRightIntercept; ++i) {
        if (t[i] != 0) return fail(why, i, "must be 0 for fraction/integer transforms");
      }
      break;
    default:
      return fail(why, kSlotMode, "unknown transform");
  }
  return true;
}

double eval(const Table& t, double x) {
  const uint16_t mode = t[kSlotMode];
  if (std::isnan(x)) x = std::numeric_limits<double>::infinity();
  if (x == 0) x = 0.0;  // folds -0 into +0
  if ((mode & kModeNegZero) && x < 0) return 0.0;
  const double s = x < 0 ? -1.0 : 1.0;
  if (mode & kModeAbsIndex) x = std::fabs(x);

  const int k = shift_of(t);
  double y;
  if (x <= slot(t, kSlotLo)) {
    y = slot(t, kSlotBelow);
  } else if (x >= slot(t, kSlotHi)) {
    y = slot(t, kSlotAbove);
  } else {
    // From here x is finite: +-inf always falls at or beyond lo/hi.
    switch (mode & kModeTransform) {
      case kPlain:
        y = grid(t, x, 0.0);
        break;
      case kCentred:
        y = grid(t, x, -16.0 * std::ldexp(1.0, -k));
        break;
      case kFraction:
        y = x - std::floor(x);
        break;
      case kInteger:
        y = std::floor(x);
        break;
      case kExp2: {
        const double n = std::floor(x);
        y = std::ldexp(grid(t, x - n, 0.0), clamp_exponent(n));
        break;
      }
      case kReciprocal:
      case kLog2: {
        // frexp as specified; x <= 0 (only when lo < 0) gives m <= 0 and so
        // the left line.
        int e = 0;
        const double m = std::frexp(x, &e);
        const double p = grid(t, m, 0.5);
        y = (mode & kModeTransform) == kReciprocal ? std::ldexp(p, -e) : p + e;
        break;
      }
      case kSqrt:
      case kRsqrt: {
        // An even exponent lets the power of two be halved exactly.
        int e = 0;
        double m = std::frexp(x, &e);
        if (e & 1) {
          m *= 2.0;
          e -= 1;
        }
        const double p = grid(t, m, 0.0);
        y = std::ldexp(p, (mode & kModeTransform) == kSqrt ? e / 2 : -e / 2);
        break;
      }
      default:
        return std::numeric_limits<double>::quiet_NaN();
    }
  }
  if (mode & kModeSignOut) y = s * y;
  return y;
}

uint16_t eval_fp16(const Table& t, uint16_t x) { return double_to_half(eval(t, half_to_double(x))); }

Table centred_table(double (*f)(double), int k, double lo, double hi, uint16_t below,
                    uint16_t above) {
  Table t = blank(kCentred, k);
  set_range(t, lo, hi, below, above);
  const double step = std::ldexp(1.0, -k);
  set_nodes(t, [&](int i) { return f((i - 16) * step); });
  // Flat continuation beyond the grid: simple and never overshoots.
  t[kSlotLeftIntercept] = t[kSlotNode0];
  t[kSlotRightIntercept] = t[kSlotNode0 + kNodeCount - 1];
  return t;
}

Table exp2_table() {
  Table t = blank(kExp2, 5);
  set_range(t, -25.0, 16.0, 0x0000, kHalfPosInf);
  set_nodes(t, [](int i) { return std::exp2(i / 32.0); });
  return t;
}

Table log2_table() {
  Table t = blank(kModeNegZero | kModeAbsIndex | kLog2, 6);
  set_range(t, 0.0, std::numeric_limits<double>::infinity(), kHalfNegInf, 0x0000);
  set_nodes(t, [](int i) { return std::log2(0.5 + i / 64.0); });
  return t;
}

Table recip_table() {
  Table t = blank(kModeAbsIndex | kModeSignOut | kReciprocal, 6);
  set_range(t, 0.0, std::numeric_limits<double>::infinity(), kHalfPosInf, 0x0000);
  set_nodes(t, [](int i) { return 1.0 / (0.5 + i / 64.0); });
  return t;
}

Table sqrt_table() {
  Table t = blank(kModeNegZero | kModeAbsIndex | kSqrt, 4);
  set_range(t, 0.0, std::numeric_limits<double>::infinity(), 0x0000, kHalfPosInf);
  // The mantissa never goes below 0.5 (node 8), so lower nodes are unused.
  set_nodes(t, [](int i) { return i >= 8 ? std::sqrt(i / 16.0) : 0.0; });
  return t;
}

Table rsqrt_table() {
  Table t = blank(kModeNegZero | kModeAbsIndex | kRsqrt, 4);
  set_range(t, 0.0, std::numeric_limits<double>::infinity(), kHalfPosInf, 0x0000);
  set_nodes(t, [](int i) { return i >= 8 ? 1.0 / std::sqrt(i / 16.0) : 0.0; });
  return t;
}

Table tanh_table() {
  Table t = blank(kModeAbsIndex | kModeSignOut | kPlain, 3);
  set_range(t, 0.0, 4.0, 0x0000, kHalfOne);
  set_nodes(t, [](int i) { return std::tanh(i / 8.0); });
  t[kSlotRightIntercept] = kHalfOne;  // slope stays 0: saturate at 1
  return t;
}

}  // namespace ane_ref::lut
