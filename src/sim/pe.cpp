// Planar engine element-wise ops and reductions (pe.h).
#include "pe.h"

#include <cmath>

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
template <typename Op>
void apply(const PePlan& pe, const float* a, const float* b, float* out, size_t n, Op op) {
  const double pre = fp16_to_float(pe.pre_scale), scale = fp16_to_float(pe.scale), bias = fp16_to_float(pe.bias);
  const double sign = pe.second == 3 ? -1.0 : 1.0;
  on_two_threads(n, [&](uint64_t begin, uint64_t end) {
    for (uint64_t i = begin; i < end; ++i) {
      const double r = b ? op(pre * a[i], sign * b[i]) : pre * a[i];
      double y = scale * r + bias;
      if (pe.abs) y = std::fabs(y);
      out[i] = fp16_proxy(y);
    }
  });
}

}  // namespace

void pe_elementwise(const PePlan& pe, const float* a, const float* b, float* out, size_t n) {
  switch (b ? pe.op : 0) {
    case 0: apply(pe, a, b, out, n, [](double x, double y) { return x + y; }); break;
    case 1: apply(pe, a, b, out, n, [](double x, double y) { return x * y; }); break;
    case 2: apply(pe, a, b, out, n, nan_max); break;
    default: apply(pe, a, b, out, n, nan_min); break;
  }
}

void pe_reduce(const PePlan& pe, const float* a, const Dims& in, bool fp64_sum, double* out) {
  const uint64_t planes = uint64_t{in.g} * in.c, n = uint64_t{in.h} * in.w;
  const double final_scale = fp32_bits(pe.final_scale);
  for (uint64_t r = 0; r < planes; ++r) {
    const float* x = a + r * n;
    double y;
    if (pe.reduce == PePlan::Reduce::Max) {
      y = x[0];
      for (uint64_t i = 1; i < n; ++i) y = nan_max(y, x[i]);
    } else if (fp64_sum) {
      y = 0;
      for (uint64_t i = 0; i < n; ++i) y += x[i];
    } else {
      float s = 0;
      for (uint64_t i = 0; i < n; ++i) s += x[i];
      y = s;
    }
    y *= final_scale;
    if (pe.reciprocal) y = 1.0 / y;
    out[r] = y;
  }
}

}  // namespace ane::sim::detail
