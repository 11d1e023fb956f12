#include "large_memory.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "ane/bytes.h"
#include "ane/memory.h"

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace ane {

namespace detail {

namespace {
constexpr size_t kHuge = size_t{2} << 20;
size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

// Regions unmap_large gives back are kept, up to kCacheBytes, for the next
// map_large of the same length: a process that runs one program after
// another (libane.run in a loop) would otherwise fault in and zero every
// slot and buffer afresh, which on virtual machines costs far more than
// clearing memory that is already mapped.
constexpr size_t kCacheBytes = size_t{64} << 20;
struct RegionCache {
  std::mutex lock;
  std::vector<std::pair<void*, size_t>> regions;  // (start, length)
  size_t bytes = 0;
};
RegionCache& region_cache() {
  static RegionCache* cache = new RegionCache;  // never destroyed: unmap_large may run at exit
  return *cache;
}

void* take_cached(size_t length) {
  RegionCache& c = region_cache();
  std::lock_guard<std::mutex> hold(c.lock);
  for (size_t i = 0; i < c.regions.size(); ++i)
    if (c.regions[i].second == length) {
      void* p = c.regions[i].first;
      c.regions.erase(c.regions.begin() + static_cast<ptrdiff_t>(i));
      c.bytes -= length;
      return p;
    }
  return nullptr;
}

bool keep_cached(void* p, size_t length) {
  RegionCache& c = region_cache();
  std::lock_guard<std::mutex> hold(c.lock);
  if (c.bytes + length > kCacheBytes) return false;
  c.regions.emplace_back(p, length);
  c.bytes += length;
  return true;
}

}  // namespace

void drop_cached_regions() {
  RegionCache& c = region_cache();
  std::lock_guard<std::mutex> hold(c.lock);
#if defined(__linux__)
  for (const auto& [p, length] : c.regions) munmap(p, length);
#endif
  c.regions.clear();
  c.bytes = 0;
}

void* map_large(size_t bytes, bool zero) {
#if defined(__linux__)
  const size_t length = round_up(bytes, kHuge);
  if (void* p = take_cached(length)) {
    if (zero) std::memset(p, 0, bytes);
    return p;
  }
  // Over-map by one huge page, then trim to a 2 MiB aligned range: THP can
  // back only aligned 2 MiB pieces, so an unaligned block would fault its
  // ends 4 KiB at a time.
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
  (void)zero;
  return std::calloc(bytes, 1);
#endif
}

void unmap_large(void* p, size_t bytes) {
  if (!p) return;
#if defined(__linux__)
  const size_t length = round_up(bytes, kHuge);
  if (!keep_cached(p, length)) munmap(p, length);
#else
  std::free(p);
#endif
}

}  // namespace detail

void release_cached_memory() { detail::drop_cached_regions(); }

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

Memory Memory::view_of(FileBytes& file, size_t offset, size_t size) {
  Memory m;
#if defined(__linux__)
  if (!file.map_ || offset > file.map_size_ || size == 0) return m;
  auto* base = static_cast<uint8_t*>(file.map_);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t mapped = detail::round_up(file.map_size_, page);  // the last page's tail reads as zeros
  const size_t need = detail::round_up(offset + size, page);
  if (need > mapped) {
    // Zeros past the file: the file's pages moved to the start of a larger
    // anonymous mapping (the address after them may be taken).
    void* whole = mmap(nullptr, need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (whole == MAP_FAILED) return m;
    void* moved = mremap(base, mapped, mapped, MREMAP_MAYMOVE | MREMAP_FIXED, whole);
    if (moved == MAP_FAILED) {
      munmap(whole, need);
      return m;
    }
    base = static_cast<uint8_t*>(moved);
    file.map_ = base;
  }
  // Private: a write copies the page, the file never changes.
  if (mprotect(base, mapped, PROT_READ | PROT_WRITE) != 0) {
    if (need > mapped) {  // the file's pages now sit in `whole`: give all of it to the file
      file.map_size_ = need;
      file.view_ = {base, file.view_.size()};
    }
    return m;
  }
  m.data_ = base + offset;
  m.size_ = size;
  m.file_map_ = base;
  m.file_map_size_ = std::max(mapped, need);
  file.map_ = nullptr;
  file.map_size_ = 0;
  file.view_ = {};
#else
  (void)file, (void)offset, (void)size;
#endif
  return m;
}

Memory::~Memory() {
#if defined(__linux__)
  if (file_map_) {
    munmap(file_map_, file_map_size_);
    return;
  }
#endif
  if (mapped_)
    detail::unmap_large(data_, size_);
  else
    std::free(data_);
}

Memory::Memory(Memory&& o) noexcept
    : data_(o.data_), size_(o.size_), mapped_(o.mapped_), file_map_(o.file_map_), file_map_size_(o.file_map_size_) {
  o.data_ = nullptr;
  o.size_ = 0;
  o.mapped_ = false;
  o.file_map_ = nullptr;
  o.file_map_size_ = 0;
}

Memory& Memory::operator=(Memory&& o) noexcept {
  if (this != &o) {
    this->~Memory();
    new (this) Memory(std::move(o));
  }
  return *this;
}

}  // namespace ane
