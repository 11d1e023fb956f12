// How a table row's element is named, shared by every generation's table:
// arrays get Reg[i], unnamed words Unk<address>, and the full name is
// Block.Reg.Field (Header fields: Reg.Field).
#pragma once

#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "ane/registers.h"

namespace ane::detail {

inline std::string element_register_name(const char* reg, uint32_t count, uint32_t i, uint32_t address) {
  if (reg[0] == '\0') return fmt::format("Unk{:05X}", address);
  return count > 1 ? fmt::format("{}[{}]", reg, i) : std::string(reg);
}

inline std::string qualified_field_name(Block block, const std::string& reg, const std::string& field) {
  return block == Block::Header ? reg + "." + field : fmt::format("{}.{}.{}", block_name(block), reg, field);
}

}  // namespace ane::detail
