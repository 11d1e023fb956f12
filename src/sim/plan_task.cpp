// Planning one task from its registers: which engine runs (Common.Cfg.TaskType
// with Header[8].ENE), where each operand comes from (tile DMA or L2, by
// L2.SourceCfg), where the result goes (L2.ResultCfg), and the geometry.
// The engine-specific checks are in plan_ne.cpp and plan_pe.cpp; the rules
// and their evidence are in docs/simulator.md.
#include <algorithm>
#include <bit>
#include <vector>

#include <fmt/format.h>

#include "fields.h"
#include "plan.h"

namespace ane::sim::detail {

Status Checker::eq(const FieldInfo* f, uint32_t want) const {
  const uint32_t v = get(f);
  if (v == want) return Ok{};
  return unsupported(*f, v, task_);
}

Status Checker::eq_with(const FieldInfo* f, uint32_t want, const FieldInfo* because) const {
  const uint32_t v = get(f);
  if (v == want) return Ok{};
  return unsupported_with(*f, v, *because, get(because), task_);
}

Status Checker::word_eq(const FieldInfo* f, uint32_t want, uint32_t ignore) const {
  const uint32_t w = word(f);
  if ((w & ~ignore) == (want & ~ignore)) return Ok{};
  for (const FieldInfo* g : RegisterDatabase::h13().fields_at(f->block, f->address)) {
    if ((g->mask() & ignore) == g->mask()) continue;
    if (g->extract(w) != g->extract(want)) return unsupported(*g, g->extract(w), task_);
  }
  return unsupported(register_value(*f, w), task_);
}

Error Checker::fail_with(const FieldInfo* f, const FieldInfo* g) const {
  return unsupported_with(*f, get(f), *g, get(g), task_);
}

Error Checker::unsupported_field(const FieldInfo* f, uint32_t v) const { return unsupported(*f, v, task_); }

namespace {

constexpr uint32_t kTensorFmt = 0x01002031;    // FmtMode 1, Truncate 3, MemFmt 2, Interleave 1 (section 3)
constexpr uint32_t kSrc2Fmt = 0x00002030;      // second-source format word of every PE task
constexpr uint32_t kDstZeroPadBits = 0x00300000;
constexpr uint32_t kViaDma = 2;                // L2 Source/ResultType: through tile DMA
// TaskTypes 4 and 6: layer_norm's normalization and its variance
// (docs/simulator.md, "layer_norm on H14").
constexpr uint32_t kTaskNe = 0, kTaskPeOne = 2, kTaskPeTwo = 3, kTaskPeNormalize = 4, kTaskPeReduce = 5,
                   kTaskPeReduceTwo = 6;

bool in_l2(uint32_t type) { return type == 0 || type == 3; }

// A write must not put two elements on one byte: the axes (W 2 bytes apart,
// H at the row stride, C at the plane stride, groups at the group stride;
// channels innermost swaps C and W), taken in increasing stride, must each
// step past everything the smaller ones span. Apple's reductions interleave
// groups between planes that way (reduce_probe_max_ax3: groups 0x40 apart,
// planes 0x100). With the slot bounds this keeps every tensor inside its
// memory and every scatter unambiguous.
Status check_layout(const Checker& c, const TensorDma& t, const FieldInfo* row, const FieldInfo* plane,
                    const FieldInfo* group) {
  const Dims& d = t.dims;
  struct Axis {
    uint64_t stride, extent;
    const FieldInfo* field;
  };
  std::vector<Axis> axes;
  if (t.channels_inner)
    axes = {{2, d.c, nullptr}, {t.plane, d.w, plane}, {t.row, d.h, row}, {t.group, d.g, group}};
  else
    axes = {{2, d.w, nullptr}, {t.row, d.h, row}, {t.plane, d.c, plane}, {t.group, d.g, group}};
  std::erase_if(axes, [](const Axis& a) { return a.extent <= 1; });
  std::stable_sort(axes.begin(), axes.end(), [](const Axis& x, const Axis& y) { return x.stride < y.stride; });
  uint64_t span = 2;
  for (const Axis& a : axes) {
    if (a.stride < span) return c.fail(a.field ? a.field : plane);
    span = (a.extent - 1) * a.stride + span;
  }
  return Ok{};
}

Status check_geometry(const Checker& c) {
  const Fields& F = fields();
  for (const FieldInfo* f : F.kbe_other) ANE_TRY(c.eq(f, 0));
  ANE_TRY(c.eq(F.in_fmt, 2));
  ANE_TRY(c.eq(F.out_fmt, 2));
  // ElemMultMode goes with the neural engine's product of channel groups
  // (MACCfg OpMode 2 without a kernel: H14 - H17 pow's last task), alone.
  const bool product = c.get(F.task_type) == 0 && c.get(F.mac_op) == 2 && c.get(F.mac_kernel_mode) == 1;
  ANE_TRY(c.eq(F.elem_mult, product ? 1 : 0));
  ANE_TRY(c.eq(F.din, 1));
  ANE_TRY(c.eq(F.dout, 1));
  ANE_TRY(c.eq(F.l2_input_relu, 0));
  for (const FieldInfo* f : {F.win, F.hin, F.cin, F.cout, F.num_groups})
    if (c.get(f) == 0) return c.fail(f);
  // Broadcast bits other than the named ones have no evidence (0x400 is
  // mil-hwx-compiler's channels-along-W output layout: refused).
  uint32_t named = 0;
  for (const FieldInfo* f : {F.bcast_src1_w, F.bcast_src1_h, F.bcast_src1_c, F.bcast_src2_w, F.bcast_src2_h,
                             F.bcast_src2_c, F.bcast_src1_chw, F.bcast_src2_chw, F.out_channels_w})
    named |= f->mask();
  if (const uint32_t w = c.word(F.bcast_src1_w); w & ~named)
    return unsupported(register_value(*F.bcast_src1_w, w), c.task());
  return Ok{};
}

// Tasks other than convolutions keep their size: no window.
Status check_no_window(const Checker& c) {
  const Fields& F = fields();
  ANE_TRY(c.eq(F.kw, 1));
  ANE_TRY(c.eq(F.kh, 1));
  ANE_TRY(c.eq(F.sx, 1));
  ANE_TRY(c.eq(F.sy, 1));
  ANE_TRY(c.eq(F.px, 0));
  ANE_TRY(c.eq(F.py, 0));
  ANE_TRY(c.eq(F.ox, 1));
  ANE_TRY(c.eq(F.oy, 1));
  ANE_TRY(c.eq_with(F.wout, c.get(F.win), F.win));
  ANE_TRY(c.eq_with(F.hout, c.get(F.hin), F.hin));
  return Ok{};
}

// Where one operand's registers are: the first operand reads through
// RBase0 and the TileDMASrc registers, the second through RBase1 and their
// Src2 copies (corpus sum, eiln atan/ceil/norm).
struct OperandFields {
  const char* unit;
  const char* what;  // in messages
  const FieldInfo *type, *enable, *slot, *base, *row, *plane, *group, *fmt_first, *l2_base;
  const FieldInfo *bcast_w, *bcast_h, *bcast_c, *bcast_chw;
  uint32_t fmt;                       // the format word every sample has
  const FieldInfo* in_fmt = nullptr;  // a channel format that must be fp16 too
};

const OperandFields& first_operand() {
  const Fields& F = fields();
  static const OperandFields f{"TileDMASrc",  "first",       F.src_type,     F.rbe0,         F.rbase0,
                               F.src_base,    F.src_row,     F.src_plane,    F.src_group,    F.src_fmt_first,
                               F.l2_src_base, F.bcast_src1_w, F.bcast_src1_h, F.bcast_src1_c, F.bcast_src1_chw,
                               kTensorFmt};
  return f;
}

const OperandFields& second_operand() {
  const Fields& F = fields();
  static const OperandFields f{"TileDMASrc2",  "second",      F.src2_type,    F.rbe1,         F.rbase1,
                               F.src2_base,    F.src2_row,    F.src2_plane,   F.src2_group,   F.src2_fmt_first,
                               F.l2_src2_base, F.bcast_src2_w, F.bcast_src2_h, F.bcast_src2_c, F.bcast_src2_chw, kSrc2Fmt,
                               F.src2_in_fmt};
  return f;
}

// An operand through tile DMA (type 2) or a result an earlier task left in
// L2 (type 0 or 3). The type decides, not the enable bit: eiln norm sets
// RBE0 on an L2 read.
Status plan_operand(const Checker& c, const Dims& dims, const OperandFields& f, Operand& op, bool dma_broadcast) {
  const Fields& F = fields();
  const uint32_t type = c.get(f.type);
  op.dims = dims;
  op.broadcast_w = c.get(f.bcast_w) != 0;
  op.broadcast_h = c.get(f.bcast_h) != 0;
  op.broadcast_c = c.get(f.bcast_c) != 0;
  op.channels_w = c.get(f.bcast_chw) != 0;
  // SourceType 1: through tile DMA, the staged tensor kept in L2 at
  // SourceBase for the next tasks (conv_probe_k3_c1024_n64_s16_st1_g1_bias0_valid:
  // task 1 reads it back at that address).
  const bool retain = type == 1 && f.l2_base == F.l2_src_base;
  if (type == kViaDma || retain) {
    // Channels along W through tile DMA: H15 - H18 read a tensor constant
    // straight from the constant section so, one value per channel 2 bytes
    // apart, the same at every row and column (H14 copies it into L2 first;
    // docs/simulator.md "Constants"). Elsewhere only results kept in L2 are
    // laid so.
    if (op.channels_w && (!dma_broadcast || retain || dims.c == 1)) return c.fail_with(f.bcast_chw, f.type);
    if (op.channels_w) op.broadcast_h = op.broadcast_w = true;
    ANE_TRY(c.eq_with(f.enable, 1, f.type));
    ANE_TRY(c.eq_with(F.src_en, 1, f.type));
    if (f.in_fmt) ANE_TRY(c.eq(f.in_fmt, 2));
    ANE_TRY(c.word_eq(f.fmt_first, f.fmt));
    // A repeat along an axis of extent 1 is none (softmax over the C of
    // [1,1,1,W] on H14 sets Src2C on its tile-DMA source of one channel).
    if (dims.w == 1) op.broadcast_w = false;
    if (dims.h == 1) op.broadcast_h = false;
    if (dims.c == 1) op.broadcast_c = false;
    // H16 reads a broadcast operand through tile DMA at its own size and
    // repeats it (dma_broadcast); H13 only repeats results kept in L2.
    if (op.broadcasts() && (!dma_broadcast || retain))
      return unsupported(register_value(*F.bcast_src1_w, c.word(F.bcast_src1_w)) + " with a tile-DMA " + f.what +
                             " source",
                         c.task());
    op.from = Operand::From::Dma;
    const Dims read = op.stored();
    op.dma = {f.unit, f.slot, static_cast<int>(c.get(f.slot)), uint64_t{c.get(f.base)} << 6,
              uint64_t{c.get(f.row)} << 6, uint64_t{c.get(f.plane)} << 6, uint64_t{c.get(f.group)} << 6, read};
    if (op.channels_w) op.dma.plane = 2;  // [1, C, 1, 1], channel c at 2c
    // A read may step planes by less than a row: Apple's reductions over H
    // read C and H swapped that way. Its rows must still hold W elements.
    if (read.h > 1 && op.dma.row < 2 * uint64_t{read.w}) return c.fail(f.row);
    if (retain) {
      op.retain_l2 = true;
      op.l2 = uint64_t{c.get(f.l2_base)} << 4;
      op.l2_channel = uint64_t{c.get(F.l2_src_channel_stride)} << 4;
      op.l2_row = uint64_t{c.get(F.l2_src_row_stride)} << 4;
      op.l2_group = c.word(F.l2_src_group_stride);
    }
    return Ok{};
  }
  if (!in_l2(type)) return c.fail(f.type);
  op.from = Operand::From::L2;
  op.l2 = uint64_t{c.get(f.l2_base)} << 4;
  if (f.l2_base == F.l2_src_base) {
    op.l2_channel = uint64_t{c.get(F.l2_src_channel_stride)} << 4;
    op.l2_row = uint64_t{c.get(F.l2_src_row_stride)} << 4;
    op.l2_group = c.word(F.l2_src_group_stride);
  } else {
    // The second source has no L2 group stride in H13's table: over several
    // groups it reads one group's tensor for each (H14's batch broadcasts:
    // a [1,C,1,1] operand repeated over [N,C,H,W]).
    op.broadcast_g = dims.g > 1;
    // Its own strides, where it reads a result laid otherwise (L2Store::get:
    // a repeated operand that groups the result otherwise, one read by rows
    // from a result laid channels innermost); H13's samples leave them 0.
    op.l2_channel = uint64_t{c.get(F.l2_src2_channel_stride)} << 4;
    op.l2_row = uint64_t{c.get(F.l2_src2_row_stride)} << 4;
  }
  return Ok{};
}

// TaskType 4 reads two values per row of its second source, kept in L2 by
// the two tasks before it: b (the mean) at Source2Base and c (1 / sqrt of
// the variance) one Source2RowStride further, each repeated along W (every
// record: one value per row, no Src2W bit) and as the broadcast bits say.
// One channel reads the same laid along W or not (Src2ChannelsW).
Status plan_normalize_operands(const Checker& c, TaskPlan& p) {
  const Fields& F = fields();
  Operand& b = p.b;
  // Through tile DMA (H15 - H18's tensor constants): b and c are two rows of
  // the constant section, channels along W, c one Src2RowStride after b.
  if (b.from == Operand::From::Dma) {
    if (!b.channels_w || b.dma.row == 0) return c.fail_with(F.src2_type, F.task_type);
    p.c = b;
    p.c.dma.base += b.dma.row;
    return Ok{};
  }
  if (b.from != Operand::From::L2 || b.broadcast_w) return c.fail_with(F.src2_type, F.task_type);
  b.broadcast_w = true;
  // Src2ChannelsW: b and c are the reductions' results laid with their
  // channels along W, one value per channel (layer_norm over the W of
  // [1, 64, 256]: the mean at L2 0x0 and 1 / sqrt of the variance at 0x80,
  // each 64 values); one channel reads the same either way.
  if (b.channels_w && b.stored().c == 1) b.channels_w = false;
  // Laid so, b and c hold one value per channel and nothing per row: they
  // repeat along H too (a tensor constant's add over [1,64,8,8], whose copy
  // in L2 is two rows of 64 values; docs/simulator.md "Constants").
  if (b.channels_w) b.broadcast_h = true;
  const uint64_t row = uint64_t{c.get(F.l2_src2_row_stride)} << 4;
  if (row == 0) return c.fail_with(F.l2_src2_row_stride, F.task_type);
  p.c = b;
  p.c.l2 = b.l2 + row;
  b.l2_row = p.c.l2_row = 0;
  return Ok{};
}

// The result: out through tile DMA (ResultType 2, to WBase) or kept in L2
// (ResultType 0 or 3, TileDMADst off; eiln norm sets WBE there too).
Status plan_destination(const Checker& c, const Dims& dims, bool channels_inner, Destination& out) {
  const Fields& F = fields();
  const uint32_t type = c.get(F.result_type);
  out.dims = dims;
  // ResultType 1 goes out through tile DMA too, in every record that sets it
  // (transposed reduction results: OutChannelsW).
  if (type == kViaDma || (type == 1 && channels_inner)) {
    ANE_TRY(c.eq_with(F.wbe, 1, F.result_type));
    ANE_TRY(c.eq_with(F.dst_en, 1, F.result_type));
    ANE_TRY(c.word_eq(F.dst_fmt_first, kTensorFmt, kDstZeroPadBits));
    out.to = Destination::To::Dma;
    out.dma = {"TileDMADst", F.wbase, static_cast<int>(c.get(F.wbase)), uint64_t{c.get(F.dst_base)} << 6,
               uint64_t{c.get(F.dst_row)} << 6, uint64_t{c.get(F.dst_plane)} << 6,
               uint64_t{c.get(F.dst_group)} << 6, dims, channels_inner};
    return check_layout(c, out.dma, F.dst_row, F.dst_plane, F.dst_group);
  }
  if (!in_l2(type)) return c.fail(F.result_type);
  ANE_TRY(c.eq_with(F.dst_en, 0, F.result_type));
  out.to = Destination::To::L2;
  out.l2 = uint64_t{c.get(F.l2_result_base)} << 4;
  out.l2_channel = uint64_t{c.get(F.l2_res_channel_stride)} << 4;
  out.l2_row = uint64_t{c.get(F.l2_res_row_stride)} << 4;
  out.l2_group = c.word(F.l2_res_group_stride);
  out.channels_inner = channels_inner;
  return Ok{};
}

void collect_traced(const Checker& c, TaskPlan& p) {
  const Fields& F = fields();
  auto add = [&](const FieldInfo* f) {
    if (const uint32_t v = c.get(f)) p.traced.push_back(field_value(*f, v));
  };
  add(F.ene);
  if (const uint32_t w = c.word(F.common_cfg)) p.traced.push_back(register_value(*F.common_cfg, w));
  add(F.dpe);
  add(F.l2_padding);
  if (p.out.to == Destination::To::Dma) {
    add(F.dst_zero_first);
    add(F.dst_zero_last);
  }
  if (p.engine == Engine::Ne) {
    add(F.binary_point);
    if (p.ne.nonlinear != 2) add(F.mac_bit20);
  } else if (const uint32_t k = c.word(F.kernel_cfg)) {
    p.traced.push_back(register_value(*F.kernel_cfg, k));  // NE words in a PE task
  }
}

}  // namespace

Expected<TaskPlan> plan_task(const RegisterImage& regs, const Options& opts, uint32_t task) {
  // The plan reads H13 fields; another generation's words sit elsewhere.
  if (regs.generation() != Generation::H13) return make_error(not_simulated_message(regs.generation()));
  const Fields& F = fields();
  const Checker c(regs, task);
  ANE_TRY(check_geometry(c));

  TaskPlan p;
  // Section 5, widened by the eiln kernels: TaskType 0 with neural-engine
  // cores is an NE task; without them, TaskType 2/3 is an element-wise PE
  // task with one/two operands and 5 a PE reduction.
  const uint32_t type = c.get(F.task_type), ene = c.get(F.ene);
  if (type == kTaskNe && ene > 0) {
    p.engine = Engine::Ne;
  } else if ((type == kTaskPeOne || type == kTaskPeTwo || type == kTaskPeNormalize) && ene == 0) {
    p.engine = Engine::Pe;
  } else if ((type == kTaskPeReduce || type == kTaskPeReduceTwo) && ene == 0) {
    p.engine = Engine::PeReduce;
  } else {
    return c.fail_with(F.task_type, F.ene);
  }
  if (p.engine == Engine::Ne) {
    if (c.get(F.rbe1)) return c.fail_with(F.rbe1, F.task_type);  // no NE task reads a second source
    ANE_TRY(plan_ne(c, opts, p));
  } else if (p.engine == Engine::Pe) {
    ANE_TRY(plan_pe(c, p));
  } else {
    ANE_TRY(plan_pe_reduce(c, p));
  }

  Dims in, out;
  if (p.engine == Engine::Ne && p.ne.mac == NePlan::Mac::Conv) {
    // H14's zero-skipping kernels put the mask bytes of 16 slots before
    // their weights, H13's each mask byte before its own (docs/convolution.md).
    p.ne.conv.mask_group_slots = opts.generation == Generation::H14 ? 16 : 8;
    ANE_TRY(plan_conv_window(c, p, in, out));
  } else {
    ANE_TRY(check_no_window(c));
    const uint32_t groups = c.get(F.num_groups);
    in = {groups, c.get(F.cin), c.get(F.hin), c.get(F.win)};
    out = {groups, c.get(F.cout), c.get(F.hout), c.get(F.wout)};
    if (p.engine == Engine::PeReduce) out.h = out.w = 1;  // one value per channel: the H x W plane is reduced
    if (p.engine == Engine::Ne && p.ne.over_channel_groups()) {
      if (uint64_t{out.c} * p.ne.unicast_cin != in.c) return c.fail_with(F.unicast_cin, F.cin);
    } else {
      ANE_TRY(c.eq_with(F.cout, in.c, F.cin));
    }
  }
  // H15 - H18's broadcast records read the repeated operand through tile DMA
  // (env_bcast_*: Src2C with the second source's plane stride unwritten, Src2W
  // and Src2H with its row stride unwritten, one task each); H13 and H14 stage
  // it in L2 in a task of its own.
  const Generation g = opts.generation;
  const bool dma_broadcast = g == Generation::H15 || g == Generation::H16 || g == Generation::H17 || g == Generation::H18;
  ANE_TRY(plan_operand(c, in, first_operand(), p.a, dma_broadcast));
  if (p.engine == Engine::Pe || (p.engine == Engine::PeReduce && p.pe.second != 0)) {
    if (p.pe.second != 0) ANE_TRY(plan_operand(c, in, second_operand(), p.b, dma_broadcast));
    else if (c.get(F.rbe1)) return c.fail_with(F.rbe1, F.pe_sec_src);
  }
  if (p.pe.times_c) ANE_TRY(plan_normalize_operands(c, p));
  // Transposed results: ChannelsInner on a neural-engine pass, OutChannelsW
  // on a reduction (the only tasks Apple's records set them on).
  const bool inner_cfg = c.get(F.channels_inner) != 0, inner_bcast = c.get(F.out_channels_w) != 0;
  // A matmul is a 1x1 convolution over one row of vectors a pass laid
  // channels innermost, its result written so too (H14's matmul_* and h14mv_*
  // records); no other convolution has shown it.
  const bool matmul = p.engine == Engine::Ne && p.ne.mac == NePlan::Mac::Conv && c.get(F.kw) == 1 &&
                      c.get(F.kh) == 1 && out.h == 1;
  const bool ne_pass = p.engine == Engine::Ne && p.ne.mac != NePlan::Mac::Conv;
  if (inner_cfg && !ne_pass && !matmul) return c.fail_with(F.channels_inner, F.task_type);
  // An element-wise result of one position per channel laid along W is the
  // same values as [1,1,1,C] (softmax over the W of [1,C,1,1]: its
  // subtraction writes x - max so, and the exp2 table reads them as one row).
  const bool one_position = out.h == 1 && out.w == 1;
  if (inner_bcast && p.engine != Engine::PeReduce && !(p.engine == Engine::Pe && one_position))
    return c.fail_with(F.out_channels_w, F.task_type);
  ANE_TRY(plan_destination(c, out, inner_cfg || inner_bcast, p.out));
  collect_traced(c, p);
  return p;
}

}  // namespace ane::sim::detail
