// Network -> Plan: an element-wise op with a tensor constant of one value
// per channel (MIL's add, sub, mul, maximum and minimum of a [1,C,H,W]
// tensor and a weight-blob constant [1,C,1,1]; real_div by a constant, as mul
// by its reciprocal), as Apple's compiler writes it for H13 on 1x1 planes
// (records binary_{add,sub,mul,maximum,minimum}_c{64,512}_constant_blob,
// binary_real_div_c64_constant_scalar; docs/mil.md, "Tensor constants").
#include <fmt/format.h>

#include "ane/fp16.h"
#include "planner.h"

namespace ane::compiler {

namespace {

// The section the planar engine reads as rows of C values: row 0 is its
// second operand b, row 1 (Add, Sub, Mul, Div) the factor c of (x + b) * c.
// All eleven H13 records hash so (Div: `v` holds the reciprocals).
Expected<std::vector<uint16_t>> constant_rows(const std::string& op, const std::vector<uint16_t>& v) {
  constexpr uint16_t kOne = 0x3c00;
  std::vector<uint16_t> rows;
  if (op == "Add" || op == "Sub") {
    rows = v;
    if (op == "Sub")
      for (uint16_t& h : rows) h ^= 0x8000;  // -v exactly (0 as -0)
    rows.insert(rows.end(), v.size(), kOne);
  } else if (op == "Mul" || op == "Div") {
    rows.assign(v.size(), 0);
    rows.insert(rows.end(), v.begin(), v.end());
  } else if (op == "Max" || op == "Min") {
    rows = v;
  } else {
    return make_error(fmt::format("unsupported element-wise operation '{}' with a tensor constant (known: Add, Div, "
                                  "Max, Min, Mul, Sub)",
                                  op));
  }
  return rows;
}

// 1/z rounded once to fp16 (fp32's quotient rounded to fp16 gives the same
// bits for every fp16 z). The record shows 1/0.5 = 2.
Expected<uint16_t> reciprocal(uint16_t z) {
  const uint16_t r = double_to_fp16(1.0 / fp16_to_float(z));
  if ((z & 0x7fff) == 0 || (r & 0x7c00) == 0x7c00)
    return make_error(fmt::format("the divisor {} has no finite fp16 reciprocal", fp16_to_float(z)));
  return r;
}

}  // namespace

// Two tasks: a neural-engine copy of the section (tile DMA from __const, a
// one-channel tensor of R rows of C values) into L2, where the planar task
// after it reads it as its second operand, one value per channel
// (Broadcast.Src2ChannelsW). Add, Sub, Mul and Div compute (x + b) * c
// (TaskType 4, PE.Cfg.SecSrc 2); Max and Min take max / min(x, b) (TaskType 3).
// Div's constant is a scalar (Apple's compiler refuses a tensor divisor),
// the others' a tensor constant (a scalar is plan_scalar_elementwise's one
// task).
Status Planner::plan_tensor_constant(const Layer& l, const ElementWiseParams& p, UnitLowering& ul) {
  if (l.bottoms.size() != 1)
    return fail(l.at("Bottom"),
                fmt::format("{} with a tensor constant needs one input, Bottom names {}", p.op, l.bottoms.size()));
  auto it = tensor_of_.find(l.bottoms[0]);
  if (it == tensor_of_.end()) return fail(l.at("Bottom"), fmt::format("'{}' has no tensor of its own", l.bottoms[0]));
  const int src = it->second;
  const Tensor a = plan_.tensors[src];
  if (auto ch = check_channels(l, a.c); !ch) return ch;
  const bool divide = p.op == "Div";
  if (divide && p.constant_tensor)
    return fail(l.at("Params.Type"), "unsupported: Div by a tensor constant (Apple's compiler refuses it: record "
                                     "binary_real_div_c64_constant_blob)");
  std::vector<uint16_t> values;
  if (divide) {
    auto r = reciprocal(*p.constant);
    if (!r) return fail(l.at("Params.Type"), r.error().message);
    values.assign(a.c, *r);  // once per channel, as the record writes it
  } else {
    auto read = weights_.read(l.at("Params.Type"), l.at("Params.Type"), *p.constant_tensor, a.c, "the constant");
    if (!read) return read.error();
    values = std::move(*read);
  }
  const bool plane = a.h * a.w > 1;
  if (a.c == 1) {
    // One value for the whole tensor: the scalar's one task (or table). (MIL
    // lowers a one-value constant as the scalar itself.) Div: the product
    // with its reciprocal, the same value as the two tasks would compute (no
    // record divides one channel by a constant).
    ElementWiseParams scalar = p;
    scalar.constant_tensor.reset();
    scalar.constant = values.front();
    if (divide) scalar.op = "Mul";
    ul.notes.push_back(divide ? "one channel: x times the divisor's reciprocal in one planar task"
                              : "a tensor constant of one value, lowered as a scalar constant");
    return plan_scalar_elementwise(l, scalar, ul);
  }
  if (plane && (p.op == "Max" || p.op == "Min"))
    return fail(l.at("Params.Type"),
                fmt::format("unsupported: {} of a per-channel tensor constant over {}x{} planes (no record shows "
                            "Apple's form; the simulator reads such a broadcast only in the (x + b) * c task of "
                            "add, sub and mul)",
                            p.op, a.h, a.w));
  auto rows = constant_rows(p.op, values);
  if (!rows) return fail(l.at("Params.Type"), rows.error().message);
  const uint32_t height = static_cast<uint32_t>(rows->size() / a.c);

  // The section in __const: rows of 2C bytes, each rounded up to 64 (the tile
  // DMA's strides are multiples of 64; the records' C = 64 and 512 need no
  // padding, which is zeros).
  Tensor section;
  section.name = l.name + "@constant";
  section.c = 1;
  section.h = height;
  section.w = a.c;
  section.row_stride = round_up(uint64_t{a.c} * 2, 64);
  section.plane_stride = section.row_stride * height;
  section.batch_stride = section.plane_stride;
  section.home = Tensor::Home::Constant;
  section.slot = kConstSlot;
  section.offset = round_up(plan_.constants.size(), 64);  // from the constants' start until place_constants()
  plan_.constants.resize(section.offset + section.plane_stride, 0);
  for (size_t i = 0; i < rows->size(); ++i) {
    const uint64_t at = section.offset + (i / a.c) * section.row_stride + (i % a.c) * 2;
    plan_.constants[at] = static_cast<uint8_t>((*rows)[i]);
    plan_.constants[at + 1] = static_cast<uint8_t>((*rows)[i] >> 8);
  }
  Tensor kept = section;
  kept.name = l.name + "@constant in L2";
  kept.home = Tensor::Home::L2;
  kept.slot = -1;
  kept.offset = 0;
  const int section_index = add_tensor(std::move(section));
  const int kept_index = add_tensor(std::move(kept));

  TaskPlan copy;
  copy.kind = TaskKind::Pass;
  copy.unit = l.name;
  copy.src = section_index;
  copy.dst = kept_index;
  copy.compiler_copy = true;
  copy.constant_copy = true;
  add_task(std::move(copy), ul);

  TaskPlan op;
  op.unit = l.name;
  op.kind = p.op == "Max" ? TaskKind::PlanarMax : p.op == "Min" ? TaskKind::PlanarMin : TaskKind::PlanarAdd;
  op.constant_operand = true;
  op.src = src;
  op.src2 = kept_index;
  auto dst = result_tensor(l, a.c, a.h, a.w);
  if (!dst) return dst.error();
  op.dst = *dst;
  const size_t reader = add_task(std::move(op), ul);
  if (!kept_fits(plan_, reader))
    return fail(l.at("Bottom"), fmt::format("unsupported: {} channels of {}x{} with a tensor constant pass the L2 "
                                            "address fields (the constant and the source rows together; Apple would "
                                            "tile, by a rule no record shows)",
                                            a.c, a.h, a.w));
  ul.rule = fmt::format("{} of '{}' and a {} of {} values: a neural-engine copy of its {}-row section "
                        "into L2, then the planar engine reading it as channels along W{} (Apple's form: records "
                        "binary_*_constant_blob{})",
                        p.op, l.bottoms[0], divide ? "scalar's reciprocal, as a tensor constant" : "tensor constant",
                        a.c, height, height == 2 ? ", y = (x + row 0) x row 1 (TaskType 4)" : "",
                        divide ? ", binary_real_div_c64_constant_scalar" : "");
  if (plane)
    ul.notes.push_back(fmt::format(
        "the constant repeated along H and W of {}x{} planes: the H13 records hold 1x1 planes; Apple's H14 records "
        "read the same two-row copy so (env_bcast_add_1x64x8x8_blob_1x64x1x1), the planar rules of taller "
        "tensors apply to x",
        a.h, a.w));
  return Ok{};
}

void Planner::place_constants() {
  uint64_t kernel_bytes = 0;
  for (const auto& t : plan_.tasks) kernel_bytes += t.kernel.size();
  const uint64_t base = round_up(kernel_bytes, 64);
  for (auto& t : plan_.tensors)
    if (t.home == Tensor::Home::Constant) t.offset += base;
}

}  // namespace ane::compiler
