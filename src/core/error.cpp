#include "ane/error.h"

#include <fmt/format.h>

namespace ane {

std::string Error::str() const {
  if (!has_offset()) return message;
  return fmt::format("offset {:#x}: {}", offset, message);
}

}  // namespace ane
