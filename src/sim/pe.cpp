// Planar engine element-wise ops and reductions (pe.h).
#include "pe.h"

#include <algorithm>
#include <cmath>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "../core/cpu_features.h"
#include "ane/fp16.h"
#include "numerics.h"
#include "two_threads.h"

namespace ane::sim::detail {

namespace {

double fp32_bits(uint32_t w) {
  float f;
  static_assert(sizeof f == sizeof w);
  __builtin_memcpy(&f, &w, sizeof f);
  return f;
}

// max/min with NaN propagating (a NaN operand gives NaN).
inline double nan_max(double x, double y) { return std::isnan(x) || std::isnan(y) ? x + y : (x > y ? x : y); }
inline double nan_min(double x, double y) { return std::isnan(x) || std::isnan(y) ? x + y : (x < y ? x : y); }

// Each value in fp64, stored as its fp16_proxy: the output rounds it once.
// In blocks: the fp64 results first, then each stored as its fp32 value,
// which is its proxy whenever fp32 holds it exactly (most values: the
// operands are fp16); only a block with an inexact value takes fp16_proxy on
// those. Three simple loops the compiler vectorises, where one loop with the
// proxy's branches stayed scalar.
template <typename Op>
void apply_block(const PePlan& pe, const float* a, const float* b, float* out, size_t n, Numerics::Round round, Op op) {
  constexpr size_t kBlock = 512;
  const double pre = fp16_to_float(pe.pre_scale), scale = fp16_to_float(pe.scale), bias = fp16_to_float(pe.bias);
  const double sign = pe.second == 3 ? -1.0 : 1.0;
  double y[kBlock];
  for (size_t at = 0; at < n; at += kBlock) {
    const size_t len = std::min(kBlock, n - at);
    const float* ab = a + at;
    if (b) {
      const float* bb = b + at;
      for (size_t i = 0; i < len; ++i) y[i] = scale * op(pre * ab[i], sign * bb[i]) + bias;
    } else {
      for (size_t i = 0; i < len; ++i) y[i] = scale * (pre * ab[i]) + bias;
    }
    if (pe.abs)
      for (size_t i = 0; i < len; ++i) y[i] = std::fabs(y[i]);
    float* o = out + at;  // may be a: every a[i] of the block is read above
    int inexact = 0;
    for (size_t i = 0; i < len; ++i) {
      o[i] = static_cast<float>(y[i]);
      inexact |= static_cast<double>(o[i]) != y[i];
    }
    if (inexact)
      for (size_t i = 0; i < len; ++i)
        if (static_cast<double>(o[i]) != y[i]) o[i] = fp16_proxy(y[i], round);
  }
}

#if defined(__x86_64__)
// add and mul (and one operand) four values at a time on AVX2: the same fp64
// operations in the same order as apply_block, separate multiplies and adds
// (never fused), the same proxy for a value fp32 does not hold. Returns how
// many values it did (a multiple of 4); apply_block does the rest.
template <bool kMul>
__attribute__((target("avx2,f16c"))) size_t add_mul_avx2(const PePlan& pe, const float* a, const float* b, float* out,
                                                          size_t n, Numerics::Round round) {
  const bool nearest_even = round == Numerics::Round::NearestEven;
  const __m256d below_overflow = _mm256_set1_pd(65520.0);
  const __m256i low_halves = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
  const __m128i one = _mm_set1_epi32(1);
  const __m256d pre = _mm256_set1_pd(fp16_to_float(pe.pre_scale)), scale = _mm256_set1_pd(fp16_to_float(pe.scale));
  const __m256d bias = _mm256_set1_pd(fp16_to_float(pe.bias)), sign = _mm256_set1_pd(pe.second == 3 ? -1.0 : 1.0);
  const __m256d sign_bit = _mm256_set1_pd(-0.0);
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    __m256d r = _mm256_mul_pd(pre, _mm256_cvtps_pd(_mm_loadu_ps(a + i)));
    if (b) {
      const __m256d y = _mm256_mul_pd(sign, _mm256_cvtps_pd(_mm_loadu_ps(b + i)));
      r = kMul ? _mm256_mul_pd(r, y) : _mm256_add_pd(r, y);
    }
    __m256d y = _mm256_add_pd(_mm256_mul_pd(scale, r), bias);
    if (pe.abs) y = _mm256_andnot_pd(sign_bit, y);
    const __m128 f = _mm256_cvtpd_ps(y);
    // Unordered compares true: a NaN is inexact, as in apply_block.
    const __m256d inexact_lanes = _mm256_cmp_pd(_mm256_cvtps_pd(f), y, _CMP_NEQ_UQ);
    int scalar = _mm256_movemask_pd(inexact_lanes);
    if (nearest_even) {
      // Without a branch on which lanes are inexact (with scales such as
      // log2(e), as good as random): every lane's proxy as a vector, the fp16
      // nearest y, which is y rounded to fp32 to odd and then to fp16 to
      // nearest even (fp32 has more than two bits beyond fp16's, so the second
      // rounding cannot go wrong); kept where the lane is inexact. Lanes of
      // 65520 and more in magnitude, and NaNs, take fp16_proxy below.
      const __m256d magnitude = _mm256_andnot_pd(sign_bit, y);
      scalar &= _mm256_movemask_pd(_mm256_cmp_pd(magnitude, below_overflow, _CMP_NLT_UQ));
      const __m256d over = _mm256_cmp_pd(_mm256_andnot_pd(sign_bit, _mm256_cvtps_pd(f)), magnitude, _CMP_GT_OQ);
      // The 64-bit lane masks as 32-bit ones.
      const __m128i over32 =
          _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(over), low_halves));
      const __m128i inexact32 =
          _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(inexact_lanes), low_halves));
      // Toward zero (one step down in magnitude where rounding went up), then the sticky bit.
      const __m128i odd = _mm_or_si128(_mm_add_epi32(_mm_castps_si128(f), over32), one);
      const __m128 nearest = _mm_cvtph_ps(_mm_cvtps_ph(_mm_castsi128_ps(odd), _MM_FROUND_TO_NEAREST_INT));
      _mm_storeu_ps(out + i, _mm_blendv_ps(f, nearest, _mm_castsi128_ps(inexact32)));
    } else {
      _mm_storeu_ps(out + i, f);
    }
    if (scalar) {
      alignas(32) double ys[4];
      _mm256_store_pd(ys, y);
      for (int k = 0; k < 4; ++k)
        if (scalar >> k & 1) out[i + k] = fp16_proxy(ys[k], round);
    }
  }
  return i;
}

bool have_avx2() {
  static const bool yes = ane::detail::cpu_has(ane::detail::CpuFeature::Avx2) &&
                          ane::detail::cpu_has(ane::detail::CpuFeature::F16c);
  return yes;
}
#endif

template <typename Op>
void apply(const PePlan& pe, const float* a, const float* b, float* out, size_t n, Numerics::Round round, Op op,
           int vector_op = -1) {
  on_two_threads(n, [&](uint64_t begin, uint64_t end) {
    size_t done = 0;
#if defined(__x86_64__)
    if (vector_op >= 0 && have_avx2()) {
      const float* bb = b ? b + begin : nullptr;
      done = vector_op == 1 ? add_mul_avx2<true>(pe, a + begin, bb, out + begin, end - begin, round)
                            : add_mul_avx2<false>(pe, a + begin, bb, out + begin, end - begin, round);
    }
#endif
    begin += done;
    apply_block(pe, a + begin, b ? b + begin : nullptr, out + begin, end - begin, round, op);
  });
}

}  // namespace

void pe_elementwise(const PePlan& pe, const float* a, const float* b, float* out, size_t n, Numerics::Round round) {
  switch (b ? pe.op : 0) {
    case 0: apply(pe, a, b, out, n, round, [](double x, double y) { return x + y; }, 0); break;
    case 1: apply(pe, a, b, out, n, round, [](double x, double y) { return x * y; }, 1); break;
    case 2: apply(pe, a, b, out, n, round, nan_max); break;
    default: apply(pe, a, b, out, n, round, nan_min); break;
  }
}

void pe_normalize(const float* a, const float* b, const float* c, bool minus_b, float* out, size_t n,
                  Numerics::Round round) {
  const double sign = minus_b ? -1.0 : 1.0;
  for (size_t i = 0; i < n; ++i) out[i] = fp16_proxy((double(a[i]) + sign * b[i]) * c[i], round);
}

void pe_square_difference(float* a, const float* b, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const double d = double(a[i]) - b[i];
    a[i] = static_cast<float>(d * d);
  }
}

void pe_reduce(const PePlan& pe, const float* a, const Dims& in, bool fp64_sum, double* out) {
  const uint64_t planes = uint64_t{in.g} * in.c, n = uint64_t{in.h} * in.w;
  const double final_scale = fp32_bits(pe.final_scale), epsilon = fp16_to_float(pe.epsilon);
  auto finish = [&](uint64_t r, double y) {
    y *= final_scale;
    if (pe.reciprocal) y = 1.0 / y;
    if (pe.rsqrt) y = 1.0 / std::sqrt(y + epsilon);
    out[r] = y;
  };
  // Each plane's values in W order, as one chain of operations; four planes
  // side by side, so that four independent chains fill the pipeline (one
  // chain waits on each add's latency). The same operations per plane. Four
  // named accumulators rather than an array of them: GCC 12 kept the array
  // in memory (a store and a load per value), which lost the gain. The
  // planes left over go one at a time below.
  uint64_t r = 0;
  for (; n > 0 && r + 4 <= planes; r += 4) {
    const float *x0 = a + r * n, *x1 = x0 + n, *x2 = x1 + n, *x3 = x2 + n;
    double y0, y1, y2, y3;
    if (pe.reduce == PePlan::Reduce::Max) {
      y0 = x0[0], y1 = x1[0], y2 = x2[0], y3 = x3[0];
      for (uint64_t i = 1; i < n; ++i) {
        y0 = nan_max(y0, x0[i]);
        y1 = nan_max(y1, x1[i]);
        y2 = nan_max(y2, x2[i]);
        y3 = nan_max(y3, x3[i]);
      }
    } else if (fp64_sum) {
      y0 = y1 = y2 = y3 = 0;
      for (uint64_t i = 0; i < n; ++i) {
        y0 += x0[i];
        y1 += x1[i];
        y2 += x2[i];
        y3 += x3[i];
      }
    } else {
      float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (uint64_t i = 0; i < n; ++i) {
        s0 += x0[i];
        s1 += x1[i];
        s2 += x2[i];
        s3 += x3[i];
      }
      y0 = s0, y1 = s1, y2 = s2, y3 = s3;
    }
    finish(r, y0);
    finish(r + 1, y1);
    finish(r + 2, y2);
    finish(r + 3, y3);
  }
  for (; r < planes; ++r) {
    const float* x = a + r * n;
    double y;
    if (pe.reduce == PePlan::Reduce::Max) {
      y = x[0];
      for (uint64_t i = 1; i < n; ++i) y = nan_max(y, x[i]);
    } else if (fp64_sum) {
      y = 0;
      for (uint64_t i = 0; i < n; ++i) y += x[i];
    } else {
      float sum = 0;
      for (uint64_t i = 0; i < n; ++i) sum += x[i];
      y = sum;
    }
    finish(r, y);
  }
}

}  // namespace ane::sim::detail
