#include "huge_pages.h"

#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace ane::detail {

namespace {

// madvise(advice) on the whole pages inside [p, p + bytes), for ranges of at
// least kHugePageMin; a no-op off Linux.
void advise_whole_pages(const void* p, size_t bytes, int advice) {
#if defined(__linux__)
  if (!p || bytes < kHugePageMin) return;
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) / page * page;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, advice);
#else
  (void)p;
  (void)bytes;
  (void)advice;
#endif
}

}  // namespace

void advise_huge_pages(const void* p, size_t bytes) {
#if defined(MADV_HUGEPAGE)
  // Advice only: a kernel without THP says EINVAL, and nothing changes.
  advise_whole_pages(p, bytes, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

}  // namespace ane::detail
