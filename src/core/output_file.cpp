#include "output_file.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

namespace ane::detail {

namespace {
Error os_error(const char* what) { return make_error(fmt::format("{}: {}", what, std::strerror(errno))); }
}  // namespace

Expected<OutputFile> OutputFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) return os_error("cannot create");
  return OutputFile(fd);
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
}

Status OutputFile::write(std::span<const uint8_t> bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return os_error("write failed");
    bytes = bytes.subspan(static_cast<size_t>(n));
    written_ += static_cast<uint64_t>(n);
  }
  return Ok{};
}

Status OutputFile::finish() {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return os_error("write failed");
  // Only a regular file has old bytes to cut (a pipe or a device has none).
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > written_ &&
      ::ftruncate(fd_, static_cast<off_t>(written_)) != 0)
    return os_error("write failed");
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) return os_error("write failed");
  return Ok{};
}

}  // namespace ane::detail
