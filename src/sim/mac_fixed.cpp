// The fixed-point MAC measured on M4 and M6 (acc=q15.16; mac.h).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "mac.h"

namespace ane::sim::detail {

namespace {

// An fp16 value as m * 2^(e - 10): m the signed significand (implicit bit
// included), e its exponent, -14 for subnormals. The MAC decodes exponent 31
// as an ordinary one: infinity is 2^16, a NaN 2^16 times 1 + its payload /
// 1024 (0x7e00: 1.5 * 2^16).
struct Decoded {
  int32_t m = 0;
  int32_t e = 0;
};

Decoded decode(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  const int32_t sign = (bits >> 31) ? -1 : 1;
  if (std::isinf(f)) return {sign * 1024, 16};
  if (std::isnan(f)) return {sign * static_cast<int32_t>(1024 + ((bits >> 13) & 0x3ffu)), 16};
  if (f == 0) return {0, 0};
  int ex = 0;
  const double fr = std::frexp(std::fabs(double(f)), &ex);  // |f| = fr 2^ex, fr in [0.5, 1)
  const int e = ex - 1;
  if (e < -14) return {sign * static_cast<int32_t>(std::ldexp(std::fabs(double(f)), 24)), -14};
  return {sign * static_cast<int32_t>(std::ldexp(fr, 11)), e};
}

constexpr int64_t kLimit = int64_t{1} << 31;  // 32768 in units of 2^-16

// One product in units of 2^-16: rounded half away from zero where the
// exponents add to -16 or more, else dropped whole (H12 of the notes).
inline int64_t product_units(const Decoded& a, const Decoded& b) {
  if (a.e + b.e < -16) return 0;
  const int64_t p = int64_t{a.m} * b.m;  // the value is p 2^(ea + eb - 20)
  const int s = a.e + b.e - 4;            // units: p 2^s
  if (s >= 0) return p * (int64_t{1} << s);
  const int64_t mag = (p < 0 ? -p : p), half = int64_t{1} << (-s - 1);
  const int64_t r = (mag + half) >> (-s);
  return p < 0 ? -r : r;
}

}  // namespace

void mac_fixed_q16(const float* x, const float* w, const float* bias, uint32_t cout, uint32_t cin, uint64_t hw,
                   double* y) {
  std::vector<Decoded> xd(uint64_t{cin} * hw);
  for (uint64_t i = 0; i < xd.size(); ++i) xd[i] = decode(x[i]);
  std::vector<int64_t> acc(hw);
  std::vector<int8_t> overflowed(hw);  // sticky: +1 or -1 once |acc| reached 32768
  for (uint32_t oc = 0; oc < cout; ++oc) {
    // The bias starts the accumulator, rounded half away from zero to 2^-16
    // (an infinite or NaN bias decodes as 2^16 or more: overflowed at once).
    const double b = bias ? double(bias[oc]) : 0.0;
    const bool big = !std::isfinite(b) || std::fabs(b) >= 32768.0;
    const int64_t start = big ? 0 : std::llround(std::ldexp(b, 16));
    const int8_t start_sign = big ? (std::signbit(b) ? int8_t{-1} : int8_t{1}) : int8_t{0};
    std::fill(acc.begin(), acc.end(), start);
    std::fill(overflowed.begin(), overflowed.end(), start_sign);
    for (uint32_t ic = 0; ic < cin; ++ic) {
      const Decoded wd = decode(w[uint64_t{oc} * cin + ic]);
      if (wd.m == 0) continue;
      const Decoded* xr = xd.data() + uint64_t{ic} * hw;
      for (uint64_t p = 0; p < hw; ++p) {
        if (overflowed[p]) continue;  // sticky; and the sum stays within int64
        const int64_t a = acc[p] + product_units(wd, xr[p]);
        acc[p] = a;
        if (a >= kLimit || a <= -kLimit) overflowed[p] = a > 0 ? 1 : -1;
      }
    }
    double* yr = y + uint64_t{oc} * hw;
    for (uint64_t p = 0; p < hw; ++p)
      yr[p] = overflowed[p] ? (overflowed[p] > 0 ? HUGE_VAL : -HUGE_VAL) : std::ldexp(double(acc[p]), -16);
  }
}

}  // namespace ane::sim::detail
