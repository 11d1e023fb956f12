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

#if defined(LIBANE_ASAN)
#include <sanitizer/asan_interface.h>
#endif

namespace ane {

namespace detail {

namespace {
constexpr size_t kHuge = size_t{2} << 20;
// Pieces start on 4 KiB pages; chunks are this much address space (only the
// pages a piece touches cost memory).
constexpr size_t kPieceAlign = size_t{4} << 10;
constexpr size_t kChunkBytes = size_t{32} << 20;
size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

// Under AddressSanitizer a piece is followed by a poisoned page
// (kGuardBytes) and is poisoned whole while given back, so that reading past
// a piece, or a piece after its release, is reported as it is for a heap block.
#if defined(LIBANE_ASAN)
static_assert(kGuardBytes == kPieceAlign);
void poison(const void* p, size_t n) { ASAN_POISON_MEMORY_REGION(p, n); }
void unpoison(const void* p, size_t n) { ASAN_UNPOISON_MEMORY_REGION(p, n); }
#else
void poison(const void*, size_t) {}
void unpoison(const void*, size_t) {}
#endif
// The address space a piece of `bytes` takes.
size_t piece_length(size_t bytes) { return round_up(std::max<size_t>(bytes, 1), kPieceAlign) + kGuardBytes; }

// Large buffers are pieces cut one after another from 2 MiB aligned chunks
// advised for huge pages. Pieces share huge pages: a program's slots and
// working buffers of 512 KiB each would otherwise fault in (and the kernel
// zero) a whole 2 MiB page apiece, which was the largest cost of a short
// hwx-run process after the sgemm itself. A chunk is unmapped when its last
// piece is given back.
//
// Pieces given back are kept, up to kCacheBytes, for the next map_large of
// the same length: a process that runs one program after another
// (libane.run in a loop) would otherwise fault in and zero every slot and
// buffer afresh, which on virtual machines costs far more than clearing
// memory that is already mapped.
constexpr size_t kCacheBytes = size_t{64} << 20;
struct Chunk {
  uintptr_t start = 0;
  size_t length = 0, used = 0, live = 0;  // bytes handed out from the start; pieces not yet given back
};
struct Pool {
  std::mutex lock;
  std::vector<Chunk> chunks;                       // the last one is cut from
  std::vector<std::pair<void*, size_t>> regions;  // kept pieces: (start, length)
  size_t cached = 0;
};
Pool& pool() {
  static Pool* p = new Pool;  // never destroyed: unmap_large may run at exit
  return *p;
}

#if defined(__linux__)
// A new chunk of at least `length` bytes: over-mapped by one huge page, then
// trimmed to a 2 MiB aligned range, since THP backs only aligned 2 MiB pieces.
bool add_chunk(Pool& pl, size_t length) {
  const size_t size = std::max(kChunkBytes, round_up(length, kHuge));
  void* raw = mmap(nullptr, size + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return false;
  const auto start = reinterpret_cast<uintptr_t>(raw), aligned = round_up(start, kHuge);
  if (aligned > start) munmap(raw, aligned - start);
  const uintptr_t tail = aligned + size, end = start + size + kHuge;
  if (end > tail) munmap(reinterpret_cast<void*>(tail), end - tail);
#if defined(MADV_HUGEPAGE)
  madvise(reinterpret_cast<void*>(aligned), size, MADV_HUGEPAGE);  // advice: a kernel without THP ignores it
#endif
  pl.chunks.push_back({aligned, size, 0, 0});
  return true;
}

Chunk* chunk_of(Pool& pl, uintptr_t at) {
  for (Chunk& c : pl.chunks)
    if (at >= c.start && at < c.start + c.length) return &c;
  return nullptr;
}

// Keeps [p, p + length) for reuse, merged with the kept regions of the same
// chunk right before and after it (two pieces become one).
void keep_region(Pool& pl, void* p, size_t length) {
  auto start = reinterpret_cast<uintptr_t>(p);
  Chunk* c = chunk_of(pl, start);
  pl.cached += length;
  for (size_t i = 0; i < pl.regions.size();) {
    const auto at = reinterpret_cast<uintptr_t>(pl.regions[i].first);
    const size_t len = pl.regions[i].second;
    if (c && chunk_of(pl, at) == c && (at + len == start || start + length == at)) {
      start = std::min(start, at);
      length += len;
      c->live -= 1;
      pl.regions.erase(pl.regions.begin() + static_cast<ptrdiff_t>(i));
      continue;
    }
    ++i;
  }
  pl.regions.emplace_back(reinterpret_cast<void*>(start), length);
}

// A piece no one holds any more: its chunk goes when it was the last.
void release_piece(Pool& pl, void* p) {
  const auto at = reinterpret_cast<uintptr_t>(p);
  for (size_t i = 0; i < pl.chunks.size(); ++i) {
    Chunk& c = pl.chunks[i];
    if (at < c.start || at >= c.start + c.length) continue;
    if (--c.live == 0) {
      unpoison(reinterpret_cast<void*>(c.start), c.length);  // the addresses may be mapped again for anything
      munmap(reinterpret_cast<void*>(c.start), c.length);
      pl.chunks.erase(pl.chunks.begin() + static_cast<ptrdiff_t>(i));
    }
    return;
  }
}
#endif

}  // namespace

void drop_cached_regions() {
  Pool& pl = pool();
  std::lock_guard<std::mutex> hold(pl.lock);
#if defined(__linux__)
  for (const auto& region : pl.regions) release_piece(pl, region.first);
#endif
  pl.regions.clear();
  pl.cached = 0;
}

void* map_large(size_t bytes, bool zero) {
#if defined(__linux__)
  const size_t length = piece_length(bytes);
  Pool& pl = pool();
  std::lock_guard<std::mutex> hold(pl.lock);
  // The smallest kept region that holds the piece (its pages are faulted in
  // already); the rest of a larger one stays kept. Fresh pages cost a short
  // process more than anything but its sgemm: a program's load copies its
  // sections into buffers it frees again, and the run's buffers of other
  // sizes now reuse those pages.
  size_t best = pl.regions.size();
  for (size_t i = 0; i < pl.regions.size(); ++i)
    if (pl.regions[i].second >= length && (best == pl.regions.size() || pl.regions[i].second < pl.regions[best].second))
      best = i;
  if (best < pl.regions.size()) {
    auto [p, have] = pl.regions[best];
    pl.regions.erase(pl.regions.begin() + static_cast<ptrdiff_t>(best));
    pl.cached -= have;
    if (have > length) {
      if (Chunk* c = chunk_of(pl, reinterpret_cast<uintptr_t>(p))) c->live += 1;  // two pieces now
      keep_region(pl, static_cast<uint8_t*>(p) + length, have - length);
    }
    unpoison(p, bytes);
    if (zero) std::memset(p, 0, bytes);
    return p;
  }
  // A fresh piece is zeros: the kernel's pages, never touched.
  if (pl.chunks.empty() || pl.chunks.back().length - pl.chunks.back().used < length)
    if (!add_chunk(pl, length)) return nullptr;
  Chunk& c = pl.chunks.back();
  void* p = reinterpret_cast<void*>(c.start + c.used);
  c.used += length;
  c.live += 1;
  poison(static_cast<uint8_t*>(p) + bytes, length - bytes);
  return p;
#else
  (void)zero;
  return std::calloc(bytes, 1);
#endif
}

void unmap_large(void* p, size_t bytes) {
  if (!p) return;
#if defined(__linux__)
  const size_t length = piece_length(bytes);
  Pool& pl = pool();
  std::lock_guard<std::mutex> hold(pl.lock);
  poison(p, length);
  if (pl.cached + length <= kCacheBytes) {
    keep_region(pl, p, length);
    return;
  }
  release_piece(pl, p);
#else
  std::free(p);
#endif
}

}  // namespace detail

void release_cached_memory() { detail::drop_cached_regions(); }
void* allocate_large(size_t bytes) { return detail::map_large(bytes, false); }
void free_large(void* p, size_t bytes) { detail::unmap_large(p, bytes); }

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
