// The L2 rules of the lowering (lower_internal.h): source and result rows,
// tall tensors' strips, and macOS 26's convolution layout. Values and their
// evidence: docs/compiler.md.
#include <fmt/format.h>

#include <optional>

#include "lower_internal.h"

namespace ane::compiler::lowering {

// macOS 26's planar engine on a taller plane (records binary_*_1x64x8x8,
// _1x128x16x16, _1x3x224x224): the block holds at most 256 values, its
// height giving way to its width (0x34, 0x44, 0x08), and the tile is the
// whole plane, each row one strip of the whole width: L2 holds both sources
// and the result whole. Where three such tensors pass the L2 address fields
// (Apple then tiles by a rule no record shows) v4.2.1's blocks are kept.
static std::optional<Strips> macos26_planar_strips(const Tensor& t) {
  // v4.2.1's block, its height at most 8 - ceil log2 W.
  const uint32_t v421 = planar_block(t.w, t.h);
  Strips s;
  s.block = (v421 & 0xf) | std::min(v421 >> 4, 8 - std::min(8u, log2_ceil(t.w))) << 4;
  s.strip = round_up(uint64_t{std::min(t.w, 1u << (s.block & 0xf))} * 2, 16);
  s.tile_height = t.h;
  if (3 * (uint64_t{t.h} * t.c * s.strip + 0x400) > kL2RowBytesMax) return std::nullopt;
  return s;
}

Strips tall_strips(const Tensor& t, bool planar, bool macos26) {
  if (planar && macos26)
    if (auto s = macos26_planar_strips(t)) return *s;
  Strips s;
  if (planar) {
    s.block = planar_block(t.w, t.h);
    uint32_t lo = s.block & 0xf, hi = s.block >> 4;
    // Two sources and the result, TileHeight rows each (rows padded by less
    // than 0x400), must pass L2's 17-bit address fields. Where eiln's block
    // does not (many channels: [1,512,32,32]), its height halves, then its
    // width: libane's rule, as Apple tiles such tensors by one no record
    // shows. Blocks that fit are eiln's, unchanged.
    auto fits = [&](uint32_t l, uint32_t h) {
      const uint64_t strip = round_up(uint64_t{std::min(t.w, 1u << l)} * 2, 16);
      return 3 * uint64_t{std::min(t.h, 1u << h)} * (t.c * strip + 0x400) <= kL2RowBytesMax;
    };
    while (!fits(lo, hi) && hi > 0) --hi;
    while (!fits(lo, hi) && lo > 4) --lo;
    s.block = lo | hi << 4;
    s.strip = round_up(uint64_t{std::min(t.w, 1u << lo)} * 2, 16);
    s.tile_height = std::min(t.h, 1u << hi);
  } else {
    s.strip = std::min(t.l2_channel_stride(), macos26 ? kNeStripMaxMacos26 : kNeStripMax);
    s.tile_height = t.h;
  }
  return s;
}

namespace {

// L2 configuration words shared by the source and result sides.
void l2_cfg(ImageWriter& w, const char* reg, bool alias_planar, bool buffer_mode, bool alias_conv = true) {
  auto f = [&](const char* field) { return fmt::format("L2.{}.{}", reg, field); };
  w.set(f(std::string(reg) == "SourceCfg" ? "SourceType" : "ResultType").c_str(), 2);
  w.set(f("AliasConvSrc").c_str(), alias_conv);
  w.set(f("AliasConvRslt").c_str(), alias_conv);
  w.set(f("DMAFmt").c_str(), 1);
  w.set(f("DMAInterleave").c_str(), 1);
  w.set(f("AliasPlanarSrc").c_str(), alias_planar);
  w.set(f("AliasPlanarRslt").c_str(), alias_planar);
  if (buffer_mode) w.set(f("L2BfrMode").c_str(), 1);
}

// A tall task's L2 row of `channels` strips. The planar engine pads a row so
// that it stays off the 0x400-byte banks: row mod 0x400 = block width in
// bytes mod 0x400 (8x8 and 16x16 records).
uint64_t tall_row(const Strips& st, bool planar, uint64_t channels) {
  uint64_t row = channels * st.strip;
  if (planar && (st.block >> 4) > 0) {
    const uint64_t want = (uint64_t{2} << (st.block & 0xf)) % 0x400;
    while (row % 0x400 != want) row += 0x10;
  }
  return row;
}

// The layout of a result kept in L2 that this task writes or reads, if any.
std::optional<KeptLayout> kept_here(const Ctx& c) {
  if (c.source2_in_l2()) return kept_layout(c);
  if (c.result_in_l2()) return kept_layout(Ctx(c.plan, c.plan.tasks[c.index + 1], c.index + 1, 0));
  return std::nullopt;
}

// The result side of a task whose result stays in L2 at 0 (records
// binary_real_div_* task 0): ResultType 0, no buffer mode, the reader's
// strides in ConvResult*.
void kept_result(ImageWriter& w, const KeptLayout& k, bool alias) {
  l2_cfg(w, "ResultCfg", alias, false);
  w.set("L2.ResultCfg.ResultType", 0);
  w.l2("L2.ResultBase.Addr", 0);
  w.l2("L2.ConvResultChannelStride.Stride", k.channel);
  w.l2("L2.ConvResultRowStride.Stride", k.row);
  w.word("L2.Unk04840.Value", static_cast<uint32_t>(k.channels_bytes));
}

// The second-operand side of a planar task reading a kept result (records
// binary_real_div_* task 1): Source2Type 0 at L2 address 0, Unk0482C 0.
void kept_source2(ImageWriter& w, const KeptLayout& k) {
  w.set("L2.SourceCfg.Source2Type", 0);
  w.l2("L2.Source2Base.Addr", 0);
  w.l2("L2.Source2ChannelStride.Stride", k.channel);
  w.l2("L2.Source2RowStride.Stride", k.row);
  w.word("L2.Unk04828.Value", static_cast<uint32_t>(k.channels_bytes));
}

// L2 of a tall pass-through or planar-engine task: per source a buffer of
// TileHeight rows of C strips (tall_row), the sources one after the other (a
// second, other tensor 0x40 further when the first ends on 0x400), then the
// result. A result kept between two tasks comes first, at 0.
void l2_tall(ImageWriter& w, const Ctx& c, uint32_t channels) {
  const bool alias = !c.t.concat_last_piece;
  const Strips st = tall_strips(c.src(), c.planar(), c.plan.macos26());
  uint64_t row = tall_row(st, c.planar(), channels);
  // macOS 26 pads a neural-engine source row by 0x30 from 0x400 bytes, as a
  // convolution's (records binary_real_div_* task 0: 0x430, 0x1030;
  // reduce_probe_max_ax1_*).
  if (c.plan.macos26() && !c.planar()) row += l2_pad(row, 0x30);
  const auto kept = kept_here(c);
  const uint64_t base = kept ? kept->size() : 0;
  // A reader of a kept result: the planar aliases off on both sides, and the
  // convolution aliases on the result side (records binary_real_div_* task 1).
  l2_cfg(w, "SourceCfg", alias && !c.source2_in_l2(), false);
  w.l2("L2.SourceBase.Addr", base);
  w.l2("L2.SourceChannelStride.Stride", st.strip);
  w.l2("L2.SourceRowStride.Stride", row);
  w.word("L2.Unk04814.Value", static_cast<uint32_t>(channels * st.strip));
  w.word("L2.Unk04818.Value", static_cast<uint32_t>(channels * st.strip));
  const uint64_t size = uint64_t{st.tile_height} * row;
  uint64_t result = base + size;
  if (c.source2_in_l2()) {
    kept_source2(w, *kept);
  } else if (c.two_sources()) {
    const Tensor& b = c.plan.tensors[c.t.src2];
    const uint64_t row_b = tall_row(st, true, b.c);
    const uint64_t base2 = size + (c.t.src2 != c.t.src && size % 0x400 == 0 ? 0x40 : 0);
    w.set("L2.SourceCfg.Source2Type", 2);
    w.l2("L2.Source2Base.Addr", base2);
    w.l2("L2.Source2ChannelStride.Stride", st.strip);
    w.l2("L2.Source2RowStride.Stride", row_b);
    w.word("L2.Unk04828.Value", static_cast<uint32_t>(b.c * st.strip));
    w.word("L2.Unk0482C.Value", static_cast<uint32_t>(b.c * st.strip));
    result = base2 + uint64_t{st.tile_height} * row_b;
  }
  if (c.result_in_l2()) return kept_result(w, *kept, alias);
  l2_cfg(w, "ResultCfg", alias && !c.source2_in_l2(), true, !c.source2_in_l2());
  w.l2("L2.ResultBase.Addr", result);
}

}  // namespace

KeptLayout kept_layout(const Ctx& reader) {
  const Tensor& b = reader.plan.tensors[reader.t.src2];
  KeptLayout k;
  if (reader.t.constant_operand) {
    // A tensor constant's section: one channel of R rows of C values, each
    // row whole, padded by 0x20 from 0x400 bytes when there is a second row
    // (records binary_*_c512_constant_blob: 0x420 with two rows, 0x400 with
    // one; _c64_: 0x80).
    k.channel = b.l2_channel_stride();
    k.row = k.channel + (b.h > 1 ? l2_pad(k.channel, 0x20) : 0);
    k.rows = b.h;
  } else if (reader.tall()) {
    const Strips st = tall_strips(reader.src(), true, reader.plan.macos26());
    k.channel = st.strip;
    k.row = tall_row(st, true, b.c);
    k.rows = st.tile_height;
  } else {
    k.channel = b.l2_channel_stride();
    const uint64_t row = uint64_t{b.c} * k.channel;
    k.row = row + l2_pad(row, 0x20);
    k.rows = 1;
  }
  k.channels_bytes = uint64_t{b.c} * k.channel;
  return k;
}

}  // namespace ane::compiler::lowering

namespace ane::compiler {

bool kept_fits(const Plan& plan, size_t reader) {
  using namespace lowering;
  const Ctx r(plan, plan.tasks[reader], reader, 0);
  const Tensor& s = r.src();
  uint64_t source = 0;  // the reader's own source rows, as many as its result's
  if (r.tall()) {
    // The neural engine cuts rows in strips of at most kNeStripMax bytes, the
    // planar engine in its block's width: the same strips up to 64 values. (A
    // tensor constant's copy is laid out whole, whatever the reader's strips.)
    if (s.w > 64 && !r.t.constant_operand) return false;
    const Strips st = tall_strips(s, true, plan.macos26());
    source = uint64_t{st.tile_height} * tall_row(st, true, s.c);
  } else {
    source = flat_rows(r, s.c).source;
  }
  return kept_layout(r).size() + 2 * source <= kL2RowBytesMax;
}

}  // namespace ane::compiler

namespace ane::compiler::lowering {

// macOS 26 holds a convolution's whole source in L2 and its result after it
// (records), its rows padded 0x20 from 0x200 bytes at stride 2 or below
// 0x400, else 0x30. Where that passes the L2 address fields (Apple then
// tiles, by a rule the records do not pin down), hwx-build keeps v4.2.1's
// layout. One decision, read by the L2 rows, the L2 result and the tile DMA.
static uint64_t macos26_conv_row(const Ctx& c) {
  const uint64_t row = c.l2_channels() * c.src().l2_channel_stride();
  return row + (row < 0x200 ? 0 : c.t.stride == 2 || row < 0x400 ? 0x20 : 0x30);
}
bool macos26_conv_l2(const Ctx& c) {
  return c.plan.macos26() && c.t.kind == TaskKind::Conv && macos26_conv_row(c) * c.src().h <= kL2RowBytesMax;
}

// A planar-engine source row in L2: padded by 0x20 from 0x400 bytes; macOS
// 26 also keeps it at least 0x20 bytes (record binary_add_1x1x1x1: one
// channel's 0x10-byte row at stride 0x20).
static uint64_t planar_row(const Ctx& c, uint64_t row) {
  return std::max<uint64_t>(row + l2_pad(row, 0x20), c.plan.macos26() ? 0x20 : 0);
}

// L2's bytes per channel row of a task's source: the whole row, but for
// macOS 26's reductions a strip of the block's width (record
// reduce_probe_sum_ax3_1x1x1x512: rows of 128 values in strips of 64).
static uint64_t l2_source_channel_stride(const Ctx& c) {
  const uint64_t whole = c.src().l2_channel_stride();
  if (!(c.reduce() && c.plan.macos26())) return whole;
  return std::min<uint64_t>(whole, uint64_t{2} << (reduce_block(c.src().w, c.src().h, true) & 0xf));
}

FlatRows flat_rows(const Ctx& c, uint32_t channels) {
  FlatRows r;
  const uint64_t row = channels * l2_source_channel_stride(c);
  if (macos26_conv_l2(c)) {
    r.source = macos26_conv_row(c);  // the result stays in L2 buffer mode
  } else if (c.t.kind == TaskKind::Conv) {
    const uint64_t out_row = uint64_t{c.t.cout} * c.dst().l2_channel_stride();
    r.source = row + l2_pad(row, 0x30);
    r.result = out_row + l2_pad(out_row, 0x20);
  } else if (c.two_sources()) {
    const Tensor& b = c.plan.tensors[c.t.src2];
    const uint64_t row_b = uint64_t{b.c} * b.l2_channel_stride();
    r.source = planar_row(c, row);
    r.source2 = planar_row(c, row_b);
  } else if (c.planar()) {
    r.source = planar_row(c, row);  // the affine of a scalar (records binary_*_constant_scalar)
  } else if (c.reduce() && c.plan.macos26()) {
    // macOS 26 (4 reduction records): 0x10 at 0x200 bytes, 0x20 at 0x400.
    r.source = row + (row >= 0x400 ? 0x20 : row >= 0x200 ? 0x10 : 0);
  } else {
    r.source = row;
  }
  return r;
}

void l2(ImageWriter& w, const Ctx& c, uint32_t channels) {
  // A maximum pads with L2Cfg.PaddingMode 1: over channels (records
  // reduce_probe_max_ax1_*, eiln softmax's max) and over planes (records
  // reduce_max_axes_2_3, reduce_probe_max_ax2_3_1x128x16x16, _ax3_1x1x1x64).
  if (c.t.channel_max || (c.reduce() && c.t.reduce_max)) w.set("L2.L2Cfg.PaddingMode", 1);
  if (c.tall()) return l2_tall(w, c, channels);
  const Tensor& s = c.src();
  const uint64_t cs = l2_source_channel_stride(c);
  const uint64_t row = channels * cs;
  const FlatRows rows = flat_rows(c, channels);
  const bool alias = !c.t.concat_last_piece;
  const auto kept = kept_here(c);
  l2_cfg(w, "SourceCfg", alias && !c.source2_in_l2(), false);
  if (kept) w.l2("L2.SourceBase.Addr", kept->size());  // after the kept result
  w.l2("L2.SourceChannelStride.Stride", cs);
  w.word("L2.Unk04814.Value", static_cast<uint32_t>(row));
  w.word("L2.Unk04818.Value", static_cast<uint32_t>(row));
  w.l2("L2.SourceRowStride.Stride", rows.source);
  if (macos26_conv_l2(c)) {
    // The result follows the whole source (all its rows), in buffer mode.
    l2_cfg(w, "ResultCfg", alias, true);
    w.l2("L2.ResultBase.Addr", rows.source * s.h);
  } else if (c.t.kind == TaskKind::Conv) {
    const Tensor& d = c.dst();
    const uint64_t out_row = uint64_t{c.t.cout} * d.l2_channel_stride();
    l2_cfg(w, "ResultCfg", alias, false);
    w.l2("L2.ResultBase.Addr", rows.source);
    w.l2("L2.ConvResultChannelStride.Stride", d.l2_channel_stride());
    w.l2("L2.ConvResultRowStride.Stride", rows.result);
    w.word("L2.Unk04840.Value", static_cast<uint32_t>(out_row));
    w.word("L2.Unk04844.Value", static_cast<uint32_t>(out_row));
  } else if (c.source2_in_l2()) {
    kept_source2(w, *kept);
    l2_cfg(w, "ResultCfg", false, true, false);
    w.l2("L2.ResultBase.Addr", kept->size() + rows.source);
  } else if (c.two_sources()) {
    const Tensor& b = c.plan.tensors[c.t.src2];
    const uint64_t row_b = uint64_t{b.c} * b.l2_channel_stride();
    const uint64_t base2 = round_up(rows.source, 64);
    w.set("L2.SourceCfg.Source2Type", 2);  // the second source arrives by tile DMA
    w.l2("L2.Source2Base.Addr", base2);
    w.l2("L2.Source2ChannelStride.Stride", b.l2_channel_stride());
    w.l2("L2.Source2RowStride.Stride", rows.source2);
    w.word("L2.Unk04828.Value", static_cast<uint32_t>(row_b));
    w.word("L2.Unk0482C.Value", static_cast<uint32_t>(row_b));
    l2_cfg(w, "ResultCfg", alias, true);
    w.l2("L2.ResultBase.Addr", base2 + rows.source2);
  } else if (c.planar()) {
    l2_cfg(w, "ResultCfg", alias, true);
    w.l2("L2.ResultBase.Addr", rows.source);  // after the padded source row
  } else if (c.reduce() && c.plan.macos26()) {
    l2_cfg(w, "ResultCfg", alias, !c.t.out_channels_w);
    w.l2("L2.ResultBase.Addr", rows.source * s.h);  // after the whole source, as for convolutions
    if (c.t.out_channels_w) {
      // One row of C results: ResultType 1 and its row in ConvResult*
      // (records reduce_probe_*_ax2_3_1x64x8x8_flat: 0x80 each).
      const uint64_t out_row = c.dst().l2_channel_stride();
      w.set("L2.ResultCfg.ResultType", 1);
      w.l2("L2.ConvResultChannelStride.Stride", out_row);
      w.l2("L2.ConvResultRowStride.Stride", out_row);
      w.word("L2.Unk04840.Value", static_cast<uint32_t>(out_row));
      w.word("L2.Unk04844.Value", static_cast<uint32_t>(out_row));
    }
  } else if (c.result_in_l2()) {
    kept_result(w, *kept, alias);
  } else {
    l2_cfg(w, "ResultCfg", alias, true);
    w.l2("L2.ResultBase.Addr", row);
  }
}

}  // namespace ane::compiler::lowering
