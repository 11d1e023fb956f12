// Helpers for the simulator tests: hand-made register images built field by
// field through the register database, and fp16 memory helpers.
//
// The images follow the values of the Apple-compiled files (section 3 format
// words, 1x1 ConvCfg, depth 1, one group); each test changes what it needs.
// Slots: source 5, second source 6, destination 4, kernel data 1.
#pragma once

#include <cstdint>
#include <string>
#include <span>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "ane/fp16.h"
#include "ane/registers.h"
#include "ane/sim.h"

namespace ane::test {

inline void set(RegisterImage& r, const std::string& name, uint32_t value) {
  const Status s = r.set(name, value);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().str());
}

inline uint64_t row_bytes(uint32_t w) { return (2 * uint64_t{w} + 63) / 64 * 64; }

// Geometry and format words every supported task shares.
inline RegisterImage base_task(uint32_t cin, uint32_t cout, uint32_t h, uint32_t w) {
  RegisterImage r;
  set(r, "Header[8].RBase0", 5);
  set(r, "Header[8].RBE0", 1);
  set(r, "Header[8].WBase", 4);
  set(r, "Header[8].WBE", 1);
  for (const char* f : {"Common.InDim.Win", "Common.OutDim.Wout"}) set(r, f, w);
  for (const char* f : {"Common.InDim.Hin", "Common.OutDim.Hout"}) set(r, f, h);
  for (const char* f : {"Common.InDepth.Din", "Common.OutDepth.Dout", "Common.ConvCfg.Kw", "Common.ConvCfg.Kh",
                        "Common.ConvCfg.Sx", "Common.ConvCfg.Sy", "Common.ConvCfg.Ox", "Common.ConvCfg.Oy",
                        "Common.GroupConvCfg.NumGroups", "TileDMASrc.DMAConfig.En", "TileDMADst.DMAConfig.En"})
    set(r, f, 1);
  set(r, "Common.ChCfg.InFmt", 2);
  set(r, "Common.ChCfg.OutFmt", 2);
  set(r, "Common.Cin.Cin", cin);
  set(r, "Common.Cout.Cout", cout);
  for (const std::string b : {"TileDMASrc", "TileDMADst"}) {
    set(r, b + ".Fmt.FmtMode", 1);
    set(r, b + ".Fmt.Truncate", 3);
    set(r, b + ".Fmt.MemFmt", 2);
    set(r, b + ".Fmt.Interleave", 1);
  }
  // Operands and result through tile DMA, as every single-task sample has them.
  set(r, "L2.SourceCfg.SourceType", 2);
  set(r, "L2.ResultCfg.ResultType", 2);
  set(r, "Header[8].ENE", 1);  // an NE task; pe_task clears it
  const uint64_t row = row_bytes(w), plane = row * h;
  set(r, "TileDMASrc.RowStride.Stride", static_cast<uint32_t>(row >> 6));
  set(r, "TileDMASrc.PlaneStride.PlaneStride", static_cast<uint32_t>(plane >> 6));
  set(r, "TileDMADst.RowStride.RowStride", static_cast<uint32_t>(row >> 6));
  set(r, "TileDMADst.PlaneStride.PlaneStride", static_cast<uint32_t>(plane >> 6));
  return r;
}

// NE pass-through (OpMode 4, KernelMode 1) with a nonlinearity.
inline RegisterImage pass_task(uint32_t c, uint32_t h, uint32_t w, uint32_t nonlinear = 0) {
  RegisterImage r = base_task(c, c, h, w);
  set(r, "NE.MACCfg.OpMode", 4);
  set(r, "NE.MACCfg.KernelMode", 1);
  set(r, "NE.MACCfg.UnkBit20", 1);
  set(r, "NE.MACCfg.NonlinearMode", nonlinear);
  set(r, "NE.PostScale.PostScale", kFp16One);
  if (nonlinear == 2) {  // the table in lane 0 of slot 1, as sigmoid.hwx has it
    set(r, "Header[9].KBase0", 1);
    set(r, "Header[9].KBE0", 1);
    set(r, "KernelDMASrc.CoeffDMAConfig[0].En", 1);
    set(r, "KernelDMASrc.CoeffBfrSize[0].MemBfrSize", 2);
  }
  return r;
}

// Bytes of one kernel lane for a convolution.
inline uint64_t conv_lane_bytes(uint32_t cin, uint32_t cout, bool bias) {
  const uint64_t per_lane = cout <= 16 ? (cin + (bias ? 1 : 0)) : uint64_t{cout / 16} * cin;
  return (2 * per_lane + 63) / 64 * 64;
}

// 1x1 convolution (OpMode 0) with lanes packed back to back in slot 1.
inline RegisterImage conv_task(uint32_t cin, uint32_t cout, uint32_t h, uint32_t w, bool bias = false) {
  RegisterImage r = base_task(cin, cout, h, w);
  set(r, "NE.KernelCfg.KernelFmt", 2);
  set(r, "NE.MACCfg.UnkBit20", 1);
  set(r, "NE.MACCfg.BiasMode", bias ? 1 : 0);
  set(r, "NE.PostScale.PostScale", kFp16One);
  set(r, "Header[9].KBase0", 1);
  set(r, "Header[9].KBE0", 1);
  uint32_t ocg = 0;
  while (cout > 16u << ocg) ++ocg;
  set(r, "Common.ConvCfg.OCGSize", ocg);
  const uint32_t lanes = cout <= 16 ? cout : 16;
  const uint64_t size = conv_lane_bytes(cin, cout, bias);
  for (uint32_t i = 0; i < lanes; ++i) {
    set(r, "KernelDMASrc.CoeffDMAConfig[" + std::to_string(i) + "].En", 1);
    set(r, "KernelDMASrc.CoeffBaseAddr[" + std::to_string(i) + "].Addr", static_cast<uint32_t>(i * size >> 6));
    set(r, "KernelDMASrc.CoeffBfrSize[" + std::to_string(i) + "].MemBfrSize", static_cast<uint32_t>(size >> 6));
  }
  return r;
}

// Planar-engine task: op 0 add, 1 mul, 2 max, 3 min; second source in slot 6.
inline RegisterImage pe_task(uint32_t c, uint32_t h, uint32_t w, uint32_t op) {
  RegisterImage r = base_task(c, c, h, w);
  set(r, "Header[8].RBase1", 6);
  set(r, "Header[8].RBE1", 1);
  set(r, "Header[8].ENE", 0);
  set(r, "Common.Cfg.TaskType", 3);
  set(r, "L2.SourceCfg.Source2Type", 2);
  set(r, "Common.ChCfg.Src2InFmt", 2);
  set(r, "PE.Cfg.SecSrc", 2);
  set(r, "PE.Cfg.OpMode", op);
  set(r, "PE.BiasScale.Scale", kFp16One);
  set(r, "PE.PreScale.PreScale", kFp16One);
  set(r, "PE.FinalScale.FinalScale", 0x3f800000);
  set(r, "TileDMASrc.Src2Fmt.Truncate", 3);
  set(r, "TileDMASrc.Src2Fmt.MemFmt", 2);
  const uint64_t row = row_bytes(w);
  set(r, "TileDMASrc.Src2RowStride.Stride", static_cast<uint32_t>(row >> 6));
  set(r, "TileDMASrc.Src2PlaneStride.PlaneStride", static_cast<uint32_t>(row * h >> 6));
  return r;
}

inline uint16_t h16(float f) { return float_to_fp16(f); }
inline float f32(uint16_t h) { return fp16_to_float(h); }

inline void put16(std::span<uint8_t> m, uint64_t off, uint16_t v) {
  if (off > m.size() || m.size() - off < 2) throw std::out_of_range("put16 beyond the memory");
  m[off] = static_cast<uint8_t>(v);
  m[off + 1] = static_cast<uint8_t>(v >> 8);
}
inline uint16_t get16(std::span<const uint8_t> m, uint64_t off) {
  if (off > m.size() || m.size() - off < 2) throw std::out_of_range("get16 beyond the memory");
  return static_cast<uint16_t>(m[off] | (m[off + 1] << 8));
}

// Dense [C][H][W] values stored with the default strides of base_task.
inline std::vector<uint8_t> tensor_bytes(uint32_t c, uint32_t h, uint32_t w, const std::vector<float>& values,
                                         uint8_t fill = 0) {
  const uint64_t row = row_bytes(w), plane = row * h;
  std::vector<uint8_t> m(plane * c, fill);
  for (uint32_t ci = 0; ci < c; ++ci)
    for (uint32_t hi = 0; hi < h; ++hi)
      for (uint32_t wi = 0; wi < w; ++wi)
        put16(m, ci * plane + hi * row + 2 * wi, h16(values.at((uint64_t{ci} * h + hi) * w + wi)));
  return m;
}

inline std::vector<float> tensor_values(std::span<const uint8_t> m, uint32_t c, uint32_t h, uint32_t w,
                                        uint64_t base = 0) {
  const uint64_t row = row_bytes(w), plane = row * h;
  std::vector<float> out;
  for (uint32_t ci = 0; ci < c; ++ci)
    for (uint32_t hi = 0; hi < h; ++hi)
      for (uint32_t wi = 0; wi < w; ++wi) out.push_back(f32(get16(m, base + ci * plane + hi * row + 2 * wi)));
  return out;
}

// The error text of a failed status ("" when it succeeded).
inline std::string error_of(const Status& s) { return s.ok() ? "" : s.error().str(); }

}  // namespace ane::test
