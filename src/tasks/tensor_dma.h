// The tensor DMAs one task performs, read from its registers: which slot
// each reads or writes and the byte range it touches. Shared by the anec
// reader (slot sizes and buffer shapes when no descriptor gives them) and
// the simulator's planner, so both walk memory by the same rule.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ane/registers.h"

namespace ane::detail {

struct TensorDmaGeometry {
  enum class Kind { Source, Source2, Destination } kind = Kind::Source;
  int slot = -1;
  uint64_t base = 0;                                   // bytes from the slot start
  uint64_t row = 0, plane = 0, depth_stride = 0, group_stride = 0;  // bytes
  uint64_t w = 0, h = 0, c = 0, d = 1, groups = 1;
  uint64_t element_bytes = 2;
  // One past the last byte touched; nullopt when the arithmetic overflows.
  std::optional<uint64_t> end() const;
};

// The tile DMAs a task has enabled (header base-enable bit and, for the
// first source and the destination, the DMA's own En bit).
std::vector<TensorDmaGeometry> task_tensor_dmas(const RegisterImage& regs);

}  // namespace ane::detail
