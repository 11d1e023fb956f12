// How a table row's element is named, shared by every generation's table:
// arrays get Reg[i], unnamed words Unk<address>, and the full name is
// Block.Reg.Field (Header fields: Reg.Field).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ane/registers.h"

namespace ane::detail {

inline std::string element_register_name(const char* reg, uint32_t count, uint32_t i, uint32_t address) {
  if (reg[0] == '\0') return fmt::format("Unk{:05X}", address);
  return count > 1 ? fmt::format("{}[{}]", reg, i) : std::string(reg);
}

// Appended piece by piece: every process builds a table's names once, and
// formatting each one took a third of that.
inline std::string qualified_field_name(Block block, const std::string& reg, const std::string& field) {
  const std::string_view prefix = block == Block::Header ? std::string_view() : std::string_view(block_name(block));
  std::string name;
  name.reserve(prefix.size() + reg.size() + field.size() + 2);
  if (!prefix.empty()) name.append(prefix).push_back('.');
  name.append(reg).push_back('.');
  name.append(field);
  return name;
}

// (block rank, address, bit) as one integer, so that register order is one
// integer sort: the address is below 2^32 and the bit below 2^8.
inline uint64_t register_order_key(uint32_t block_rank, uint32_t address, uint32_t bit) {
  return (uint64_t{block_rank} << 40) | (uint64_t{address} << 8) | bit;
}

// Sorts fields by (rank(block), address, bit), keeping the table's order
// among equal keys. Sorted as (key, index) pairs and then moved once: a
// stable sort of the fields themselves moves their strings about and took
// most of the time a database is built in, which every process pays.
template <typename Rank>
void sort_fields_in_register_order(std::vector<FieldInfo>& fields, Rank rank) {
  std::vector<std::pair<uint64_t, uint32_t>> keys(fields.size());
  for (size_t i = 0; i < fields.size(); ++i) {
    const FieldInfo& f = fields[i];
    keys[i] = {register_order_key(static_cast<uint32_t>(rank(f.block)), f.address, f.bit), static_cast<uint32_t>(i)};
  }
  std::sort(keys.begin(), keys.end());
  std::vector<FieldInfo> sorted;
  sorted.reserve(fields.size());
  for (const auto& k : keys) sorted.push_back(std::move(fields[k.second]));
  fields = std::move(sorted);
}

}  // namespace ane::detail
