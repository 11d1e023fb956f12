// The L2 rules of the lowering (lower_internal.h): source and result rows,
// tall tensors' strips, and macOS 26's convolution layout. Values and their
// evidence: docs/compiler.md.
#include <fmt/format.h>

#include "lower_internal.h"

namespace ane::compiler::lowering {

Strips tall_strips(const Tensor& t, bool planar) {
  Strips s;
  if (planar) {
    s.block = planar_block(t.w, t.h);
    const uint32_t lo = s.block & 0xf, hi = s.block >> 4;
    s.strip = roundup(uint64_t{std::min(t.w, 1u << lo)} * 2, 16);
    s.tile_height = std::min(t.h, 1u << hi);
  } else {
    s.strip = std::min(t.l2_channel_stride(), kNeStripMax);
    s.tile_height = t.h;
  }
  return s;
}

namespace {

// L2 configuration words shared by the source and result sides.
void l2_cfg(ImageWriter& w, const char* reg, bool alias_planar, bool buffer_mode) {
  auto f = [&](const char* field) { return fmt::format("L2.{}.{}", reg, field); };
  w.set(f(std::string(reg) == "SourceCfg" ? "SourceType" : "ResultType").c_str(), 2);
  w.set(f("AliasConvSrc").c_str(), 1);
  w.set(f("AliasConvRslt").c_str(), 1);
  w.set(f("DMAFmt").c_str(), 1);
  w.set(f("DMAInterleave").c_str(), 1);
  w.set(f("AliasPlanarSrc").c_str(), alias_planar);
  w.set(f("AliasPlanarRslt").c_str(), alias_planar);
  if (buffer_mode) w.set(f("L2BfrMode").c_str(), 1);
}

// L2 of a tall pass-through or planar-engine task: per source a buffer of
// TileHeight rows of C strips (the planar engine pads a row so that it stays
// off the 0x400-byte banks: row mod 0x400 = block width in bytes mod 0x400,
// 8x8 and 16x16 records), the sources one after the other (a second, other
// tensor 0x40 further when the first ends on 0x400), then the result.
void l2_tall(ImageWriter& w, const Ctx& c, uint32_t channels) {
  const bool alias = !c.t.concat_last_piece;
  const Strips st = tall_strips(c.src(), c.planar());
  auto row_of = [&](uint64_t ch) {
    uint64_t row = ch * st.strip;
    if (c.planar() && (st.block >> 4) > 0) {
      const uint64_t want = (uint64_t{2} << (st.block & 0xf)) % 0x400;
      while (row % 0x400 != want) row += 0x10;
    }
    return row;
  };
  const uint64_t row = row_of(channels);
  l2_cfg(w, "SourceCfg", alias, false);
  w.l2("L2.SourceChannelStride.Stride", st.strip);
  w.l2("L2.SourceRowStride.Stride", row);
  w.word("L2.Unk04814.Value", static_cast<uint32_t>(channels * st.strip));
  w.word("L2.Unk04818.Value", static_cast<uint32_t>(channels * st.strip));
  const uint64_t size = uint64_t{st.tile_height} * row;
  uint64_t result = size;
  if (c.two_sources()) {
    const Tensor& b = c.plan.tensors[c.t.src2];
    const uint64_t row_b = row_of(b.c);
    const uint64_t base2 = size + (c.t.src2 != c.t.src && size % 0x400 == 0 ? 0x40 : 0);
    w.set("L2.SourceCfg.Source2Type", 2);
    w.l2("L2.Source2Base.Addr", base2);
    w.l2("L2.Source2ChannelStride.Stride", st.strip);
    w.l2("L2.Source2RowStride.Stride", row_b);
    w.word("L2.Unk04828.Value", static_cast<uint32_t>(b.c * st.strip));
    w.word("L2.Unk0482C.Value", static_cast<uint32_t>(b.c * st.strip));
    result = base2 + uint64_t{st.tile_height} * row_b;
  }
  l2_cfg(w, "ResultCfg", alias, true);
  w.l2("L2.ResultBase.Addr", result);
}

}  // namespace

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

FlatRows flat_rows(const Ctx& c, uint32_t channels) {
  FlatRows r;
  const uint64_t row = channels * c.src().l2_channel_stride();
  if (macos26_conv_l2(c)) {
    r.source = macos26_conv_row(c);  // the result stays in L2 buffer mode
  } else if (c.t.kind == TaskKind::Conv) {
    const uint64_t out_row = uint64_t{c.t.cout} * c.dst().l2_channel_stride();
    r.source = row + l2_pad(row, 0x30);
    r.result = out_row + l2_pad(out_row, 0x20);
  } else if (c.two_sources()) {
    const Tensor& b = c.plan.tensors[c.t.src2];
    const uint64_t row_b = uint64_t{b.c} * b.l2_channel_stride();
    r.source = row + l2_pad(row, 0x20);
    r.source2 = row_b + l2_pad(row_b, 0x20);
  } else if (c.planar()) {
    r.source = row + l2_pad(row, 0x20);  // the affine of a scalar (records binary_*_constant_scalar)
  } else if (c.reduce() && c.plan.macos26()) {
    // macOS 26 (4 reduction records): 0x10 at 0x200 bytes, 0x20 at 0x400.
    r.source = row + (row >= 0x400 ? 0x20 : row >= 0x200 ? 0x10 : 0);
  } else {
    r.source = row;
  }
  return r;
}

void l2(ImageWriter& w, const Ctx& c, uint32_t channels) {
  if (c.tall()) return l2_tall(w, c, channels);
  const Tensor& s = c.src();
  const uint64_t cs = s.l2_channel_stride();
  const uint64_t row = channels * cs;
  const FlatRows rows = flat_rows(c, channels);
  const bool alias = !c.t.concat_last_piece;
  l2_cfg(w, "SourceCfg", alias, false);
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
  } else if (c.two_sources()) {
    const Tensor& b = c.plan.tensors[c.t.src2];
    const uint64_t row_b = uint64_t{b.c} * b.l2_channel_stride();
    const uint64_t base2 = roundup(rows.source, 64);
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
    l2_cfg(w, "ResultCfg", alias, true);
    w.l2("L2.ResultBase.Addr", rows.source * s.h);  // after the whole source, as for convolutions
  } else {
    l2_cfg(w, "ResultCfg", alias, true);
    w.l2("L2.ResultBase.Addr", row);
  }
}

}  // namespace ane::compiler::lowering
