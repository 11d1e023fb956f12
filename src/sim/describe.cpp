// One line per task saying what it computes, from the same plan the
// simulator executes (hwx-dump prints it before the registers).
#include <fmt/format.h>

#include "ane/fp16.h"
#include "fields.h"
#include "lut.h"
#include "numerics.h"
#include "packed_view.h"
#include "plan.h"

namespace ane::sim {

namespace {

using namespace detail;

std::string dims_text(const Dims& d) {
  const std::string chw = fmt::format("[1,{},{},{}]", d.c, d.h, d.w);
  return d.g > 1 ? fmt::format("{} groups x {}", d.g, chw) : chw;
}

std::string operand_text(const Operand& op) {
  std::string axes;
  if (op.broadcast_g) axes += "G";
  if (op.broadcast_c) axes += "C";
  if (op.broadcast_h) axes += "H";
  if (op.broadcast_w) axes += "W";
  const std::string repeated = axes.empty() ? "" : " (repeated along " + axes + ")";
  const char* along_w = op.channels_w ? " (channels along W)" : "";
  if (op.from == Operand::From::Dma)
    return (op.dma.base ? fmt::format("slot {}+{:#x}", op.dma.slot, op.dma.base) : fmt::format("slot {}", op.dma.slot)) +
           along_w + repeated;
  return fmt::format("L2@{:#x}{}{}", op.l2, along_w, repeated);
}

std::string destination_text(const Destination& d) {
  const bool inner = d.to == Destination::To::L2 ? d.channels_inner : d.dma.channels_inner;
  const std::string layout = inner ? " (channels innermost)" : "";
  if (d.to == Destination::To::L2) return fmt::format("L2@{:#x}{}", d.l2, layout);
  return (d.dma.base ? fmt::format("slot {}+{:#x}", d.dma.slot, d.dma.base) : fmt::format("slot {}", d.dma.slot)) +
         layout;
}

std::string scale_text(uint16_t h) { return fmt::format("{:g}", fp16_to_float(h)); }

// Lane 0 of the kernel slot as a table, described; empty when unreadable.
std::string table_text(const RegisterImage& regs, std::span<const uint8_t> kernel, uint32_t task) {
  const Fields& F = fields();
  if (!regs.get(*F.lane_en[0])) return "table (lane 0 off)";
  const uint64_t at = uint64_t{regs.get(*F.lane_addr[0])} << 6;
  if (at + 2 * kLutSlots > kernel.size()) return "table (lane 0 outside the kernel data)";
  LutTable t;
  for (int i = 0; i < kLutSlots; ++i) t[i] = load_u16(kernel.data() + at + 2 * i);
  auto r = read_lut(t, task);
  if (!r) return "table (" + r.error().message + ")";
  return "table[" + lut_describe(*r) + "]";
}

std::string ne_text(const TaskPlan& p, const RegisterImage& regs, std::span<const uint8_t> kernel, uint32_t task) {
  const NePlan& ne = p.ne;
  std::vector<std::string> parts;
  if (ne.mac == NePlan::Mac::Conv)
    parts.push_back(fmt::format("conv {} {}->{}{}", conv_name(ne.conv), ne.conv.depthwise ? ne.cin : ne.cin * ne.conv.groups,
                                ne.outputs(), ne.bias ? " +bias" : ""));
  else if (ne.mac == NePlan::Mac::ChannelMax)
    parts.push_back(fmt::format("max over each {} channels", ne.unicast_cin));
  else if (ne.mac == NePlan::Mac::ChannelSum)
    parts.push_back(fmt::format("sum of {} channels", ne.unicast_cin));
  else if (ne.mac == NePlan::Mac::ChannelProduct)
    parts.push_back(fmt::format("product of each {} channels", ne.unicast_cin));
  else if (ne.mac == NePlan::Mac::AccumulatePass)
    parts.push_back(fmt::format("x + {}", scale_text(ne.acc_bias)));
  if (ne.post_scale != 0x3c00) parts.push_back("x" + scale_text(ne.post_scale));
  if (ne.nonlinear == 1) parts.push_back("relu");
  if (ne.nonlinear == 2) parts.push_back(table_text(regs, kernel, task));
  if (parts.empty()) parts.push_back("copy");
  return fmt::format("NE {}", fmt::join(parts, ", "));
}

std::string pe_text(const TaskPlan& p) {
  const PePlan& pe = p.pe;
  std::string expr;
  const std::string a = pe.pre_scale != 0x3c00 ? scale_text(pe.pre_scale) + "a" : "a";
  if (p.engine == Engine::PeReduce) {
    const char* what = pe.reduce == PePlan::Reduce::Max ? "max"
                       : pe.second != 0                  ? "sum of (a - b)^2"
                       : pe.square                       ? "sum of squares"
                                                         : "sum";
    expr = fmt::format("{} over each H x W plane ({} values)", what, uint64_t{p.a.dims.h} * p.a.dims.w);
    if (pe.final_scale != 0x3f800000) {
      float f;
      __builtin_memcpy(&f, &pe.final_scale, sizeof f);
      expr += fmt::format(" x{:g}", f);
    }
    if (pe.reciprocal) expr = "1 / (" + expr + ")";
    if (pe.rsqrt) expr = fmt::format("1 / sqrt({} + {:g})", expr, fp16_to_float(pe.epsilon));
  } else if (pe.second == 0) {
    expr = a;
  } else {
    static const char* const kOps[] = {"{} + {}", "{} * {}", "max({}, {})", "min({}, {})"};
    expr = fmt::format(fmt::runtime(kOps[pe.op]), a, pe.second == 3 ? "(-b)" : "b");
    if (pe.second == 3 && pe.op == 0) expr = a + " - b";
    if (pe.times_c) expr = "(" + expr + ") * c";
  }
  if (pe.scale != 0x3c00) expr = scale_text(pe.scale) + "(" + expr + ")";
  if (pe.bias) expr += " + " + scale_text(pe.bias);
  if (pe.abs) expr = "|" + expr + "|";
  return fmt::format("PE {} = {}", p.op, expr);
}

}  // namespace

namespace {

// H14+: the task as the simulator runs it (its H13 view, packed_view.h), or
// the generation's own description and why it does not run.
Expected<RegisterImage> packed_view_of(const Program& program, const Task& task) {
  // What the tasks before it wrote (their words, not their views: a dump of
  // n tasks stays linear in each task's words).
  detail::EarlierWrites earlier;
  for (const Task& t : program.tasks) {
    if (t.index == task.index) {
      auto view = detail::packed_view(program, t, earlier);
      if (!view) return view.error();
      return std::move(view->h13);
    }
    for (const auto& [address, value] : t.regs.written_words()) earlier[address] = value;
  }
  return make_error("the task is not in the program");
}

}  // namespace

std::string describe_task(const Program& program, const Task& task, const Options& opts) {
  std::string label = fmt::format("task {}", task.index);
  const RegisterImage* regs = &task.regs;
  Expected<RegisterImage> view = make_error("");
  if (task.generation != Generation::H13) {
    view = packed_view_of(program, task);
    if (!view) return describe_packed_task(program, task) + "; not simulated: " + view.error().message;
    regs = &*view;
    label += fmt::format(" ({})", generation_name(task.generation));
  }
  auto planned = plan_task(*regs, opts.for_generation(task.generation), task.index);
  if (!planned) return fmt::format("{}: not simulated: {}", label, planned.error().message);
  const TaskPlan& p = *planned;
  std::span<const uint8_t> kernel;
  if (p.ne.kernel_slot >= 0)
    if (const ProgramSlot* s = program.slot(p.ne.kernel_slot)) {
      const ProgramSlot* mem = s->alias_of >= 0 ? program.slot(s->alias_of) : s;
      if (mem) kernel = mem->contents;
    }
  const std::string what = p.engine == Engine::Ne ? ne_text(p, *regs, kernel, task.index) : pe_text(p);
  std::string from = "a " + operand_text(p.a);
  if (p.b.from != Operand::From::None) from += ", b " + operand_text(p.b);
  if (p.c.from != Operand::From::None) from += ", c " + operand_text(p.c);
  if (p.engine == Engine::Ne) from = operand_text(p.a);
  return fmt::format("{}: {}, fp16 {} -> {}, {} -> {}", label, what, dims_text(p.a.dims),
                     dims_text(p.out.dims), from, destination_text(p.out));
}

}  // namespace ane::sim
