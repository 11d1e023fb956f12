// What the lowering's rules share (lower.cpp, lower_l2.cpp): a task's
// context and the tall-tensor and L2-row layouts both sides read.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>

#include "image_writer.h"
#include "plan.h"

namespace ane::compiler::lowering {

constexpr uint32_t kFp16One = 0x3c00;
constexpr uint32_t kFp32One = 0x3f800000;
constexpr uint32_t kFmtFp16 = 2;  // ChCfg / KernelCfg format code of fp16

// L2 row padding once a row reaches 0x400 bytes (samples: none at 0x20-0x30,
// padding at 0x400 and 0x2000).
inline uint64_t l2_pad(uint64_t row, uint64_t pad) { return row >= 0x400 ? pad : 0; }

inline uint32_t log2_ceil(uint32_t v) { return static_cast<uint32_t>(std::bit_width(v - 1)); }

// The planar engine's block on a W x H plane, as Common.Unk0002C holds it:
// log2 width | log2 height << 4, width min(9, max(4, ceil log2 W)), height
// min(5, ceil log2 H) (seven reduction records; eiln's 0x59 at 1600 x 2560).
inline uint32_t planar_block(uint32_t w, uint32_t h, uint32_t widest = 9) {
  return std::min(widest, std::max(4u, log2_ceil(w))) | std::min(5u, log2_ceil(h)) << 4;
}
// macOS 26's reduction block is at most 64 wide (records: 0x06 on a row of
// 64, 0x26 on 4 rows of 128), and L2 holds a strip of that width of each row.
inline uint32_t reduce_block(uint32_t w, uint32_t h, bool macos26) { return planar_block(w, h, macos26 ? 6 : 9); }

// Tensors taller than one row, in pass-through and planar-engine tasks
// (docs/compiler.md, "Taller tensors"): L2 holds a strip of each row, laid
// out [row][channel][strip]. The strip widths and the planar engine's block
// are eiln's kernels' (2560 x 1600); the layout around them holds in every
// Apple record with H > 1 (mil-hwx-compiler, 15 tasks).
struct Strips {
  uint64_t strip = 0;        // bytes of one channel's row piece in L2
  uint32_t tile_height = 0;  // rows per tile
  uint32_t block = 0;        // planar engine: Common.Unk0002C (log2 block width | log2 block height << 4)
};
inline constexpr uint64_t kNeStripMax = 0x80;  // eiln: 128 bytes
// macOS 26: 256 bytes (records binary_*_c512_constant_blob task 0: rows of
// 512 values in strips of 0x100; rows of 64 values whole).
inline constexpr uint64_t kNeStripMaxMacos26 = 0x100;
// `macos26`: the planar engine's whole-plane form where it fits L2 (lower_l2.cpp).
Strips tall_strips(const Tensor& t, bool planar, bool macos26 = false);

// A tensor as a width piece of a task sees it: `cols` columns from `col`,
// the strides still the whole tensor's (cols 0: the whole tensor).
inline Tensor piece_of(Tensor t, uint32_t col, uint32_t cols) {
  if (cols == 0) return t;
  t.w = cols;
  t.offset += uint64_t{col} * 2;
  return t;
}

struct Ctx {
  Ctx(const Plan& p, const TaskPlan& task, size_t i, uint64_t kb)
      : plan(p), t(task), index(i), kbase(kb), src_(piece_of(p.tensors[task.src], task.col, task.cols)),
        dst_(piece_of(p.tensors[task.dst], task.col, task.cols)) {}
  const Plan& plan;
  const TaskPlan& t;
  size_t index;
  uint64_t kbase;
  const Tensor& src() const { return src_; }
  const Tensor& dst() const { return dst_; }
  bool last() const { return index + 1 == plan.tasks.size(); }
  // A pass-through or planar-engine task that reads its rows in strips: on a
  // tensor taller than one row; a tensor constant's copy at any height
  // (records binary_{maximum,minimum}_c512_constant_blob: one row of 0x400
  // bytes in strips of 0x100); and a planar task whose one row of all
  // channels, once per source and for the result, would pass L2's address
  // fields ([1,128,1,4096] of two sources; libane's rule, such tasks were
  // refused before).
  bool tall() const {
    const uint64_t rows = two_sources() ? 3 : 2;
    const bool too_wide = planar() && rows * src().c * src().l2_channel_stride() > kL2RowBytesMax;
    return (t.kind == TaskKind::Pass || planar()) && (src().h > 1 || dst().h > 1 || t.constant_copy || too_wide);
  }
  // An element-wise planar-engine task, of one source (affine) or two.
  bool planar() const {
    return t.kind == TaskKind::PlanarAdd || t.kind == TaskKind::PlanarMul || t.kind == TaskKind::PlanarMax ||
           t.kind == TaskKind::PlanarMin || t.kind == TaskKind::PlanarAffine;
  }
  bool two_sources() const { return t.two_source_planar(); }
  // The result stays in L2 for the next task (Tensor::Home::L2): no tile DMA out.
  bool result_in_l2() const { return dst().home == Tensor::Home::L2; }
  // The second operand is the task before's result, kept in L2.
  bool source2_in_l2() const { return t.src2 >= 0 && plan.tensors[t.src2].home == Tensor::Home::L2; }
  // A second operand that arrives by tile DMA.
  bool source2_by_dma() const { return two_sources() && !source2_in_l2(); }
  bool reduce() const { return t.kind == TaskKind::PlanarReduce; }
  // The channels the source side of L2 holds per row (Cin of the registers).
  uint32_t l2_channels() const {
    if (t.kind != TaskKind::Conv) return src().c;
    return t.depthwise ? t.cin : t.group_cin();
  }

 private:
  Tensor src_, dst_;
};

// L2 rows of a task on one-row tensors: all channels of the row side by
// side, padded once a row reaches 0x400 bytes (convolutions: the source by
// 0x30, the result by 0x20; the planar engine: both sources by 0x20; copies
// never, even at 16384 channels).
struct FlatRows {
  uint64_t source = 0, source2 = 0, result = 0;  // bytes (0: not held)
};
// A task's L2 rows on one-row tensors (v4.2.1's layout, or macOS 26's for
// convolutions; see lower_l2.cpp).
FlatRows flat_rows(const Ctx& c, uint32_t channels);

// Whether a convolution keeps macOS 26's L2 layout: its whole source in L2,
// the result after it in buffer mode.
bool macos26_conv_l2(const Ctx& c);

// Where a result kept in L2 between two tasks sits (at L2 address 0): laid
// out as the planar task that reads it lays out its second operand.
struct KeptLayout {
  uint64_t channel = 0, row = 0;  // strides, bytes
  uint32_t rows = 0;              // rows held (the tile)
  uint64_t channels_bytes = 0;    // C x channel stride (Unk04840, Unk04828)
  uint64_t size() const { return uint64_t{rows} * row; }
};
// `reader`: the two-source planar task whose second operand is kept.
KeptLayout kept_layout(const Ctx& reader);

// The L2 block of a task.
void l2(ImageWriter& w, const Ctx& c, uint32_t channels);

}  // namespace ane::compiler::lowering
