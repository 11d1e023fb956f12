// Planar-engine tasks: element-wise y = Scale * op(PreScale * a, +-b) + Bias
// (|y| with Cond), and reductions along W. Evidence for each field:
// docs/simulator.md ("Planar engine").
#include "fields.h"
#include "plan.h"

namespace ane::sim::detail {

namespace {

constexpr uint32_t kFp32One = 0x3f800000;
constexpr uint16_t kFp16One = 0x3c00;
constexpr uint32_t kUnitScale = 0x3c000000;  // fp16 1.0 in [31:16], 0 in [15:0]

// Every PE.Cfg bit the planner understands; anything else is refused.
Status check_cfg_bits(const Checker& c) {
  const Fields& F = fields();
  uint32_t known = 0;
  for (const FieldInfo* f :
       {F.pe_pool, F.pe_op, F.pe_relu, F.pe_cond, F.pe_first_src, F.pe_reciprocal, F.pe_rsqrt, F.pe_sec_src})
    known |= f->mask();
  const uint32_t w = c.word(F.pe_op);
  if (w & ~known) return unsupported(register_value(*F.pe_op, w), c.task());
  ANE_TRY(c.eq(F.pe_relu, 0));
  // FirstSrc is set only with TaskType 6 (layer_norm's variance, 0x92010).
  if (c.get(F.task_type) != 6) ANE_TRY(c.eq(F.pe_first_src, 0));
  return Ok{};
}

Status read_scales(const Checker& c, PePlan& pe) {
  const Fields& F = fields();
  pe.pre_scale = static_cast<uint16_t>(c.get(F.pe_pre_scale));
  pe.scale = static_cast<uint16_t>(c.get(F.pe_scale));
  pe.bias = static_cast<uint16_t>(c.get(F.pe_bias));
  pe.final_scale = c.get(F.pe_final_scale);
  for (const FieldInfo* f : {F.pe_pre_scale, F.pe_scale, F.pe_bias})
    if (!fp16_finite(static_cast<uint16_t>(c.get(f)))) return c.fail(f);
  if ((pe.final_scale & 0x7f800000u) == 0x7f800000u) return c.fail(F.pe_final_scale);
  return Ok{};
}

}  // namespace

Status plan_pe(const Checker& c, TaskPlan& p) {
  const Fields& F = fields();
  PePlan& pe = p.pe;
  ANE_TRY(check_cfg_bits(c));
  ANE_TRY(c.eq(F.pe_pool, 0));
  ANE_TRY(c.eq(F.pe_reciprocal, 0));
  ANE_TRY(c.eq(F.pe_rsqrt, 0));
  ANE_TRY(c.eq(F.pe_epsilon, 0));
  ANE_TRY(read_scales(c, pe));
  pe.op = c.get(F.pe_op);
  pe.second = c.get(F.pe_sec_src);
  pe.abs = c.get(F.pe_cond) != 0;
  // TaskType 4: (a + b) * c or (a - b) * c, the forms records show with
  // unit scales: layer_norm's (x - mean) * rstd (PE.Cfg 0xc0000, SecSrc 3)
  // and a tensor constant's add or multiply (0x80000, SecSrc 2: b and c two
  // rows of the constant section, docs/simulator.md "Constants").
  pe.times_c = c.get(F.task_type) == 4;
  const bool two = c.get(F.task_type) == 3 || pe.times_c;
  if (pe.second == 1 || (two != (pe.second != 0))) return c.fail_with(F.pe_sec_src, F.task_type);
  if (pe.times_c && (pe.second < 2 || c.get(F.pe_op) != 0 || pe.abs || pe.pre_scale != kFp16One ||
                     pe.scale != kFp16One || pe.bias != 0))
    return c.fail_with(F.pe_op, F.task_type);
  if (pe.op > 3) return c.fail(F.pe_op);
  // One operand and a - b are seen only with OpMode add.
  if (pe.second != 2 && pe.op != 0) return c.fail_with(F.pe_op, F.pe_sec_src);
  // FinalScale multiplies only reductions in every sample.
  if (pe.final_scale != kFp32One) return c.fail(F.pe_final_scale);
  // |y| is seen only with unit scales and no bias.
  if (pe.abs && (pe.pre_scale != kFp16One || pe.scale != kFp16One || pe.bias != 0))
    return c.fail_with(F.pe_cond, F.pe_scale);
  static const char* const kOps[] = {"add", "mul", "max", "min"};
  p.op = pe.second == 0 ? (pe.abs ? "abs" : "affine") : pe.second == 3 ? "sub" : kOps[pe.op];
  if (pe.times_c) p.op = "normalize";
  return Ok{};
}

Status plan_pe_reduce(const Checker& c, TaskPlan& p) {
  const Fields& F = fields();
  PePlan& pe = p.pe;
  ANE_TRY(check_cfg_bits(c));
  // TaskType 6 reduces (a - b)^2, b the first source (the mean, repeated)
  // and a the second: every record writes PE.Cfg 0x92010 there (OpMode 4,
  // RSqrt, FirstSrc, SecSrc 2), the variance of layer_norm.
  const bool two = c.get(F.task_type) == 6;
  if (two) {
    ANE_TRY(c.word_eq(F.pe_op, 0x92010));
    pe.second = 2;
  } else {
    ANE_TRY(c.eq(F.pe_sec_src, 0));
    if (c.get(F.rbe1)) return c.fail_with(F.rbe1, F.task_type);
  }
  ANE_TRY(c.eq(F.pe_cond, 0));
  ANE_TRY(read_scales(c, pe));
  const uint32_t pool = c.get(F.pe_pool);
  if (pool == 0)
    pe.reduce = PePlan::Reduce::Sum;
  else if (pool == 2)
    pe.reduce = PePlan::Reduce::Max;
  else
    return c.fail(F.pe_pool);
  pe.reciprocal = c.get(F.pe_reciprocal) != 0;
  // The sum of squares (OpMode 4) with RSqrt and epsilon: layer_norm's
  // 1 / sqrt(mean((x - mean)^2) + epsilon); OpMode 0 otherwise.
  pe.rsqrt = c.get(F.pe_rsqrt) != 0;
  pe.square = c.get(F.pe_op) == 4;
  pe.epsilon = static_cast<uint16_t>(c.get(F.pe_epsilon));
  if (c.get(F.pe_op) != 0 && !(pe.square && pe.rsqrt && pe.reduce == PePlan::Reduce::Sum && !pe.reciprocal))
    return c.fail_with(F.pe_op, F.pe_rsqrt);
  if (pe.rsqrt != pe.square) return c.fail_with(F.pe_rsqrt, F.pe_op);
  if (!pe.rsqrt) ANE_TRY(c.eq(F.pe_epsilon, 0));
  if (!fp16_finite(pe.epsilon) || (pe.epsilon & 0x8000)) return c.fail(F.pe_epsilon);
  // Every reduction sample has unit element scales.
  ANE_TRY(c.word_eq(F.pe_scale, kUnitScale));
  ANE_TRY(c.eq(F.pe_pre_scale, 0x3c00));
  if (pe.reciprocal && pe.final_scale != kFp32One) return c.fail_with(F.pe_final_scale, F.pe_reciprocal);
  if (pe.reduce == PePlan::Reduce::Max && pe.final_scale != kFp32One) return c.fail_with(F.pe_final_scale, F.pe_pool);
  p.op = pe.reduce == PePlan::Reduce::Max ? "reduce-max" : pe.final_scale != kFp32One ? "reduce-mean" : "reduce-sum";
  if (pe.reciprocal) p.op += "-reciprocal";
  if (pe.rsqrt) p.op = two ? "reduce-mean-square-difference-rsqrt" : "reduce-mean-square-rsqrt";
  return Ok{};
}

}  // namespace ane::sim::detail
