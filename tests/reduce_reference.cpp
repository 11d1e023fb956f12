#include "reduce_reference.h"

#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "ane/fp16.h"

namespace ane::test {

void reference_reduce(const std::string& op, const std::array<uint64_t, 4>& shape, const std::vector<uint64_t>& axes,
                      const std::vector<uint16_t>& x, std::vector<double>& y, std::vector<double>& mag, uint64_t& n) {
  std::array<bool, 4> reduced{};
  for (uint64_t a : axes) reduced[a] = true;
  std::array<uint64_t, 4> out{};
  n = 1;
  for (int i = 0; i < 4; ++i) {
    out[i] = reduced[i] ? 1 : shape[i];
    if (reduced[i]) n *= shape[i];
  }
  const uint64_t count = out[0] * out[1] * out[2] * out[3];
  y.assign(count, op == "reduce_max" ? -INFINITY : 0.0);
  mag.assign(count, 0.0);
  for (uint64_t a = 0; a < shape[0]; ++a)
    for (uint64_t b = 0; b < shape[1]; ++b)
      for (uint64_t c = 0; c < shape[2]; ++c)
        for (uint64_t d = 0; d < shape[3]; ++d) {
          const uint64_t o = ((((reduced[0] ? 0 : a) * out[1] + (reduced[1] ? 0 : b)) * out[2] + (reduced[2] ? 0 : c)) *
                              out[3]) +
                             (reduced[3] ? 0 : d);
          const double v = fp16_to_float(x[((a * shape[1] + b) * shape[2] + c) * shape[3] + d]);
          if (op == "reduce_max") y[o] = std::max(y[o], v);
          else y[o] += v;
          mag[o] += std::fabs(v);
        }
  if (op == "reduce_mean")
    for (double& v : y) v /= double(n);
}

double expect_reduce_outputs(const std::string& op, uint64_t n, const std::vector<double>& ref,
                             const std::vector<double>& mag, const std::vector<uint16_t>& y, const std::string& name) {
  EXPECT_EQ(y.size(), ref.size()) << name;
  if (y.size() != ref.size()) return 0;
  double worst = 0;
  const double scale = op == "reduce_mean" ? 1.0 / double(n) : 1.0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double got = fp16_to_float(y[i]);
    const double tol =
        std::ldexp(std::fabs(ref[i]), -11) + double(n) * std::ldexp(mag[i] * scale, -24) + std::ldexp(1.0, -25);
    worst = std::max(worst, std::fabs(got - ref[i]) / tol);
    EXPECT_LE(std::fabs(got - ref[i]), tol) << name << " output " << i << ": got " << got << ", reference " << ref[i];
    if (std::fabs(got - ref[i]) > tol) return worst;
  }
  return worst;
}

}  // namespace ane::test
