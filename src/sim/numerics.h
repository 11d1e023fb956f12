// Number formats at the DMA edges and the rounding that the numerics
// options (section 9) choose. Everything here is exact or rounds once, RNE.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "ane/fp16.h"
#include "ane/sim.h"

namespace ane::sim::detail {

inline uint16_t load_u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
inline void store_u16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}

// "acc=fp32": one numerics setting as the trace notes name it (options.cpp).
std::string setting_note(const Numerics& n, std::string_view name);

// What rounding at the output DMA did, for trace notes.
struct RoundCounts {
  uint64_t overflow = 0;   // finite values beyond the fp16 range
  uint64_t subnormal = 0;  // results in the fp16 subnormal range
};

// Applies overflow=saturate and subnormal=ftz to a value already rounded to
// fp16 from the finite-or-not value `was_inf`.
inline uint16_t finish_fp16(uint16_t h, bool was_inf, const Numerics& n, RoundCounts& rc) {
  if ((h & 0x7fffu) == 0x7c00u && !was_inf) {
    ++rc.overflow;
    if (n.overflow == Numerics::Overflow::Saturate) h = static_cast<uint16_t>((h & 0x8000u) | kFp16Max);
  } else if ((h & 0x7c00u) == 0 && (h & 0x03ffu) != 0) {
    ++rc.subnormal;
    if (n.subnormals == Numerics::Subnormals::FlushToZero) h &= 0x8000u;
  }
  return h;
}

// A float that the output rounding (tile_dma_out / round_to_fp16, options
// included) turns into exactly the fp16 it makes of v: v rounded to fp16 once,
// except that a finite v beyond the fp16 range stays finite (65536), so that
// overflow=saturate and the overflow count still see a finite overflow. Lets
// a unit that computes in fp64 store its result in fp32 without a second
// rounding.
// fp16 of v with ties away from zero (round=half-away): nearest even's
// result, moved one unit away from zero where v lies exactly halfway and
// nearest even went towards zero.
inline uint16_t double_to_fp16_half_away(double v) {
  const uint16_t h = double_to_fp16(v);
  const uint16_t mag = h & 0x7fffu;
  if (std::isnan(v) || mag >= 0x7c00u) return h;
  const double a = std::fabs(v), lo = fp16_to_float(mag);
  if (lo >= a) return h;  // exact, or already rounded away
  const uint16_t up = static_cast<uint16_t>(mag + 1);
  const double hi = up == 0x7c00u ? 65536.0 : fp16_to_float(up);
  return a - lo == hi - a ? static_cast<uint16_t>((h & 0x8000u) | up) : h;
}

inline uint16_t round_fp16(double v, Numerics::Round r) {
  return r == Numerics::Round::HalfAway ? double_to_fp16_half_away(v) : double_to_fp16(v);
}

inline float fp16_proxy(double v, Numerics::Round r = Numerics::Round::NearestEven) {
  // A value fp32 holds exactly is its own proxy (the output rounds it once).
  const float f = static_cast<float>(v);
  if (static_cast<double>(f) == v) return f;  // infinities included
  if (std::fabs(v) >= 65520.0) return std::copysign(65536.0f, static_cast<float>(v));
  return fp16_to_float(round_fp16(v, r));
}

// The ReLU nonlinearity (NonlinearMode 1): max(x, 0), NaN stays NaN.
inline float relu(float v) { return (v > 0 || v != v) ? v : 0.0f; }
inline double relu(double v) { return (v > 0 || v != v) ? v : 0.0; }

// relu over n values, without a branch per value: a sum's sign is as good as
// random, and the mispredicted branches cost a 512 x 512 task about half of
// its sgemm's time. Keeps each value whose sign bit is clear or that is a
// NaN, else +0, which is relu() exactly.
inline void relu_all(float* v, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, v + i, 4);
    const uint32_t keep = ((bits & 0x7fffffffu) > 0x7f800000u) | ((bits >> 31) == 0);  // NaN, or +0 .. +inf
    bits &= 0u - keep;
    std::memcpy(v + i, &bits, 4);
  }
}

// Input-side subnormal handling (inputs and weights): counts, and flushes
// to a signed zero under subnormal=ftz.
inline uint16_t load_fp16_bits(uint16_t h, bool ftz, uint64_t& subnormals) {
  if ((h & 0x7c00u) == 0 && (h & 0x03ffu) != 0) {
    ++subnormals;
    if (ftz) h &= 0x8000u;
  }
  return h;
}

}  // namespace ane::sim::detail
