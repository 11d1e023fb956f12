// Convolutions streamed by blocks of output pixels: the fp16 input under a
// block becomes a small fp32 matrix (pointwise: the block's pixels; windowed:
// the input rows under a band of output rows, then their windows), one sgemm
// per block, and the block's results are rounded straight into the
// destination rows. The whole-tensor path instead holds the input, the
// windows and the result as fp32 copies (for 512 channels of 8192 pixels,
// 32 MiB that a fresh process must fault in and zero, which costs more than
// the sgemm on these machines).
//
// The same bits, where the BLAS allows: every output is one dot product over
// the input channels, summed by OpenBLAS's one-thread driver in both paths
// (mac.h: the whole-tensor path cuts the pixels over the cores too, one
// one-thread call per piece). That driver blocks K by a size that depends on
// K alone, and its AVX-512 and Sandy Bridge kernels sum a column the same
// wherever the call's columns start; only its small-matrix kernel (M x N x K
// <= 10^6) sums otherwise, and every block and piece stays above that. Its
// Haswell and Zen kernels (AVX2 machines without AVX-512) sum a column in an
// order that depends on where the call's columns start, so there the
// streamed and whole paths differ in the fp32 rounding of some sums
// (docs/simulator.md, "Streaming"). Blocks are shared by the cores, each
// taken whole (convert, gather, sgemm, round) by one worker. The post stage
// is the one fp32 keeps (a ReLU at most, PostScale 1), the rounding the
// output DMA's own; everything else takes the whole-tensor path.
#pragma once

#include "ane/error.h"
#include "ane/memory.h"
#include "ane/sim.h"
#include "plan.h"
#include "state.h"
#include "stream.h"

namespace ane::sim::detail {

// Whether the task is a convolution that can be streamed: one group,
// fp32 accumulation of exact products (the default numerics), bias in the
// accumulator, no table or scale after it, read by tile DMA and written by
// tile DMA to bytes its source does not touch, and at least two blocks.
bool conv_streamable(const TaskPlan& p, const BoundOperand& a, const Memory* dst, const Options& opts);

// Runs it: `w` is the [Cout][Cin] weight matrix, `bias` null or one per output.
Status run_conv_streamed(const TaskPlan& p, const BoundOperand& a, const float* w, const float* bias,
                         const Options& opts, Workspace& ws, uint32_t task, Memory* dst);

}  // namespace ane::sim::detail
