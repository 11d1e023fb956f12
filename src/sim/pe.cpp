// Planar engine element-wise ops, computed exactly in fp64 (a sum or
// product of two fp16 values always fits) so that rounding happens once.
#include "pe.h"

#include <cmath>

namespace ane::sim::detail {

namespace {

template <typename F>
void apply(const float* a, const float* b, double* out, size_t n, F f) {
  for (size_t i = 0; i < n; ++i) out[i] = f(double(a[i]), double(b[i]));
}

}  // namespace

void pe_elementwise(uint32_t op, const float* a, const float* b, double* out, size_t n) {
  switch (op) {
    case 0: apply(a, b, out, n, [](double x, double y) { return x + y; }); break;
    case 1: apply(a, b, out, n, [](double x, double y) { return x * y; }); break;
    case 2:
      apply(a, b, out, n, [](double x, double y) { return std::isnan(x) || std::isnan(y) ? x + y : (x > y ? x : y); });
      break;
    default:
      apply(a, b, out, n, [](double x, double y) { return std::isnan(x) || std::isnan(y) ? x + y : (x < y ? x : y); });
      break;
  }
}

}  // namespace ane::sim::detail
