// Fills a RegisterImage by field name and remembers the first value that
// does not fit its field, so lowering rules read as plain lists of
// assignments and still never write a truncated register.
#pragma once

#include <optional>
#include <string>

#include <fmt/format.h>

#include "ane/registers.h"

namespace ane::compiler {

class ImageWriter {
 public:
  RegisterImage regs;

  void set(const char* field, uint64_t value) {
    if (error_) return;
    const FieldInfo* f = RegisterDatabase::h13().find(field);
    if (!f) {
      error_ = fmt::format("internal: no register field '{}'", field);
      return;
    }
    if (value > 0xffffffffu || (f->width < 32 && (value >> f->width) != 0)) {
      error_ = fmt::format("{} = {:#x} does not fit its {}-bit field", field, value, f->width);
      return;
    }
    regs.set(*f, static_cast<uint32_t>(value));
  }
  // Address and stride fields that count `unit`-byte units (DMA: 64, L2: 16).
  void set_bytes(const char* field, uint64_t bytes, uint64_t unit) {
    if (!error_ && bytes % unit != 0) {
      error_ = fmt::format("{} = {:#x} bytes is not a multiple of {}", field, bytes, unit);
      return;
    }
    set(field, bytes / unit);
  }
  void dma(const char* field, uint64_t bytes) { set_bytes(field, bytes, 64); }
  void l2(const char* field, uint64_t bytes) { set_bytes(field, bytes, 16); }
  // A whole word whose meaning is unknown (named Block.Unk<addr>.Value).
  void word(const char* field, uint32_t value) { set(field, value); }

  const std::optional<std::string>& error() const { return error_; }

 private:
  std::optional<std::string> error_;
};

}  // namespace ane::compiler
