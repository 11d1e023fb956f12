// H14 - H18 DMA words as H13's (packed_dma.h).
#include "packed_dma.h"

#include <fmt/format.h>

#include "ane/generation.h"

namespace ane::sim::detail {

namespace {

// The row of a per-generation table for generation g; nullptr if none.
template <typename Row, size_t N>
const Row* row_for(const Row (&table)[N], Generation g) {
  for (const Row& r : table)
    if (r.gen == g) return &r;
  return nullptr;
}

// H13's kernel DMA reading the data of descriptor entry `entry` (Header[9]);
// false when the entry does not fit KBase0.
bool set_kernel_data(RegisterImage& v, uint32_t entry) {
  const FieldInfo* kbase0 = h13_database().find("Header[9].KBase0");
  if (entry >= (1u << kbase0->width)) return false;
  v.set(*kbase0, entry);
  v.set(*h13_database().find("Header[9].KBE0"), 1);
  return true;
}

// H13's coefficient lane `lane` on, reading `size` bytes at `offset` of that data.
void set_kernel_lane(RegisterImage& v, uint32_t lane, uint32_t offset, uint32_t size) {
  const std::string n = std::to_string(lane);
  v.set(*h13_database().find(("KernelDMASrc.CoeffDMAConfig[" + n + "].En").c_str()), 1);
  v.set_word(h13_database().find(("KernelDMASrc.CoeffBaseAddr[" + n + "].Addr").c_str())->address, offset);
  v.set_word(h13_database().find(("KernelDMASrc.CoeffBfrSize[" + n + "].MemBfrSize").c_str())->address, size);
}

// The table DMA. Every table activation record writes the same words on its
// generation: H14 0x1900=0x102c0, 0x19e4=0x21, 0x1a14=0x80 (the table's 128
// bytes), and 0x19f4 and the pair 0x1a00/0x1a04 relocated to __const at
// offset 0; H15 - H17 0x5500=0x102c0, 0x5610=0x21, 0x5614=0x80 and the pair
// 0x5618/0x561c relocated at offset 0 to __const (H15) or __KERN_0 (H16,
// H17); H18 the same words two to four slots on, 0x562c, 0x5630 and the pair
// 0x5638/0x563c (sigmoid, tanh, gelu, silu, exp, sqrt, rsqrt, leaky_relu at
// C64). The table's bytes are H13's
// table words. On H13 the table is kernel lane 0: the view programs that lane
// with the same slot, offset and size.
struct TableDma {
  Generation gen;
  uint32_t first, enable, size;
  std::array<uint32_t, 3> based;  // relocated words naming the table (0: none)
  uint32_t lanes;                 // the 16 coefficient lanes' config words
  uint32_t extra_lanes;           // more lane config words, up to the table's enable (0: none)
};
constexpr TableDma kTableDmas[] = {
    {Generation::H14, 0x1900, 0x19e4, 0x1a14, {0x19f4, 0x1a00, 0x1a04}, 0x1918, 0x19d8},
    {Generation::H15, 0x5500, 0x5610, 0x5614, {0x5618, 0x561c, 0}, 0x5520, 0},
    {Generation::H16, 0x5500, 0x5610, 0x5614, {0x5618, 0x561c, 0}, 0x5520, 0},
    {Generation::H17, 0x5500, 0x5610, 0x5614, {0x5618, 0x561c, 0}, 0x5520, 0},
    {Generation::H18, 0x5500, 0x562c, 0x5630, {0x5638, 0x563c, 0}, 0x5520, 0},
};

}  // namespace

bool table_dma_written(const Task& t) {
  const TableDma* d = row_for(kTableDmas, t.generation);
  return d && t.regs.written(d->enable);
}

Status table_dma(const Task& t, RegisterImage& v, std::map<uint32_t, uint32_t>& covered) {
  const RegisterImage& g = t.regs;
  const char* gname = generation_name(t.generation);
  auto refuse = [&](const std::string& why) {
    return unsupported_in(fmt::format("{} table DMA: {}", gname, why), t.index);
  };
  const TableDma* d = row_for(kTableDmas, t.generation);
  if (!d) return refuse("not mapped on this generation");
  // The base: relocated words naming one place; the last is the high word
  // (0), the others hold the table's byte offset in that section (0, or 0x80
  // for the second table of pow's last task), 64-byte aligned.
  std::optional<uint32_t> entry;
  uint32_t offset = 0;
  const uint32_t high = d->based[2] ? d->based[2] : d->based[1];
  for (uint32_t a : d->based) {
    if (a == 0) continue;
    const RegisterStream* s = record_writing(t, a);
    const uint32_t w = g.word(a);
    if (!s || !s->relocated() || (entry && *entry != s->relocation()) || (a == high ? w != 0 : w % 64 != 0) ||
        (a != high && a != d->based[0] && w != offset))
      return refuse(fmt::format("{:#x}={:#x} is not a relocated word naming the same place as the table's other "
                                "base words (the table's address is unknown)",
                                a, w));
    if (a == d->based[0]) offset = w;
    entry = s->relocation();
  }
  // The first word is 0x102c0 in every activation record; the others differ
  // in bit 7 (0x10240, real_div's reciprocal table), inside bits 6-9 where
  // H13's CoeffDMAConfig holds its CacheHint, and in bits 16-17, which step
  // with the enable word's bits 16-17 from task to task of one program (pow:
  // 0x20240 with 0x10021, then 0x302c0 with 0x20021; a matvec's lanes
  // 0x10021 under 0x202c0), like buffer slots of a prefetch. Neither changes
  // the bytes read.
  const uint32_t first = g.word(d->first), enable = g.word(d->enable);
  if ((first & ~0xf03c0u) != 0 || (first & 0xf0000u) == 0 || (enable & ~0xf0000u) != 0x21 ||
      g.word(d->size) != 0x80)
    return refuse(fmt::format("{:#x}={:#x}, {:#x}={:#x}, {:#x}={:#x} (every record: slot bits 16-19 and a cache "
                              "hint in bits 6-9, 0x21 with slot bits, 0x80)",
                              d->first, first, d->enable, enable, d->size, g.word(d->size)));
  if (!set_kernel_data(v, *entry)) return refuse("descriptor entry out of range");
  set_kernel_lane(v, 0, offset, 0x80);
  // Coefficient lanes the task leaves disabled (bit 0, En, clear: 0x00010020
  // or 0x00020020 with pow's tables) read nothing.
  for (uint32_t a = d->lanes; d->lanes && a < d->lanes + 16 * 4; a += 4)
    if (g.written(a) && (g.word(a) & ~0xf0000u) == 0x20) covered[a] = 0xffffffffu;
  for (uint32_t a = d->extra_lanes; d->extra_lanes && a < d->enable; a += 4)
    if (g.written(a) && (g.word(a) & ~0xf0000u) == 0x20) covered[a] = 0xffffffffu;
  for (uint32_t a : {d->first, d->enable, d->size, d->based[0], d->based[1], d->based[2]})
    if (a != 0 && g.written(a)) covered[a] = 0xffffffffu;
  return Ok{};
}

// A convolution's kernel DMA (H14; docs/simulator.md, "Convolutions on H14"). Every H14
// convolution record writes H13's 16 coefficient lanes at new addresses:
// each lane's config at 0x1918 + 4 i (0x21 enabled), its offset in the
// kernel data at 0x1958 + 4 i and its size at 0x1998 + 4 i, under a base
// pair 0x1908 / 0x190c relocated to the section that holds the data, and a
// first word 0x102c0 (0x102e0 in the stride-2 form, as H13's 0x40 / 0x60).
// Both carry the slot bits (16 - 19) that step from task to task of a tiled
// program (0x20240 ... 0x902c0 with lanes 0x10021), and the first word
// H13's cache-hint bits 6 - 9, as the table DMA's do. Rule U7:
// lane 0's offset, unwritten in every record, is 0: the section's first
// lane-size bytes are lane 0's in H13's layout, whose packing of the
// record's weights hashes to the record's constant section.
constexpr const char* kLaneZeroNote = "U7: kernel lane 0's offset, unwritten, is 0 (the kernel data's first bytes)";
// Rule U8: a convolution that leaves KernelCfg unwritten has H13's fp16
// kernel (0x82): stride-1 records leave it unwritten where H13 writes 0x82
// for the same MIL, the stride-2 ones write H13's 0x182, and H13's fp16
// packing of the record's weights hashes to its constant section.
constexpr const char* kKernelCfgNote = "U8: KernelCfg unwritten in a convolution, H13's fp16 kernel (0x82)";

// Rule U9: a convolution that leaves the OCGSize word (0x1c) unwritten has
// OCGSize 3. Every other H14 convolution record writes H13's OCGSize for the
// same MIL there (0, 1, 2, 4); the four whose H13 twins have 3 leave it
// unwritten, and H13's packing of the weights of the two of stride 1 in
// chunks of 2^3 channels hashes to their constant sections.
constexpr const char* kOcgNote = "U9: OCGSize unwritten in a convolution, 3 (8-channel chunks)";

// Rule U10: an enabled lane whose size is unwritten holds 64 bytes. In the
// five records that leave sizes out (depthwise 1x1), every such lane starts
// 64 bytes before the next, and no record writes a size of 0x40; H13's
// packing of their weights hashes to their sections with 64-byte lanes there.
constexpr uint32_t kUnwrittenLaneSize = 0x40;
constexpr const char* kLaneSizeNote = "U10: a kernel lane's size, unwritten, is 64 bytes";

// H15 - H18 move the block to 0x5500 and each word after the first 8 bytes
// further up (matmul_m1_k512_n1024_ty1 on each: lanes 0x5520.., offsets
// 0x5564.. stepping 0x2000, sizes 0x55a0.., the relocated pair 0x5510).
namespace {

struct ConvKernelDma {
  Generation gen;
  uint32_t first, base, high, lane_cfg, lane_offset, lane_size;
};
constexpr ConvKernelDma kConvKernelDma[] = {
    {Generation::H14, 0x1900, 0x1908, 0x190c, 0x1918, 0x1958, 0x1998},
    {Generation::H15, 0x5500, 0x5510, 0x5514, 0x5520, 0x5560, 0x55a0},
    {Generation::H16, 0x5500, 0x5510, 0x5514, 0x5520, 0x5560, 0x55a0},
    {Generation::H17, 0x5500, 0x5510, 0x5514, 0x5520, 0x5560, 0x55a0},
    {Generation::H18, 0x5500, 0x5510, 0x5514, 0x5520, 0x5560, 0x55a0},
};

}  // namespace

Status conv_kernel_dma(const Task& t, RegisterImage& v, std::map<uint32_t, uint32_t>& covered,
                       std::vector<std::string>& notes) {
  const RegisterImage& g = t.regs;
  const char* gname = generation_name(t.generation);
  auto refuse = [&](const std::string& why) {
    return unsupported_in(fmt::format("{} convolution kernel DMA: {}", gname, why), t.index);
  };
  const ConvKernelDma* found = row_for(kConvKernelDma, t.generation);
  if (!found) return refuse("not mapped on this generation");
  const ConvKernelDma& d = *found;
  const uint32_t first = g.word(d.first);
  const bool sparse = v.get(*h13_database().find("NE.KernelCfg.SparseFmt")) != 0;
  if (!g.written(d.first) || (first & ~0xf03e0u) != 0 || (first & 0xf0000u) == 0 ||
      ((first & 0x20u) != 0) != sparse)
    return refuse(fmt::format("{:#x}={:#x} (every record: slot bits 16-19, a cache hint in bits 6-9, bit 5 with the "
                              "stride-2 form alone)",
                              d.first, first));
  const RegisterStream* low = record_writing(t, d.base);
  const RegisterStream* high = record_writing(t, d.high);
  if (!low || !low->relocated() || !high || !high->relocated() || low->relocation() != high->relocation() ||
      g.word(d.high) != 0 || g.word(d.base) % 64 != 0)
    return refuse(fmt::format("{:#x}={:#x}, {:#x}={:#x} are not a relocated pair naming the kernel data (its "
                              "address is unknown)",
                              d.base, g.word(d.base), d.high, g.word(d.high)));
  if (!set_kernel_data(v, low->relocation())) return refuse("descriptor entry out of range");
  const uint32_t base = g.word(d.base);
  bool lane_zero_rule = false, lane_size_rule = false;
  for (uint32_t lane = 0; lane < 16; ++lane) {
    const uint32_t cfg = d.lane_cfg + 4 * lane, at = d.lane_offset + 4 * lane, size = d.lane_size + 4 * lane;
    if (!g.written(cfg)) {
      if (g.written(at) || g.written(size))
        return refuse(fmt::format("lane {}'s offset or size written without its config word {:#x}", lane, cfg));
      continue;  // read nothing: a lane the layout needs is refused by name later
    }
    if ((g.word(cfg) & ~0xf0000u) != 0x21)
      return refuse(fmt::format("{:#x}={:#x} (every record's enabled lanes: 0x21 with slot bits 16-19)", cfg,
                                g.word(cfg)));
    const uint32_t bytes = g.written(size) ? g.word(size) : kUnwrittenLaneSize;  // U10
    if (bytes % 64 != 0 || bytes == 0 || (!g.written(at) && lane != 0) || g.word(at) % 64 != 0)
      return refuse(fmt::format("lane {}: offset {:#x}, size {:#x} (written, multiples of 64)", lane, g.word(at),
                                g.word(size)));
    lane_zero_rule |= !g.written(at);
    lane_size_rule |= !g.written(size);
    set_kernel_lane(v, lane, base + g.word(at), bytes);
    for (uint32_t a : {cfg, at, size})
      if (g.written(a)) covered[a] = 0xffffffffu;
  }
  if (lane_zero_rule) notes.push_back(kLaneZeroNote);
  if (lane_size_rule) notes.push_back(kLaneSizeNote);
  for (uint32_t a : {d.first, d.base, d.high}) covered[a] = 0xffffffffu;
  const FieldInfo* ocg = g.database().find("Common.OCGCfg.OCGSize");
  if (!g.written(ocg->address)) {
    v.set(*h13_database().find("Common.ConvCfg.OCGSize"), 3);
    notes.push_back(kOcgNote);
  }
  const FieldInfo* kernel_fmt = g.database().find("NE.KernelCfg.KernelFmt");
  if (!g.written(kernel_fmt->address)) {
    v.set(*h13_database().find("NE.KernelCfg.KernelFmt"), 2);
    v.set(*h13_database().find("NE.KernelCfg.PalettizedBits"), 8);
    notes.push_back(kKernelCfgNote);
  }
  return Ok{};
}

// H18 encodes the tile DMA's format words anew (docs/generations.md): every
// H18 record of an fp16 program writes 0x00003211 for its sources and
// 0xf0003211 for its result, where H13 - H17 write 0x01002031 and 0x01302031.
// Those values, and only those, are H13's fp16 formats.
Status h18_formats(const Task& t, RegisterImage& v, std::map<uint32_t, uint32_t>& covered) {
  if (t.generation != Generation::H18) return Ok{};
  struct Format {
    uint32_t address, h18, h13;
    const char* h13_field;
  };
  constexpr Format kFormats[] = {{0x4d70, 0x00003211, 0x01002031, "TileDMASrc.Fmt.FmtMode"},
                                 {0x4d74, 0x00003211, 0x00002030, "TileDMASrc.Src2Fmt.FmtMode"},
                                 {0x5140, 0xf0003211, 0x01302031, "TileDMADst.Fmt.FmtMode"}};
  const RegisterImage& g = t.regs;
  for (const Format& f : kFormats) {
    if (!g.written(f.address)) continue;
    if (g.word(f.address) != f.h18)
      return unsupported_in(word_name(g.database(), f.address, g.word(f.address)) +
                                fmt::format(" (H18's format words are known for fp16 tensors only: {:#x})", f.h18),
                            t.index);
    v.set_word(h13_database().find(f.h13_field)->address, f.h13);
    covered[f.address] = 0xffffffffu;
  }
  return Ok{};
}

}  // namespace ane::sim::detail
