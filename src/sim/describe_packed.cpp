// One line per H14 - H18 task saying what it computes, from the fields the
// generation's register table names (docs/generations.md) and the tensors
// its relocation tags bind. Where a quantity is not named on that generation
// or not written by the task, the line says "not understood" instead of
// guessing.
#include <fmt/format.h>

#include "ane/sim.h"
#include "packed_view.h"

namespace ane::sim {

namespace {

// The tensor (or section) a relocated record binds: the program slot of the
// record's descriptor entry.
std::string bound_name(const Program& p, uint32_t entry) {
  for (const Buffer& b : p.buffers)
    if (b.slot == static_cast<int>(entry)) return b.name;
  if (const ProgramSlot* s = p.slot(static_cast<int>(entry))) {
    if (s->role == SlotRole::Kernels) return entry == 1 ? "__const" : "kernel data";
    if (s->role == SlotRole::Tasks) return "__text";
  }
  return fmt::format("entry {}", entry);
}

// The tensor (or section) bound to `field`'s register, by name.
std::optional<std::string> binding_of(const Program& p, const Task& t, const char* field) {
  if (auto entry = detail::bound_entry(t, field)) return bound_name(p, *entry);
  return std::nullopt;
}

std::string dims(const RegisterImage& regs, const char* c, const char* h, const char* w) {
  const auto cv = regs.written_value(c), hv = regs.written_value(h), wv = regs.written_value(w);
  auto part = [](std::optional<uint32_t> v) { return v ? fmt::format("{}", *v) : std::string("?"); };
  return fmt::format("{}x{}x{}", part(cv), part(hv), part(wv));
}

std::optional<std::string> pe_operation(const RegisterImage& regs) {
  const auto op = regs.written_value("PE.Cfg.OpMode"), sec = regs.written_value("PE.Cfg.SecSrc");
  if (!op || !sec) return std::nullopt;
  static const char* kOps[] = {"add", "mul", "max", "min"};
  if (*sec == 2 && *op < 4) return fmt::format("{}(a, b)", kOps[*op]);
  if (*sec == 3 && *op == 0) return std::string("sub(a, b) = a + (-b)");
  if (*sec == 0 && *op < 4) return fmt::format("{} over one operand", kOps[*op]);
  return std::nullopt;
}

}  // namespace

std::string not_simulated_message(Generation g) {
  const GenerationInfo& info = generation_info(g);
  if (info.format == TaskFormat::Packed)
    return fmt::format("{} ({}) registers do not run directly on a machine: a Simulator runs {} programs through "
                       "their H13 view (docs/simulator.md, \"Other generations\")",
                       info.name, info.chips, info.name);
  return fmt::format("{} ({}) programs are not simulated: libane's simulator runs H13 (M1, A14) programs and, through "
                     "their H13 view, H14 - H18 ones",
                     info.name, info.chips);
}

std::string describe_packed_task(const Program& p, const Task& t) {
  const RegisterImage& r = t.regs;
  const char* gen = generation_name(t.generation);
  const auto type = r.written_value("Common.Cfg.TaskType");
  std::string reads, writes;
  for (const char* f : {"TileDMASrc.BaseAddr.Addr", "TileDMASrc.Src2BaseAddr.Addr"})
    if (auto n = binding_of(p, t, f)) reads += (reads.empty() ? "" : ", ") + *n;
  if (auto n = binding_of(p, t, "TileDMADst.BaseAddr.Addr")) writes = *n;
  // Every relocated record, by block, when the named bases do not say it all.
  std::string bound;
  for (const auto& s : t.streams)
    if (s.relocated()) {
      const auto& db = r.database();
      std::string block = "?";
      for (const auto& b : db.blocks())
        if (b.id != Block::Header && s.address >= b.base && s.address < b.base + 4 * b.words) block = b.name;
      bound += fmt::format("{}{} {:#x} <- {}", bound.empty() ? "" : ", ", block, s.address, bound_name(p, s.relocation()));
    }
  const std::string io = !reads.empty() || !writes.empty()
                             ? fmt::format("{} -> {}", reads.empty() ? "?" : reads, writes.empty() ? "?" : writes)
                             : "";
  const std::string shape = fmt::format("{} -> {}", dims(r, "Common.Cin.Cin", "Common.InDim.Hin", "Common.InDim.Win"),
                                        dims(r, "Common.Cout.Cout", "Common.OutDim.Hout", "Common.OutDim.Wout"));
  if (type && (*type == 2 || *type == 3 || *type == 5)) {
    if (auto op = pe_operation(r))
      return fmt::format("task {} ({}): PE {}, fp16 {}{}{}", t.index, gen, *op, shape, io.empty() ? "" : ", ",
                         io.empty() ? bound : io);
    return fmt::format("task {} ({}): PE task, operation not understood (PE.Cfg not written or not a known op); {}",
                       t.index, gen, bound.empty() ? shape : bound);
  }
  const auto nl = r.written_value("NE.MACCfg.NonlinearMode"), opm = r.written_value("NE.MACCfg.OpMode");
  if (type && *type == 0 && nl && opm && *opm == 4 && *nl == 2)
    return fmt::format("task {} ({}): NE pass-through with a lookup-table activation, fp16 {}{}{}", t.index, gen, shape,
                       bound.empty() ? "" : "; binds ", bound);
  if (type && *type == 0)
    return fmt::format("task {} ({}): NE task, fp16 {}; what it computes is not understood on {} yet{}{}", t.index,
                       gen, shape, gen, bound.empty() ? "" : "; binds ", bound);
  return fmt::format("task {} ({}): not understood (Common.Cfg.TaskType {}){}{}", t.index, gen,
                     type ? fmt::format("= {}", *type) : std::string("not written or not named on ") + gen,
                     bound.empty() ? "" : "; binds ", bound);
}

}  // namespace ane::sim
