// IEEE 754 binary16 ("half", fp16) conversions. The ANE stores every tensor,
// weight and scale in this format; the compiler converts Float32 weights to it
// and the simulator converts at its DMA edges.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace ane {

// Exact: every fp16 value (subnormals, +-0, +-Inf, NaN payloads) is an fp32.
// Inline and branch-light so that the simulator's row conversions vectorise.
inline float fp16_to_float(uint16_t h) {
  auto from_bits = [](uint32_t b) {
    float f;
    std::memcpy(&f, &b, sizeof f);
    return f;
  };
  const uint32_t mag = uint32_t{h & 0x7fffu} << 13;  // exponent and mantissa in fp32 position
  const uint32_t exp = mag & 0x0f800000u;
  uint32_t o = mag + ((127u - 15u) << 23);  // rebias
  float f;
  if (exp == 0x0f800000u) {
    f = from_bits(o + ((128u - 16u) << 23));  // Inf/NaN keep an all-ones exponent
  } else if (exp == 0) {
    // Zero or subnormal: renormalise through an exact fp32 subtraction.
    f = from_bits(o + (1u << 23)) - from_bits(113u << 23);
  } else {
    f = from_bits(o);
  }
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return from_bits(b | (uint32_t{h & 0x8000u} << 16));
}
// Round to nearest, ties to even. Values beyond the fp16 range become +-Inf,
// NaNs stay NaN (quiet, sign and top payload bits kept).
uint16_t float_to_fp16(float f);
// The same for double inputs, rounded once (no double rounding through fp32).
uint16_t double_to_fp16(double d);

// Bulk conversions with exactly the results of the scalar functions above,
// for the simulator's DMA edges. fp16 data is little-endian bytes at any
// alignment. They use the CPU's F16C instructions when it has them.
void fp16_to_float_n(const void* src, float* dst, size_t n);
void float_to_fp16_n(const float* src, void* dst, size_t n);

inline bool fp16_is_nan(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x03ff) != 0; }
inline bool fp16_is_inf(uint16_t h) { return (h & 0x7fff) == 0x7c00; }
inline bool fp16_is_subnormal(uint16_t h) { return (h & 0x7c00) == 0 && (h & 0x03ff) != 0; }

constexpr uint16_t kFp16One = 0x3c00;
constexpr uint16_t kFp16Max = 0x7bff;  // 65504

}  // namespace ane
