// The four-axis surface (N, C, H, W) a MIL tensor type occupies on the ANE.
#pragma once

#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "ane/error.h"
#include "ane/mil.h"

namespace ane {

struct Surface {
  uint32_t n = 1, c = 1, h = 1, w = 1;
  bool operator==(const Surface&) const = default;
};

inline std::string surface_text(const Surface& s) { return fmt::format("[{},{},{},{}]", s.n, s.c, s.h, s.w); }

// Apple's rank rule (docs/mil.md): rank 4 is N, C, H, W; above it the
// leading axes must be 1 and are dropped; below it 1s are added on the left
// ([1, 10] becomes N 1, C 1, H 1, W 10).
Expected<Surface> mil_surface(const mil::Type& t);

}  // namespace ane
