// The L2 result store (l2.h).
#include "l2.h"

#include <fmt/format.h>

namespace ane::sim::detail {

namespace {

// Channels [k, k + dims.c) of `r` when `address` is channel k of its first
// row in the same layout (equal strides), the rows and columns whole.
bool channel_slice(uint64_t base, const L2Result& r, uint64_t address, const Operand& op, uint32_t& k) {
  if (address < base || r.channel_stride == 0 || op.broadcasts()) return false;
  if (op.l2_channel != r.channel_stride || op.l2_row != r.row_stride) return false;
  const uint64_t off = address - base;
  if (off % r.channel_stride || (r.row_stride && off >= r.row_stride)) return false;
  const uint64_t first = off / r.channel_stride;
  const Dims& d = op.dims;
  if (r.dims.g != 1 || d.g != 1 || d.h != r.dims.h || d.w != r.dims.w || first + d.c > r.dims.c) return false;
  k = static_cast<uint32_t>(first);
  return true;
}

}  // namespace

Expected<L2View> L2Store::get(uint64_t address, const Operand& op, const char* what, uint32_t task) const {
  const auto it = results_.find(address);
  if (it == results_.end()) {
    for (const auto& [base, r] : results_) {
      uint32_t k = 0;
      if (channel_slice(base, r, address, op, k)) return L2View{&r, k, true};
    }
    return make_error(fmt::format("task {}: the {} reads L2 at {:#x}, where no earlier task left a result", task,
                                  what, address));
  }
  const L2Result& r = it->second;
  const uint64_t want = op.stored().elements(), have = r.dims.elements();
  uint32_t k = 0;
  if (want < have && channel_slice(address, r, address, op, k)) return L2View{&r, 0, true};
  if (want != have)
    return make_error(fmt::format("task {}: the {} reads {} values{} from L2 at {:#x}, where task {} left {}", task,
                                  what, want, op.broadcasts() ? " (before broadcasting)" : "", address, r.task, have));
  return L2View{&r, 0, false};
}

uint64_t L2Store::bytes() const {
  uint64_t n = 0;
  for (const auto& [a, r] : results_) n += r.data.size() * sizeof(uint16_t);
  return n;
}

}  // namespace ane::sim::detail
