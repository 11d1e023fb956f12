// H14 - H18 tasks as H13 register images (packed_view.h). The rules and
// their evidence are in docs/simulator.md, "Other generations"; the records
// they come from are transcribed under tests/fixtures/oracles/h14 .. h18.
#include "packed_view.h"
#include "packed_dma.h"
#include "packed_rules.h"

#include <algorithm>
#include <array>
#include <bit>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ane/fp16.h"
#include "ane/generation.h"

namespace ane::sim::detail {

const RegisterDatabase& h13_database() { return RegisterDatabase::h13(); }

namespace {

}  // namespace

std::string word_name(const RegisterDatabase& db, uint32_t address, uint32_t value) {
  const BlockInfo* b = db.block_at(address);
  return fmt::format("{} {}={:#x}", generation_name(db.generation()),
                     db.register_name(b ? b->id : Block::Common, address), value);
}

Error unsupported_in(const std::string& what, uint32_t task) {
  return make_error(fmt::format("unsupported: {} in task {}", what, task));
}

const RegisterStream* record_writing(const Task& t, uint32_t address) {
  const RegisterStream* found = nullptr;
  for (const auto& s : t.streams)
    for (uint32_t k = 0; k < s.count; ++k)
      if (s.word_address(k) == address) found = &s;  // the last write wins
  return found;
}

std::optional<uint32_t> bound_entry(const Task& t, const char* field) {
  const FieldInfo* f = t.regs.database().find(field);
  const RegisterStream* s = f ? record_writing(t, f->address) : nullptr;
  if (!s || !s->relocated()) return std::nullopt;
  return s->relocation();
}

Expected<PackedView> packed_view(const Program& program, const Task& t, EarlierWrites& earlier) {
  const RegisterImage& g = t.regs;
  const RegisterDatabase& gdb = g.database();
  const Generation gen = t.generation;
  const char* gname = generation_name(gen);
  PackedView view{RegisterImage(h13_database()), {}, {}};
  std::vector<const char*> sixteen;  // Cin / Cout taken as 16 (U2)
  std::vector<const char*> widths;   // Win / Wout taken as 256 (U14)
  RegisterImage& v = view.h13;

  // Bits of each written word the view takes over; the rest must be harmless.
  std::map<uint32_t, uint32_t> covered;
  for (const auto& [address, value] : g.written_words()) covered[address] = 0;

  for (const char* name : kMustWrite) {
    const FieldInfo* f = gdb.find(name);
    if (!f) return unsupported_in(fmt::format("{} has no {} field", gname, name), t.index);
    if (g.field_written(*f)) continue;
    if (std::string_view(name) == "Common.Cin.Cin" || std::string_view(name) == "Common.Cout.Cout") {
      sixteen.push_back(name);
      continue;
    }
    if ((std::string_view(name) == "Common.InDim.Win" || std::string_view(name) == "Common.OutDim.Wout") &&
        h16_layout(gen)) {
      widths.push_back(name);
      continue;
    }
    if (std::string_view(name) == "Common.Cfg.TaskType" && programs_ne_alone(t)) {
      view.notes.push_back(kNeTypeNote);
      continue;  // TaskType 0, the view's value for an unwritten field
    }
    if (std::string_view(name) == "L2.ResultCfg.ResultType" && keeps_result_in_l2(t)) {
      view.notes.push_back(kL2ResultNote);
      continue;  // ResultType 0: kept in L2
    }
    if (std::string_view(name) == "L2.SourceCfg.SourceType" && reads_source_from_l2(t)) {
      view.notes.push_back(kL2SourceNote);
      continue;  // SourceType 0: from L2
    }
    return unsupported_in(fmt::format("{} {} not written", gname, name), t.index);
  }

  // The inert values first; written fields replace them.
  const FieldInfo* task_type = gdb.find("Common.Cfg.TaskType");
  const bool pe_task = g.get(*task_type) != 0;
  for (const Inert& i : kInert)
    if (Status s = v.set(i.field, i.value); !s) return s.error();
  if (pe_task)
    for (const Inert& i : kInertPe)
      if (Status s = v.set(i.field, i.value); !s) return s.error();
  std::vector<std::string_view> copied;  // H13 names of the fields the task wrote
  std::vector<std::string> reset;        // fields U12 takes back from an earlier task's value
  // Fields this task's plan does not read: the neural engine's in a planar-
  // engine task, the planar engine's and the second source's in a neural-
  // engine task, and the L2 layout of a source or result that goes through
  // tile DMA (H13's planner reads those only for a tensor kept in L2).
  auto via_dma = [&](const char* type) { return g.written_value(h13_type_name(gen, type)) == 2u; };
  // ResultType 1 goes out through tile DMA too where the result is laid
  // transposed (H13's planner, plan_destination: OutChannelsW, ChannelsInner).
  const bool transposed = g.written_value("Common.Broadcast.OutChannelsW").value_or(0) != 0 ||
                          g.written_value("Common.Cfg.ChannelsInner").value_or(0) != 0;
  const bool result_dma = via_dma("L2.ResultCfg.ResultType") ||
                          (transposed && g.written_value("L2.ResultCfg.ResultType") == 1u),
             source_dma = via_dma("L2.SourceCfg.SourceType"),
             source2_dma = via_dma("L2.SourceCfg.Source2Type");
  // A row stride over one row has no effect.
  auto one_row = [&](const char* dim) { return g.written_value(dim) == 1u; };
  const bool one_row_in = one_row("Common.InDim.Hin"), one_row_out = one_row("Common.OutDim.Hout");
  auto no_effect = [&](std::string_view n) {
    auto starts = [&](std::string_view p) { return n.rfind(p, 0) == 0; };
    if ((one_row_in && (starts("L2.SourceRowStride.") || starts("L2.Source2RowStride."))) ||
        (one_row_out && starts("L2.ConvResultRowStride.")))
      return true;
    return (pe_task && ne_only(n)) || (!pe_task && (starts("PE.") || starts("L2.Source2") ||
                                                    n == "L2.SourceCfg.Source2Type")) ||
           l2_base(n) || l2_cfg_beyond_types(n) ||
           (result_dma && (starts("L2.ResultBase.") || starts("L2.ConvResult"))) ||
           (source_dma && (starts("L2.SourceBase.") || starts("L2.SourceChannelStride.") ||
                           starts("L2.SourceRowStride."))) ||
           (source2_dma && starts("L2.Source2")) ||
           // No source through tile DMA: the view leaves its words 0 (the
           // planner requires that); pow's last task reads L2 alone with them
           // unwritten after its first tasks enabled the DMA.
           (!source_dma && !source2_dma && starts("TileDMASrc."));
  };

  for (const FieldInfo& f : gdb.fields()) {
    if (f.block == Block::Header || f.reg.rfind("Unk", 0) == 0) continue;
    const FieldInfo* hf = h13_database().find(h13_name(f));
    if (!hf) continue;
    if (g.field_written(f)) {
      v.set(*hf, g.get(f));
      copied.push_back(hf->name);
      covered[f.address] |= f.mask();
      continue;
    }
    // Unwritten here but written by an earlier task: rule U12, the register
    // holds its reset value again (the one U1 names), not the earlier value.
    if (no_effect(hf->name)) continue;
    if (auto e = earlier.find(f.address); e != earlier.end() && f.extract(e->second) != v.get(*hf))
      reset.push_back(fmt::format("{}={:#x}", f.name, f.extract(e->second)));
  }

  if (!reset.empty()) view.notes.push_back(fmt::format("{} (earlier: {})", kResetNote, fmt::join(reset, ", ")));
  for (const char* name : sixteen) v.set(*h13_database().find(name), 16);
  for (const char* name : widths) v.set(*h13_database().find(name), kUnwrittenWidth);
  if (Status s = fp32_scales(t, v, covered); !s) return s.error();
  if (Status s = h18_formats(t, v, covered); !s) return s.error();
  abs_bits(t, covered);
  if (one_position_in_l2(program, t, v, covered)) view.notes.push_back(kOnePositionNote);
  if (rows_copy_packing(t, v, covered)) view.notes.push_back(kRowsCopyNote);
  if (!sixteen.empty()) view.notes.push_back(kSixteenNote);
  if (!widths.empty()) view.notes.push_back(kWidthNote);

  // Slots from relocation tags; the high word of each base pair must be 0.
  for (const Binding& b : kBindings) {
    const FieldInfo* f = gdb.find(b.base);
    if (!f || !g.field_written(*f)) continue;
    const RegisterStream* s = record_writing(t, f->address);
    if (!s || !s->relocated())
      return unsupported_in(fmt::format("{} {} written without a relocation tag", gname, f->name), t.index);
    const uint32_t slot = s->relocation();
    const FieldInfo* slot_field = h13_database().find(b.slot);
    if (slot >= (1u << slot_field->width))
      return unsupported_in(fmt::format("{} {} bound to descriptor entry {}", gname, f->name, slot), t.index);
    // A tile DMA may read the constant section: a tensor constant from a
    // weight blob, or a divisor's reciprocals, lies there as the compiler
    // laid it (docs/simulator.md, "Constants").
    v.set(*slot_field, slot);
    v.set(*h13_database().find(b.enable), 1);
    const uint32_t high = f->address + 4;
    if (g.written(high)) {
      if (g.word(high) != 0) return unsupported_in(word_name(gdb, high, g.word(high)) + " (a base above 4 GiB)", t.index);
      covered[high] = 0xffffffffu;
    }
  }

  // H14+ write the second source's format word like the first's; H13 writes
  // 0x00002030 for the same fp16 operand (binary_add_1x64x8x8 on both).
  const FieldInfo* src2_fmt = h13_database().find("TileDMASrc.Src2Fmt.FmtMode");
  if (v.word(src2_fmt->address) == 0x01002031) v.set_word(src2_fmt->address, 0x00002030);

  // The task's engine: H13 marks neural-engine tasks with ENE (the number of
  // cores), H14+ only by TaskType (0 = NE).
  const uint32_t type = v.get(*h13_database().find("Common.Cfg.TaskType"));
  if (type == 0) {
    v.set(*h13_database().find("Header[8].ENE"), 1);
    // A convolution: MACCfg written with OpMode 0 and KernelMode 0 (H13's).
    const FieldInfo* mac_op = gdb.find("NE.MACCfg.OpMode");
    const bool conv = mac_op && g.written(mac_op->address) && v.get(*h13_database().find("NE.MACCfg.OpMode")) == 0 &&
                      v.get(*h13_database().find("NE.MACCfg.KernelMode")) == 0;
    // A table activation's own DMA; a convolution's table rides in its
    // weight lanes instead, the table DMA unwritten (U15).
    if (v.get(*h13_database().find("NE.MACCfg.NonlinearMode")) == 2 && (!conv || table_dma_written(t)))
      if (Status s = table_dma(t, v, covered); !s) return s.error();
    if (conv)
      if (Status s = conv_kernel_dma(t, v, covered, view.notes); !s) return s.error();
  }

  // Every operand and the result through tile DMA: L2 then only stages the
  // values, and its layout words have no effect on them.
  const bool dma_only = v.get(*h13_database().find("L2.SourceCfg.SourceType")) == 2 &&
                        v.get(*h13_database().find("L2.ResultCfg.ResultType")) == 2 &&
                        (type != 3 || v.get(*h13_database().find("L2.SourceCfg.Source2Type")) == 2);
  if (!dma_only) {  // U4: which L2 bases the task leaves to be 0
    const std::pair<const char*, bool> bases[] = {{"L2.SourceBase.Addr", !source_dma},
                                                  {"L2.Source2Base.Addr", type == 3 && !source2_dma},
                                                  {"L2.ResultBase.Addr", !result_dma}};
    for (const auto& [name, in_l2] : bases) {
      if (in_l2 && !g.written_value(name)) {
        view.notes.push_back(kL2BaseNote);
        break;
      }
    }
  }
  // Groups over a tensor kept in L2 step by the L2 group stride, a word H13
  // leaves unnamed (H14's batch broadcasts repeat one copy across groups).
  if (!dma_only && v.get(*h13_database().find("Common.GroupConvCfg.NumGroups")) > 1)
    if (Status s = l2_group_strides(t, v, covered, source_dma, result_dma, view.notes); !s) return s.error();

  for (const auto& [address, bits] : covered) {
    const uint32_t value = g.word(address), rest = value & ~bits;
    if (rest == 0 && bits != 0) continue;
    const BlockInfo* b = gdb.block_at(address);
    if (!b) return unsupported_in(word_name(gdb, address, value), t.index);
    if (b->id == Block::L2) {
      // L2Cfg is no staging layout: a bit H13's table leaves unnamed is
      // refused there, DMA operands or not (chain_res_relu_d256 computes
      // x + relu(x) as one add through tile DMA with bit 4 set: read as
      // layout, it added x to itself).
      if (rest != 0 && h13_l2_offset(gen, address - b->base) == 0u)
        return unsupported_in(fmt::format("{} (bit {}: H13's table names no such bit; an input ReLU of the second "
                                          "source? not established)",
                                          word_name(gdb, address, value), std::countr_zero(rest)),
                              t.index);
      if (dma_only) continue;  // staging layout
      // A tensor kept in L2: a word at the slot of one H13 leaves unnamed is
      // one H13's planner does not read; nor does it read H15+'s second-source
      // config beyond its type (H13 has no such word, and reads only the
      // types of SourceCfg).
      const FieldInfo* src2_type = gdb.find("L2.Source2Cfg.SourceType");
      const auto o = h13_l2_offset(gen, address - b->base);
      if ((o && h13_unnamed_l2_word(*o)) || (src2_type && address == src2_type->address)) {
        view.traced.push_back(word_name(gdb, address, value));
        continue;
      }
      // SourceCfg bit 25, which H13's table leaves unnamed: one record sets
      // it (chain_pair_add_ln's add, whose result overwrites its second
      // source in L2, where H13's twin sets AliasConvSrc / AliasConvRslt)
      // and runs to its MIL with it read as no effect on the values.
      if (o && *o == kH13SourceCfg && rest == kSourceCfgBit25) {
        view.traced.push_back(word_name(gdb, address, value) + " (bit 25: no effect on values)");
        continue;
      }
      return unsupported_in(fmt::format("{} with an operand or result kept in L2 (its role in H13's L2 layout is "
                                        "not established)",
                                        word_name(gdb, address, value)),
                            t.index);
    }
    if (b->id == Block::CacheDMA) {
      view.traced.push_back(word_name(gdb, address, value));
      continue;
    }
    const Harmless* h = harmless(gen, b->id, address - b->base, rest);
    if (!h)
      return unsupported_in(word_name(gdb, address, value) + " (its meaning on " + gname + " is not established)",
                            t.index);
    view.traced.push_back(word_name(gdb, address, value));
  }

  // Whether an inert value stood: a field no written field replaced.
  for (const Inert& i : kInert)
    if (std::find(copied.begin(), copied.end(), std::string_view(i.field)) == copied.end()) {
      view.notes.push_back(kInertNote);
      break;
    }
  view.notes.push_back(numerics_note(gen));

  for (const auto& [address, value] : g.written_words()) earlier[address] = value;
  return view;
}

}  // namespace ane::sim::detail
