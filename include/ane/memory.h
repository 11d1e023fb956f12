// Memory: the zero-initialised byte buffer behind the simulator's slots.
//
// A large buffer (64 KiB and up) is cut from memory mapped from the kernel in
// 2 MiB aligned chunks advised for transparent huge pages: its zeros cost
// nothing until a page is first written, and then it is faulted in 2 MiB at a
// time instead of 4 KiB (on a virtual machine each fault costs microseconds; an
// 8 MiB tensor in 4 KiB pages is 2,048 of them). Buffers are cut one after
// another, so several small ones share a huge page instead of each zeroing
// one of their own. Smaller buffers come from the heap, zeroed. Under
// AddressSanitizer each piece is followed by a poisoned page.
// A large buffer given back is kept mapped (up to 64 MiB in all) for the next
// one of the same rounded length, which then starts as zeros again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace ane {

class FileBytes;

class Memory {
 public:
  Memory() = default;
  explicit Memory(size_t size);                          // `size` zero bytes
  Memory(std::span<const uint8_t> bytes, size_t size);   // a copy of `bytes`, then zeros up to `size`
  explicit Memory(std::span<const uint8_t> bytes) : Memory(bytes, bytes.size()) {}
  ~Memory();
  // A copy-on-write view of a mapped file: `size` bytes from byte `offset`,
  // zeros past the file's end. Its pages are the file cache's until a task
  // writes one, so an input file becomes a slot without a copy. Takes the
  // mapping from `file` on success; returns an empty Memory and leaves `file`
  // as it was when the file is not mapped or the view cannot be made.
  static Memory view_of(FileBytes& file, size_t offset, size_t size);
  Memory(Memory&& o) noexcept;
  Memory& operator=(Memory&& o) noexcept;
  Memory(const Memory&) = delete;
  Memory& operator=(const Memory&) = delete;

  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  uint8_t* begin() { return data_; }
  uint8_t* end() { return data_ + size_; }
  const uint8_t* begin() const { return data_; }
  const uint8_t* end() const { return data_ + size_; }
  uint8_t& operator[](size_t i) { return data_[i]; }
  uint8_t operator[](size_t i) const { return data_[i]; }

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
  void* file_map_ = nullptr;  // view_of: the whole mapping, unmapped at the end
  size_t file_map_size_ = 0;
};

// Unmaps the large buffers kept for reuse, returning their memory to the
// system (a long-lived process done with simulating).
void release_cached_memory();

// Buffers of at least this many bytes come from the pool; smaller ones from
// the heap. 64 KiB: a 3x3 convolution's working buffers (100 - 250 KiB each)
// had faulted in 200 heap pages one at a time, a fifth of its process's time.
inline constexpr size_t kLargeBufferBytes = size_t{64} << 10;

// Blocks of the same pool for a process's other large allocations: hwx-run's
// operator new takes its blocks of kLargeBufferBytes and more from here, so that the
// copies made while reading a program share huge pages with the slots instead
// of faulting in 4 KiB at a time. Uninitialised, 4 KiB aligned; nullptr when
// the system refuses. Give a block back with free_large(p, bytes).
void* allocate_large(size_t bytes);
void free_large(void* p, size_t bytes);

}  // namespace ane
