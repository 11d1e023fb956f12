// fp16 <-> fp32/fp64 by bit manipulation (no dependence on compiler or CPU
// half-precision support, so results are the same on every host).
#include "ane/fp16.h"

#include <cmath>
#include <cstring>

namespace ane {

float fp16_to_float(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {
    // Subnormal: normalise into an fp32 normal.
    int e = 113;
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      --e;
    }
    bits = sign | (uint32_t(e) << 23) | ((mant & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t double_to_fp16(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  const uint16_t sign = static_cast<uint16_t>((bits >> 48) & 0x8000u);
  const double a = std::fabs(d);
  if (std::isnan(d)) {
    const uint16_t payload = static_cast<uint16_t>((bits >> 42) & 0x3ffu);
    return sign | 0x7e00u | payload;
  }
  if (a >= 65520.0) return sign | 0x7c00u;  // rounds past 65504: Inf (also Inf itself)
  if (a < 0x1p-14) {
    // Subnormal range: value / 2^-24 rounded to an integer, ties to even.
    const double q = a * 0x1p24;
    double r = std::nearbyint(q);  // default rounding mode: nearest, ties to even
    return sign | static_cast<uint16_t>(r);  // r == 1024 lands exactly on the first normal
  }
  int e;
  const double m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  // 11 significant bits: scale so the significand is an integer in [1024, 2048).
  double sig = std::nearbyint(std::ldexp(m, 11));
  int exp = e - 1;  // a in [2^exp, 2^(exp+1))
  if (sig >= 2048.0) {
    sig /= 2;
    ++exp;
  }
  if (exp > 15) return sign | 0x7c00u;
  return sign | static_cast<uint16_t>(((exp + 15) << 10) | (static_cast<uint32_t>(sig) & 0x3ffu));
}

// Bit-level version for the simulator's hot paths; tests check it against
// double_to_fp16 (a separate, arithmetic implementation) on every class of input.
uint16_t float_to_fp16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) {  // Inf or NaN
    if (ax == 0x7f800000u) return sign | 0x7c00u;
    return sign | 0x7e00u | static_cast<uint16_t>((ax >> 13) & 0x3ffu);
  }
  if (ax >= 0x477ff000u) return sign | 0x7c00u;  // >= 65520 rounds past 65504
  const uint32_t e = ax >> 23;
  uint32_t r, rem, half;
  if (e < 113) {  // below 2^-14: fp16 subnormal (or zero)
    if (e < 102) return sign;  // below 2^-25: rounds to zero
    const uint32_t mant = (ax & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;  // 14 .. 24
    r = mant >> shift;
    rem = mant & ((1u << shift) - 1);
    half = 1u << (shift - 1);
  } else {
    r = ((e - 112) << 10) | ((ax & 0x7fffffu) >> 13);
    rem = ax & 0x1fffu;
    half = 0x1000u;
  }
  if (rem > half || (rem == half && (r & 1))) ++r;  // a carry moves into the exponent correctly
  return sign | static_cast<uint16_t>(r);
}

}  // namespace ane
