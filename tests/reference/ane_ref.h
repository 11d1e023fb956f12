// An independent, deliberately plain reference for the math the ANE docs
// state (../shared/docs/simulator-semantics.md, sections 6, 7, 8 and 9). It
// shares no code with the simulator or with include/ane/fp16.h, so that the
// two can be compared. Everything is computed in double and rounded to fp16
// once, unless a function says otherwise.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ane_ref {

// ---- fp16 (IEEE binary16) ----------------------------------------------------
double to_double(uint16_t h);  // exact for every pattern
// Round to nearest, ties to even; beyond the range -> +-Inf; NaN -> quiet NaN.
uint16_t to_fp16(double d);

bool is_nan(uint16_t h);
bool is_inf(uint16_t h);
bool is_zero(uint16_t h);
bool is_subnormal(uint16_t h);
// Subnormals::FlushToZero: a subnormal becomes a zero of the same sign.
uint16_t flush(uint16_t h);
// Overflow::Saturate: +-Inf becomes +-65504 (use only where the Inf came from
// overflow; what saturation does to an infinite input is not documented).
uint16_t saturate(uint16_t h);
// Distance between h and the next fp16 value away from zero (2^-24 for
// subnormals and zeros).
double ulp(uint16_t h);

// ---- neural engine (section 6) ----------------------------------------------------
// A [C][H][W] fp16 tensor, W fastest.
struct Tensor3 {
  int c = 0, h = 1, w = 1;
  std::vector<uint16_t> v;
  uint16_t at(int ci, int pixel) const { return v[static_cast<std::size_t>(ci) * h * w + pixel]; }
};

enum class Acc { Double, Float };  // accumulator precision of conv_sum

// Unrounded b + sum_ic w[ic] * x[ic, pixel] for one output channel: products
// exact (an fp16 x fp16 product has at most 22 significant bits, so it is
// exact in float and double), summed in input-channel order starting from the
// bias, in the chosen precision.
double conv_sum(const Tensor3& x, int pixel, const uint16_t* w_row, double bias, Acc acc);
// Sum of |bias| + |w[ic] * x[ic, pixel]|: scales the bound on accumulation error.
double conv_abs_sum(const Tensor3& x, int pixel, const uint16_t* w_row, double bias);

// 1x1 convolution / matrix multiply (section 6.2, 6.4, 6.5):
// y[oc] = RN((b[oc] + sum_ic W[oc][ic] x[ic]) * post_scale), rounded once.
// w is [Cout][Cin]; bias is empty or one fp16 per output channel. The sum is
// in double by default (exact for every case the tests compare exactly);
// PostScale multiplies before the one rounding, the A3 order of section 11.2
// (the same as rounding first for a power-of-two scale without over/underflow).
Tensor3 conv1x1(const Tensor3& x, const std::vector<uint16_t>& w, int cout,
                const std::vector<uint16_t>& bias = {}, uint16_t post_scale = 0x3c00, Acc acc = Acc::Double);

// NE pass-through (section 6.1): RN(x * post_scale), then the nonlinearity.
uint16_t pass(uint16_t x, uint16_t post_scale = 0x3c00);
uint16_t relu(uint16_t x);  // max(x, 0); NaN stays NaN (section 9: nan=propagate)

// The 64-slot table of sigmoid.hwx, read by the general table reading
// (lut_ref.h): nodes, lines beyond the grid, the range and its outputs.
using Lut = std::array<uint16_t, 64>;
double sigmoid_lut_exact(const Lut& t, double x);  // the straight-line model, unrounded
uint16_t sigmoid_lut(const Lut& t, uint16_t x);    // ... rounded once
uint16_t sigmoid_ideal(uint16_t x);                // RN(1 / (1 + e^-x))

// ---- planar engine (section 7): exact result, rounded once --------------------------
uint16_t pe_add(uint16_t a, uint16_t b);
uint16_t pe_mul(uint16_t a, uint16_t b);

// ---- multi-task programs (section 8) ------------------------------------------------
Tensor3 concat_channels(const Tensor3& a, const Tensor3& b);

}  // namespace ane_ref
