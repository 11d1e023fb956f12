#include "large_memory.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "ane/memory.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace ane {

namespace detail {

namespace {
constexpr size_t kHuge = size_t{2} << 20;
size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }
}  // namespace

void* map_large(size_t bytes) {
#if defined(__linux__)
  // Over-map by one huge page, then trim to a 2 MiB aligned range: THP can
  // back only aligned 2 MiB pieces, so an unaligned block would fault its
  // ends 4 KiB at a time.
  const size_t length = round_up(bytes, kHuge);
  void* raw = mmap(nullptr, length + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto start = reinterpret_cast<uintptr_t>(raw), aligned = round_up(start, kHuge);
  if (aligned > start) munmap(raw, aligned - start);
  const uintptr_t tail = aligned + length, end = start + length + kHuge;
  if (end > tail) munmap(reinterpret_cast<void*>(tail), end - tail);
#if defined(MADV_HUGEPAGE)
  madvise(reinterpret_cast<void*>(aligned), length, MADV_HUGEPAGE);  // advice: a kernel without THP ignores it
#endif
  return reinterpret_cast<void*>(aligned);
#else
  return std::calloc(bytes, 1);
#endif
}

void unmap_large(void* p, size_t bytes) {
  if (!p) return;
#if defined(__linux__)
  munmap(p, round_up(bytes, kHuge));
#else
  std::free(p);
#endif
}

}  // namespace detail

Memory::Memory(size_t size) : size_(size) {
  if (size == 0) return;
  if (size >= detail::kLargeBytes) {
    data_ = static_cast<uint8_t*>(detail::map_large(size));
    mapped_ = data_ != nullptr;
  }
  if (!data_) data_ = static_cast<uint8_t*>(std::calloc(size, 1));
  if (!data_) throw std::bad_alloc();
}

Memory::Memory(std::span<const uint8_t> bytes, size_t size) : Memory(size) {
  if (!bytes.empty()) std::memcpy(data_, bytes.data(), std::min(bytes.size(), size));
}

Memory::~Memory() {
  if (mapped_)
    detail::unmap_large(data_, size_);
  else
    std::free(data_);
}

Memory::Memory(Memory&& o) noexcept : data_(o.data_), size_(o.size_), mapped_(o.mapped_) {
  o.data_ = nullptr;
  o.size_ = 0;
  o.mapped_ = false;
}

Memory& Memory::operator=(Memory&& o) noexcept {
  if (this != &o) {
    this->~Memory();
    new (this) Memory(std::move(o));
  }
  return *this;
}

}  // namespace ane
