// The H14 - H18 register tables: one declarative list of blocks and one of
// fields, each row saying on which generations ("variants") it holds, in the
// manner of Mesa's per-generation register databases. A field's offset is
// relative to its block, whose base each generation sets, so a row shared by
// H14 (L2 at 0x0500) and H16 (L2 at 0x4100) is written once.
//
// Naming rule (docs/generations.md): a field gets a name only where an
// Apple-compiled record's values confirm it, and where the quantity exists on
// H13 it gets H13's name, so that one name means one thing on every
// generation. `evidence` names the records and values; `source` where the
// name or the layout was first proposed. Every other word of a block is one
// 32-bit field named after its address (L2.Unk0410C.Value), whatever other
// projects call it; the note then says what they call it, unconfirmed.
//
// The rows themselves are in packed_rows.inc.
#include <algorithm>
#include <iterator>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "ane/registers.h"
#include "field_names.h"
#include "table_shorthands.h"

namespace ane {
namespace {

using Variants = uint8_t;
constexpr Variants H14 = 1, H15 = 2, H16 = 4, H17 = 8, H18 = 16;
constexpr Variants H14_15 = H14 | H15, H16_18 = H16 | H17 | H18, H15_18 = H15 | H16_18, All = H14 | H15_18;
constexpr Variants H14_17 = H14 | H15 | H16 | H17, H15_17 = H15 | H16 | H17;

Variants variant_of(Generation g) {
  switch (g) {
    case Generation::H14: return H14;
    case Generation::H15: return H15;
    case Generation::H16: return H16;
    case Generation::H17: return H17;
    case Generation::H18: return H18;
    default: return 0;
  }
}

struct BlockRow {
  Variants on;
  Block block;
  uint32_t base;
  uint32_t words;
};

struct FieldRow {
  Variants on;
  Block block;
  uint32_t offset;  // bytes from the block base (header: 4 * word)
  const char* reg;  // "" = a word without a confirmed meaning (named Unk<address>)
  const char* field;
  uint8_t bit;
  uint8_t width;
  Confidence confidence;
  const char* note;
  const char* source;
  const char* evidence;
  uint8_t count = 1;   // registers described by the row (Reg[0], Reg[1], ...)
  uint8_t stride = 4;  // bytes between them
};

using namespace table_shorthands;

#include "packed_rows.inc"

std::vector<FieldInfo> expand(Generation g, const std::vector<BlockInfo>& blocks, uint32_t header_words) {
  const Variants v = variant_of(g);
  auto base_of = [&](Block b) -> std::optional<uint32_t> {
    if (b == Block::Header) return 0u;
    for (const auto& info : blocks)
      if (info.id == b) return info.base;
    return std::nullopt;
  };
  std::vector<FieldInfo> out;
  std::map<std::pair<Block, uint32_t>, bool> covered;
  for (const FieldRow& r : kFieldRows) {
    if (!(r.on & v)) continue;
    const auto base = base_of(r.block);
    if (!base) continue;
    for (uint32_t i = 0; i < r.count; ++i) {
      FieldInfo f;
      f.block = r.block;
      f.address = *base + r.offset + i * r.stride;
      f.reg = r.block == Block::Header ? fmt::format("Header[{}]", f.address / 4)
                                       : detail::element_register_name(r.reg, r.count, i, f.address);
      f.field = r.field;
      f.name = detail::qualified_field_name(r.block, f.reg, f.field);
      f.bit = r.bit;
      f.width = r.width;
      f.confidence = r.confidence;
      f.note = r.note;
      f.source = r.source;
      f.evidence = r.evidence;
      covered[{r.block, f.address}] = true;
      out.push_back(std::move(f));
    }
  }
  // Every header word and every block word no row describes: one 32-bit field
  // named after where it is.
  auto fill = [&](Block b, uint32_t address, std::string reg) {
    if (!covered.emplace(std::pair{b, address}, true).second) return;
    FieldInfo f;
    f.block = b;
    f.address = address;
    f.reg = std::move(reg);
    f.field = "Value";
    f.name = b == Block::Header ? f.reg + "." + f.field : fmt::format("{}.{}.{}", block_name(b), f.reg, f.field);
    f.bit = 0;
    f.width = 32;
    f.confidence = Confidence::Unknown;
    out.push_back(std::move(f));
  };
  for (uint32_t w = 0; w <= header_words; ++w) fill(Block::Header, 4 * w, fmt::format("Header[{}]", w));
  for (const auto& b : blocks)
    for (uint32_t k = 0; b.id != Block::Header && k < b.words; ++k) fill(b.id, b.base + 4 * k, fmt::format("Unk{:05X}", b.base + 4 * k));

  auto rank = [&](Block b) {
    if (b == Block::Header) return size_t{0};
    for (size_t i = 0; i < blocks.size(); ++i)
      if (blocks[i].id == b) return i + 1;
    return blocks.size() + 1;
  };
  detail::sort_fields_in_register_order(out, rank);
  return out;
}

RegisterDatabase build(Generation g) {
  const Variants v = variant_of(g);
  const uint32_t header_words = generation_info(g).header_words;
  std::vector<BlockInfo> blocks;
  // The header counts its fixed words; the extended word (when a task has
  // it) is Header[header_words].
  blocks.push_back({Block::Header, "Header", 0, header_words});
  for (const BlockRow& b : kBlockRows)
    if (b.on & v) blocks.push_back({b.block, block_name(b.block), b.base, b.words});
  auto fields = expand(g, blocks, header_words);
  return RegisterDatabase(g, header_words, std::move(blocks), std::move(fields));
}

}  // namespace

const RegisterDatabase* RegisterDatabase::for_generation(Generation g) {
  // Each built on first use only: a process reads one generation, and
  // building all five took about 0.9 ms of every H14 - H18 run.
  switch (g) {
    case Generation::H13: return &h13();
    case Generation::H14: { static const RegisterDatabase db = build(g); return &db; }
    case Generation::H15: { static const RegisterDatabase db = build(g); return &db; }
    case Generation::H16: { static const RegisterDatabase db = build(g); return &db; }
    case Generation::H17: { static const RegisterDatabase db = build(g); return &db; }
    case Generation::H18: { static const RegisterDatabase db = build(g); return &db; }
    default: return nullptr;
  }
}

}  // namespace ane
