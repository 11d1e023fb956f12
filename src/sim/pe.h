// Planar engine (section 7): element-wise a op b on two fp16 tensors of one
// shape. With the scales every public file uses the result is exactly
// `a op b`, rounded once by the output DMA.
#pragma once

#include <cstdint>
#include <cstddef>

namespace ane::sim::detail {

// op: 0 add, 1 mul, 2 max, 3 min (2 and 3 only under A1). NaN propagates.
void pe_elementwise(uint32_t op, const float* a, const float* b, double* out, size_t n);

}  // namespace ane::sim::detail
