// Tensor DMA geometry from a task's registers (field names from the H13
// register database; see tensor_dma.h).
#include "tensor_dma.h"

namespace ane::detail {

namespace {

uint32_t get(const RegisterImage& r, const char* name) {
  auto v = r.get(name);
  return v ? *v : 0;
}

uint64_t bytes_of(const RegisterImage& r, const char* name) { return uint64_t{get(r, name)} << 6; }

uint64_t element_bytes(uint32_t fmt) { return fmt == 2 ? 2 : 1; }

}  // namespace

std::optional<uint64_t> TensorDmaGeometry::end() const {
  uint64_t e = base, t = 0;
  const std::pair<uint64_t, uint64_t> steps[] = {
      {groups, group_stride}, {d, depth_stride}, {c, plane}, {h, row}};
  for (const auto& [n, stride] : steps) {
    if (n == 0) return std::nullopt;
    if (__builtin_mul_overflow(n - 1, stride, &t) || __builtin_add_overflow(e, t, &e)) return std::nullopt;
  }
  if (__builtin_mul_overflow(w, element_bytes, &t) || __builtin_add_overflow(e, t, &e)) return std::nullopt;
  return e;
}

namespace {

// The register names of one tile DMA (TileDMASrc, its second source, TileDMADst).
struct DmaNames {
  TensorDmaGeometry::Kind kind;
  const char *enable, *dma_enable, *slot, *base, *row, *plane, *depth, *group, *fmt;
  bool output;
};

constexpr DmaNames kDmas[] = {
    {TensorDmaGeometry::Kind::Source, "Header[8].RBE0", "TileDMASrc.DMAConfig.En", "Header[8].RBase0",
     "TileDMASrc.BaseAddr.Addr", "TileDMASrc.RowStride.Stride", "TileDMASrc.PlaneStride.PlaneStride",
     "TileDMASrc.DepthStride.Stride", "TileDMASrc.GroupStride.Stride", "Common.ChCfg.InFmt", false},
    {TensorDmaGeometry::Kind::Source2, "Header[8].RBE1", nullptr, "Header[8].RBase1", "TileDMASrc.Src2BaseAddr.Addr",
     "TileDMASrc.Src2RowStride.Stride", "TileDMASrc.Src2PlaneStride.PlaneStride", "TileDMASrc.Src2DepthStride.Stride",
     "TileDMASrc.Src2GroupStride.Stride", "Common.ChCfg.Src2InFmt", false},
    {TensorDmaGeometry::Kind::Destination, "Header[8].WBE", "TileDMADst.DMAConfig.En", "Header[8].WBase",
     "TileDMADst.BaseAddr.Addr", "TileDMADst.RowStride.RowStride", "TileDMADst.PlaneStride.PlaneStride",
     "TileDMADst.DepthStride.DepthStride", "TileDMADst.GroupStride.GroupStride", "Common.ChCfg.OutFmt", true},
};

}  // namespace

std::vector<TensorDmaGeometry> task_tensor_dmas(const RegisterImage& r) {
  std::vector<TensorDmaGeometry> out;
  const uint64_t groups = get(r, "Common.GroupConvCfg.NumGroups");
  for (const DmaNames& n : kDmas) {
    if (!get(r, n.enable) || (n.dma_enable && !get(r, n.dma_enable))) continue;
    TensorDmaGeometry g;
    g.kind = n.kind;
    g.slot = static_cast<int>(get(r, n.slot));
    g.base = bytes_of(r, n.base);
    g.row = bytes_of(r, n.row);
    g.plane = bytes_of(r, n.plane);
    g.depth_stride = bytes_of(r, n.depth);
    g.group_stride = bytes_of(r, n.group);
    g.w = get(r, n.output ? "Common.OutDim.Wout" : "Common.InDim.Win");
    g.h = get(r, n.output ? "Common.OutDim.Hout" : "Common.InDim.Hin");
    g.c = get(r, n.output ? "Common.Cout.Cout" : "Common.Cin.Cin");
    const uint64_t d = get(r, n.output ? "Common.OutDepth.Dout" : "Common.InDepth.Din");
    g.d = d ? d : 1;
    g.groups = groups ? groups : 1;
    g.element_bytes = element_bytes(get(r, n.fmt));
    out.push_back(g);
  }
  return out;
}

}  // namespace ane::detail
