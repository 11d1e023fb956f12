// Kernel DMA lanes and the convolution weight layout they carry.
#include "kernel_dma.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

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

Status conv_weights(const Lanes& lanes, const RegisterImage& regs, const TaskPlan& p, const Options& opts, float* w,
                    float* bias, uint64_t& subnormals, std::vector<std::string>& notes, uint32_t task) {
  const bool ftz = opts.numerics.subnormals == Numerics::Subnormals::FlushToZero;
  auto weight = [&](const uint8_t* lane, uint64_t index) {
    return fp16_to_float(load_fp16_bits(load_u16(lane + 2 * index), ftz, subnormals));
  };
  const uint64_t cin = p.ne.cin;
  if (p.ne.ocg == 0) {
    // One output channel per lane: [bias] W[oc][0..Cin-1] (section 6.3, 6.4).
    const uint64_t lead = p.ne.bias ? 1 : 0;
    if (Status s = require_lanes(lanes, regs, p.ne.cout, (cin + lead) * 2, task); !s) return s;
    for (uint32_t oc = 0; oc < p.ne.cout; ++oc) {
      if (p.ne.bias) bias[oc] = weight(lanes.data[oc], 0);
      for (uint64_t ic = 0; ic < cin; ++ic) w[oc * cin + ic] = weight(lanes.data[oc], lead + ic);
    }
    return Ok{};
  }
  const uint64_t n = uint64_t{1} << p.ne.ocg;  // output channels per lane
  const uint32_t groups = static_cast<uint32_t>(p.ne.cout / n);
  if (Status s = require_lanes(lanes, regs, groups, n * cin * 2, task); !s) return s;
  // Uniform weights: the order inside the lanes cannot change the result.
  // A lane is uniform when it equals itself shifted by one word.
  const uint8_t* first = lanes.data[0];
  const uint64_t lane_bytes = n * cin * 2;
  bool uniform = true;
  for (uint32_t g = 0; g < groups && uniform; ++g)
    uniform = std::memcmp(lanes.data[g], first, 2) == 0 &&
              std::memcmp(lanes.data[g], lanes.data[g] + 2, lane_bytes - 2) == 0;
  if (uniform) {
    const float v = weight(first, 0);
    subnormals += (n * cin * groups - 1) * (fp16_is_subnormal(load_u16(first)) ? 1 : 0);
    // One row, then whole-row copies (vectorised memcpy beats a scalar fill).
    std::fill(w, w + cin, v);
    for (uint32_t oc = 1; oc < p.ne.cout; ++oc) std::memcpy(w + oc * cin, w, cin * sizeof(float));
    return Ok{};
  }
  if (!opts.assume.ocg_layout || n > 32)
    return unsupported(field_value(*fields().ocg, p.ne.ocg) + " with non-uniform weights", task);
  // A2: lane g serves oc g*n .. g*n+n-1, weight (ol, ic) at byte 2*(ic*n + ol).
  notes.push_back("A2 ocg-layout");
  for (uint32_t g = 0; g < groups; ++g)
    for (uint64_t ol = 0; ol < n; ++ol)
      for (uint64_t ic = 0; ic < cin; ++ic) w[(g * n + ol) * cin + ic] = weight(lanes.data[g], ic * n + ol);
  return Ok{};
}

}  // namespace ane::sim::detail
