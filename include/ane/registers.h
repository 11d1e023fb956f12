// The register databases, one per hardware generation: every register field
// described once (block, register, field, hardware address, bit offset,
// width, where its name comes from). Decoding, encoding, dumps, docs, the
// builder and the simulator all read them. A name means one thing on every
// generation: where a later generation holds a quantity H13 has, the field
// carries H13's name (docs/generations.md).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ane/error.h"
#include "ane/generation.h"

namespace ane {

enum class Block : uint8_t {
  Header,  // the 0x28-byte task header (not a hardware address space)
  KernelDMASrc,
  Common,
  TileDMASrc,
  L2,
  PE,  // planar engine
  NE,  // neural engine
  TileDMADst,
  CacheDMA,  // H15 - H18
  PEIndex,   // H16: one word at 0x44D0
};

// How well a name is established (mirrors the marks in the shared docs).
enum class Confidence : uint8_t {
  Published,  // named in the published field table (aneregs.json)
  Claimed,    // named by another reverse-engineering project
  Inferred,   // inferred from observed values
  Unknown,    // meaning unknown; named after its address
};

struct BlockInfo {
  Block id;
  const char* name;
  uint32_t base;   // first register address (header: 0)
  uint32_t words;  // registers in the block as written by v4.2.1 (one stream)
};

struct FieldInfo {
  Block block;
  std::string name;      // "Common.InDim.Win", "KernelDMASrc.CoeffDMAConfig[0].En", "Header[0].TID"
  std::string reg;       // "InDim", "CoeffDMAConfig[0]", "Header[0]"
  std::string field;     // "Win"
  uint32_t address = 0;  // hardware byte address (header: 4 * word index)
  uint8_t bit = 0;
  uint8_t width = 0;
  Confidence confidence = Confidence::Published;
  const char* note = "";  // short explanation for docs (may be empty)
  // H14 - H18: where the name comes from, and the record values that confirm
  // it ("" when no record confirms it; such words stay Unk<address>).
  const char* source = "";
  const char* evidence = "";

  uint32_t mask() const { return width >= 32 ? 0xffffffffu : ((1u << width) - 1u) << bit; }
  uint32_t extract(uint32_t word) const { return (word & mask()) >> bit; }
  uint32_t insert(uint32_t word, uint32_t value) const {
    return (word & ~mask()) | ((value << bit) & mask());
  }
};

class RegisterDatabase {
 public:
  // The H13 (M1/A14) table.
  static const RegisterDatabase& h13();
  // The table of a generation whose tasks libane decodes (H13 - H18);
  // nullptr for the others.
  static const RegisterDatabase* for_generation(Generation g);

  Generation generation() const { return generation_; }
  // Header words every task of the generation carries (the extended-word rule
  // can add one on packed formats).
  uint32_t header_words() const { return header_words_; }

  std::span<const BlockInfo> blocks() const { return blocks_; }
  std::span<const FieldInfo> fields() const { return fields_; }
  const BlockInfo& block(Block b) const;
  // Block whose v4.2.1 stream covers addr (header excluded); nullptr if none.
  const BlockInfo* block_at(uint32_t address) const;
  const FieldInfo* find(std::string_view name) const;
  // All fields of the register at (block, address), in bit order.
  std::vector<const FieldInfo*> fields_at(Block b, uint32_t address) const;
  // Dense index of a hardware register address across all blocks
  // (0 .. register_count()-1), or -1 when the address is in no block.
  int register_index(uint32_t address) const;
  uint32_t register_count() const { return register_count_; }
  uint32_t register_address(int index) const { return index_to_address_[index]; }
  // Register name for an address ("Common.InDim"), or "Block.Unk<addr>".
  std::string register_name(Block b, uint32_t address) const;

  RegisterDatabase(Generation g, uint32_t header_words, std::vector<BlockInfo> blocks,
                   std::vector<FieldInfo> fields);

 private:
  Generation generation_;
  uint32_t header_words_;
  std::vector<BlockInfo> blocks_;
  std::vector<FieldInfo> fields_;
  // Indices into fields_: by name, and by (block, address, bit). Sorted
  // index vectors, not maps: building them is a fifth of the cost, and the
  // tables are built in every process that reads a program.
  std::vector<uint32_t> by_name_;
  std::vector<uint32_t> by_register_;
  std::span<const uint32_t> register_fields(Block b, uint32_t address) const;
  std::vector<uint32_t> index_to_address_;
  uint32_t register_count_ = 0;
};

const char* block_name(Block b);
const char* confidence_name(Confidence c);

// The register state one task programs: its header words plus every hardware
// register the task's streams write, keyed by address, in one generation's
// register space. "Not written" stays distinct from "written zero".
class RegisterImage {
 public:
  RegisterImage();  // H13
  explicit RegisterImage(const RegisterDatabase& db);

  const RegisterDatabase& database() const { return *db_; }
  Generation generation() const { return db_->generation(); }

  // H13: ten words. Packed formats: 8 or 9, plus the extended word when present.
  std::vector<uint32_t> header;

  // Hardware registers.
  void set_word(uint32_t address, uint32_t value);
  uint32_t word(uint32_t address) const;  // 0 when not written
  bool written(uint32_t address) const;
  // Written registers whose address lies in no known block.
  const std::map<uint32_t, uint32_t>& unknown_words() const { return unknown_; }
  // All written hardware registers, ascending by address.
  std::vector<std::pair<uint32_t, uint32_t>> written_words() const;

  // Field access through the database.
  uint32_t get(const FieldInfo& f) const;
  void set(const FieldInfo& f, uint32_t value);
  bool field_written(const FieldInfo& f) const;
  // Field by full name; error when the name is unknown.
  Expected<uint32_t> get(std::string_view name) const;
  Status set(std::string_view name, uint32_t value);
  // The field's value when the database names it and the image wrote it.
  std::optional<uint32_t> written_value(std::string_view name) const;

  bool operator==(const RegisterImage& other) const = default;

 private:
  const RegisterDatabase* db_;
  std::vector<uint32_t> values_;  // indexed by RegisterDatabase::register_index
  std::vector<uint8_t> written_;
  std::map<uint32_t, uint32_t> unknown_;
};

}  // namespace ane
