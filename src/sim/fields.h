// The register fields the simulator reads, looked up once by name in the H13
// register database. Units never decode bits themselves: they call
// RegisterImage::get(*f) with one of these pointers.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "ane/error.h"
#include "ane/registers.h"

namespace ane::sim::detail {

constexpr int kLanes = 16;

struct Fields {
  // Header
  const FieldInfo *rbase0, *rbe0, *rbase1, *rbe1, *wbase, *wbe, *tbase, *tbe, *ene;
  const FieldInfo *kbase0, *kbe0;
  std::array<const FieldInfo*, 3> kbe_other;  // KBE1..KBE3
  // KernelDMASrc
  std::array<const FieldInfo*, kLanes> lane_en, lane_addr, lane_size;
  // Common
  const FieldInfo *win, *hin, *din, *wout, *hout, *dout;
  const FieldInfo *in_fmt, *src2_in_fmt, *out_fmt, *cin, *cout;
  const FieldInfo *kw, *kh, *ocg, *sx, *sy, *px, *py, *ox, *oy;
  const FieldInfo *num_groups, *elem_mult, *unicast_en, *unicast_cin;
  const FieldInfo *task_type;                 // Common.Cfg.TaskType
  const FieldInfo *common_cfg;                // UnkBit0: stands for the whole Common.Cfg register in traces
  const FieldInfo *bcast_src1_w, *bcast_src1_h, *bcast_src1_c;  // Common.Broadcast
  const FieldInfo *bcast_src2_w, *bcast_src2_h, *bcast_src2_c;
  const FieldInfo *bcast_src1_chw, *bcast_src2_chw;  // Src1ChannelsW, Src2ChannelsW
  const FieldInfo *dpe;                       // Common.DPE.Category
  // TileDMASrc
  const FieldInfo *src_en, *src_base, *src_row, *src_plane, *src_group;
  const FieldInfo *src2_base, *src2_row, *src2_plane, *src2_group;
  const FieldInfo* src_fmt_first;   // TileDMASrc.Fmt.FmtMode (register address for Fmt checks)
  const FieldInfo* src2_fmt_first;  // TileDMASrc.Src2Fmt.FmtMode
  // L2
  const FieldInfo *l2_input_relu, *l2_padding;
  const FieldInfo *src_type, *src2_type, *l2_src_base, *l2_src2_base;
  const FieldInfo *result_type, *l2_result_base;
  const FieldInfo *l2_src_channel_stride, *l2_src_row_stride, *l2_res_channel_stride, *l2_res_row_stride;
  const FieldInfo *l2_src2_channel_stride, *l2_src2_row_stride;
  const FieldInfo *l2_src_group_stride, *l2_res_group_stride;
  const FieldInfo *channels_inner;     // Common.Cfg.ChannelsInner
  const FieldInfo *out_channels_w;     // Common.Broadcast.OutChannelsW
  // PE
  const FieldInfo *pe_pool, *pe_op, *pe_relu, *pe_cond, *pe_first_src, *pe_reciprocal, *pe_sec_src;
  const FieldInfo *pe_bias, *pe_scale, *pe_pre_scale, *pe_final_scale;
  const FieldInfo *pe_rsqrt, *pe_epsilon;
  // NE
  const FieldInfo *kernel_fmt, *palettized, *sparse, *small_source, *group_reuse, *kernel_cfg;
  const FieldInfo *mac_op, *mac_kernel_mode, *bias_mode, *matrix_bias, *binary_point;
  const FieldInfo *post_scale_mode, *nonlinear, *mac_bit20;
  const FieldInfo *mv_bias, *acc_bias, *acc_bias_shift, *post_scale, *post_shift;
  // TileDMADst
  const FieldInfo *dst_en, *dst_base, *dst_row, *dst_plane, *dst_group, *dst_fmt_first;
  const FieldInfo *dst_zero_last, *dst_zero_first;
};

// Resolved on first use; every name is checked by tests/sim_envelope_test.cpp.
const Fields& fields();

// "NE.MACCfg.NonlinearMode=3": integer fields in decimal, bit patterns
// (fp16/fp32 scales, whole unnamed words) in hex.
std::string field_value(const FieldInfo& f, uint32_t value);
// "Common.Cfg=0x4144405": a whole register by name.
std::string register_value(const FieldInfo& any_field_of_register, uint32_t word);

// "unsupported: <what> in task N".
Error unsupported(const std::string& what, uint32_t task);
Error unsupported(const FieldInfo& f, uint32_t value, uint32_t task);
// "unsupported: <f>=<v> with <g>=<w> in task N".
Error unsupported_with(const FieldInfo& f, uint32_t v, const FieldInfo& g, uint32_t w, uint32_t task);

}  // namespace ane::sim::detail
