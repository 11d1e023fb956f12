// One trace line per task:
//   task 0 +0x0 NE conv in 1x3x1x1 out 1x3x1x1 | TileDMASrc s5[0x0,0x82) KernelDMA s1 lanes 0-2[0x0,0xc0)
//   TileDMADst s4[0x0,0x82) | min 18 max 18 nan 0 inf 0 sub 0 fnv 0x... | notes: products=exact | traced: ...
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ane/sim.h"

namespace ane::sim {

namespace {

std::string shape(const std::array<uint32_t, 4>& s) { return fmt::format("{}x{}x{}x{}", s[0], s[1], s[2], s[3]); }

// Kernel lanes read back to back collapse into one range.
std::string dma_list(const std::vector<DmaRecord>& dma) {
  std::string out;
  for (size_t i = 0; i < dma.size();) {
    const DmaRecord& d = dma[i];
    if (!out.empty()) out += ' ';
    if (d.slot < 0) {  // an L2 result
      out += fmt::format("{}[{:#x},{:#x})", d.unit, d.begin, d.end);
      ++i;
      continue;
    }
    if (d.lane < 0) {
      out += fmt::format("{} s{}[{:#x},{:#x})", d.unit, d.slot, d.begin, d.end);
      ++i;
      continue;
    }
    size_t j = i + 1;
    while (j < dma.size() && dma[j].lane == dma[j - 1].lane + 1 && dma[j].slot == d.slot &&
           dma[j].begin == dma[j - 1].end)
      ++j;
    if (j == i + 1)
      out += fmt::format("{} s{} lane {}[{:#x},{:#x})", d.unit, d.slot, d.lane, d.begin, d.end);
    else
      out += fmt::format("{} s{} lanes {}-{}[{:#x},{:#x})", d.unit, d.slot, d.lane, dma[j - 1].lane, d.begin,
                         dma[j - 1].end);
    i = j;
  }
  return out;
}

}  // namespace

std::string TraceRecord::line() const {
  std::string s = fmt::format("task {} +{:#x} {} {} in {} out {} | {} | min {:g} max {:g} nan {} inf {} sub {} fnv {:#018x}",
                              task, text_offset, engine, op, shape(in_shape), shape(out_shape), dma_list(dma), min,
                              max, nan, inf, subnormal, checksum);
  if (!notes.empty()) s += fmt::format(" | notes: {}", fmt::join(notes, ", "));
  if (!traced.empty()) s += fmt::format(" | traced: {}", fmt::join(traced, " "));
  return s;
}

std::string TraceRecord::json() const {
  using nlohmann::ordered_json;
  auto number_or_null = [](float v) { return std::isnan(v) ? ordered_json(nullptr) : ordered_json(v); };
  ordered_json units = ordered_json::array();
  for (const auto& d : dma) {
    ordered_json j = {{"unit", d.unit}, {"slot", d.slot}, {"begin", d.begin}, {"end", d.end}};
    if (d.lane >= 0) j["lane"] = d.lane;
    units.push_back(j);
  }
  const ordered_json j = {{"task", task},           {"text_offset", text_offset},
                          {"engine", engine},       {"op", op},
                          {"in_shape", in_shape},   {"out_shape", out_shape},
                          {"dma", units},           {"notes", notes},
                          {"traced", traced},       {"min", number_or_null(min)},
                          {"max", number_or_null(max)}, {"nan", nan},
                          {"inf", inf},             {"subnormal", subnormal},
                          {"checksum", fmt::format("{:#018x}", checksum)}};
  return j.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

}  // namespace ane::sim
