// Bounds-checked little-endian access to a byte buffer.
// ByteView never reads outside its span: every read returns Expected and
// names the offending offset when the request does not fit.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ane/error.h"

namespace ane {

using Bytes = std::vector<uint8_t>;

// `v` rounded up to a multiple of `to` (tiles, rows, planes, alignments).
constexpr uint64_t round_up(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

class ByteView {
 public:
  ByteView() = default;
  explicit ByteView(std::span<const uint8_t> data, uint64_t base_offset = 0)
      : data_(data), base_(base_offset) {}

  uint64_t size() const { return data_.size(); }
  // Offset of byte 0 of this view inside the original file (for messages).
  uint64_t base_offset() const { return base_; }
  std::span<const uint8_t> span() const { return data_; }

  // True when [off, off+len) lies inside the view (overflow-safe).
  bool contains(uint64_t off, uint64_t len) const {
    return off <= data_.size() && len <= data_.size() - off;
  }

  Expected<uint8_t> u8(uint64_t off) const;
  Expected<uint16_t> u16(uint64_t off) const;
  Expected<uint32_t> u32(uint64_t off) const;
  Expected<uint64_t> u64(uint64_t off) const;
  // A sub-view of [off, off+len); fails when it does not fit.
  Expected<ByteView> sub(uint64_t off, uint64_t len) const;
  // A NUL-terminated string starting at off; fails if no NUL before the end.
  Expected<std::string> cstring(uint64_t off) const;
  // A fixed-size char field (like segname[16]) without its trailing NULs.
  Expected<std::string> fixed_string(uint64_t off, uint64_t len) const;
  Expected<Bytes> copy(uint64_t off, uint64_t len) const;

  Error out_of_bounds(uint64_t off, uint64_t len, const char* what) const;

 private:
  std::span<const uint8_t> data_;
  uint64_t base_ = 0;
};

// Little-endian stores into a growable buffer (used by the writers).
inline void put_u32(Bytes& out, uint64_t off, uint32_t v) {
  if (out.size() < off + 4) out.resize(off + 4);
  for (int i = 0; i < 4; ++i) out[off + i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void put_u64(Bytes& out, uint64_t off, uint64_t v) {
  if (out.size() < off + 8) out.resize(off + 8);
  for (int i = 0; i < 8; ++i) out[off + i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void put_u16(Bytes& out, uint64_t off, uint16_t v) {
  if (out.size() < off + 2) out.resize(off + 2);
  out[off] = static_cast<uint8_t>(v);
  out[off + 1] = static_cast<uint8_t>(v >> 8);
}
inline void put_bytes(Bytes& out, uint64_t off, std::span<const uint8_t> src) {
  if (out.size() < off + src.size()) out.resize(off + src.size());
  if (!src.empty()) std::memcpy(out.data() + off, src.data(), src.size());
}
// Writes s into a fixed field of len bytes, NUL padded (truncates if longer).
void put_fixed_string(Bytes& out, uint64_t off, const std::string& s, uint64_t len);

// A name from a file (symbol, buffer) made safe as a file name: every
// character outside [A-Za-z0-9_.@-] becomes '_', so it can never name a
// directory or climb out of one. Callers add their own extension.
std::string sanitize_file_name(std::string_view name);

// Reads a whole file; the error names the path.
Expected<Bytes> read_file(const std::string& path);

// A whole file's bytes in place, for reading only: a regular file is mapped
// with its pages populated in one call (no copy, no fault per page; a file
// truncated by another process while mapped is not supported), anything
// else (a pipe, /dev/stdin) is read as read_file does.
class FileBytes {
 public:
  FileBytes() = default;
  ~FileBytes();
  FileBytes(FileBytes&& o) noexcept;
  FileBytes& operator=(FileBytes&& o) noexcept;
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;
  std::span<const uint8_t> span() const { return view_; }

 private:
  friend Expected<FileBytes> map_file(const std::string& path);
  friend class Memory;  // Memory::view_of takes the mapping
  Bytes owned_;
  void* map_ = nullptr;
  size_t map_size_ = 0;
  std::span<const uint8_t> view_;
};
Expected<FileBytes> map_file(const std::string& path);
Status write_file(const std::string& path, std::span<const uint8_t> data);

}  // namespace ane
