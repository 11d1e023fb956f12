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

std::vector<TensorDmaGeometry> task_tensor_dmas(const RegisterImage& r) {
  std::vector<TensorDmaGeometry> out;
  const uint64_t groups = get(r, "Common.GroupConvCfg.NumGroups");
  const uint64_t in_w = get(r, "Common.InDim.Win"), in_h = get(r, "Common.InDim.Hin");
  const uint64_t in_d = get(r, "Common.InDepth.Din"), out_d = get(r, "Common.OutDepth.Dout");
  if (get(r, "Header[8].RBE0") && get(r, "TileDMASrc.DMAConfig.En")) {
    TensorDmaGeometry g;
    g.kind = TensorDmaGeometry::Kind::Source;
    g.slot = static_cast<int>(get(r, "Header[8].RBase0"));
    g.base = bytes_of(r, "TileDMASrc.BaseAddr.Addr");
    g.row = bytes_of(r, "TileDMASrc.RowStride.Stride");
    g.plane = bytes_of(r, "TileDMASrc.PlaneStride.PlaneStride");
    g.depth_stride = bytes_of(r, "TileDMASrc.DepthStride.Stride");
    g.group_stride = bytes_of(r, "TileDMASrc.GroupStride.Stride");
    g.w = in_w, g.h = in_h, g.c = get(r, "Common.Cin.Cin"), g.d = in_d ? in_d : 1, g.groups = groups ? groups : 1;
    g.element_bytes = element_bytes(get(r, "Common.ChCfg.InFmt"));
    out.push_back(g);
  }
  if (get(r, "Header[8].RBE1")) {
    TensorDmaGeometry g;
    g.kind = TensorDmaGeometry::Kind::Source2;
    g.slot = static_cast<int>(get(r, "Header[8].RBase1"));
    g.base = bytes_of(r, "TileDMASrc.Src2BaseAddr.Addr");
    g.row = bytes_of(r, "TileDMASrc.Src2RowStride.Stride");
    g.plane = bytes_of(r, "TileDMASrc.Src2PlaneStride.PlaneStride");
    g.depth_stride = bytes_of(r, "TileDMASrc.Src2DepthStride.Stride");
    g.group_stride = bytes_of(r, "TileDMASrc.Src2GroupStride.Stride");
    g.w = in_w, g.h = in_h, g.c = get(r, "Common.Cin.Cin"), g.d = in_d ? in_d : 1, g.groups = groups ? groups : 1;
    g.element_bytes = element_bytes(get(r, "Common.ChCfg.Src2InFmt"));
    out.push_back(g);
  }
  if (get(r, "Header[8].WBE") && get(r, "TileDMADst.DMAConfig.En")) {
    TensorDmaGeometry g;
    g.kind = TensorDmaGeometry::Kind::Destination;
    g.slot = static_cast<int>(get(r, "Header[8].WBase"));
    g.base = bytes_of(r, "TileDMADst.BaseAddr.Addr");
    g.row = bytes_of(r, "TileDMADst.RowStride.RowStride");
    g.plane = bytes_of(r, "TileDMADst.PlaneStride.PlaneStride");
    g.depth_stride = bytes_of(r, "TileDMADst.DepthStride.DepthStride");
    g.group_stride = bytes_of(r, "TileDMADst.GroupStride.GroupStride");
    g.w = get(r, "Common.OutDim.Wout"), g.h = get(r, "Common.OutDim.Hout"), g.c = get(r, "Common.Cout.Cout");
    g.d = out_d ? out_d : 1, g.groups = groups ? groups : 1;
    g.element_bytes = element_bytes(get(r, "Common.ChCfg.OutFmt"));
    out.push_back(g);
  }
  return out;
}

}  // namespace ane::detail
