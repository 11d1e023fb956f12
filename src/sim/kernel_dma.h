// Kernel DMA (section 6.3): 16 lanes, each CoeffBfrSize bytes at
// slot[KBase0] + CoeffBaseAddr when CoeffDMAConfig.En is set; and the
// reading of lane bytes as convolution weights.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ane/sim.h"
#include "fields.h"
#include "plan.h"
#include "state.h"

namespace ane::sim::detail {

struct Lanes {
  std::array<bool, kLanes> enabled{};
  std::array<const uint8_t*, kLanes> data{};
  std::array<uint64_t, kLanes> size{};  // bytes
};

// Reads every enabled lane of slot `kslot`; a lane outside the slot is an
// error: "task 0: KernelDMA lane 3 reads [a, b) beyond slot 1 (size s)".
Expected<Lanes> kernel_dma(MachineState& st, const RegisterImage& regs, int kslot, uint32_t task,
                           std::vector<DmaRecord>* record);

// Lanes 0..count-1 must be enabled and hold at least `bytes` each.
Status require_lanes(const Lanes& lanes, const RegisterImage& regs, uint32_t count, uint64_t bytes, uint32_t task);

// A convolution's weights as w[oc * reduction + r] (fp32, exact; r =
// ic * kh * kw + ky * kw + kx) and, with BiasMode, bias[oc], read from the
// lanes by the layout the registers describe (ane/conv_kernel.h). Subnormal
// weights are counted (and flushed under subnormal=ftz).
Status conv_weights(const Lanes& lanes, const TaskPlan& p, const Options& opts, float* w, float* bias,
                    uint64_t& subnormals, uint32_t task);

// Whether st.kept_weights hold what conv_weights would read for this task:
// the same layout, subnormal setting and lane bytes. run_task drops them
// before a task for which this is false.
bool kept_weights_match(const KeptConvWeights& kept, const Lanes& lanes, const TaskPlan& p, const Options& opts);

// conv_weights into st.kept_weights (charged to the workspace's budget as
// memory held after the task), unless they are valid: after run_task's check
// above, valid kept weights are this task's (one comparison of the bytes per
// task, not two).
Status keep_conv_weights(MachineState& st, Workspace& ws, const Lanes& lanes, const TaskPlan& p, uint32_t task);

}  // namespace ane::sim::detail
