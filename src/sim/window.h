// The window gather of a convolution (im2col): every input value each output
// pixel's kernel covers, as one column per pixel, so that the MAC stage is a
// matrix product for any kernel, stride and padding.
#pragma once

#include <cstdint>

#include "plan.h"

namespace ane::sim::detail {

// x: [channels][hin][win]; col: [(c * kh + ky) * kw + kx][oy * wout + ox],
// zero where the window reaches into the padding.
void gather_windows(const float* x, uint32_t channels, uint32_t hin, uint32_t win, const ConvGeometry& g,
                    uint32_t hout, uint32_t wout, float* col);

}  // namespace ane::sim::detail
