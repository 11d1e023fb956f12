// RegisterDatabase: lookups over a register table (H13 in h13_table.cpp,
// H14 - H18 in packed_tables.cpp). Built once; all queries are const.

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ane/registers.h"
#include "field_names.h"

namespace ane {

const char* block_name(Block b) {
  switch (b) {
    case Block::Header: return "Header";
    case Block::KernelDMASrc: return "KernelDMASrc";
    case Block::Common: return "Common";
    case Block::TileDMASrc: return "TileDMASrc";
    case Block::L2: return "L2";
    case Block::PE: return "PE";
    case Block::NE: return "NE";
    case Block::TileDMADst: return "TileDMADst";
    case Block::CacheDMA: return "CacheDMA";
    case Block::PEIndex: return "PEIndex";
  }
  return "?";
}

const char* confidence_name(Confidence c) {
  switch (c) {
    case Confidence::Published: return "Published";
    case Confidence::Claimed: return "Claimed";
    case Confidence::Inferred: return "Inferred";
    case Confidence::Unknown: return "Unknown";
  }
  return "?";
}

RegisterDatabase::RegisterDatabase(Generation g, uint32_t header_words, std::vector<BlockInfo> blocks,
                                   std::vector<FieldInfo> fields)
    : generation_(g), header_words_(header_words), blocks_(std::move(blocks)), fields_(std::move(fields)) {
  by_name_.resize(fields_.size());
  for (size_t i = 0; i < fields_.size(); ++i) by_name_[i] = static_cast<uint32_t>(i);
  by_register_ = by_name_;
  // Names are unique (tested); of equal ones the first would win.
  std::stable_sort(by_name_.begin(), by_name_.end(),
                   [&](uint32_t a, uint32_t b) { return fields_[a].name < fields_[b].name; });
  // (block, address, bit) as one key; the index keeps equal keys in table order.
  std::vector<std::pair<uint64_t, uint32_t>> keys(fields_.size());
  for (size_t i = 0; i < fields_.size(); ++i) {
    const FieldInfo& f = fields_[i];
    keys[i] = {detail::register_order_key(static_cast<uint8_t>(f.block), f.address, f.bit), static_cast<uint32_t>(i)};
  }
  std::sort(keys.begin(), keys.end());
  for (size_t i = 0; i < keys.size(); ++i) by_register_[i] = keys[i].second;
  // Dense register indices follow the block list (H13: v4.2.1 stream order,
  // so index k is the k-th data word of a task's streams).
  for (const BlockInfo& b : blocks_) {
    if (b.id == Block::Header) continue;
    for (uint32_t k = 0; k < b.words; ++k) index_to_address_.push_back(b.base + 4 * k);
  }
  register_count_ = static_cast<uint32_t>(index_to_address_.size());
}

const BlockInfo& RegisterDatabase::block(Block b) const {
  for (const BlockInfo& info : blocks_)
    if (info.id == b) return info;
  // Only reachable with a table that lacks the block: an empty stand-in.
  static const BlockInfo kMissing{Block::Header, "?", 0, 0};
  return kMissing;
}

const BlockInfo* RegisterDatabase::block_at(uint32_t address) const {
  for (const BlockInfo& b : blocks_) {
    if (b.id == Block::Header) continue;
    if (address >= b.base && address - b.base < 4 * b.words) return &b;
  }
  return nullptr;
}

const FieldInfo* RegisterDatabase::find(std::string_view name) const {
  auto it = std::lower_bound(by_name_.begin(), by_name_.end(), name,
                             [&](uint32_t i, std::string_view n) { return fields_[i].name < n; });
  return it != by_name_.end() && fields_[*it].name == name ? &fields_[*it] : nullptr;
}

std::span<const uint32_t> RegisterDatabase::register_fields(Block b, uint32_t address) const {
  auto key = [&](uint32_t i) { return std::pair(fields_[i].block, fields_[i].address); };
  const auto want = std::pair(b, address);
  auto lo = std::lower_bound(by_register_.begin(), by_register_.end(), want,
                             [&](uint32_t i, const std::pair<Block, uint32_t>& k) { return key(i) < k; });
  auto hi = std::upper_bound(lo, by_register_.end(), want,
                             [&](const std::pair<Block, uint32_t>& k, uint32_t i) { return k < key(i); });
  return {lo, hi};
}

std::vector<const FieldInfo*> RegisterDatabase::fields_at(Block b, uint32_t address) const {
  std::vector<const FieldInfo*> out;
  for (uint32_t i : register_fields(b, address)) out.push_back(&fields_[i]);
  return out;
}

// A handful of blocks: a linear walk is constant time and keeps the index
// dense without a table over the sparse address range.
int RegisterDatabase::register_index(uint32_t address) const {
  if (address % 4 != 0) return -1;
  uint32_t first = 0;
  for (const BlockInfo& b : blocks_) {
    if (b.id == Block::Header) continue;
    if (address >= b.base && address - b.base < 4 * b.words)
      return static_cast<int>(first + (address - b.base) / 4);
    first += b.words;
  }
  return -1;
}

std::string RegisterDatabase::register_name(Block b, uint32_t address) const {
  if (const auto at = register_fields(b, address); !at.empty()) {
    const FieldInfo& f = fields_[at.front()];
    return b == Block::Header ? f.reg : fmt::format("{}.{}", block_name(b), f.reg);
  }
  if (b == Block::Header) return fmt::format("Header[{}]", address / 4);
  return fmt::format("{}.Unk{:05X}", block_name(b), address);
}

}  // namespace ane
