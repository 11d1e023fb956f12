// RegisterDatabase: lookups over a register table (H13 in h13_table.cpp,
// H14 - H18 in packed_tables.cpp). Built once; all queries are const.

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "ane/registers.h"

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
  for (size_t i = 0; i < fields_.size(); ++i) {
    by_name_.emplace(fields_[i].name, i);  // names are unique (tested); first one wins
    by_register_[{fields_[i].block, fields_[i].address}].push_back(i);
  }
  for (auto& [key, indices] : by_register_) {
    std::stable_sort(indices.begin(), indices.end(),
                     [&](size_t a, size_t b) { return fields_[a].bit < fields_[b].bit; });
  }
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
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &fields_[it->second];
}

std::vector<const FieldInfo*> RegisterDatabase::fields_at(Block b, uint32_t address) const {
  std::vector<const FieldInfo*> out;
  auto it = by_register_.find({b, address});
  if (it == by_register_.end()) return out;
  out.reserve(it->second.size());
  for (size_t i : it->second) out.push_back(&fields_[i]);
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
  auto it = by_register_.find({b, address});
  if (it != by_register_.end() && !it->second.empty()) {
    const FieldInfo& f = fields_[it->second.front()];
    return b == Block::Header ? f.reg : fmt::format("{}.{}", block_name(b), f.reg);
  }
  if (b == Block::Header) return fmt::format("Header[{}]", address / 4);
  return fmt::format("{}.Unk{:05X}", block_name(b), address);
}

}  // namespace ane
