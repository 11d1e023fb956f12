// The NE lookup table (NonlinearMode 2): 64 fp16 slots in kernel lane 0.
//
// The general reading (docs/simulator.md, "Lookup tables", has the evidence
// from every Apple table in the corpus and in mil-hwx-compiler):
//   slots 0/1    input range [lo, hi]; at or beyond it the output is
//   slots 2/3    the value below lo / above hi
//   slots 4..36  33 nodes on a uniform grid of step 2^-slot41
//   slots 37/38  slope and intercept of the line left of the grid (y = s x + b)
//   slots 39/40  the same right of the grid
//   slot 41      log2(1 / step), a signed integer
//   slot 42      mode bits: 0x80 negative inputs give +0, 0x40 index by |x|,
//                0x20 give the result the input's sign; [3:0] the transform:
//                0 grid from 0, 1 grid centred on 0, 3 fraction, 4 integer
//                part, 5 sqrt, 6 rsqrt, 7 reciprocal (mantissa/exponent
//                range reduction), 9 log2, 10 exp2
// NaN reads as +inf and -0 as +0 (measured on M1). Values between nodes are
// interpolated linearly in double (lut=linear), the output DMA rounds once.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "ane/error.h"

namespace ane::sim::detail {

constexpr int kLutSlots = 64;
using LutTable = std::array<uint16_t, kLutSlots>;

struct LutReading {
  enum class Transform { Plain, Centred, Fraction, Integer, Sqrt, Rsqrt, Recip, Log2, Exp2 };
  Transform transform = Transform::Plain;
  bool negative_zero = false;  // 0x80
  bool abs_input = false;      // 0x40
  bool odd = false;            // 0x20
  int log2_inv_step = 0;       // slot 41
  // Derived by read_lut: 2^log2_inv_step and where the grid starts (per
  // transform), so that a value's reading needs no ldexp of constants.
  double inv_step = 1, origin = 0;
  double lo = 0, hi = 0, below = 0, above = 0;
  std::array<double, 33> nodes{};
  double left_slope = 0, left_intercept = 0, right_slope = 0, right_intercept = 0;
  bool is_sigmoid = false;     // bit-identical to corpus sigmoid.hwx's table
};

// Decodes a table; an error names the first slot whose meaning is unknown:
// "unsupported: LUT[42]=0x12 (mode bits) in task 3".
Expected<LutReading> read_lut(const LutTable& t, uint32_t task);

// y = f(x) by the reading above (exact in double; the caller rounds).
double lut_eval(const LutReading& r, double x);
// lut=ideal: the true sigmoid (only for the sigmoid table).
double lut_ideal_sigmoid(double x);
// True when x sits exactly on a node of the sigmoid grid, where every model agrees.
bool lut_at_node(const LutReading& r, double x);

// "odd, grid 0..4 step 2^-3", "2^int x T(frac), step 2^-5", ...
std::string lut_describe(const LutReading& r);

}  // namespace ane::sim::detail
