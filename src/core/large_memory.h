// Large working buffers: pieces of huge-page chunks, never zero-filled
// by the library (the kernel's fresh pages are zeros; a unit writes its whole
// output before reading it). See ane/memory.h for why.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "ane/memory.h"

namespace ane::detail {

// Buffers of at least this many bytes are mapped; smaller ones use the heap.
constexpr size_t kLargeBytes = kLargeBufferBytes;

#if defined(__SANITIZE_ADDRESS__)
#define LIBANE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LIBANE_ASAN 1
#endif
#endif
// The poisoned page after each piece under AddressSanitizer, none otherwise.
#if defined(LIBANE_ASAN)
constexpr size_t kGuardBytes = size_t{4} << 10;
#else
constexpr size_t kGuardBytes = 0;
#endif

// `bytes` of zeros (of anything when `zero` is false: a region given back
// earlier is reused as it is), 4 KiB aligned, cut from chunks advised for huge pages;
// nullptr when the system refuses. Free with unmap_large(p, bytes).
void* map_large(size_t bytes, bool zero = true);
void unmap_large(void* p, size_t bytes);
// Unmaps the regions unmap_large kept for reuse (up to 64 MiB).
void drop_cached_regions();

// A vector allocator that maps large blocks (map_large) and leaves new
// elements uninitialised: resize() costs no pass over the memory.
template <typename T>
struct LargeAllocator {
  using value_type = T;
  template <typename U>
  struct rebind {
    using other = LargeAllocator<U>;
  };
  LargeAllocator() = default;
  template <typename U>
  LargeAllocator(const LargeAllocator<U>&) {}

  T* allocate(size_t n) {
    if (n > SIZE_MAX / sizeof(T)) throw std::bad_array_new_length();
    if (n * sizeof(T) >= kLargeBytes) {
      if (void* p = map_large(n * sizeof(T), false)) return static_cast<T*>(p);
      throw std::bad_alloc();
    }
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept {
    if (n * sizeof(T) >= kLargeBytes)
      unmap_large(p, n * sizeof(T));
    else
      ::operator delete(p);
  }
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
  template <typename U>
  bool operator==(const LargeAllocator<U>&) const {
    return true;
  }
};

template <typename T>
using LargeVector = std::vector<T, LargeAllocator<T>>;

}  // namespace ane::detail
