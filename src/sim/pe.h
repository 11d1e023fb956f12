// Planar engine (section 7, widened by the eiln kernels): element-wise
//   y = Scale * op(PreScale * a, b or -b) + Bias,   |y| under Cond,
// with op add, mul, max or min (one operand: y = Scale * PreScale * a + Bias),
// and reductions along W (sum or max, times FinalScale, optionally 1 / y).
// Everything is computed in fp64 and rounded once by the output.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ane/sim.h"
#include "plan.h"

namespace ane::sim::detail {

// b is null for one operand. NaN propagates. Each result is computed in fp64
// and stored as its fp16_proxy (numerics.h); out may be a (in place).
void pe_elementwise(const PePlan& pe, const float* a, const float* b, float* out, size_t n,
                    Numerics::Round round = Numerics::Round::NearestEven);

// One value per H x W plane of `in` (g * c of them), as mil-hwx-compiler's
// reductions show: the compiler lays the reduced axes out as the plane.
// fp32: sums in fp32 in memory order (acc=fp32, fp32-ordered); fp64: in fp64.
void pe_reduce(const PePlan& pe, const float* a, const Dims& in, bool fp64_sum, double* out);

// TaskType 4: out[i] = (a[i] - b[i]) * c[i] (layer_norm's last step) or,
// without minus_b, (a[i] + b[i]) * c[i] (a tensor constant's add or
// multiply), in fp64, kept as its fp16 proxy (rounded once). out may be a.
void pe_normalize(const float* a, const float* b, const float* c, bool minus_b, float* out, size_t n,
                  Numerics::Round round);

// TaskType 6's summands: a[i] = (a[i] - b[i])^2, exact in fp64 for fp16 a
// and b, rounded once to fp32 (pe_reduce sums fp32 values).
void pe_square_difference(float* a, const float* b, size_t n);

}  // namespace ane::sim::detail
