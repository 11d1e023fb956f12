// ANE hardware generations as data: which Mach-O cpusubtype names which
// generation, its task-descriptor version and task format, and what libane
// can do with it. Everything generation-specific elsewhere (register tables,
// the task codec, the container's program descriptor) keys off this table.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "ane/error.h"

namespace ane {

// In hardware order. H18G is the subtype-11 family (M6 / A20, "h18g"/"h19").
enum class Generation : uint8_t { H11, H12, H13, H14, H15, H16, H17, H18, H18G };

// How a generation lays its tasks out in __TEXT,__text.
enum class TaskFormat : uint8_t {
  Unknown,  // not described by the public record: refused
  Linked,   // H13: 10 header words, NextPointer chain, ((count-1) << 26) | address streams
  Packed,   // H14 - H18: a 16-byte frame, 16-byte aligned tasks, 8 or 9 header words,
            // burst / masked-scatter / relocation-tagged register records
};

struct GenerationInfo {
  Generation id;
  const char* name;        // "H16"
  const char* target;      // "h16": the spelling of Apple's `-t` flag, the records and --json
  const char* chips;       // the SoCs that carry it
  uint32_t cpusubtype;     // Mach-O cpusubtype of its .hwx files
  uint32_t td_version;     // task-descriptor version (0: not known)
  TaskFormat format;
  uint32_t header_words;   // fixed task-header words (one more when the extended-word rule says so)
  // Packed formats: the relocation index of the first tensor surface (each
  // tensor's base-address records carry it; docs/generations.md).
  uint32_t first_surface;
  const char* refusal;  // why libane cannot read its tasks; nullptr when it can
};

std::span<const GenerationInfo> generations();
const GenerationInfo& generation_info(Generation g);
const char* generation_name(Generation g);
// nullptr when no generation has that cpusubtype.
const GenerationInfo* generation_by_subtype(uint32_t cpusubtype);
// "h16" or "H16"; nullptr when unknown.
const GenerationInfo* generation_by_name(std::string_view name);
// The generation whose tasks a file with this cpusubtype holds, or an error
// naming the generation and why libane cannot decode it.
Expected<const GenerationInfo*> decodable_generation(uint32_t cpusubtype);

}  // namespace ane
