#include "ane_ref.h"
#include "lut_ref.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ane_ref {

// ---- fp16 ---------------------------------------------------------------------

double to_double(uint16_t h) {
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  const int exp = (h >> 10) & 0x1f;
  const int man = h & 0x3ff;
  if (exp == 0x1f) return man ? std::numeric_limits<double>::quiet_NaN() : sign * INFINITY;
  if (exp == 0) return sign * std::ldexp(man, -24);  // zero or subnormal
  return sign * std::ldexp(1024 + man, exp - 25);    // (1.man) * 2^(exp-15)
}

namespace {

// Nearest integer, ties to the even one. v is >= 0 and < 2^52, so v - floor(v) is exact.
double round_half_even(double v) {
  const double f = std::floor(v);
  const double frac = v - f;
  if (frac > 0.5) return f + 1;
  if (frac < 0.5) return f;
  return std::fmod(f, 2.0) == 0.0 ? f : f + 1;
}

}  // namespace

uint16_t to_fp16(double d) {
  if (std::isnan(d)) return std::signbit(d) ? 0xfe00 : 0x7e00;
  const uint16_t sign = std::signbit(d) ? 0x8000 : 0;
  const double a = std::fabs(d);
  // 65520 is halfway between 65504 (odd significand) and 65536: ties go to Inf.
  if (a >= 65520.0) return sign | 0x7c00;
  int e = 0;
  std::frexp(a, &e);                     // 2^(e-1) <= a < 2^e
  const int exp = std::max(e - 1, -14);  // binade; subnormals share the 2^-14 spacing
  const double quantum = std::ldexp(1.0, exp - 10);
  const double q = round_half_even(a / quantum);  // a as a count of quanta, rounded once
  const double r = q * quantum;                   // the fp16 value, exactly
  if (r < std::ldexp(1.0, -14)) return sign | static_cast<uint16_t>(std::ldexp(r, 24));
  std::frexp(r, &e);  // rounding may have carried into the next binade
  const int man = static_cast<int>(std::ldexp(r, 11 - e)) - 1024;
  return sign | static_cast<uint16_t>((e - 1 + 15) << 10 | man);
}

bool is_nan(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0; }
bool is_inf(uint16_t h) { return (h & 0x7fff) == 0x7c00; }
bool is_zero(uint16_t h) { return (h & 0x7fff) == 0; }
bool is_subnormal(uint16_t h) { return (h & 0x7c00) == 0 && (h & 0x3ff) != 0; }
uint16_t flush(uint16_t h) { return is_subnormal(h) ? (h & 0x8000) : h; }
uint16_t saturate(uint16_t h) { return is_inf(h) ? ((h & 0x8000) | 0x7bff) : h; }

double ulp(uint16_t h) {
  const int exp = (h >> 10) & 0x1f;
  if (exp == 0x1f) return INFINITY;
  return std::ldexp(1.0, std::max(exp, 1) - 25);
}

// ---- neural engine -------------------------------------------------------------------

double conv_sum(const Tensor3& x, int pixel, const uint16_t* w_row, double bias, Acc acc) {
  if (acc == Acc::Float) {
    float s = static_cast<float>(bias);
    for (int ic = 0; ic < x.c; ++ic)
      s += static_cast<float>(to_double(w_row[ic]) * to_double(x.at(ic, pixel)));
    return s;
  }
  double s = bias;
  for (int ic = 0; ic < x.c; ++ic) s += to_double(w_row[ic]) * to_double(x.at(ic, pixel));
  return s;
}

double conv_abs_sum(const Tensor3& x, int pixel, const uint16_t* w_row, double bias) {
  double s = std::fabs(bias);
  for (int ic = 0; ic < x.c; ++ic) s += std::fabs(to_double(w_row[ic]) * to_double(x.at(ic, pixel)));
  return s;
}

Tensor3 conv1x1(const Tensor3& x, const std::vector<uint16_t>& w, int cout, const std::vector<uint16_t>& bias,
                uint16_t post_scale, Acc acc) {
  Tensor3 y{cout, x.h, x.w, {}};
  const int pixels = x.h * x.w;
  y.v.resize(static_cast<size_t>(cout) * pixels);
  for (int oc = 0; oc < cout; ++oc) {
    const double b = bias.empty() ? 0.0 : to_double(bias[oc]);
    for (int p = 0; p < pixels; ++p) {
      const double s = conv_sum(x, p, &w[static_cast<size_t>(oc) * x.c], b, acc);
      y.v[static_cast<size_t>(oc) * pixels + p] = to_fp16(s * to_double(post_scale));
    }
  }
  return y;
}

uint16_t pass(uint16_t x, uint16_t post_scale) { return to_fp16(to_double(x) * to_double(post_scale)); }

uint16_t relu(uint16_t x) {
  if (is_nan(x)) return x;
  return (x & 0x8000) ? 0x0000 : x;  // negatives and -0 become +0
}

// The general table reading, as the independent lut_ref implements it.
double sigmoid_lut_exact(const Lut& t, double x) { return ane_ref::lut::eval(t, x); }

uint16_t sigmoid_lut(const Lut& t, uint16_t x) { return to_fp16(sigmoid_lut_exact(t, to_double(x))); }

// Double evaluation is within a few double ulps (~1e-16) of the true value.
// Over all fp16 inputs, sigmoid(x) comes no closer than ~4e-11 (relative) to
// an fp16 rounding tie (checked with long double), so this is RN(sigmoid(x)).
uint16_t sigmoid_ideal(uint16_t x) {
  if (is_nan(x)) return x;
  return to_fp16(1.0 / (1.0 + std::exp(-to_double(x))));
}

// ---- planar engine: the exact sum / product of two fp16 values fits a double ----------

uint16_t pe_add(uint16_t a, uint16_t b) { return to_fp16(to_double(a) + to_double(b)); }
uint16_t pe_mul(uint16_t a, uint16_t b) { return to_fp16(to_double(a) * to_double(b)); }

// ---- concat ------------------------------------------------------------------------------

Tensor3 concat_channels(const Tensor3& a, const Tensor3& b) {
  Tensor3 y{a.c + b.c, a.h, a.w, a.v};
  y.v.insert(y.v.end(), b.v.begin(), b.v.end());
  return y;
}

}  // namespace ane_ref
