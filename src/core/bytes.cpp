#include "ane/bytes.h"

#include <cerrno>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <memory>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "huge_pages.h"

namespace ane {

Error ByteView::out_of_bounds(uint64_t off, uint64_t len, const char* what) const {
  return make_error(base_ + off, fmt::format("{} ({} bytes) runs past the end of the data ({:#x} bytes)",
                                             what, len, base_ + data_.size()));
}

Expected<uint8_t> ByteView::u8(uint64_t off) const {
  if (!contains(off, 1)) return out_of_bounds(off, 1, "byte");
  return data_[off];
}

Expected<uint16_t> ByteView::u16(uint64_t off) const {
  if (!contains(off, 2)) return out_of_bounds(off, 2, "16-bit value");
  return static_cast<uint16_t>(data_[off] | data_[off + 1] << 8);
}

Expected<uint32_t> ByteView::u32(uint64_t off) const {
  if (!contains(off, 4)) return out_of_bounds(off, 4, "32-bit value");
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | data_[off + i];
  return v;
}

Expected<uint64_t> ByteView::u64(uint64_t off) const {
  if (!contains(off, 8)) return out_of_bounds(off, 8, "64-bit value");
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | data_[off + i];
  return v;
}

Expected<ByteView> ByteView::sub(uint64_t off, uint64_t len) const {
  if (!contains(off, len)) return out_of_bounds(off, len, "range");
  return ByteView(data_.subspan(off, len), base_ + off);
}

Expected<std::string> ByteView::cstring(uint64_t off) const {
  if (off >= data_.size()) return make_error(base_ + off, "string starts past the end of its table");
  const auto* begin = data_.data() + off;
  const void* nul = std::memchr(begin, 0, data_.size() - off);
  if (!nul) return make_error(base_ + off, "string is not NUL-terminated");
  return std::string(reinterpret_cast<const char*>(begin), static_cast<const uint8_t*>(nul) - begin);
}

Expected<std::string> ByteView::fixed_string(uint64_t off, uint64_t len) const {
  if (!contains(off, len)) return out_of_bounds(off, len, "name field");
  // Trailing NULs are padding; anything after an inner NUL is kept so that
  // re-encoding the field reproduces it exactly.
  const auto* begin = reinterpret_cast<const char*>(data_.data() + off);
  size_t n = len;
  while (n > 0 && begin[n - 1] == 0) --n;
  return std::string(begin, n);
}

Expected<Bytes> ByteView::copy(uint64_t off, uint64_t len) const {
  if (!contains(off, len)) return out_of_bounds(off, len, "range");
  return Bytes(data_.begin() + off, data_.begin() + off + len);
}

void put_fixed_string(Bytes& out, uint64_t off, const std::string& s, uint64_t len) {
  if (out.size() < off + len) out.resize(off + len);
  for (uint64_t i = 0; i < len; ++i) out[off + i] = i < s.size() ? static_cast<uint8_t>(s[i]) : 0;
}

std::string sanitize_file_name(std::string_view name) {
  std::string out;
  for (char c : name) {
    const bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
                      c == '.' || c == '@' || c == '-';
    out += keep ? c : '_';
  }
  return out;
}

Expected<Bytes> read_file(const std::string& path) {
  // C stdio: no exceptions, and a directory is reported instead of thrown.
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return make_error(fmt::format("cannot open: {}", std::strerror(errno)));
  struct stat st {};
  if (fstat(fileno(f.get()), &st) != 0) return make_error(fmt::format("cannot stat: {}", std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) return make_error("is a directory, not a file");
  Bytes data;
  if (S_ISREG(st.st_mode)) {
    // One read into a buffer of the file's size (huge pages for large ones).
    detail::reserve_huge(data, static_cast<size_t>(st.st_size));
    data.resize(static_cast<size_t>(st.st_size));
    size_t got = 0, n;
    while (got < data.size() && (n = std::fread(data.data() + got, 1, data.size() - got, f.get())) > 0) got += n;
    data.resize(got);  // a file that shrank meanwhile
  }
  uint8_t buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) data.insert(data.end(), buf, buf + n);
  if (std::ferror(f.get())) return make_error(fmt::format("read failed: {}", std::strerror(errno)));
  return data;
}

FileBytes::~FileBytes() {
  if (map_) munmap(map_, map_size_);
}

FileBytes::FileBytes(FileBytes&& o) noexcept
    : owned_(std::move(o.owned_)), map_(o.map_), map_size_(o.map_size_), view_(o.view_) {
  o.map_ = nullptr;
  o.view_ = {};
}

FileBytes& FileBytes::operator=(FileBytes&& o) noexcept {
  if (this != &o) {
    if (map_) munmap(map_, map_size_);
    owned_ = std::move(o.owned_);
    map_ = o.map_;
    map_size_ = o.map_size_;
    view_ = o.view_;
    o.map_ = nullptr;
    o.view_ = {};
  }
  return *this;
}

Expected<FileBytes> map_file(const std::string& path) {
  FileBytes f;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    struct stat st {};
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
      // Not MAP_POPULATE: that faults every page in on this thread before
      // anything runs, where reads fault them in 64 KiB at a time on the
      // threads that convert them (8 MiB inputs: eiln's add 10.4 -> 8.0 ms
      // a process, median of 25 interleaved; docs/simulator.md).
      void* p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (p != MAP_FAILED) {
        f.map_ = p;
        f.map_size_ = static_cast<size_t>(st.st_size);
        f.view_ = {static_cast<const uint8_t*>(p), f.map_size_};
      }
    }
    ::close(fd);
  }
  if (!f.map_) {  // not mappable: read_file's errors and its handling of pipes
    auto b = read_file(path);
    if (!b) return b.error();
    f.owned_ = std::move(*b);
    f.view_ = f.owned_;
  }
  return f;
}

Status write_file(const std::string& path, std::span<const uint8_t> data) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return make_error(fmt::format("cannot create: {}", std::strerror(errno)));
  f.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  if (!f) return make_error("write failed");
  return Ok{};
}

}  // namespace ane
