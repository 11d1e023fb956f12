// Working buffers of the simulator.
#pragma once

#include "../core/large_memory.h"

namespace ane::sim::detail {

// A growable buffer whose new elements are left uninitialised (every unit
// writes its whole output before reading it, so zeroing would be wasted
// work); large ones are mapped on huge pages.
template <typename T>
using Buf = ane::detail::LargeVector<T>;

}  // namespace ane::sim::detail
