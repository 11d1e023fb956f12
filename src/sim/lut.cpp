// The sigmoid table of section 6.6 and the two ways of reading a table.
#include "lut.h"

#include <cmath>

#include "ane/fp16.h"
#include "ane/sim.h"
#include "numerics.h"

namespace ane::sim {

const std::array<uint16_t, 64>& sigmoid_lut() {
  static const std::array<uint16_t, 64> table = [] {
    std::array<uint16_t, 64> t{};
    t[0] = 0xC8F8;  // -9.9375: where the left line reaches the lower clamp
    t[1] = 0x4829;  // 8.3203: where the right line reaches the upper clamp
    t[2] = 0x0000;  // lower clamp 0.0
    t[3] = 0x3C00;  // upper clamp 1.0
    for (int i = 0; i < detail::kLutNodes; ++i) {
      const double x = detail::kLutX0 + detail::kLutStep * i;
      t[detail::kLutFirstNode + i] = double_to_fp16(1.0 / (1.0 + std::exp(-x)));
    }
    t[37] = 0x09AC;  // left slope
    t[38] = 0x170C;  // unexplained
    t[39] = 0x163E;  // right slope
    t[40] = 0x3BE6;  // unexplained
    t[41] = 0x0001;  // unexplained
    t[42] = 0x0001;  // unexplained
    return t;        // 43-63 stay 0
  }();
  return table;
}

}  // namespace ane::sim

namespace ane::sim::detail {

double lut_linear(const std::array<uint16_t, kLutSlots>& t, double x) {
  if (std::isnan(x)) return x;
  const double lo = fp16_to_float(t[2]), hi = fp16_to_float(t[3]);
  const double first = fp16_to_float(t[kLutFirstNode]);
  const double last = fp16_to_float(t[kLutFirstNode + kLutNodes - 1]);
  const double x_last = kLutX0 + kLutStep * (kLutNodes - 1);
  double y;
  if (x < kLutX0) {
    y = std::isinf(x) ? lo : first + fp16_to_float(t[37]) * (x - kLutX0);
  } else if (x > x_last) {
    y = std::isinf(x) ? hi : last + fp16_to_float(t[39]) * (x - x_last);
  } else {
    const double p = (x - kLutX0) / kLutStep;  // exact: the step is a power of two
    int i = static_cast<int>(std::floor(p));
    if (i >= kLutNodes - 1) i = kLutNodes - 2;
    const double frac = p - i;
    const double a = fp16_to_float(t[kLutFirstNode + i]), b = fp16_to_float(t[kLutFirstNode + i + 1]);
    y = a + frac * (b - a);
  }
  return std::fmin(std::fmax(y, lo), hi);
}

double lut_ideal_sigmoid(double x) {
  if (std::isnan(x)) return x;
  return 1.0 / (1.0 + std::exp(-x));
}

bool lut_at_node(double x) {
  const double p = (x - kLutX0) / kLutStep;
  return p >= 0 && p <= kLutNodes - 1 && p == std::floor(p);
}

}  // namespace ane::sim::detail
