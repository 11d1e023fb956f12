// Errors as values: every fallible libane call returns Expected<T>.
// Nothing in the library API throws; a failure carries the file offset
// where the problem was found and a one-line description.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace ane {

struct Error {
  static constexpr uint64_t kNoOffset = ~uint64_t{0};

  uint64_t offset = kNoOffset;  // byte offset in the input, or kNoOffset
  std::string message;

  bool has_offset() const { return offset != kNoOffset; }
  // "offset 0x1c: cmdsize 0x3 is not a multiple of 8" (or just the message).
  std::string str() const;
};

inline Error make_error(uint64_t offset, std::string message) {
  return Error{offset, std::move(message)};
}
inline Error make_error(std::string message) {
  return Error{Error::kNoOffset, std::move(message)};
}

// A minimal expected<T, Error>: holds either a value or an Error.
template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}          // NOLINT: implicit by design
  Expected(Error error) : v_(std::move(error)) {}      // NOLINT: implicit by design

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }  // *f() moves a temporary's value out
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Expected<void>: success or an Error.
struct Ok {};
using Status = Expected<Ok>;

}  // namespace ane
