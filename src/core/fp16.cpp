// fp16 <-> fp32/fp64 by bit manipulation (no dependence on compiler or CPU
// half-precision support, so results are the same on every host). The
// simulator, the compiler and the tools all convert through these.
#include "ane/fp16.h"

#include <cmath>
#include <cstring>

namespace ane {

// double -> fp16 by bits, like float_to_fp16 below: one rounding, no library calls.
uint16_t double_to_fp16(double d) {
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

// tests/core_test.cpp checks both encoders against an arithmetic reference
// (frexp / nearbyint) on every class of input.
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

// ---- bulk conversions --------------------------------------------------------
// F16C's VCVTPH2PS / VCVTPS2PH (rounding immediate 0 = nearest even) give the
// same bits as the scalar code: both are exact / RNE with the same overflow,
// subnormal and quiet-NaN rules (tests compare them on every fp16 value and
// on a sweep of fp32 patterns). Other CPUs use the scalar loop.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#include "cpu_features.h"
#define ANE_FP16_F16C 1
#endif

namespace ane {

namespace {

void to_float_scalar(const uint8_t* s, float* d, size_t n) {
  for (size_t i = 0; i < n; ++i) d[i] = fp16_to_float(static_cast<uint16_t>(s[2 * i] | (s[2 * i + 1] << 8)));
}

void to_fp16_scalar(const float* s, uint8_t* d, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const uint16_t h = float_to_fp16(s[i]);
    d[2 * i] = static_cast<uint8_t>(h);
    d[2 * i + 1] = static_cast<uint8_t>(h >> 8);
  }
}

#ifdef ANE_FP16_F16C
__attribute__((target("avx,f16c"))) void to_float_f16c(const uint8_t* s, float* d, size_t n) {
  // VCVTPH2PS quiets signalling NaNs; fp16_to_float keeps their bits, so the
  // (rare) groups holding one take the scalar path.
  const __m128i exp_mask = _mm_set1_epi16(0x7e00), snan_exp = _mm_set1_epi16(0x7c00);
  const __m128i mant_mask = _mm_set1_epi16(0x03ff), zero = _mm_setzero_si128();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 2 * i));
    const __m128i snan = _mm_andnot_si128(_mm_cmpeq_epi16(_mm_and_si128(h, mant_mask), zero),
                                          _mm_cmpeq_epi16(_mm_and_si128(h, exp_mask), snan_exp));
    if (_mm_movemask_epi8(snan) != 0) {
      _mm256_zeroupper();
      to_float_scalar(s + 2 * i, d + i, 8);
    } else
      _mm256_storeu_ps(d + i, _mm256_cvtph_ps(h));
  }
  // The scalar tail is SSE code: with the upper halves left dirty, its first
  // instruction stalled for hundreds of cycles here (GCC emits no vzeroupper
  // before the tail call), ten times the cost of a 64-value row.
  _mm256_zeroupper();
  if (i < n) to_float_scalar(s + 2 * i, d + i, n - i);
}

__attribute__((target("avx,f16c"))) void to_fp16_f16c(const float* s, uint8_t* d, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 2 * i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  _mm256_zeroupper();  // as in to_float_f16c
  if (i < n) to_fp16_scalar(s + i, d + 2 * i, n - i);
}

bool have_f16c() {
  static const bool yes = detail::cpu_has(detail::CpuFeature::Avx) && detail::cpu_has(detail::CpuFeature::F16c);
  return yes;
}
#endif

}  // namespace

void fp16_to_float_n(const void* src, float* dst, size_t n) {
  const auto* s = static_cast<const uint8_t*>(src);
#ifdef ANE_FP16_F16C
  if (have_f16c()) return to_float_f16c(s, dst, n);
#endif
  to_float_scalar(s, dst, n);
}

void float_to_fp16_n(const float* src, void* dst, size_t n) {
  auto* d = static_cast<uint8_t*>(dst);
#ifdef ANE_FP16_F16C
  if (have_f16c()) return to_fp16_f16c(src, d, n);
#endif
  to_fp16_scalar(src, d, n);
}

}  // namespace ane
