// Field lookup by name (once) and the one-line refusal messages.
#include "fields.h"

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

namespace ane::sim::detail {

namespace {

const FieldInfo* must(const char* name) {
  const FieldInfo* f = RegisterDatabase::h13().find(name);
  if (!f) {
    // A renamed register table is a build-time mistake, not an input error.
    std::fprintf(stderr, "libane simulator: register field %s is not in the database\n", name);
    std::abort();
  }
  return f;
}

Fields build() {
  Fields f{};
  f.rbase0 = must("Header[8].RBase0");
  f.rbe0 = must("Header[8].RBE0");
  f.rbase1 = must("Header[8].RBase1");
  f.rbe1 = must("Header[8].RBE1");
  f.wbase = must("Header[8].WBase");
  f.wbe = must("Header[8].WBE");
  f.tbase = must("Header[8].TBase");
  f.tbe = must("Header[8].TBE");
  f.ene = must("Header[8].ENE");
  f.kbase0 = must("Header[9].KBase0");
  f.kbe0 = must("Header[9].KBE0");
  f.kbe_other = {must("Header[9].KBE1"), must("Header[9].KBE2"), must("Header[9].KBE3")};
  for (int i = 0; i < kLanes; ++i) {
    f.lane_en[i] = must(fmt::format("KernelDMASrc.CoeffDMAConfig[{}].En", i).c_str());
    f.lane_addr[i] = must(fmt::format("KernelDMASrc.CoeffBaseAddr[{}].Addr", i).c_str());
    f.lane_size[i] = must(fmt::format("KernelDMASrc.CoeffBfrSize[{}].MemBfrSize", i).c_str());
  }
  f.win = must("Common.InDim.Win");
  f.hin = must("Common.InDim.Hin");
  f.din = must("Common.InDepth.Din");
  f.wout = must("Common.OutDim.Wout");
  f.hout = must("Common.OutDim.Hout");
  f.dout = must("Common.OutDepth.Dout");
  f.in_fmt = must("Common.ChCfg.InFmt");
  f.src2_in_fmt = must("Common.ChCfg.Src2InFmt");
  f.out_fmt = must("Common.ChCfg.OutFmt");
  f.cin = must("Common.Cin.Cin");
  f.cout = must("Common.Cout.Cout");
  f.kw = must("Common.ConvCfg.Kw");
  f.kh = must("Common.ConvCfg.Kh");
  f.ocg = must("Common.ConvCfg.OCGSize");
  f.sx = must("Common.ConvCfg.Sx");
  f.sy = must("Common.ConvCfg.Sy");
  f.px = must("Common.ConvCfg.Px");
  f.py = must("Common.ConvCfg.Py");
  f.ox = must("Common.ConvCfg.Ox");
  f.oy = must("Common.ConvCfg.Oy");
  f.num_groups = must("Common.GroupConvCfg.NumGroups");
  f.elem_mult = must("Common.GroupConvCfg.ElemMultMode");
  f.unicast_en = must("Common.GroupConvCfg.UnicastEn");
  f.unicast_cin = must("Common.GroupConvCfg.UnicastCin");
  f.task_type = must("Common.Cfg.TaskType");
  f.common_cfg = must("Common.Cfg.UnkBit0");
  f.bcast_src1_w = must("Common.Broadcast.Src1W");
  f.bcast_src1_h = must("Common.Broadcast.Src1H");
  f.bcast_src1_c = must("Common.Broadcast.Src1C");
  f.bcast_src2_w = must("Common.Broadcast.Src2W");
  f.bcast_src2_h = must("Common.Broadcast.Src2H");
  f.bcast_src2_c = must("Common.Broadcast.Src2C");
  f.bcast_src1_chw = must("Common.Broadcast.Src1ChannelsW");
  f.bcast_src2_chw = must("Common.Broadcast.Src2ChannelsW");
  f.dpe = must("Common.DPE.Category");
  f.src_en = must("TileDMASrc.DMAConfig.En");
  f.src_base = must("TileDMASrc.BaseAddr.Addr");
  f.src_row = must("TileDMASrc.RowStride.Stride");
  f.src_plane = must("TileDMASrc.PlaneStride.PlaneStride");
  f.src_group = must("TileDMASrc.GroupStride.Stride");
  f.src2_base = must("TileDMASrc.Src2BaseAddr.Addr");
  f.src2_row = must("TileDMASrc.Src2RowStride.Stride");
  f.src2_plane = must("TileDMASrc.Src2PlaneStride.PlaneStride");
  f.src2_group = must("TileDMASrc.Src2GroupStride.Stride");
  f.src_fmt_first = must("TileDMASrc.Fmt.FmtMode");
  f.src2_fmt_first = must("TileDMASrc.Src2Fmt.FmtMode");
  f.l2_input_relu = must("L2.L2Cfg.InputReLU");
  f.l2_padding = must("L2.L2Cfg.PaddingMode");
  f.src_type = must("L2.SourceCfg.SourceType");
  f.src2_type = must("L2.SourceCfg.Source2Type");
  f.l2_src_base = must("L2.SourceBase.Addr");
  f.l2_src2_base = must("L2.Source2Base.Addr");
  f.result_type = must("L2.ResultCfg.ResultType");
  f.l2_result_base = must("L2.ResultBase.Addr");
  f.l2_src_channel_stride = must("L2.SourceChannelStride.Stride");
  f.l2_src_row_stride = must("L2.SourceRowStride.Stride");
  f.l2_src2_channel_stride = must("L2.Source2ChannelStride.Stride");
  f.l2_src2_row_stride = must("L2.Source2RowStride.Stride");
  f.l2_res_channel_stride = must("L2.ConvResultChannelStride.Stride");
  f.l2_res_row_stride = must("L2.ConvResultRowStride.Stride");
  f.l2_src_group_stride = must("L2.Unk04818.Value");
  f.l2_res_group_stride = must("L2.Unk04844.Value");
  f.channels_inner = must("Common.Cfg.ChannelsInner");
  f.out_channels_w = must("Common.Broadcast.OutChannelsW");
  f.pe_pool = must("PE.Cfg.PoolMode");
  f.pe_op = must("PE.Cfg.OpMode");
  f.pe_relu = must("PE.Cfg.ReluEn");
  f.pe_cond = must("PE.Cfg.Cond");
  f.pe_first_src = must("PE.Cfg.FirstSrc");
  f.pe_reciprocal = must("PE.Cfg.Reciprocal");
  f.pe_rsqrt = must("PE.Cfg.RSqrt");
  f.pe_epsilon = must("PE.PreScale.Epsilon");
  f.pe_sec_src = must("PE.Cfg.SecSrc");
  f.pe_bias = must("PE.BiasScale.Bias");
  f.pe_scale = must("PE.BiasScale.Scale");
  f.pe_pre_scale = must("PE.PreScale.PreScale");
  f.pe_final_scale = must("PE.FinalScale.FinalScale");
  f.kernel_fmt = must("NE.KernelCfg.KernelFmt");
  f.palettized = must("NE.KernelCfg.PalettizedEn");
  f.sparse = must("NE.KernelCfg.SparseFmt");
  f.small_source = must("Common.Cfg.SmallSourceMode");
  f.group_reuse = must("NE.KernelCfg.GroupKernelReuse");
  f.kernel_cfg = f.kernel_fmt;
  f.mac_op = must("NE.MACCfg.OpMode");
  f.mac_kernel_mode = must("NE.MACCfg.KernelMode");
  f.bias_mode = must("NE.MACCfg.BiasMode");
  f.matrix_bias = must("NE.MACCfg.MatrixBiasEn");
  f.binary_point = must("NE.MACCfg.BinaryPoint");
  f.post_scale_mode = must("NE.MACCfg.PostScaleMode");
  f.nonlinear = must("NE.MACCfg.NonlinearMode");
  f.mac_bit20 = must("NE.MACCfg.UnkBit20");
  f.mv_bias = must("NE.MatrixVectorBias.MatrixVectorBias");
  f.acc_bias = must("NE.AccBias.AccBias");
  f.acc_bias_shift = must("NE.AccBias.AccBiasShift");
  f.post_scale = must("NE.PostScale.PostScale");
  f.post_shift = must("NE.PostScale.PostRightShift");
  f.dst_en = must("TileDMADst.DMAConfig.En");
  f.dst_base = must("TileDMADst.BaseAddr.Addr");
  f.dst_row = must("TileDMADst.RowStride.RowStride");
  f.dst_plane = must("TileDMADst.PlaneStride.PlaneStride");
  f.dst_group = must("TileDMADst.GroupStride.GroupStride");
  f.dst_fmt_first = must("TileDMADst.Fmt.FmtMode");
  f.dst_zero_last = must("TileDMADst.Fmt.ZeroPadLast");
  f.dst_zero_first = must("TileDMADst.Fmt.ZeroPadFirst");
  return f;
}

// Fields whose value is a bit pattern (floating-point or unexplained word).
bool is_bit_pattern(const FieldInfo& f) {
  const Fields& F = fields();
  return &f == F.post_scale || &f == F.pe_final_scale || &f == F.pe_pre_scale || &f == F.pe_bias ||
         &f == F.pe_scale || &f == F.mv_bias || &f == F.acc_bias || f.reg.rfind("Unk", 0) == 0;
}

}  // namespace

const Fields& fields() {
  static const Fields f = build();
  return f;
}

std::string field_value(const FieldInfo& f, uint32_t value) {
  return is_bit_pattern(f) ? fmt::format("{}={:#x}", f.name, value) : fmt::format("{}={}", f.name, value);
}

std::string register_value(const FieldInfo& f, uint32_t word) {
  return fmt::format("{}={:#x}", RegisterDatabase::h13().register_name(f.block, f.address), word);
}

Error unsupported(const std::string& what, uint32_t task) {
  return make_error(fmt::format("unsupported: {} in task {}", what, task));
}

Error unsupported(const FieldInfo& f, uint32_t value, uint32_t task) {
  return unsupported(field_value(f, value), task);
}

Error unsupported_with(const FieldInfo& f, uint32_t v, const FieldInfo& g, uint32_t w, uint32_t task) {
  return unsupported(field_value(f, v) + " with " + field_value(g, w), task);
}

}  // namespace ane::sim::detail
