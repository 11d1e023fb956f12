// OpenBLAS's packing buffers on transparent huge pages (hwx-run only).
//
// OpenBLAS maps a 128 MiB buffer per thread and packs each sgemm's panels
// into it. In a process that runs one program those pages are new: a 512 x
// 512 x 8192 sgemm faults in a few hundred of them 4 KiB at a time, which on
// a virtual machine costs about as much as a third of the multiply itself.
// hwx-run links OpenBLAS statically with `--wrap=mmap` (CMakeLists.txt), so
// its mmap calls come here (so do libane's own, whose large buffers are
// advised already; glibc's internal ones do not): large anonymous mappings
// are advised for huge pages, which in THP's "madvise" mode lets the kernel
// fault them 2 MiB at a time. The advice changes no value: the same pages,
// the same sgemm.
#include <sys/mman.h>
#include <sys/types.h>

#include <cstddef>

extern "C" {
void* __real_mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset);

void* __wrap_mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  void* p = __real_mmap(addr, length, prot, flags, fd, offset);
#if defined(MADV_HUGEPAGE)
  constexpr size_t kAdviseFrom = size_t{4} << 20;  // a few pages' worth: not a small mapping's business
  if (p != MAP_FAILED && (flags & MAP_ANONYMOUS) && !(flags & MAP_STACK) && (prot & PROT_WRITE) &&
      length >= kAdviseFrom)
    madvise(p, length, MADV_HUGEPAGE);  // advice: a kernel without THP ignores it
#endif
  return p;
}
}
