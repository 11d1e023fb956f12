// The register fields whose value is a choice of the compiler version:
// hwx-build writes what v4.2.1 writes, the mil-hwx-compiler records come from
// macOS 26. Every other field of a task built from a record must equal the
// record's. docs/compiler.md ("Convolutions: v4.2.1 and macOS 26") gives
// the evidence.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ane::oracle {

// Fields the two compiler versions set differently, by register name prefix.
// docs/compiler.md ("Convolutions: v4.2.1 and macOS 26") gives the evidence.
inline const std::vector<std::pair<std::string, std::string>>& version_fields() {
  static const std::vector<std::pair<std::string, std::string>> v = {
      {"Header[1].ExeCycles", "macOS 26 writes a cycle estimate; v4.2.1 writes 0"},
      {"Header[2].LogEvents", "0x42a (macOS 26) vs 0x422 (v4.2.1) on the last task"},
      {"Header[8].RBase0", "slot order: macOS 26 binds inputs first (slot 4), v4.2.1 outputs first"},
      {"Header[8].WBase", "slot order, as RBase0"},
      {"KernelDMASrc.Unk1F8E", "four unnamed words: 0x40 in macOS 26, 0 in v4.2.1"},
      {"KernelDMASrc.Unk1F8F", "as Unk1F8E8"},
      {"Common.Cfg.ShPref", "engine scheduling hints (ShPref/ShMin/ShMax, AccDoubleBufEn) chosen per geometry; "
                            "neither version's rule is known beyond its samples"},
      {"Common.Cfg.ShMin", "as ShPref"},
      {"Common.Cfg.ShMax", "as ShPref"},
      {"Common.Cfg.AccDoubleBufEn", "as ShPref"},
      {"Common.TileCfg.TileHeight", "rows per tile: a tiling choice for the L2 capacity (records split tall "
                                    "outputs, e.g. 240 of 375 rows)"},
      {"Common.Unk0002C", "the planar engine's block on a taller plane, a tiling choice as TileHeight: macOS 26 "
                          "holds at most 256 values (0x08 at 224 x 224), eiln's v4.2.1-era kernels 512 x 32 (0x59)"},
      {"TileDMASrc.GroupStride", "macOS 26 writes the whole tensor as the group stride of an ungrouped task, "
                                 "v4.2.1 writes 0"},
      {"TileDMADst.GroupStride", "as TileDMASrc.GroupStride"},
      {"TileDMADst.DMAConfig.L2BfrMode", "goes with the L2 result placement (below)"},
      {"L2.", "the L2 buffer plan: where input rows and results sit in L2, how many rows a tile holds, row "
              "padding; macOS 26 keeps conv results in L2 buffer mode, v4.2.1 uses the ConvResult strides"},
  };
  return v;
}

// A planar-engine task of hwx-build is laid out as v4.2.1's PE add: the
// kernel-DMA block of an engine that reads no kernel.
inline bool reduction_version_field(const std::string& name) {
  return name.rfind("KernelDMASrc.", 0) == 0 || name == "TileDMASrc.Src2DMAConfig.CacheHint";
}

// A neural-engine pass-through (a copy): macOS 26 writes its kernel format
// and binary point as a convolution's (2 and 28), v4.2.1 writes 0.
inline bool passthrough_version_field(const std::string& name) {
  return name == "NE.KernelCfg.KernelFmt" || name == "NE.MACCfg.BinaryPoint";
}

inline bool version_field(const std::string& name) {
  for (const auto& [prefix, why] : version_fields())
    if (name.rfind(prefix, 0) == 0) return true;
  return false;
}

}  // namespace ane::oracle
