// The supported envelope (section 11.1), the assumptions that widen it
// (section 11.2) and task classification (section 5). Only register values
// are read here; memory and lanes are checked by the DMA units.
#include <bit>

#include <fmt/format.h>

#include "fields.h"
#include "plan.h"

namespace ane::sim::detail {

namespace {

constexpr uint32_t kTensorFmt = 0x01002031;    // FmtMode 1, Truncate 3, MemFmt 2, Interleave 1 (section 3)
constexpr uint32_t kSrc2Fmt = 0x00002030;      // second-source format word of every PE task
constexpr uint32_t kDstZeroPadBits = 0x00300000;
constexpr uint32_t kPeCfg = 0x00080000;        // every PE file, OpMode aside
constexpr uint32_t kPeUnitScale = 0x3c000000;  // fp16 1.0 in [31:16]
constexpr uint32_t kPeFinalScale = 0x3f800000; // fp32 1.0

class Checker {
 public:
  Checker(const RegisterImage& r, uint32_t task) : r_(r), task_(task) {}

  uint32_t get(const FieldInfo* f) const { return r_.get(*f); }
  uint32_t word(const FieldInfo* f) const { return r_.word(f->address); }

  // Field must hold `want`.
  Status eq(const FieldInfo* f, uint32_t want) const {
    const uint32_t v = get(f);
    if (v == want) return Ok{};
    return unsupported(*f, v, task_);
  }
  // Field must hold `want`, reported together with the field that requires it.
  Status eq_with(const FieldInfo* f, uint32_t want, const FieldInfo* because) const {
    const uint32_t v = get(f);
    if (v == want) return Ok{};
    return unsupported_with(*f, v, *because, get(because), task_);
  }
  // The whole register of `f` must equal `want` outside `ignore`; names the
  // first field that differs, or the register when only unnamed bits do.
  Status word_eq(const FieldInfo* f, uint32_t want, uint32_t ignore = 0) const {
    const uint32_t w = word(f);
    if ((w & ~ignore) == (want & ~ignore)) return Ok{};
    for (const FieldInfo* g : RegisterDatabase::h13().fields_at(f->block, f->address)) {
      if ((g->mask() & ignore) == g->mask()) continue;
      if (g->extract(w) != g->extract(want)) return unsupported(*g, g->extract(w), task_);
    }
    return unsupported(register_value(*f, w), task_);
  }
  Error fail(const FieldInfo* f) const { return unsupported(*f, get(f), task_); }
  Error fail_with(const FieldInfo* f, const FieldInfo* g) const {
    return unsupported_with(*f, get(f), *g, get(g), task_);
  }
  uint32_t task() const { return task_; }

 private:
  const RegisterImage& r_;
  uint32_t task_;
};

#define ANE_TRY(expr)                   \
  do {                                  \
    if (Status s_ = (expr); !s_) return s_.error(); \
  } while (0)

bool fp16_finite(uint16_t h) { return (h & 0x7c00u) != 0x7c00u; }

// Non-overlapping layout: rows hold W elements, planes H rows. Together with
// the slot bounds this keeps every tensor's element count below the slot size.
Status check_layout(const Checker& c, const TensorDma& t, const FieldInfo* row, const FieldInfo* plane) {
  if (t.h > 1 && t.row < 2 * uint64_t{t.w}) return c.fail(row);
  if (t.c > 1 && t.plane < (uint64_t{t.h} - 1) * t.row + 2 * uint64_t{t.w}) return c.fail(plane);
  return Ok{};
}

Status check_common(const Checker& c) {
  const Fields& F = fields();
  for (const FieldInfo* f : F.kbe_other) ANE_TRY(c.eq(f, 0));
  ANE_TRY(c.eq(F.in_fmt, 2));
  ANE_TRY(c.eq(F.out_fmt, 2));
  ANE_TRY(c.eq(F.kw, 1));
  ANE_TRY(c.eq(F.kh, 1));
  ANE_TRY(c.eq(F.sx, 1));
  ANE_TRY(c.eq(F.sy, 1));
  ANE_TRY(c.eq(F.px, 0));
  ANE_TRY(c.eq(F.py, 0));
  ANE_TRY(c.eq(F.ox, 1));
  ANE_TRY(c.eq(F.oy, 1));
  ANE_TRY(c.eq(F.num_groups, 1));
  ANE_TRY(c.eq(F.elem_mult, 0));
  ANE_TRY(c.eq(F.din, 1));
  ANE_TRY(c.eq(F.dout, 1));
  for (const FieldInfo* f : {F.win, F.hin, F.cin, F.cout})
    if (c.get(f) == 0) return c.fail(f);
  ANE_TRY(c.eq_with(F.wout, c.get(F.win), F.win));
  ANE_TRY(c.eq_with(F.hout, c.get(F.hin), F.hin));
  ANE_TRY(c.eq(F.src_en, 1));
  ANE_TRY(c.eq(F.dst_en, 1));
  ANE_TRY(c.word_eq(F.src_fmt_first, kTensorFmt));
  ANE_TRY(c.word_eq(F.dst_fmt_first, kTensorFmt, kDstZeroPadBits));
  ANE_TRY(c.eq(F.rbe0, 1));
  ANE_TRY(c.eq(F.wbe, 1));
  return Ok{};
}

Status plan_pe(const Checker& c, const Options& opts, TaskPlan& p) {
  const Fields& F = fields();
  ANE_TRY(c.eq_with(F.cout, p.cin, F.cin));
  ANE_TRY(c.eq(F.src2_in_fmt, 2));
  ANE_TRY(c.word_eq(F.src2_fmt_first, kSrc2Fmt));
  ANE_TRY(c.eq(F.src2_base, 0));
  ANE_TRY(c.word_eq(F.pe_op, kPeCfg, F.pe_op->mask()));
  p.pe_op = c.get(F.pe_op);
  if (p.pe_op > 3 || (p.pe_op >= 2 && !opts.assume.pe_minmax)) return c.fail(F.pe_op);
  if (p.pe_op >= 2) p.notes.push_back("A1 pe-minmax");
  ANE_TRY(c.word_eq(F.pe_bias_scale, kPeUnitScale));
  ANE_TRY(c.word_eq(F.pe_pre_scale, kPeUnitScale));
  ANE_TRY(c.word_eq(F.pe_final_scale, kPeFinalScale));
  static const char* const kOps[] = {"add", "mul", "max", "min"};
  p.engine = Engine::Pe;
  p.op = kOps[p.pe_op];
  p.src2 = p.src;
  p.src2.unit = "TileDMASrc2";
  p.src2.slot_field = F.rbase1;
  p.src2.slot = static_cast<int>(c.get(F.rbase1));
  p.src2.base = 0;
  p.src2.row = uint64_t{c.get(F.src2_row)} << 6;
  p.src2.plane = uint64_t{c.get(F.src2_plane)} << 6;
  return check_layout(c, p.src2, F.src2_row, F.src2_plane);
}

// OCGSize the compiler derives from Cout (section 6.3), or -1 when none fits.
int expected_ocg(uint32_t cout) {
  if (cout <= 16) return 0;
  if (cout % 16 != 0 || !std::has_single_bit(cout / 16)) return -1;
  const int ocg = std::countr_zero(cout / 16);
  return ocg <= 7 ? ocg : -1;
}

Status plan_ne(const Checker& c, const Options& opts, TaskPlan& p) {
  const Fields& F = fields();
  const uint32_t op = c.get(F.mac_op), kmode = c.get(F.mac_kernel_mode);
  if (op != 0 && op != 4) return c.fail(F.mac_op);
  if (kmode != (op == 4 ? 1u : 0u)) return c.fail_with(F.mac_kernel_mode, F.mac_op);
  ANE_TRY(c.eq(F.matrix_bias, 0));
  ANE_TRY(c.eq(F.post_scale_mode, 0));
  p.nonlinear = c.get(F.nonlinear);
  if (p.nonlinear > 2) return c.fail(F.nonlinear);
  if (p.nonlinear == 2) ANE_TRY(c.eq_with(F.mac_bit20, 1, F.nonlinear));
  ANE_TRY(c.eq(F.mv_bias, 0));
  ANE_TRY(c.eq(F.acc_bias, 0));
  ANE_TRY(c.eq(F.acc_bias_shift, 0));
  ANE_TRY(c.eq(F.post_shift, 0));
  p.post_scale = static_cast<uint16_t>(c.get(F.post_scale));
  if (!fp16_finite(p.post_scale)) return c.fail(F.post_scale);
  p.bias = c.get(F.bias_mode) != 0;
  p.ocg = c.get(F.ocg);

  const bool conv = op == 0;
  if (conv) {
    p.engine = Engine::NeConv;
    p.op = "conv";
    ANE_TRY(c.eq(F.kernel_fmt, 2));
    ANE_TRY(c.eq(F.palettized, 0));
    ANE_TRY(c.eq(F.sparse, 0));
    ANE_TRY(c.eq(F.group_reuse, 0));
    const int ocg = expected_ocg(p.cout);
    if (ocg < 0 || p.ocg != static_cast<uint32_t>(ocg)) return c.fail_with(F.ocg, F.cout);
    if (p.bias && p.ocg != 0) return c.fail_with(F.bias_mode, F.ocg);
  } else {
    p.engine = Engine::NePass;
    p.op = p.nonlinear == 0 ? "pass" : p.nonlinear == 1 ? "relu" : "sigmoid";
    ANE_TRY(c.eq_with(F.cout, p.cin, F.cin));
    ANE_TRY(c.eq(F.ocg, 0));
    if (p.bias) return c.fail_with(F.bias_mode, F.mac_op);  // no lanes to hold a bias
  }

  // Post stage: only orders that every model agrees on, unless A3.
  bool needs_a3 = false;
  Error why = make_error("");
  const bool unit_scale = p.post_scale == TaskPlan::kFp16OneBits;
  if (conv && p.nonlinear != 0) {
    needs_a3 = true;
    why = c.fail_with(F.nonlinear, F.mac_op);
  } else if (!unit_scale && p.bias) {
    needs_a3 = true;
    why = c.fail_with(F.post_scale, F.bias_mode);
  } else if (!unit_scale && p.nonlinear == 2) {
    needs_a3 = true;
    why = c.fail_with(F.post_scale, F.nonlinear);
  } else if (p.nonlinear == 1 && (p.post_scale & 0x8000u) && (p.post_scale & 0x7fffu)) {
    needs_a3 = true;
    why = c.fail_with(F.post_scale, F.nonlinear);
  }
  if (needs_a3) {
    if (!opts.assume.post_chain) return why;
    p.notes.push_back("A3 post-chain");
  }
  if (conv || p.nonlinear == 2) {
    if (c.get(F.kbe0) != 1) return c.fail(F.kbe0);
    p.kernel_slot = static_cast<int>(c.get(F.kbase0));
  }
  return Ok{};
}

void collect_traced(const Checker& c, TaskPlan& p) {
  const Fields& F = fields();
  auto add = [&](const FieldInfo* f) {
    if (const uint32_t v = c.get(f)) p.traced.push_back(field_value(*f, v));
  };
  add(F.ene);
  if (const uint32_t w = c.word(F.common_cfg)) p.traced.push_back(register_value(*F.common_cfg, w));
  add(F.dst_zero_first);
  add(F.dst_zero_last);
  if (p.engine != Engine::Pe) {
    add(F.binary_point);
    if (p.nonlinear != 2) add(F.mac_bit20);
  }
}

}  // namespace

Expected<TaskPlan> plan_task(const RegisterImage& regs, const Options& opts, uint32_t task) {
  const Fields& F = fields();
  const Checker c(regs, task);
  ANE_TRY(check_common(c));

  TaskPlan p;
  p.cin = c.get(F.cin);
  p.cout = c.get(F.cout);
  const uint32_t w = c.get(F.win), h = c.get(F.hin);
  p.src = {"TileDMASrc", F.rbase0, static_cast<int>(c.get(F.rbase0)), uint64_t{c.get(F.src_base)} << 6,
           uint64_t{c.get(F.src_row)} << 6, uint64_t{c.get(F.src_plane)} << 6, p.cin, h, w};
  p.dst = {"TileDMADst", F.wbase, static_cast<int>(c.get(F.wbase)), uint64_t{c.get(F.dst_base)} << 6,
           uint64_t{c.get(F.dst_row)} << 6, uint64_t{c.get(F.dst_plane)} << 6, p.cout, h, w};
  ANE_TRY(check_layout(c, p.src, F.src_row, F.src_plane));
  ANE_TRY(check_layout(c, p.dst, F.dst_row, F.dst_plane));

  // Section 5: two sources and a PE.Cfg make a planar-engine task, one source
  // and no PE.Cfg a neural-engine task; nothing public shows the mixtures.
  const bool two_sources = c.get(F.rbe1) != 0;
  const uint32_t pe_cfg = c.word(F.pe_op);
  if (two_sources && pe_cfg == 0)
    return unsupported(field_value(*F.rbe1, 1) + " with " + register_value(*F.pe_op, 0), task);
  if (!two_sources && pe_cfg != 0)
    return unsupported(register_value(*F.pe_op, pe_cfg) + " with " + field_value(*F.rbe1, 0), task);
  ANE_TRY(two_sources ? plan_pe(c, opts, p) : plan_ne(c, opts, p));
  collect_traced(c, p);
  return p;
}

}  // namespace ane::sim::detail
