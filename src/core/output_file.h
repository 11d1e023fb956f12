// Writing a file that may already exist, without truncating it first.
//
// Truncating an existing file frees its page cache and blocks, and ext4 then
// starts writing the new data back when the file is closed (auto_da_alloc):
// a 512 KiB output rewritten that way costs about 0.4 - 0.9 ms here against
// 0.15 ms for writing over the old bytes and cutting the file to its new
// length afterwards. The file ends up the same: the new bytes, nothing after.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "ane/error.h"

namespace ane::detail {

class OutputFile {
 public:
  // Opens (creates) `path` for writing from its start.
  static Expected<OutputFile> open(const std::string& path);
  OutputFile(OutputFile&& o) noexcept : fd_(o.fd_), written_(o.written_) { o.fd_ = -1; }
  OutputFile& operator=(OutputFile&&) = delete;
  OutputFile(const OutputFile&) = delete;
  ~OutputFile();

  Status write(std::span<const uint8_t> bytes);
  // Cuts a regular file to what was written, and closes it.
  Status finish();

 private:
  explicit OutputFile(int fd) : fd_(fd) {}
  int fd_ = -1;
  uint64_t written_ = 0;
};

}  // namespace ane::detail
