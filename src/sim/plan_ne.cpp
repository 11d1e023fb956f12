// Neural-engine tasks: the MAC mode, the post stage and the kernel lanes
// they need. Evidence for each rule: docs/simulator.md ("Neural engine").
#include <bit>

#include <fmt/format.h>

#include "ane/conv_kernel.h"
#include "fields.h"
#include "plan.h"

namespace ane::sim::detail {

namespace {

// No public NE task also programs the planar engine: its words stay zero.
Status check_pe_idle(const Checker& c) {
  const Fields& F = fields();
  for (const FieldInfo* f : {F.pe_op, F.pe_scale, F.pe_pre_scale, F.pe_final_scale})
    if (const uint32_t w = c.word(f)) return unsupported(register_value(*f, w) + " in an NE task", c.task());
  return Ok{};
}

}  // namespace

Status plan_ne(const Checker& c, const Options& opts, TaskPlan& p) {
  const Fields& F = fields();
  NePlan& ne = p.ne;
  ANE_TRY(check_pe_idle(c));
  const uint32_t op = c.get(F.mac_op), kmode = c.get(F.mac_kernel_mode);
  // OpMode 4 + KernelMode 1: no multiply (relu, sigmoid, every table kernel);
  // 0 + 0: convolution; 0 + 1: no kernel, but the accumulator and its bias
  // (eiln inv: x + AccBias, then the reciprocal table).
  if (op == 4 && kmode == 1)
    ne.mac = NePlan::Mac::Pass;
  else if (op == 0 && kmode == 0)
    ne.mac = NePlan::Mac::Conv;
  else if (op == 0 && kmode == 1)
    ne.mac = NePlan::Mac::AccumulatePass;
  else if (op == 3 && kmode == 1)  // reduce_max over channels (records reduce_*max*_ax1)
    ne.mac = NePlan::Mac::ChannelMax;
  else if (op == 2 && kmode == 1)  // the product of channel pairs (H14 - H17 pow: z * log2 x)
    ne.mac = NePlan::Mac::ChannelProduct;
  else if (op != 0 && op != 4)
    return c.fail(F.mac_op);
  else
    return c.fail_with(F.mac_kernel_mode, F.mac_op);
  // The accumulator of a pass into one output channel sums every input
  // channel: softmax over C sums its exponentials so before the reciprocal
  // table (h14norm_softmax_a1_1x64x1x128 task 3: Cin 64, Cout 1, MACCfg
  // 0x121c08, no UnicastEn; H13's record of that MIL writes the same words).
  if (ne.mac == NePlan::Mac::AccumulatePass && c.get(F.cout) == 1 && c.get(F.cin) > 1)
    ne.mac = NePlan::Mac::ChannelSum;
  ANE_TRY(c.eq(F.matrix_bias, 0));
  ANE_TRY(c.eq(F.post_scale_mode, 0));
  ne.nonlinear = c.get(F.nonlinear);
  if (ne.nonlinear > 2) return c.fail(F.nonlinear);
  if (ne.nonlinear == 2) ANE_TRY(c.eq_with(F.mac_bit20, 1, F.nonlinear));
  ANE_TRY(c.eq(F.mv_bias, 0));
  ANE_TRY(c.eq(F.acc_bias_shift, 0));
  ANE_TRY(c.eq(F.post_shift, 0));
  ne.acc_bias = static_cast<uint16_t>(c.get(F.acc_bias));
  if (ne.acc_bias && ne.mac != NePlan::Mac::AccumulatePass) return c.fail_with(F.acc_bias, F.mac_op);
  if (!fp16_finite(ne.acc_bias)) return c.fail(F.acc_bias);
  ne.post_scale = static_cast<uint16_t>(c.get(F.post_scale));
  if (!fp16_finite(ne.post_scale)) return c.fail(F.post_scale);
  ne.bias = c.get(F.bias_mode) != 0;
  ne.ocg = c.get(F.ocg);
  ne.cin = c.get(F.cin);
  ne.cout = c.get(F.cout);

  const bool conv = ne.mac == NePlan::Mac::Conv;
  if (conv) {
    p.op = "conv";
    ANE_TRY(c.eq(F.kernel_fmt, 2));
    ANE_TRY(c.eq(F.palettized, 0));
    ANE_TRY(c.eq(F.group_reuse, 0));
  } else {
    p.op = ne.nonlinear == 0 ? "pass" : ne.nonlinear == 1 ? "relu" : "table";
    if (ne.mac == NePlan::Mac::ChannelSum) {
      p.op = "channel-sum";
      ANE_TRY(c.eq_with(F.unicast_en, 0, F.mac_op));
      ne.unicast_cin = c.get(F.cin);
    } else if (ne.over_channel_groups()) {
      p.op = ne.mac == NePlan::Mac::ChannelMax ? "channel-max" : "channel-product";
      ANE_TRY(c.eq_with(F.unicast_en, 1, F.mac_op));
      ne.unicast_cin = c.get(F.unicast_cin);
      if (ne.unicast_cin == 0) return c.fail(F.unicast_cin);
    } else if (c.get(F.unicast_en) && c.get(F.unicast_cin) > 1) {
      // A pass reads one input channel per output (UnicastCin 1, every sample).
      return c.fail_with(F.unicast_cin, F.unicast_en);
    }
    ANE_TRY(c.eq(F.ocg, 0));
    if (ne.bias) return c.fail_with(F.bias_mode, F.mac_op);  // no lanes to hold a bias
  }

  // Post stage: MAC -> bias -> x PostScale -> nonlinearity. The eiln exp
  // kernel scales by log2(e) before its exp2 table, which fixes PostScale
  // before the table; the other orders have no evidence (A3).
  bool needs_a3 = false;
  Error why = make_error("");
  const bool unit_scale = ne.post_scale == 0x3c00;
  // A convolution followed by ReLU at unit scale has one reading: the bias
  // is a kernel row (docs/convolution.md), part of the sum the post stage
  // receives, so relu(sum + bias); macOS 26 compiles conv + relu that way.
  const bool plain_relu = conv && ne.nonlinear == 1 && unit_scale;
  // Rule U15: an H14+ convolution with a table activation at unit scale is
  // the table of the MAC's sum (a bias is a kernel row, part of that sum, as
  // for conv + relu above: nothing to order); each of its weight lanes opens
  // with the table (chain_pair_mm_gelu, _mm_silu: lanes of 128 + 8,192
  // bytes, whose section hashes with the table there and not after the
  // weights; chain_ffn_d256_s64_biasbcast with a bias row). H13 shows no
  // such task: it stays under A3.
  ne.table_in_lanes = conv && ne.nonlinear == 2 && unit_scale && opts.generation != Generation::H13;
  if (ne.table_in_lanes) p.notes.push_back("U15: each kernel lane opens with the table, the weights after it");
  if (conv && ne.nonlinear != 0 && !plain_relu && !ne.table_in_lanes) {
    needs_a3 = true;
    why = c.fail_with(F.nonlinear, F.mac_op);
  } else if (!unit_scale && ne.bias) {
    needs_a3 = true;
    why = c.fail_with(F.post_scale, F.bias_mode);
  } else if (ne.nonlinear == 1 && (ne.post_scale & 0x8000u) && (ne.post_scale & 0x7fffu)) {
    needs_a3 = true;
    why = c.fail_with(F.post_scale, F.nonlinear);
  }
  if (needs_a3) {
    if (!opts.assume.post_chain) return why;
    p.notes.push_back("A3 post-chain");
  }
  if (conv || ne.nonlinear == 2) {
    if (c.get(F.kbe0) != 1) return c.fail(F.kbe0);
    ne.kernel_slot = static_cast<int>(c.get(F.kbase0));
  }
  return Ok{};
}

ConvKernelShape conv_kernel_shape(const NePlan& ne) {
  ConvKernelShape k;
  k.groups = ne.conv.groups;
  k.cin = ne.cin;
  k.cout = ne.cout;
  k.kh = ne.conv.kh;
  k.kw = ne.conv.kw;
  k.depthwise = ne.conv.depthwise;
  k.bias = ne.bias;
  k.ocg = ne.ocg;
  k.sparse = ne.conv.sparse;
  k.small_source = ne.conv.small_source;
  k.mask_group_slots = ne.conv.mask_group_slots;
  return k;
}

namespace {

// The padding after the last input row/column that the output size implies:
// (out - 1) * stride + kernel - in - leading pad. No register holds it.
int64_t trailing_pad(uint32_t out, uint32_t stride, uint32_t kernel, uint32_t in, uint32_t lead) {
  return (int64_t{out} - 1) * stride + kernel - int64_t{in} - lead;
}

}  // namespace

Status plan_conv_window(const Checker& c, TaskPlan& p, Dims& in, Dims& out) {
  const Fields& F = fields();
  ConvGeometry& g = p.ne.conv;
  g.kw = c.get(F.kw);
  g.kh = c.get(F.kh);
  g.sx = c.get(F.sx);
  g.sy = c.get(F.sy);
  g.px = c.get(F.px);
  g.py = c.get(F.py);
  ANE_TRY(c.eq(F.ox, 1));
  ANE_TRY(c.eq(F.oy, 1));
  // Strides 1 and 2 are what the records show; stride 2 always with the
  // zero-skipping kernel form, stride 1 never.
  if (g.sx != 1 && g.sx != 2) return c.fail(F.sx);
  if (g.sy != g.sx) return c.fail_with(F.sy, F.sx);
  g.sparse = c.get(F.sparse) != 0;
  if (g.sparse != (g.sx == 2)) return c.fail_with(F.sparse, F.sx);
  // A non-square window outside the records is named by its two registers.
  if (g.kw != g.kh && !known_conv_window(g.kw, g.kh, g.sx)) return c.fail_with(F.kw, F.kh);
  g.small_source = c.get(F.small_source) != 0;
  g.depthwise = c.get(F.unicast_en) != 0;
  if (g.depthwise) ANE_TRY(c.eq_with(F.unicast_cin, 1, F.unicast_en));
  g.groups = c.get(F.num_groups);
  if (g.depthwise && g.groups != 1) return c.fail_with(F.num_groups, F.unicast_en);
  if (g.depthwise) ANE_TRY(c.eq_with(F.cout, c.get(F.cin), F.cin));
  // Leading padding below the kernel size; the trailing padding the output
  // size implies between -(stride - 1) (an unused last row) and kernel - 1.
  if (g.px >= g.kw) return c.fail_with(F.px, F.kw);
  if (g.py >= g.kh) return c.fail_with(F.py, F.kh);
  const uint32_t win = c.get(F.win), hin = c.get(F.hin), wout = c.get(F.wout), hout = c.get(F.hout);
  if (wout == 0) return c.fail(F.wout);
  if (hout == 0) return c.fail(F.hout);
  const int64_t tx = trailing_pad(wout, g.sx, g.kw, win, g.px), ty = trailing_pad(hout, g.sy, g.kh, hin, g.py);
  if (tx < 1 - int64_t{g.sx} || tx >= int64_t{g.kw}) return c.fail_with(F.wout, F.win);
  if (ty < 1 - int64_t{g.sy} || ty >= int64_t{g.kh}) return c.fail_with(F.hout, F.hin);
  // Output channels per group go out in chunks of 16 planes of at most
  // 2^OCGSize (docs/convolution.md): the records show whole chunks only (or
  // one partial chunk below 16 channels), and OCGSize the next power of two
  // of Cout / 16 or the compiler's cap (16 or 32) below it; above it only in
  // the zero-skipping form, where a split layer's tasks keep the layer's
  // (check_conv_kernel has the layouts).
  if (!g.depthwise) {
    const uint32_t cout = p.ne.cout, width = 1u << p.ne.ocg;
    const uint32_t fill = cout > 16 ? std::bit_ceil(cout / 16) : 1;
    if ((cout > 16 && cout % 16 != 0) || (width > fill && !g.sparse) || (width < fill && width < 16))
      return c.fail_with(F.ocg, F.cout);
    // Grouped records hold exactly one chunk per group.
    if (g.groups > 1 && cout != 16 * width) return c.fail_with(F.num_groups, F.cout);
  }
  if (Status s = check_conv_kernel(conv_kernel_shape(p.ne)); !s) {
    std::string why = s.error().message;
    if (why.rfind("unsupported: ", 0) == 0) why.erase(0, 13);
    return unsupported(why, c.task());
  }
  const uint32_t groups = g.depthwise ? 1 : g.groups;
  in = {groups, p.ne.cin, hin, win};
  out = {groups, p.ne.cout, hout, wout};
  if (g.groups > 1 || g.depthwise || !g.pointwise()) p.op = "conv " + conv_name(g);
  return Ok{};
}

std::string conv_name(const ConvGeometry& g) {
  std::string s = fmt::format("{}x{}", g.kw, g.kh);
  if (g.sx != 1) s += fmt::format(" stride {}", g.sx);
  if (g.px || g.py) s += fmt::format(" pad {},{}", g.px, g.py);
  if (g.depthwise) s += " depthwise";
  else if (g.groups > 1) s += fmt::format(" groups {}", g.groups);
  return s;
}

}  // namespace ane::sim::detail
