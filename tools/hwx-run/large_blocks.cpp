// hwx-run's operator new: blocks of ane::kLargeBufferBytes and more from
// libane's large buffer pool (ane/memory.h), the rest from malloc.
//
// Reading a program copies its weight sections (the container keeps its
// segments, the program its slots), and each copy of a 512 KiB section into
// new heap memory faulted in 128 pages one at a time: about 0.2 ms apiece on
// a virtual machine. From the pool, such blocks share the huge pages the
// slots are cut from. Only the placement of blocks changes, never a value.
// Not in sanitizer builds (CMakeLists.txt), whose allocator checks every block.
#include <cstddef>
#include <cstdlib>
#include <new>

#include "ane/memory.h"

namespace {

// Each block starts with its size, in 16 bytes so that new's alignment holds.
constexpr size_t kHeader = 16;

void* take(size_t n) {
  if (n > SIZE_MAX - kHeader) return nullptr;
  const size_t total = n + kHeader;
  void* base = total >= ane::kLargeBufferBytes ? ane::allocate_large(total) : std::malloc(total);
  if (!base) return nullptr;
  *static_cast<size_t*>(base) = total;
  return static_cast<char*>(base) + kHeader;
}

void give(void* p) noexcept {
  if (!p) return;
  char* base = static_cast<char*>(p) - kHeader;
  const size_t total = *reinterpret_cast<size_t*>(base);
  if (total >= ane::kLargeBufferBytes)
    ane::free_large(base, total);
  else
    std::free(base);
}

void* take_or_throw(size_t n) {
  if (void* p = take(n)) return p;
  throw std::bad_alloc();
}

}  // namespace

void* operator new(size_t n) { return take_or_throw(n); }
void* operator new[](size_t n) { return take_or_throw(n); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return take(n); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return take(n); }
void operator delete(void* p) noexcept { give(p); }
void operator delete[](void* p) noexcept { give(p); }
void operator delete(void* p, size_t) noexcept { give(p); }
void operator delete[](void* p, size_t) noexcept { give(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { give(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { give(p); }
