// Large buffers backed by transparent huge pages. The simulator's slot
// memories and working matrices, and the .npy data around them, are tens of
// MiB that are written once right after they are allocated; with 4 KiB pages
// every one of them is a page fault (the largest cost of a whole hwx-run
// process on a virtual machine). Advising the range before its first touch
// lets the kernel fault 2 MiB at a time where THP is in "madvise" mode.
#pragma once

#include <cstddef>

namespace ane::detail {

// Buffers smaller than this are left alone (at most two huge pages each).
constexpr size_t kHugePageMin = size_t{4} << 20;

// Advises [p, p + bytes) (its whole 4 KiB pages) for huge pages; a no-op for
// small ranges and where the system has no such advice.
void advise_huge_pages(const void* p, size_t bytes);

// v.reserve(count), advised before anything touches it; then resize() or
// insert() fills it. For vectors of trivially copyable elements.
template <typename Vector>
void reserve_huge(Vector& v, size_t count) {
  v.reserve(count);
  advise_huge_pages(v.data(), v.capacity() * sizeof(typename Vector::value_type));
}

}  // namespace ane::detail
