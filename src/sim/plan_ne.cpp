// Neural-engine tasks: the MAC mode, the post stage and the kernel lanes
// they need. Evidence for each rule: docs/simulator.md ("Neural engine").
#include <bit>

#include "fields.h"
#include "plan.h"

namespace ane::sim::detail {

namespace {

// OCGSize the compiler derives from Cout (section 6.3), or -1 when none fits.
int expected_ocg(uint32_t cout) {
  if (cout <= 16) return 0;
  if (cout % 16 != 0 || !std::has_single_bit(cout / 16)) return -1;
  const int ocg = std::countr_zero(cout / 16);
  return ocg <= 7 ? ocg : -1;
}

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
  else if (op != 0 && op != 4)
    return c.fail(F.mac_op);
  else
    return c.fail_with(F.mac_kernel_mode, F.mac_op);
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
    ANE_TRY(c.eq(F.sparse, 0));
    ANE_TRY(c.eq(F.group_reuse, 0));
    const int ocg = expected_ocg(ne.cout);
    if (ocg < 0 || ne.ocg != static_cast<uint32_t>(ocg)) return c.fail_with(F.ocg, F.cout);
    if (ne.bias && ne.ocg != 0) return c.fail_with(F.bias_mode, F.ocg);
  } else {
    p.op = ne.nonlinear == 0 ? "pass" : ne.nonlinear == 1 ? "relu" : "table";
    ANE_TRY(c.eq(F.ocg, 0));
    if (ne.bias) return c.fail_with(F.bias_mode, F.mac_op);  // no lanes to hold a bias
  }

  // Post stage: MAC -> bias -> x PostScale -> nonlinearity. The eiln exp
  // kernel scales by log2(e) before its exp2 table, which fixes PostScale
  // before the table; the other orders have no evidence (A3).
  bool needs_a3 = false;
  Error why = make_error("");
  const bool unit_scale = ne.post_scale == 0x3c00;
  if (conv && ne.nonlinear != 0) {
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

}  // namespace ane::sim::detail
