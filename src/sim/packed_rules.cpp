// The generation layer's rules (packed_rules.h).
#include "packed_rules.h"

#include <algorithm>
#include <bit>

#include <fmt/format.h>

#include "ane/fp16.h"
#include "packed_dma.h"

namespace ane::sim::detail {

namespace {

constexpr uint32_t kAll = 0xffffffffu;
constexpr Harmless kHarmless[] = {
    // DMA-config words: bit 0 is the named En; the rest are H13's cache hints.
    {Block::TileDMASrc, 0x00, Layouts::All, kAll, 0, "DMA cache hints"},
    {Block::TileDMASrc, 0x04, Layouts::All, kAll, 0, "DMA cache hints"},
    {Block::TileDMADst, 0x00, Layouts::All, kAll, 0, "DMA cache hints"},
    // 0xce, or 0xee where the source is read again: +0x08 with DMAConfig
    // 0xee1 in a task whose input a later task reads once more (the split
    // conv_probe_k3_c256_n256_s64_st1_g1_bias0_valid, layer_norm's first
    // task), +0x0c where each group re-reads one second operand (H15 - H18's
    // env_bcast_{add,mul}_{2,8}x64x8x8_runtime_1x64x1x1). Bit 5 reads as a
    // reuse hint beside DMAConfig's cache hints; it does not change values.
    {Block::TileDMASrc, 0x08, Layouts::All, 0x20, 0xce, "0xce, 0xee (bit 5) where the source is read again"},
    {Block::TileDMASrc, 0x0c, Layouts::All, 0x20, 0xce, "0xce, 0xee (bit 5) where the source is read again"},
    {Block::TileDMADst, 0x24, Layouts::H14_15, 0, 0xdead, "unknown, 0xdead in every H14 record"},
    // Common: H13's Unk0002C slot (0x34 in element-wise records), the task
    // identity, and Cfg's scheduling bits (ShPref .. AccDoubleBufEn on H13,
    // traced there too).
    {Block::Common, 0x30, Layouts::H14_15, kAll, 0, "H13's Unk0002C, traced there too"},
    {Block::Common, 0x3c, Layouts::H14_15, kAll, 0, "TaskInfo (task identity)"},
    {Block::Common, 0x38, Layouts::H14_15, 0x07ffff00, 0, "Cfg's scheduling bits, traced on H13 too"},
    {Block::Common, 0x44, Layouts::H16_18, kAll, 0, "H13's Unk0002C, traced there too"},
    {Block::Common, 0x3c, Layouts::H16_18, 0x07ffff00, 0, "Cfg's scheduling bits, traced on H13 too"},
    {Block::NE, 0x04, Layouts::H16_18, 0, 0x2000, "MACCfg bit 13, set in every H16 neural-engine record"},
    {Block::Common, 0x4c, Layouts::H16_18, kAll, 0, "TaskInfo (task identity)"},
    // H14's KernelCfg sets bit 16 in every table activation (not on H13).
    {Block::NE, 0x00, Layouts::All, 0, 0x10000, "KernelCfg bit 16, set in every H14 and H16 table activation"},
    // The matmul's convolution: H17 writes KernelCfg 0x10000082 where H16
    // leaves H13's 0x82 unwritten (U8); H18 the same at 64 rows and MACCfg
    // bit 27 instead at 1 - 8 rows. The kernel sections are the same bytes
    // on H15 - H18 (matmul_m{1,64}_k512_n1024_ty1, matmul_m1_k256_n256_ty1).
    {Block::NE, 0x00, Layouts::H17_18, 0, 0x10000000, "KernelCfg bit 28, set in every H17 matmul convolution"},
    {Block::NE, 0x04, Layouts::H18, 0, 0x08002000, "MACCfg bits 13 and 27, an H18 matmul convolution of 1 - 8 rows"},
    // H18's two words before the source bases and one before the result's,
    // tagged like the DMA-config words; 0 in every H18 record.
    {Block::TileDMASrc, 0x10, Layouts::H18, 0, 0, "tagged like the DMA-config words, 0 in every record"},
    {Block::TileDMASrc, 0x14, Layouts::H18, 0, 0, "tagged like the DMA-config words, 0 in every record"},
    {Block::TileDMADst, 0x08, Layouts::H18, 0, 0, "tagged like the DMA-config words, 0 in every record"},
    // The kernel DMA's first word when no kernel is read.
    {Block::KernelDMASrc, 0x00, Layouts::All, 0, 0x80, "0x80 in every record without a kernel"},
};

}  // namespace

std::string h13_name(const FieldInfo& f) {
  // H15 - H18 give the second source a config word of its own; H13 and H14
  // keep its type in SourceCfg.Source2Type.
  if (f.name == "L2.Source2Cfg.SourceType") return "L2.SourceCfg.Source2Type";
  // H16 gives the group count a word of its own.
  if (f.name == "Common.Groups.NumGroups") return "Common.GroupConvCfg.NumGroups";
  // H14 keeps OCGSize in a word of its own, before ConvCfg.
  if (f.name == "Common.OCGCfg.OCGSize") return "Common.ConvCfg.OCGSize";
  return f.name;
}

bool ne_only(std::string_view h13_field) {
  return h13_field == "Common.GroupConvCfg.UnicastEn" || h13_field == "Common.GroupConvCfg.UnicastCin" ||
         h13_field == "Common.ConvCfg.OCGSize" || h13_field.rfind("NE.", 0) == 0;
}

const char* h13_type_name(Generation g, const char* h13_field) {
  if (g >= Generation::H15 && std::string_view(h13_field) == "L2.SourceCfg.Source2Type") return "L2.Source2Cfg.SourceType";
  return h13_field;
}

std::optional<uint32_t> h13_l2_offset(Generation g, uint32_t offset) {
  if (g == Generation::H14 || offset < 0x08) return offset;
  if (g == Generation::H15) return offset >= 0x0c ? std::optional<uint32_t>(offset - 4) : std::nullopt;
  if (offset >= 0x10 && offset < 0x38) return offset - 8;
  if (offset >= 0x48 && offset < 0x60) return offset - 0x18;
  return std::nullopt;
}

bool l2_cfg_beyond_types(std::string_view n) {
  const bool cfg = n.rfind("L2.SourceCfg.", 0) == 0 || n.rfind("L2.ResultCfg.", 0) == 0;
  return cfg && n != "L2.SourceCfg.SourceType" && n != "L2.SourceCfg.Source2Type" && n != "L2.ResultCfg.ResultType";
}

bool l2_base(std::string_view h13_field) {
  return h13_field == "L2.SourceBase.Addr" || h13_field == "L2.Source2Base.Addr" || h13_field == "L2.ResultBase.Addr";
}

bool h13_unnamed_l2_word(uint32_t offset) {
  const BlockInfo& l2 = h13_database().block(Block::L2);
  if (offset >= 4 * l2.words) return false;
  const auto fields = h13_database().fields_at(Block::L2, l2.base + offset);
  return !fields.empty() && std::all_of(fields.begin(), fields.end(),
                                        [](const FieldInfo* f) { return f->reg.rfind("Unk", 0) == 0; });
}

bool h16_layout(Generation g) { return g == Generation::H16 || g == Generation::H17 || g == Generation::H18; }

const Harmless* harmless(Generation g, Block b, uint32_t offset, uint32_t rest) {
  const Layouts mine = h16_layout(g) ? Layouts::H16_18 : Layouts::H14_15;
  for (const Harmless& h : kHarmless)
    if (h.block == b && h.offset == offset &&
        (h.on == Layouts::All || h.on == mine || (h.on == Layouts::H18 && g == Generation::H18) ||
         (h.on == Layouts::H17_18 && (g == Generation::H17 || g == Generation::H18))) &&
        (rest & ~h.any) == h.fixed)
      return &h;
  return nullptr;
}

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

bool programs_ne_alone(const Task& t) {
  bool ne = false;
  for (const auto& [address, value] : t.regs.written_words()) {
    const BlockInfo* b = t.regs.database().block_at(address);
    if (b && b->id == Block::PE) return false;
    ne |= b && b->id == Block::NE;
  }
  return ne;
}

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
  auto h13v = [&](const char* n) { return v.get(*h13_database().find(n)); };
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
    v.set(*h13_database().find("Common.ConvCfg.OCGSize"), 0);
    v.set(*h13_database().find("Common.Cfg.ChannelsInner"), 0);
    v.set(*h13_database().find("Common.GroupConvCfg.UnicastCin"), 1);
    v.set(*h13_database().find("L2.ConvResultChannelStride.Stride"), 1);
    v.set(*h13_database().find("L2.ConvResultRowStride.Stride"), h13v("Common.Cout.Cout"));
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
  v.set(*h13_database().find("Common.Broadcast.Src2ChannelsW"), 0);
  return true;
}

bool rows_copy_packing(const Task& t, RegisterImage& v, std::map<uint32_t, uint32_t>& covered) {
  const RegisterImage& g = t.regs;
  auto h13v = [&](const char* n) { return v.get(*h13_database().find(n)); };
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
  v.set(*h13_database().find("Common.ConvCfg.OCGSize"), 0);
  v.set(*h13_database().find("Common.GroupConvCfg.UnicastEn"), 0);
  v.set(*h13_database().find("Common.GroupConvCfg.UnicastCin"), 1);
  return true;
}

void abs_bits(const Task& t, std::map<uint32_t, uint32_t>& covered) {
  if (t.generation < Generation::H15) return;
  const FieldInfo* cond = t.regs.database().find("PE.Cfg.Cond");
  if (!cond || !t.regs.written(cond->address)) return;
  if ((t.regs.word(cond->address) & 0x1c0u) == 0x1c0u) covered[cond->address] |= 0x180u;
}

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
    v.set(*h13_database().find(h13_name), h);
    covered[f->address] = 0xffffffffu;
  }
  return Ok{};
}

Status l2_group_strides(const Task& t, RegisterImage& v, std::map<uint32_t, uint32_t>& covered, bool source_dma,
                        bool result_dma, std::vector<std::string>& notes) {
  const uint32_t groups = v.get(*h13_database().find("Common.GroupConvCfg.NumGroups"));
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
    v.set(*h13_database().find(s.h13_field), g.word(s.address));
    covered[s.address] = 0xffffffffu;
  }
  notes.push_back(kL2GroupNote);
  return Ok{};
}

}  // namespace ane::sim::detail
