// The generation layer's tables and name rules (packed_rules.h).
#include "packed_rules.h"

#include <algorithm>

#include "packed_dma.h"

namespace ane::sim::detail {

namespace {

const RegisterDatabase& h13() { return h13_database(); }

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
  const BlockInfo& l2 = h13().block(Block::L2);
  if (offset >= 4 * l2.words) return false;
  const auto fields = h13().fields_at(Block::L2, l2.base + offset);
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

}  // namespace ane::sim::detail
