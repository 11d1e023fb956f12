// The L2 result store (l2.h).
#include "l2.h"

#include <fmt/format.h>

namespace ane::sim::detail {

Expected<const L2Result*> L2Store::get(uint64_t address, const Operand& op, const char* what, uint32_t task) const {
  const auto it = results_.find(address);
  if (it == results_.end())
    return make_error(fmt::format("task {}: the {} reads L2 at {:#x}, where no earlier task left a result", task,
                                  what, address));
  const L2Result& r = it->second;
  const uint64_t want = op.stored().elements(), have = r.dims.elements();
  if (want != have)
    return make_error(fmt::format("task {}: the {} reads {} values{} from L2 at {:#x}, where task {} left {}", task,
                                  what, want, op.broadcasts() ? " (before broadcasting)" : "", address, r.task, have));
  return &r;
}

uint64_t L2Store::bytes() const {
  uint64_t n = 0;
  for (const auto& [a, r] : results_) n += r.data.size() * sizeof(uint16_t);
  return n;
}

}  // namespace ane::sim::detail
