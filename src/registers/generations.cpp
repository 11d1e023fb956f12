// The generation table. Sources (docs/generations.md carries them in full):
//   cpusubtypes: freedomtan/coreml_to_ane_hwx hwx_dump/README.md, and
//     Apple-compiled records of every generation (joshuaswarren/mil-hwx-compiler
//     research/oracles/h13 ... h18 name the subtype their files carry);
//   task-descriptor versions: 751K/Apple-Neural-Engine-Microarchitecture-Study-M6
//     notes/hwx_h18g.md section 11.3;
//   header words: every H14 - H18 record decodes with 8 (H14, H15) or 9 (H16 -
//     H18) header words and no stray register address (mil-hwx-compiler
//     research/h13_td.py; freedomtan's parser agrees);
//   first surface: the relocation indices of the records' tensor records
//     (H14 `add(x, z) -> y`: x=4, y=5, z=6; H15 - H18: x=6, y=7, z=8).
#include <fmt/format.h>

#include "ane/generation.h"

namespace ane {

namespace {

constexpr const char* kNoPublicFormat =
    "its task format is not described by any public source libane knows of";

// clang-format off
constexpr GenerationInfo kGenerations[] = {
  // id              name   target  chips                       subtype TD   format              hdr first refusal
  {Generation::H11,  "H11", "h11", "A12",                       1,     0,  TaskFormat::Unknown, 0,  0,    kNoPublicFormat},
  {Generation::H12,  "H12", "h12", "A13",                       3,     0,  TaskFormat::Unknown, 0,  0,    kNoPublicFormat},
  {Generation::H13,  "H13", "h13", "M1, A14",                   4,     0,  TaskFormat::Linked,  10, 0,    nullptr},
  {Generation::H14,  "H14", "h14", "M2, A15",                   5,    11,  TaskFormat::Packed,  8,  4,    nullptr},
  {Generation::H15,  "H15", "h15", "M3, A16",                   6,     8,  TaskFormat::Packed,  8,  6,    nullptr},
  {Generation::H16,  "H16", "h16", "M4, A17 Pro",               7,    17,  TaskFormat::Packed,  9,  6,    nullptr},
  {Generation::H17,  "H17", "h17", "M5, A18",                   9,    19,  TaskFormat::Packed,  9,  6,    nullptr},
  {Generation::H18,  "H18", "h18", "A19",                      10,    20,  TaskFormat::Packed,  9,  6,    nullptr},
  {Generation::H18G, "H18G", "h18g", "M6, A20",                 11,    24,  TaskFormat::Unknown, 0,  0,
   "its files are a different format (a __RUNTIME graph and dual-engine task text) that no public source "
   "describes field by field"},
};
// clang-format on

}  // namespace

std::span<const GenerationInfo> generations() { return kGenerations; }

const GenerationInfo& generation_info(Generation g) { return kGenerations[static_cast<size_t>(g)]; }

const char* generation_name(Generation g) { return generation_info(g).name; }

const GenerationInfo* generation_by_subtype(uint32_t cpusubtype) {
  for (const auto& g : kGenerations)
    if (g.cpusubtype == cpusubtype) return &g;
  return nullptr;
}

const GenerationInfo* generation_by_name(std::string_view name) {
  for (const auto& g : kGenerations) {
    const std::string_view n = g.target;
    if (n.size() != name.size()) continue;
    bool same = true;
    for (size_t i = 0; i < n.size() && same; ++i)
      same = n[i] == (name[i] >= 'A' && name[i] <= 'Z' ? static_cast<char>(name[i] - 'A' + 'a') : name[i]);
    if (same) return &g;
  }
  return nullptr;
}

Expected<const GenerationInfo*> decodable_generation(uint32_t cpusubtype) {
  const GenerationInfo* g = generation_by_subtype(cpusubtype);
  if (!g)
    return make_error(8, fmt::format("cpusubtype {} names no ANE generation libane knows (H11 1, H12 3, H13 4, "
                                     "H14 5, H15 6, H16 7, H17 9, H18 10, H18G 11)",
                                     cpusubtype));
  if (g->refusal)
    return make_error(8, fmt::format("cpusubtype {} is {} ({}): libane cannot read its tasks: {}", cpusubtype,
                                     g->name, g->chips, g->refusal));
  return g;
}

}  // namespace ane
