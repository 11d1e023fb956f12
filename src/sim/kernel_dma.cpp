// Kernel DMA lanes and the convolution weight layout they carry.
#include "kernel_dma.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "ane/conv_kernel.h"

#include "lut.h"
#include "numerics.h"

namespace ane::sim::detail {

Expected<Lanes> kernel_dma(MachineState& st, const RegisterImage& regs, int kslot, uint32_t task,
                           std::vector<DmaRecord>* record) {
  const Fields& F = fields();
  auto mem = st.memory(kslot, F.kbase0->name.c_str(), task);
  if (!mem) return mem.error();
  Lanes lanes;
  for (int i = 0; i < kLanes; ++i) {
    if (regs.get(*F.lane_en[i]) == 0) continue;
    const uint64_t begin = uint64_t{regs.get(*F.lane_addr[i])} << 6;
    const uint64_t size = uint64_t{regs.get(*F.lane_size[i])} << 6;
    if (Status s = st.check_range(kslot, begin, begin + size, fmt::format("KernelDMA lane {} reads", i), task); !s)
      return s.error();
    lanes.enabled[i] = true;
    lanes.data[i] = (*mem)->data() + begin;
    lanes.size[i] = size;
    if (record) record->push_back({"KernelDMA", kslot, begin, begin + size, i});
  }
  return lanes;
}

Status require_lanes(const Lanes& lanes, const RegisterImage& regs, uint32_t count, uint64_t bytes, uint32_t task) {
  const Fields& F = fields();
  for (uint32_t i = 0; i < count && i < kLanes; ++i) {
    if (!lanes.enabled[i]) return unsupported(*F.lane_en[i], 0, task);
    if (lanes.size[i] < bytes) return unsupported(*F.lane_size[i], regs.get(*F.lane_size[i]), task);
  }
  return Ok{};
}

Status conv_weights(const Lanes& lanes, const TaskPlan& p, const Options& opts, float* w, float* bias,
                    uint64_t& subnormals, uint32_t task) {
  const ConvKernelShape shape = conv_kernel_shape(p.ne);
  // Lanes the layout reads must be on and long enough: named by register.
  const auto need = conv_kernel_lane_needs(shape);
  std::array<KernelLane, kKernelLanes> view;
  // U15: each lane opens with the task's table, the weights after it.
  const uint64_t skip = p.ne.table_in_lanes ? kLutSlots * 2 : 0;
  for (int i = 0; i < kLanes; ++i) {
    if (!need[i]) continue;
    if (!lanes.enabled[i]) return unsupported(*fields().lane_en[i], 0, task);
    if (lanes.size[i] < need[i] + skip)
      return unsupported(*fields().lane_size[i], static_cast<uint32_t>(lanes.size[i] >> 6), task);
  }
  for (int i = 0; i < kLanes; ++i)
    if (lanes.enabled[i] && lanes.size[i] >= skip) view[i] = {lanes.data[i] + skip, lanes.size[i] - skip};
  auto k = unpack_conv_kernel(shape, view);
  if (!k) {
    // Name the registers that chose the layout the lanes do not fit.
    const Fields& F = fields();
    std::string why = k.error().message;
    if (why.rfind("unsupported: ", 0) == 0) why.erase(0, 13);
    return make_error(fmt::format("unsupported: {} (layout of {}, {}, {}, {}{}) in task {}", why,
                                  field_value(*F.bias_mode, p.ne.bias), field_value(*F.ocg, p.ne.ocg),
                                  field_value(*F.cin, p.ne.cin), field_value(*F.cout, p.ne.cout),
                                  p.ne.conv.sparse ? ", " + field_value(*F.sparse, 1) : std::string(), task));
  }
  const bool ftz = opts.numerics.subnormals == Numerics::Subnormals::FlushToZero;
  uint64_t sub = 0;
  auto widen = [&](const std::vector<uint16_t>& from, float* to) {
    if (ftz) {
      for (size_t i = 0; i < from.size(); ++i) to[i] = fp16_to_float(load_fp16_bits(from[i], ftz, sub));
      return;
    }
    // Bulk conversion (F16C where available; the same values), then the
    // subnormal count the trace notes report.
    fp16_to_float_n(from.data(), to, from.size());
    for (uint16_t h : from) sub += (h & 0x7c00u) == 0 && (h & 0x03ffu) != 0;
  };
  widen(k->weights, w);
  widen(k->bias, bias);
  subnormals += sub;
  return Ok{};
}

bool kept_weights_match(const KeptConvWeights& kept, const Lanes& lanes, const TaskPlan& p, const Options& opts) {
  if (!kept.valid || kept.shape != conv_kernel_shape(p.ne) || kept.table_in_lanes != p.ne.table_in_lanes ||
      kept.ftz != (opts.numerics.subnormals == Numerics::Subnormals::FlushToZero))
    return false;
  const uint8_t* bytes = kept.lane_bytes.data();
  for (int i = 0; i < kLanes; ++i) {
    if (kept.enabled[i] != lanes.enabled[i]) return false;
    if (!lanes.enabled[i]) continue;
    if (kept.lane_size[i] != lanes.size[i] || std::memcmp(bytes, lanes.data[i], lanes.size[i]) != 0) return false;
    bytes += lanes.size[i];
  }
  return true;
}

Status keep_conv_weights(MachineState& st, Workspace& ws, const Lanes& lanes, const TaskPlan& p, uint32_t task) {
  const Options& opts = st.opts;
  KeptConvWeights& kept = st.kept_weights;
  if (kept.valid) return Ok{};  // run_task kept them only if they match this task
  kept.clear();
  const uint64_t w_count = p.ne.outputs() * p.ne.reduction(), bias_count = p.ne.bias ? p.ne.outputs() : 0;
  if (Status s = ws.reserve((w_count + bias_count) * sizeof(float), "the weight matrix", task); !s) return s;
  kept.w.resize(w_count);
  kept.bias.resize(bias_count);
  if (Status s = conv_weights(lanes, p, opts, kept.w.data(), kept.bias.data(), kept.subnormals, task); !s) {
    kept.clear();
    return s;
  }
  uint64_t lane_bytes = 0;
  for (int i = 0; i < kLanes; ++i) lane_bytes += lanes.enabled[i] ? lanes.size[i] : 0;
  // Without room for the copy, this task uses the matrix and the next one reads its own.
  if (!ws.reserve(lane_bytes, "a copy of the kernel bytes", task)) return Ok{};
  kept.shape = conv_kernel_shape(p.ne);
  kept.table_in_lanes = p.ne.table_in_lanes;
  kept.ftz = opts.numerics.subnormals == Numerics::Subnormals::FlushToZero;
  kept.lane_bytes.resize(lane_bytes);
  uint8_t* to = kept.lane_bytes.data();
  for (int i = 0; i < kLanes; ++i) {
    kept.enabled[i] = lanes.enabled[i];
    if (!lanes.enabled[i]) continue;
    kept.lane_size[i] = lanes.size[i];
    std::memcpy(to, lanes.data[i], lanes.size[i]);
    to += lanes.size[i];
  }
  kept.valid = true;
  st.note_peak();
  return Ok{};
}

}  // namespace ane::sim::detail
