// Element-wise tasks streamed from fp16 rows to fp16 rows, a few thousand
// values at a time on both cores, without whole-tensor fp32 copies: in a fresh
// process every such copy is pages the kernel must fault in and zero, which
// costs more than the arithmetic. Each value goes through the same unit
// functions and the same rounding as the whole-tensor path in machine.cpp, and
// every one of these tasks computes each value from its own operands alone, so
// the bits are the same. A single-operand task (a pass-through with ReLU or a
// table, a planar affine or |x|) is a function of one fp16 bit pattern: it is
// evaluated once per pattern and looked up.
#pragma once

#include <cstdint>

#include "ane/error.h"
#include "ane/memory.h"
#include "ane/sim.h"
#include "l2.h"
#include "lut.h"
#include "plan.h"
#include "state.h"

namespace ane::sim::detail {

// An operand bound to its memory: a slot for tile DMA, a result for L2.
struct BoundOperand {
  const Operand* op = nullptr;
  Memory* mem = nullptr;
  L2View l2;
};

// Whether the task can be streamed: a large element-wise task (planar add,
// mul, max, min, affine, |x|, or a neural-engine pass-through) whose operands
// and result have one shape, read by tile DMA or from a whole L2 result and
// written by tile DMA (to bytes its sources do not touch) or to L2.
bool streamable(const TaskPlan& p, const BoundOperand& a, const BoundOperand* b, const Memory* dst);

// Runs a streamable task. The result goes to `dst` through p.out.dma, or, when
// `dst` is null, to `l2_out` (dense, p.out.dims.elements() values).
Status run_streamed(const TaskPlan& p, const BoundOperand& a, const BoundOperand* b, const LutReading* lut,
                    const Options& opts, Workspace& ws, uint32_t task, Memory* dst, uint16_t* l2_out);

// Planar reductions (PeReduce) of at least 2^16 values read by tile DMA or
// from a whole L2 result, without the source retained in L2: reduced
// plane by plane from fp16 rows on both cores, each plane by pe_reduce's own
// loop over that plane alone, so the results are the whole-tensor path's.
bool reduce_streamable(const TaskPlan& p, const BoundOperand& a);
// out[plane] for every plane of the source (G x C of them), before rounding.
void run_reduce_streamed(const TaskPlan& p, const BoundOperand& a, const Options& opts, bool fp64_sum, double* out);

}  // namespace ane::sim::detail
