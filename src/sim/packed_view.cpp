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

const RegisterDatabase& h13() { return h13_database(); }

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

namespace {

// Numerics per generation, named in every trace: H13's where no public
// measurement says otherwise; M4's measured rounding and fixed-point
// accumulator on H16 - H18 (the round and acc options' "by generation"
// defaults, Options::for_generation).
std::string numerics_note(Generation g) {
  if (g == Generation::H14)
    return "H14 numerics: H13's (round to nearest even); M2 Pro shares M1's crop clamp (sbryngelson/ANEForge#137), "
           "no other public measurement";
  if (g == Generation::H15) return "H15 numerics: no public measurement; H13's (round to nearest even) used";
  return fmt::format("{} numerics: results rounded ties away from zero unless --option round=rne, neural-engine "
                     "sums in the Q15.16 fixed-point accumulator unless --option acc=fp32 (M4, "
                     "751K/Apple-Neural-Engine-Microarchitecture-Study-M6 notes/numerics.md); otherwise H13's",
                     generation_name(g));
}

// Rule U2: Cin and Cout unwritten mean 16 channels. H14's records write them
// for every channel count but 16 (1, 3, 64, 128 ... 4096), and leave both
// unwritten in every 16-channel record (1x16x1x1 of five ops, 1x16x128x128):
// 16 is what the registers hold unwritten, their reset value (U12): grouped
// convolutions leave them so at 16 channels per group, the 16-column matmuls
// (h14mv_index_m1_k16_n16) too, and h14norm_reduce_mean_ax2_1x128x16x16, whose
// reduction over H reads the [1,128,16,16] tensor as 16 channels, leaves Cin
// so and runs to its reference only with 16.
constexpr const char* kSixteenNote = "U2: Cin and Cout unwritten, 16 (their reset value)";

// Rule U14: on H16 - H18, whose widths have words of their own, Win and
// Wout unwritten mean 256. matmul_m1_k256_n256_ty1 (H16, H17, H18) leaves
// both unwritten in its copy of x's 256 values, where the same program of
// 512 columns writes 0x200 there; every other record writes its widths (1,
// 2, 8, 16, 224, 512), and the product comes out right only with 256, its
// reset value as 16 is Cin's (U2).
constexpr uint32_t kUnwrittenWidth = 256;
constexpr const char* kWidthNote = "U14: Win and Wout unwritten, 256 (their reset value on H16 - H18)";

// Rule U3: a task that leaves TaskType unwritten but writes the neural
// engine's words and no planar-engine word is a neural-engine task (type 0):
// every record's task of that kind that writes TaskType writes 0 (H14's
// broadcast copies into L2: env_bcast_add_1x96x8x8_runtime_1x96x1x1 writes
// 0x00200001, env_bcast_add_1x768x16x16_runtime_1x1x1x1 leaves it unwritten).
constexpr const char* kNeTypeNote =
    "U3: TaskType unwritten in a task that programs the neural engine alone, taken as 0 (NE)";

bool programs_ne_alone(const Task& t) {
  bool ne = false;
  for (const auto& [address, value] : t.regs.written_words()) {
    const BlockInfo* b = t.regs.database().block_at(address);
    if (b && b->id == Block::PE) return false;
    ne |= b && b->id == Block::NE;
  }
  return ne;
}

// Rule U5: a task that leaves ResultType unwritten and writes no result DMA
// word keeps its result in L2 (type 0, its reset value by U12): H18's pow
// multiplies on the planar engine into L2 so (its next task reads the product
// there with the same strides); H14's softmax keeps x - max and the row sums'
// reciprocals so, and H13's records of the same MILs write ResultType 0 there
// (norm_softmax_a3_1x64x1x128 task 3: 0x140, its H14 twin no result word at all).
constexpr const char* kL2ResultNote =
    "U5: ResultType unwritten in a task that writes no result DMA word, taken as 0 (kept in L2)";

// U12 for SourceType: a task after the first that leaves SourceType
// unwritten and binds no source tile DMA reads its input from L2 (type 0,
// the reset value): the tiled convolutions' later tasks read the input an
// earlier task kept in L2 so (conv_probe_k3_c1024_n1024_s16_st1_g4_bias0_same
// tasks 2 - 8 after task 1 wrote SourceCfg 0x120; their H13 twins write
// SourceType 0), and their kernel sections hash to H13's packing for it.
constexpr const char* kL2SourceNote =
    "U12: SourceType unwritten in a later task that binds no source DMA, its reset value 0 (read from L2)";

bool reads_source_from_l2(const Task& t) {
  if (t.index == 0) return false;
  const FieldInfo* base = t.regs.database().find("TileDMASrc.BaseAddr.Addr");
  return base && !t.regs.written(base->address);
}

bool keeps_result_in_l2(const Task& t) {
  const RegisterImage& g = t.regs;
  for (const auto& [address, value] : g.written_words()) {
    const BlockInfo* b = g.database().block_at(address);
    if (!b || b->id != Block::TileDMADst) continue;
    // A word every record writes at one value (H14's 0xdead, softmax's sum
    // of exponentials kept in L2) does not program a write.
    const Harmless* h = harmless(t.generation, b->id, address - b->base, value);
    if (!h || h->any != 0) return false;
  }
  return true;
}

// Rule U6: real_div over [1,C,1,1] (every generation) keeps the reciprocal
// in L2 between its two tasks with the L2 strides unwritten on both sides;
// the writing NE pass sets packing words no other record sets
// (GroupConvCfg.UnicastCin 4 over 64 channels, 8 over 256, the OCGSize word
// 2, Cfg bits 28-29) and the
// reading PE task broadcast bit 9 (set besides only by blob constants' PE
// tasks, after a copy that is not such a writer). The two tasks name one layout, and
// the values do not depend on which: the view lays the writer's result one
// channel per 16 bytes, and reads the packing words and bit 9 as that
// layout. Only those exact values, on one-position tensors.
constexpr const char* kOnePositionNote =
    "U6: a one-position tensor kept in L2 with its strides unwritten on both sides, laid one channel per 16 bytes "
    "(the writer's packing words and the reader's broadcast bit 9 taken as that layout)";

// The writing side of U6, from the generation's own registers: an NE pass
// over one position per channel, kept in L2 with its channel stride
// unwritten, with Cfg bits 28-29 as real_div's reciprocal task sets them.
bool one_position_writer(const Task& t) {
  const RegisterImage& g = t.regs;
  for (const char* dim : {"Common.InDim.Win", "Common.InDim.Hin", "Common.OutDim.Wout", "Common.OutDim.Hout"})
    if (g.written_value(dim) != 1u) return false;
  const FieldInfo* cfg = g.database().find("Common.Cfg.TaskType");
  const uint32_t high = cfg && g.written(cfg->address) ? g.word(cfg->address) & 0x30000000u : 0;
  return g.written_value("Common.Cfg.TaskType") == 0u && g.written_value("L2.ResultCfg.ResultType") == 0u &&
         g.written_value("NE.MACCfg.OpMode") == 4u && !g.written_value("L2.ConvResultChannelStride.Stride") &&
         (high == 0x30000000u || high == 0x10000000u);
}

bool one_position_in_l2(const Program& program, const Task& t, RegisterImage& v,
                        std::map<uint32_t, uint32_t>& covered) {
  const RegisterImage& g = t.regs;
  const RegisterDatabase& gdb = g.database();
  auto h13v = [&](const char* n) { return v.get(*h13().find(n)); };
  if (h13v("Common.InDim.Win") != 1 || h13v("Common.InDim.Hin") != 1 || h13v("Common.OutDim.Wout") != 1 ||
      h13v("Common.OutDim.Hout") != 1)
    return false;
  if (one_position_writer(t)) {
    // UnicastCin 4 over 64 channels (real_div), 8 over 256 (chain_res_gelu,
    // _silu): a packing mark like the others, which the reader matches.
    const uint32_t unicast = h13v("Common.GroupConvCfg.UnicastCin");
    if (!std::has_single_bit(unicast) || unicast > h13v("Common.Cin.Cin")) return false;
    const FieldInfo* cfg = gdb.find("Common.Cfg.TaskType");
    covered[cfg->address] |= g.word(cfg->address) & 0x30000000u;
    const uint32_t ocg_word = t.generation <= Generation::H15 ? 0x1c : 0x40;  // Common block offsets
    if (g.written(ocg_word) && g.word(ocg_word) == 2) covered[ocg_word] |= 2;
    // The layout marks, not a kernel's output chunks or a transposed result.
    v.set(*h13().find("Common.ConvCfg.OCGSize"), 0);
    v.set(*h13().find("Common.Cfg.ChannelsInner"), 0);
    v.set(*h13().find("Common.GroupConvCfg.UnicastCin"), 1);
    v.set(*h13().find("L2.ConvResultChannelStride.Stride"), 1);
    v.set(*h13().find("L2.ConvResultRowStride.Stride"), h13v("Common.Cout.Cout"));
    return true;
  }
  // The reading side: the planar engine's second source from L2 with its
  // strides unwritten and bit 9, right after a writer of as many channels.
  const FieldInfo* broadcast = gdb.find("Common.Broadcast.Src1W");
  if (h13v("Common.Cfg.TaskType") != 3 || h13v("L2.SourceCfg.Source2Type") != 0 ||
      g.written_value("L2.Source2ChannelStride.Stride") || !broadcast || !g.written(broadcast->address) ||
      (g.word(broadcast->address) & 0x200u) == 0 || t.index == 0)
    return false;
  const Task* w = nullptr;
  for (const Task& other : program.tasks)
    if (other.index + 1 == t.index) w = &other;
  if (!w || !one_position_writer(*w)) return false;
  const auto w_cout = w->regs.written_value("Common.Cout.Cout");
  const uint32_t w_channels = w_cout ? *w_cout : 16;  // U2 where unwritten
  if (w_channels != h13v("Common.Cin.Cin")) return false;
  // H13's planner reads a second source kept in L2 as the result it names,
  // whole: no stride to set on this side.
  // Bit 9 (Src2ChannelsW, named on H14): here the layout U6 lays one channel
  // per 16 bytes.
  covered[broadcast->address] |= 0x200u;
  v.set(*h13().find("Common.Broadcast.Src2ChannelsW"), 0);
  return true;
}

// Rule U13: a copy of more than 16 rows into L2, channels innermost (matmul).
// x's M rows become the channels of each of the K positions, M values 2
// bytes apart within a channel slot of (M + 8) x 2 bytes (L2's result channel
// stride: 0x50 for 32 rows, 0x90 for 64), which the convolution reads back
// with the same stride. The pass marks that packing as U6's writer does:
// Cfg bit 29 beside ChannelsInner, GroupConvCfg UnicastEn with UnicastCin M /
// 16, and the OCGSize word log2(M / 16) (h14mv_mask_m64_k256_n256: 0x30220201,
// 0x44001, 2; env_mm_r2rb_m32_k4096_n2048_tx0_ty1: 0x30230301, 0x24001, 1).
// layer_norm over C copies [1,64,8,8] so too (h14norm_layer_norm_ax1_1x64x8x8:
// 0x30244401, UnicastCin 4, OCGSize 2) before reducing the copy. The strides
// give the layout, and the values do not depend on the marks: the view takes
// them as that packing (a plain channels-inner copy for H13's planner), only
// at exactly those values.
constexpr const char* kRowsCopyNote =
    "U13: a channels-innermost copy of M > 16 rows (Cfg bit 29, UnicastCin M/16, OCGSize log2(M/16)) taken as a "
    "plain copy; the L2 strides give its layout";

bool rows_copy_packing(const Task& t, RegisterImage& v, std::map<uint32_t, uint32_t>& covered) {
  const RegisterImage& g = t.regs;
  auto h13v = [&](const char* n) { return v.get(*h13().find(n)); };
  const FieldInfo* cfg = g.database().find("Common.Cfg.TaskType");
  if (!cfg || !g.written(cfg->address) || (g.word(cfg->address) & 0x30000000u) != 0x30000000u) return false;
  if (h13v("Common.Cfg.TaskType") != 0 || h13v("NE.MACCfg.OpMode") != 4 || h13v("NE.MACCfg.KernelMode") != 1 ||
      h13v("L2.ResultCfg.ResultType") != 0 || h13v("Common.GroupConvCfg.UnicastEn") != 1)
    return false;
  // OCGSize: H14's named word, copied to H13's ConvCfg.OCGSize (0 unwritten).
  const uint32_t unicast = h13v("Common.GroupConvCfg.UnicastCin");
  if (unicast < 2 || !std::has_single_bit(unicast) || h13v("Common.Cin.Cin") != 16 * unicast ||
      h13v("Common.ConvCfg.OCGSize") != static_cast<uint32_t>(std::countr_zero(unicast)))
    return false;
  covered[cfg->address] |= 0x20000000u;
  v.set(*h13().find("Common.ConvCfg.OCGSize"), 0);
  v.set(*h13().find("Common.GroupConvCfg.UnicastEn"), 0);
  v.set(*h13().find("Common.GroupConvCfg.UnicastCin"), 1);
  return true;
}

// H15 - H18 write PE.Cfg bits 6-8 all set where H14 and H13 set bit 6
// (Cond) alone: in every abs record (c64, H15 - H17) and in no other record.
// Bits 7-8 set with bit 6 are taken as H13's absolute value; any other
// pattern of them stays unaccounted for, and refuses the task.
void abs_bits(const Task& t, std::map<uint32_t, uint32_t>& covered) {
  if (t.generation < Generation::H15) return;
  const FieldInfo* cond = t.regs.database().find("PE.Cfg.Cond");
  if (!cond || !t.regs.written(cond->address)) return;
  if ((t.regs.word(cond->address) & 0x1c0u) == 0x1c0u) covered[cond->address] |= 0x180u;
}

// H15 - H18 planar-engine scales are fp32 words; H13 has fp16 halves of
// BiasScale. Exact fp16 values only.
Status fp32_scales(const Task& t, RegisterImage& v, std::map<uint32_t, uint32_t>& covered) {
  constexpr std::pair<const char*, const char*> kScales[] = {{"PE.FpBias.Bias", "PE.BiasScale.Bias"},
                                                              {"PE.FpScale.Scale", "PE.BiasScale.Scale"}};
  const RegisterImage& g = t.regs;
  for (const auto& [name, h13_name] : kScales) {
    const FieldInfo* f = g.database().find(name);
    if (!f || !g.field_written(*f)) continue;
    const float x = std::bit_cast<float>(g.get(*f));
    const uint16_t h = float_to_fp16(x);
    if (!(fp16_to_float(h) == x))
      return unsupported_in(fmt::format("{} {}={:#x} (not an fp16 value)", generation_name(t.generation), name,
                                        g.get(*f)),
                            t.index);
    v.set(*h13().find(h13_name), h);
    covered[f->address] = 0xffffffffu;
  }
  return Ok{};
}

// Rule U11, L2 group strides (H14). H13's planner steps the groups of a
// source or result kept in L2 by two words its table leaves unnamed, L2
// +0x18 and +0x44 (0x4818, 0x4844). H14's L2 block is H13's at the same
// slots, and its records write those words with H13's values for the same
// MIL (h14norm_reduce_max_ax2_1x32x4x4 task 1: 0x10 and 0x200, as H13's):
// the view copies them. A stride left unwritten is refused. A second source
// in L2 over groups has no group stride in H13's table: the planner reads
// one group's tensor for every group (H14's batch broadcasts keep one
// [1,C,1,1] copy for [N,C,H,W]), and L2 refuses the read unless the result
// there holds exactly one group.
constexpr const char* kL2GroupNote = "U11: L2 group strides at H13's slots (0x518, 0x544)";

// Rule U12: each task starts from the reset values. A register a task leaves
// unwritten holds what U1 names even when an earlier task of the program
// wrote another value: pow's last task reads L2 bases of 0 after its first
// tasks wrote 0x4100 there (U4); the tiled 1024-channel convolution leaves
// UnicastEn unwritten after its L2 copy set it, and its kernel hashes only
// with the dense packing (UnicastEn 0); h14norm_reduce_max_ax2_1x32x4x4 leaves
// L2Cfg unwritten after the task before wrote 4, where H13's record of that
// MIL writes 0; softmax_1x64x8x8 leaves NumGroups, the broadcast bits and
// the scale unwritten after its reductions and subtraction set them, and
// computes softmax to fp16 precision only when they are back at reset.
constexpr const char* kResetNote = "U12: registers left unwritten hold their reset values, not an earlier task's";

Status l2_group_strides(const Task& t, RegisterImage& v, std::map<uint32_t, uint32_t>& covered, bool source_dma,
                        bool result_dma, std::vector<std::string>& notes) {
  const uint32_t groups = v.get(*h13().find("Common.GroupConvCfg.NumGroups"));
  auto refuse = [&] {
    return unsupported_in(fmt::format("{} {} groups over a tensor kept in L2 (the L2 group stride is not "
                                      "established)",
                                      generation_name(t.generation), groups),
                          t.index);
  };
  if (t.generation != Generation::H14) return refuse();
  const RegisterImage& g = t.regs;
  struct Stride {
    bool in_l2;
    uint32_t address;  // H14's word
    const char* h13_field;
  };
  const Stride strides[] = {{!source_dma, 0x518, "L2.Unk04818.Value"}, {!result_dma, 0x544, "L2.Unk04844.Value"}};
  for (const Stride& s : strides) {
    if (!s.in_l2) continue;
    if (!g.written(s.address)) return refuse();
    v.set(*h13().find(s.h13_field), g.word(s.address));
    covered[s.address] = 0xffffffffu;
  }
  notes.push_back(kL2GroupNote);
  return Ok{};
}

}  // namespace

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
  PackedView view{RegisterImage(h13()), {}, {}};
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
    const FieldInfo* hf = h13().find(h13_name(f));
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
  for (const char* name : sixteen) v.set(*h13().find(name), 16);
  for (const char* name : widths) v.set(*h13().find(name), kUnwrittenWidth);
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
    const FieldInfo* slot_field = h13().find(b.slot);
    if (slot >= (1u << slot_field->width))
      return unsupported_in(fmt::format("{} {} bound to descriptor entry {}", gname, f->name, slot), t.index);
    // A tile DMA may read the constant section: a tensor constant from a
    // weight blob, or a divisor's reciprocals, lies there as the compiler
    // laid it (docs/simulator.md, "Constants").
    v.set(*slot_field, slot);
    v.set(*h13().find(b.enable), 1);
    const uint32_t high = f->address + 4;
    if (g.written(high)) {
      if (g.word(high) != 0) return unsupported_in(word_name(gdb, high, g.word(high)) + " (a base above 4 GiB)", t.index);
      covered[high] = 0xffffffffu;
    }
  }

  // H14+ write the second source's format word like the first's; H13 writes
  // 0x00002030 for the same fp16 operand (binary_add_1x64x8x8 on both).
  const FieldInfo* src2_fmt = h13().find("TileDMASrc.Src2Fmt.FmtMode");
  if (v.word(src2_fmt->address) == 0x01002031) v.set_word(src2_fmt->address, 0x00002030);

  // The task's engine: H13 marks neural-engine tasks with ENE (the number of
  // cores), H14+ only by TaskType (0 = NE).
  const uint32_t type = v.get(*h13().find("Common.Cfg.TaskType"));
  if (type == 0) {
    v.set(*h13().find("Header[8].ENE"), 1);
    // A convolution: MACCfg written with OpMode 0 and KernelMode 0 (H13's).
    const FieldInfo* mac_op = gdb.find("NE.MACCfg.OpMode");
    const bool conv = mac_op && g.written(mac_op->address) && v.get(*h13().find("NE.MACCfg.OpMode")) == 0 &&
                      v.get(*h13().find("NE.MACCfg.KernelMode")) == 0;
    // A table activation's own DMA; a convolution's table rides in its
    // weight lanes instead, the table DMA unwritten (U15).
    if (v.get(*h13().find("NE.MACCfg.NonlinearMode")) == 2 && (!conv || table_dma_written(t)))
      if (Status s = table_dma(t, v, covered); !s) return s.error();
    if (conv)
      if (Status s = conv_kernel_dma(t, v, covered, view.notes); !s) return s.error();
  }

  // Every operand and the result through tile DMA: L2 then only stages the
  // values, and its layout words have no effect on them.
  const bool dma_only = v.get(*h13().find("L2.SourceCfg.SourceType")) == 2 &&
                        v.get(*h13().find("L2.ResultCfg.ResultType")) == 2 &&
                        (type != 3 || v.get(*h13().find("L2.SourceCfg.Source2Type")) == 2);
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
  if (!dma_only && v.get(*h13().find("Common.GroupConvCfg.NumGroups")) > 1)
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
