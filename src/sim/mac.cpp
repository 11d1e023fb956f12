// MAC stage: BLAS for the fast models, blocked loops for the ordered ones.
#include "mac.h"

#include <cblas.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include "../core/cpu_features.h"
#include "blas_threads.h"
#include "numerics.h"
#include "two_threads.h"

namespace ane::sim::detail {

namespace {

// One BLAS call for pixels [p0, p0 + n): sgemm or dgemm by T. The bias
// starts the accumulator: C = bias, beta = 1.
template <typename T>
void gemm_piece(const T* x, const T* w, const float* bias, uint32_t cout, uint32_t cin, uint64_t hw, uint64_t p0,
                uint64_t n, T* y) {
  if (bias)
    for (uint32_t oc = 0; oc < cout; ++oc) std::fill_n(y + oc * hw + p0, n, T(bias[oc]));
  const auto m = static_cast<int>(cout), cols = static_cast<int>(n), k = static_cast<int>(cin),
             ld = static_cast<int>(hw);
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, cols, k, 1.0f, w, k, x + p0, ld, bias ? 1.0f : 0.0f,
                y + p0, ld);
  else
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, cols, k, 1.0, w, k, x + p0, ld, bias ? 1.0 : 0.0,
                y + p0, ld);
}

// How a product is cut: along its pixels (N) where it has enough of them,
// else along its output channels (M), in whole 16-wide steps (the kernels'
// widest), every piece the last included above the MAC bound, at most
// kSgemmPieces. By the shape alone: the machine's cores decide only how many
// workers take the pieces.
struct Cut {
  bool pixels = true;
  uint64_t pieces = 1, per = 0, extent = 0;
};

Cut cut_along(uint64_t extent, double macs_per_unit) {
  const uint64_t steps = (extent + 15) / 16;
  uint64_t pieces =
      std::min<uint64_t>({kSgemmPieces, steps, static_cast<uint64_t>(double(extent) * macs_per_unit / kMinSgemmMacs)});
  uint64_t per = extent;
  for (; pieces > 1; --pieces) {
    per = (steps + pieces - 1) / pieces * 16;
    if ((pieces - 1) * per < extent && double(extent - (pieces - 1) * per) * macs_per_unit >= kMinSgemmMacs) break;
  }
  if (pieces <= 1) return {true, 1, extent, extent};
  return {true, pieces, per, extent};
}

Cut cut_of(uint32_t cout, uint32_t cin, uint64_t hw) {
  const Cut by_pixels = cut_along(hw, double(cout) * cin);
  if (by_pixels.pieces > 1) return by_pixels;
  Cut by_rows = cut_along(cout, double(cin) * hw);
  by_rows.pixels = false;
  return by_rows;
}

// The whole product, cut (cut_of) and each piece one one-thread call on as
// many workers as there are cores and pieces; with another BLAS, one call.
template <typename T>
void gemm(const T* x, const T* w, const float* bias, uint32_t cout, uint32_t cin, uint64_t hw, T* y) {
  SingleThreadedBlas blas;
  if (!blas.active()) {
    gemm_piece(x, w, bias, cout, cin, hw, 0, hw, y);  // threaded as that BLAS decides
    return;
  }
  const Cut c = cut_of(cout, cin, hw);
  on_workers(c.pieces, worker_count(c.pieces), [&](uint64_t k, uint64_t) {
    const uint64_t begin = k * c.per, n = std::min(c.per, c.extent - k * c.per);
    if (c.pixels)
      gemm_piece(x, w, bias, cout, cin, hw, begin, n, y);
    else  // output channels [begin, begin + n): their weight rows, biases and result rows
      gemm_piece(x, w + begin * cin, bias ? bias + begin : nullptr, static_cast<uint32_t>(n), cin, hw, 0, hw,
                 y + begin * hw);
  });
}

}  // namespace

void mac_sgemm_piece(const float* x, const float* w, const float* bias, uint32_t cout, uint32_t cin, uint64_t hw,
                     uint64_t p0, uint64_t n, float* y) {
  gemm_piece(x, w, bias, cout, cin, hw, p0, n, y);
}

void mac_sgemm(const float* x, const float* w, const float* bias, uint32_t cout, uint32_t cin, uint64_t hw, float* y) {
  gemm(x, w, bias, cout, cin, hw, y);
}

void mac_dgemm(const float* x, const float* w, const float* bias, uint32_t cout, uint32_t cin, uint64_t hw,
               double* xd, double* wd, double* y) {
  std::copy(x, x + uint64_t{cin} * hw, xd);
  std::copy(w, w + uint64_t{cout} * cin, wd);
  gemm<double>(xd, wd, bias, cout, cin, hw, y);
}

namespace {

// Register-sized blocks: kRows output channels x kCols pixels are summed in
// local accumulators over all input channels, from a packed strip of x
// (kCols pixels of every input channel, contiguous) that stays in L1.

template <typename Acc, bool kRound>
inline Acc product(float w, float x) {
  if constexpr (kRound) return Acc(fp16_to_float(float_to_fp16(w * x)));
  return Acc(w * x);  // the fp32 product of two fp16 values is exact
}

// Pixels [p_begin, p_end) of every output channel. Inlined into one
// function per instruction set below; every path adds in the same order, so
// the results do not depend on which one runs.
template <typename Acc, bool kRound, uint32_t kRows, uint64_t kCols>
[[gnu::always_inline]] inline void ordered_body(const float* x, const float* w, const float* bias, uint32_t cout,
                                                uint32_t cin, uint64_t hw, uint64_t p_begin, uint64_t p_end, Acc* y) {
  std::vector<float> strip(uint64_t{cin} * kCols);
  for (uint64_t p0 = p_begin; p0 < p_end; p0 += kCols) {
    const uint64_t n = std::min(kCols, p_end - p0);
    for (uint32_t ic = 0; ic < cin; ++ic)
      for (uint64_t j = 0; j < kCols; ++j) strip[ic * kCols + j] = j < n ? x[uint64_t{ic} * hw + p0 + j] : 0.0f;
    for (uint32_t o0 = 0; o0 < cout; o0 += kRows) {
      const uint32_t m = std::min(kRows, cout - o0);
      Acc acc[kRows][kCols];
      const float* wr[kRows];
      for (uint32_t r = 0; r < kRows; ++r) {
        const uint32_t oc = o0 + std::min(r, m - 1);  // spare rows repeat the last one
        wr[r] = w + uint64_t{oc} * cin;
        for (uint64_t j = 0; j < kCols; ++j) acc[r][j] = bias ? Acc(bias[oc]) : Acc(0);
      }
      for (uint32_t ic = 0; ic < cin; ++ic) {
        const float* xs = strip.data() + ic * kCols;
        for (uint32_t r = 0; r < kRows; ++r) {
          const float wv = wr[r][ic];
          for (uint64_t j = 0; j < kCols; ++j) acc[r][j] += product<Acc, kRound>(wv, xs[j]);
        }
      }
      for (uint32_t r = 0; r < m; ++r) std::copy_n(acc[r], n, y + uint64_t{o0 + r} * hw + p0);
    }
  }
}

template <typename Acc, bool kRound>
void ordered_generic(const float* x, const float* w, const float* bias, uint32_t cout, uint32_t cin, uint64_t hw,
                     uint64_t p_begin, uint64_t p_end, Acc* y) {
  ordered_body<Acc, kRound, 4, 8>(x, w, bias, cout, cin, hw, p_begin, p_end, y);  // 8 SSE accumulators
}

#if defined(__x86_64__) && defined(__GNUC__)
// AVX2: 8 pixels per register, 6 channels x 16 pixels at once (12
// independent sums hide the adds' latency). No FMA: each sum is rounded
// after its product is added, as in the generic path (the products of fp16
// values are exact in fp32 either way).
template <typename Acc, bool kRound>
__attribute__((target("avx2"))) void ordered_avx2(const float* x, const float* w, const float* bias, uint32_t cout,
                                                  uint32_t cin, uint64_t hw, uint64_t p_begin, uint64_t p_end,
                                                  Acc* y) {
  ordered_body<Acc, kRound, 6, sizeof(Acc) == 4 ? 16 : 8>(x, w, bias, cout, cin, hw, p_begin, p_end, y);
}
// AVX-512: 16 pixels per register, 5 channels x 80 pixels at once (25
// registers of sums; fp64: 32 pixels). The fastest of the shapes measured
// on 512x512x4096 (from 4x96 to 14x16).
template <typename Acc, bool kRound>
__attribute__((target("avx512f"))) void ordered_avx512(const float* x, const float* w, const float* bias,
                                                       uint32_t cout, uint32_t cin, uint64_t hw, uint64_t p_begin,
                                                       uint64_t p_end, Acc* y) {
  ordered_body<Acc, kRound, 5, sizeof(Acc) == 4 ? 80 : 32>(x, w, bias, cout, cin, hw, p_begin, p_end, y);
}
bool cpu_has(OrderedIsa isa) {
  switch (isa) {
    case OrderedIsa::Avx512:
      return ane::detail::cpu_has(ane::detail::CpuFeature::Avx512f);
    case OrderedIsa::Avx2:
      return ane::detail::cpu_has(ane::detail::CpuFeature::Avx2);
    default:
      return true;
  }
}
#else
bool cpu_has(OrderedIsa isa) { return isa == OrderedIsa::Best || isa == OrderedIsa::Generic; }
#endif

OrderedIsa best_isa() {
  static const OrderedIsa best = cpu_has(OrderedIsa::Avx512) ? OrderedIsa::Avx512
                                 : cpu_has(OrderedIsa::Avx2) ? OrderedIsa::Avx2
                                                             : OrderedIsa::Generic;
  return best;
}
OrderedIsa forced = OrderedIsa::Best;

template <typename Acc, bool kRound>
void ordered(const float* x, const float* w, const float* bias, uint32_t cout, uint32_t cin, uint64_t hw,
             uint64_t p_begin, uint64_t p_end, Acc* y) {
  switch (forced == OrderedIsa::Best ? best_isa() : forced) {
#if defined(__x86_64__) && defined(__GNUC__)
    case OrderedIsa::Avx512:
      return ordered_avx512<Acc, kRound>(x, w, bias, cout, cin, hw, p_begin, p_end, y);
    case OrderedIsa::Avx2:
      return ordered_avx2<Acc, kRound>(x, w, bias, cout, cin, hw, p_begin, p_end, y);
#endif
    default:
      return ordered_generic<Acc, kRound>(x, w, bias, cout, cin, hw, p_begin, p_end, y);
  }
}

template <typename Acc, bool kRound>
void ordered_threads(const float* x, const float* w, const float* bias, uint32_t cout, uint32_t cin, uint64_t hw,
                     Acc* y) {
  // Two halves of the pixels on two threads once there is enough work; the
  // result does not depend on the split (each output is summed by one thread).
  const uint64_t work = uint64_t{cout} * cin * hw;
  const uint64_t half = (hw / 2 + 31) / 32 * 32;
  if (work < (uint64_t{1} << 22) || half >= hw) {
    ordered<Acc, kRound>(x, w, bias, cout, cin, hw, 0, hw, y);
    return;
  }
  auto halves = [&](uint64_t worker) {
    if (worker == 0)
      ordered<Acc, kRound>(x, w, bias, cout, cin, hw, half, hw, y);
    else
      ordered<Acc, kRound>(x, w, bias, cout, cin, hw, 0, half, y);
  };
  run_together(2, halves);
}

}  // namespace

bool force_ordered_isa(OrderedIsa isa) {
  if (!cpu_has(isa)) return false;
  forced = isa;
  return true;
}

template <typename Acc>
void mac_ordered(const float* x, const float* w, const float* bias, uint32_t cout, uint32_t cin, uint64_t hw,
                 bool round_products, Acc* y) {
  if (round_products)
    ordered_threads<Acc, true>(x, w, bias, cout, cin, hw, y);
  else
    ordered_threads<Acc, false>(x, w, bias, cout, cin, hw, y);
}

template void mac_ordered<float>(const float*, const float*, const float*, uint32_t, uint32_t, uint64_t, bool, float*);
template void mac_ordered<double>(const float*, const float*, const float*, uint32_t, uint32_t, uint64_t, bool,
                                  double*);

}  // namespace ane::sim::detail
