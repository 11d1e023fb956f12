// Independent reference model of the ANE activation lookup table.
//
// Written from the table specification alone (no project code is shared or
// included) so tests can cross-check the simulator against a second,
// separately derived implementation.
//
// Layout: 64 little-endian 16-bit slots; fp16 unless noted.
//   0 lo, 1 hi            input range
//   2 below, 3 above      outputs at/below lo and at/above hi
//   4..36                 33 nodes n[0..32] on a uniform grid of step 2^-k
//   37,38 / 39,40         slope, intercept of the line left / right of the grid
//                         (applied to the absolute u, not grid-relative)
//   41                    k, signed 16-bit integer, valid in [-15, 64]
//   42                    mode bitfield (integer), see kMode* below
//   43..63                must be 0
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace ane_ref::lut {

using Table = std::array<uint16_t, 64>;

inline constexpr int kSlotLo = 0;
inline constexpr int kSlotHi = 1;
inline constexpr int kSlotBelow = 2;
inline constexpr int kSlotAbove = 3;
inline constexpr int kSlotNode0 = 4;
inline constexpr int kNodeCount = 33;
inline constexpr int kSlotLeftSlope = 37;
inline constexpr int kSlotLeftIntercept = 38;
inline constexpr int kSlotRightSlope = 39;
inline constexpr int kSlotRightIntercept = 40;
inline constexpr int kSlotShift = 41;
inline constexpr int kSlotMode = 42;

inline constexpr uint16_t kModeNegZero = 0x80;    // x < 0 gives +0
inline constexpr uint16_t kModeAbsIndex = 0x40;   // index by |x|
inline constexpr uint16_t kModeSignOut = 0x20;    // result takes x's sign (needs 0x40)
inline constexpr uint16_t kModeReserved = 0x10;   // must be 0
inline constexpr uint16_t kModeTransform = 0x0F;  // transform selector

enum Transform : uint16_t {
  kPlain = 0,      // grid starts at 0
  kCentred = 1,    // grid centred on 0 (origin -16 * 2^-k)
  kFraction = 3,   // x - floor(x)
  kInteger = 4,    // floor(x)
  kSqrt = 5,
  kRsqrt = 6,
  kReciprocal = 7,
  kLog2 = 9,
  kExp2 = 10,
};

// True when the table obeys the specification; otherwise *why (if given)
// names the offending slot and the reason.
// Decision beyond the written spec: mode bits 8..15 must be 0, and "must be 0"
// for nodes/lines of transforms 3 and 4 means the bit pattern 0x0000.
bool valid(const Table& t, std::string* why = nullptr);

// y = f(x) in double arithmetic, unrounded. Requires valid(t); an unknown
// transform yields NaN rather than undefined behaviour.
double eval(const Table& t, double x);

// eval() on an fp16 input, rounded to fp16 (nearest, ties to even).
uint16_t eval_fp16(const Table& t, uint16_t x);

// Exact fp16 -> double for every bit pattern (NaNs become a quiet NaN).
double half_to_double(uint16_t h);

// double -> fp16, round to nearest even, overflow to +-inf, NaN -> 0x7E00.
uint16_t double_to_half(double d);

// --- Tables built from their function, for tests ---

// Mode 1, nodes f(-16*2^-k + i*2^-k) in fp16; slope-0 lines through the end nodes.
Table centred_table(double (*f)(double), int k, double lo, double hi, uint16_t below,
                    uint16_t above);
// Mode 0x0A, k 5, nodes 2^(i/32); lo -25, hi 16, below 0, above +inf.
Table exp2_table();
// Mode 0xC9, k 6, nodes log2(0.5 + i/64); lo 0, hi +inf, below -inf, above 0.
Table log2_table();
// Mode 0x67, k 6, nodes 1/(0.5 + i/64); lo 0, hi +inf, below +inf, above 0.
Table recip_table();
// Mode 0xC5, k 4, nodes sqrt(i/16) for i >= 8 else 0; lo 0, hi +inf, below 0, above +inf.
Table sqrt_table();
// Mode 0xC6, k 4, nodes 1/sqrt(i/16) for i >= 8 else 0; lo 0, hi +inf, below +inf, above 0.
Table rsqrt_table();
// Mode 0x60, k 3, nodes tanh(i/8); lo 0, hi 4, below 0, above 1; right line 0*u + 1.
Table tanh_table();

}  // namespace ane_ref::lut
