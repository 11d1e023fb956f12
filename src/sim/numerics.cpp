// Bit-level double -> fp16 rounding (RNE), checked against the arithmetic
// ane::double_to_fp16 by tests/sim_numerics_test.cpp.
#include "numerics.h"

namespace ane::sim::detail {

uint16_t double_to_half(double d) {
  uint64_t x;
  std::memcpy(&x, &d, sizeof x);
  const uint16_t sign = static_cast<uint16_t>((x >> 48) & 0x8000u);
  const uint64_t ax = x & 0x7fffffffffffffffull;
  if (ax >= 0x7ff0000000000000ull) {  // Inf or NaN
    if (ax == 0x7ff0000000000000ull) return sign | 0x7c00u;
    return sign | 0x7e00u | static_cast<uint16_t>((ax >> 42) & 0x3ffu);
  }
  if (ax >= 0x40effe0000000000ull) return sign | 0x7c00u;  // >= 65520 rounds past 65504
  const uint64_t e = ax >> 52;
  uint64_t r, rem, half;
  if (e < 1009) {              // below 2^-14: fp16 subnormal or zero
    if (e < 998) return sign;  // below 2^-25: rounds to zero
    const uint64_t mant = (ax & 0xfffffffffffffull) | (1ull << 52);
    const uint64_t shift = 1051 - e;  // 43 .. 53
    r = mant >> shift;
    rem = mant & ((1ull << shift) - 1);
    half = 1ull << (shift - 1);
  } else {
    r = ((e - 1008) << 10) | ((ax & 0xfffffffffffffull) >> 42);
    rem = ax & ((1ull << 42) - 1);
    half = 1ull << 41;
  }
  if (rem > half || (rem == half && (r & 1))) ++r;  // a carry moves into the exponent correctly
  return sign | static_cast<uint16_t>(r);
}

}  // namespace ane::sim::detail
