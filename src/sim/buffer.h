// Working buffers of the simulator.
#pragma once

#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace ane::sim::detail {

// A growable buffer whose new elements are left uninitialised: every unit
// writes its whole output before reading it, so zeroing would be wasted work.
template <typename T>
struct UninitAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = UninitAllocator<U>;
  };
  UninitAllocator() = default;
  template <typename U>
  UninitAllocator(const UninitAllocator<U>&) {}
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
};
template <typename T>
using Buf = std::vector<T, UninitAllocator<T>>;

}  // namespace ane::sim::detail
