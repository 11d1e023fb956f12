// Lowering rules: one function per task kind fills a RegisterImage by field
// name. Values and their evidence: plist-to-hwx.md sections 6 and 9 (summed
// up in docs/compiler.md). Registers a rule does not set stay 0.
#include <algorithm>
#include <bit>

#include <fmt/format.h>

#include "lower_internal.h"

namespace ane::compiler {

using namespace lowering;

namespace {

// Number of neural-engine cores a task spreads over: 1 + ceil(log2(lanes)).
uint32_t engines_for(uint32_t channels) {
  const uint32_t lanes = std::min<uint32_t>(channels, 16);
  uint32_t log = 0;
  while ((1u << log) < lanes) ++log;
  return 1 + log;
}

// The fp16 tensor format of every DMA in the samples: FmtMode 1, Truncate 3,
// MemFmt 2, Interleave 1 (0x01002031).
void tensor_format(ImageWriter& w, const std::string& reg) {
  w.set((reg + ".FmtMode").c_str(), 1);
  w.set((reg + ".Truncate").c_str(), 3);
  w.set((reg + ".MemFmt").c_str(), 2);
  w.set((reg + ".Interleave").c_str(), 1);
}


// macOS 26's cycle estimate (v4.2.1 writes 0), where the records show its
// rule: a neural-engine pass-through or element-wise planar task on one-value
// planes (1xCx1x1) costs 72 per MiB its tile DMA reads (records: add, sub,
// mul, maximum, minimum at C = 64 - 4096: C x 9 / 1024; abs, the tables, the
// scalar ops and the channel maxima: C x 9 / 2048; real_div's two tasks).
// Elsewhere (convolutions, reductions, taller planes) no rule is known: 0.
uint32_t exe_cycles(const Ctx& c) {
  const Tensor& s = c.src();
  const bool one_value = s.h == 1 && s.w == 1 && c.dst().h == 1 && c.dst().w == 1;
  if (!one_value || !(c.planar() || c.t.kind == TaskKind::Pass)) return 0;
  uint64_t bytes = uint64_t{s.c} * s.plane_stride;
  if (c.source2_by_dma()) {
    const Tensor& b = c.plan.tensors[c.t.src2];
    bytes += uint64_t{b.c} * b.plane_stride;
  }
  return static_cast<uint32_t>(bytes * 72 >> 20);
}

void header(ImageWriter& w, const Ctx& c, uint32_t engines, uint64_t next_at) {
  const bool last = c.last();
  w.set("Header[0].TID", c.index);
  w.set("Header[0].LNID", last && c.plan.tasks.size() > 1);
  w.set("Header[0].EON", last);
  // The next task's words, minus 1 (v4.2.1: always 0x9c).
  w.set("Header[1].NextSize",
        last ? 0 : task_words(task_stream_layout(c.plan, c.plan.tasks[c.index + 1])) - 1);
  // macOS 26 also sets bit 3 on the first task (records: 0x42a on one-task
  // programs; 0x408, 0x422 on the two tasks of binary_real_div_* and
  // binary_*_constant_blob).
  const bool first_bit = c.plan.macos26() && c.index == 0;
  w.set("Header[2].LogEvents", (last ? 0x422 : 0x400) | (first_bit ? 0x8 : 0));
  w.set("Header[1].ExeCycles", c.plan.macos26() ? exe_cycles(c) : 0);
  w.set("Header[4].DebugLogEvents",
        ((c.t.compiler_copy ? 0x68 : 0xfff868) & ~(c.t.clears_debug_event_13 ? 0x2000u : 0u)) + (last ? 2 : 0));
  // A result kept in L2 clears the tile-DMA write bits (TSR, TSE, DstLoc,
  // WBE); a second operand read from L2 clears SPL and the second read
  // (records binary_real_div_*).
  const bool writes = !c.result_in_l2();
  w.set("Header[6].SPL", !c.source2_in_l2());
  w.set("Header[6].TSR", writes);
  w.set("Header[6].TSE", writes);
  w.set("Header[6].SrcLoc", 1);
  w.set("Header[6].DstLoc", writes);
  w.set("Header[7].NextPointer", last ? 0 : next_at);
  w.set("Header[8].RBase0", c.src().slot);
  w.set("Header[8].RBE0", 1);
  if (c.t.src2 >= 0 && !c.source2_in_l2()) {
    w.set("Header[8].RBase1", c.plan.tensors[c.t.src2].slot);
    w.set("Header[8].RBE1", 1);
  }
  if (writes) {
    w.set("Header[8].WBase", c.dst().slot);
    w.set("Header[8].WBE", 1);
  }
  w.set("Header[8].TBase", kTextSlot);
  w.set("Header[8].TBE", !last);
  w.set("Header[8].ENE", engines);
  if (c.t.reads_kernel()) {
    w.set("Header[9].KBase0", kConstSlot);
    w.set("Header[9].KBE0", 1);
  }
}

void kernel_dma(ImageWriter& w, const Ctx& c) {
  const bool macos26 = c.plan.macos26();
  if (macos26) {
    // Four unnamed words 0x40 on every task (records, all kinds).
    for (const char* f : {"KernelDMASrc.Unk1F8E8.Value", "KernelDMASrc.Unk1F8EC.Value", "KernelDMASrc.Unk1F8F0.Value",
                          "KernelDMASrc.Unk1F8F4.Value"})
      w.word(f, 0x40);
  }
  // v4.2.1: the planar engine reads no kernel data and the block stays 0;
  // macOS 26 writes the cache hints and 0x1F8C8 - 0x1F8D4 there too.
  if (c.planar() && !macos26) return;
  // 0x40 with kernel data, 0x60 with the zero-skipping form (records).
  if (c.t.reads_kernel()) w.word("KernelDMASrc.Unk1F800.Value", c.t.sparse ? 0x60 : 0x40);
  // Unused lanes: 0x40 bytes in v4.2.1; macOS 26 writes 0 on a relu (no table).
  // A table read by fewer than 16 lanes leaves 0x40 in the others (record unary_sqrt_c1).
  const bool no_table_pass = c.t.kind == TaskKind::Pass && !c.t.kernel_is_table;
  const uint64_t unused_size = c.planar() || (macos26 && (no_table_pass || c.reduce())) ? 0 : 0x40;
  for (size_t i = 0; i < 16; ++i) {
    const bool used = i < c.t.lane_offsets.size();
    w.set(fmt::format("KernelDMASrc.CoeffDMAConfig[{}].En", i).c_str(), used);
    w.set(fmt::format("KernelDMASrc.CoeffDMAConfig[{}].CacheHint", i).c_str(), 2);
    if (used) w.dma(fmt::format("KernelDMASrc.CoeffBaseAddr[{}].Addr", i).c_str(), c.kbase + c.t.lane_offsets[i]);
    w.dma(fmt::format("KernelDMASrc.CoeffBfrSize[{}].MemBfrSize", i).c_str(), used ? c.t.lane_sizes[i] : unused_size);
  }
  for (const char* f : {"KernelDMASrc.Unk1F8C8.Value", "KernelDMASrc.Unk1F8CC.Value", "KernelDMASrc.Unk1F8D0.Value",
                        "KernelDMASrc.Unk1F8D4.Value"})
    w.word(f, 0x80);
}

void common(ImageWriter& w, const Ctx& c, uint32_t cin, uint32_t cout, uint32_t engines) {
  const Tensor& s = c.src();
  const Tensor& d = c.dst();
  w.set("Common.InDim.Win", s.w);
  w.set("Common.InDim.Hin", s.h);
  w.set("Common.InDepth.Din", 1);
  w.set("Common.ChCfg.InFmt", kFmtFp16);
  if (c.two_sources()) w.set("Common.ChCfg.Src2InFmt", kFmtFp16);
  w.set("Common.ChCfg.OutFmt", kFmtFp16);
  w.set("Common.Cin.Cin", cin);
  w.set("Common.Cout.Cout", cout);
  // A reduction keeps OutDim = InDim (records); the engine writes one value per plane.
  w.set("Common.OutDim.Wout", c.reduce() ? s.w : d.w);
  w.set("Common.OutDim.Hout", c.reduce() ? s.h : d.h);
  w.set("Common.OutDepth.Dout", 1);
  const bool conv = c.t.kind == TaskKind::Conv;
  // The window: leading pads only; the trailing ones follow from OutDim.
  w.set("Common.ConvCfg.Kw", conv ? c.t.kw : 1);
  w.set("Common.ConvCfg.Kh", conv ? c.t.kh : 1);
  w.set("Common.ConvCfg.Sx", conv ? c.t.stride : 1);
  w.set("Common.ConvCfg.Sy", conv ? c.t.stride : 1);
  w.set("Common.ConvCfg.Px", conv ? c.t.pad_left : 0);
  w.set("Common.ConvCfg.Py", conv ? c.t.pad_top : 0);
  w.set("Common.ConvCfg.Ox", 1);
  w.set("Common.ConvCfg.Oy", 1);
  w.set("Common.ConvCfg.OCGSize", c.t.ocg_size);
  w.word("Common.Unk00020.Value", 0x2041);
  w.set("Common.GroupConvCfg.NumGroups", conv ? c.t.groups : c.t.row_groups ? c.t.row_groups : 1);
  // A channel maximum unicasts every input channel (records reduce_probe_max_ax1_*: C).
  w.set("Common.GroupConvCfg.UnicastCin", c.t.channel_max ? cin : 1);
  w.set("Common.GroupConvCfg.UnicastEn", c.t.kind == TaskKind::Pass || (conv && c.t.depthwise));
  // One tile of the whole output (v4.2.1 samples: 1 row; records: Hout),
  // but planar-engine blocks on taller tensors.
  const Strips strips = c.tall() ? tall_strips(s, c.planar(), c.plan.macos26()) : Strips{};
  w.set("Common.TileCfg.TileHeight", c.reduce() ? s.h : c.tall() ? strips.tile_height : d.h);
  if (c.reduce()) {
    w.word("Common.Unk0002C.Value", reduce_block(s.w, s.h, c.plan.macos26()));
    // The C results along W of one row (records reduce_probe_*_ax2_3_1x64x8x8_flat).
    if (c.t.out_channels_w) w.set("Common.Broadcast.OutChannelsW", 1);
    w.set("Common.Cfg.UnkBit0", 1);
    w.set("Common.Cfg.TaskType", 5);  // the planar engine reducing each plane
    return;
  }
  if (c.planar()) {
    w.word("Common.Unk0002C.Value", c.tall() ? strips.block : 4);
    // Bit 1 with a second source by tile DMA only (records
    // binary_*_constant_scalar and binary_real_div_* task 1: 0).
    w.set("Common.Cfg.UnkBit0", 1);
    w.set("Common.Cfg.UnkBit1", c.source2_by_dma());
    // A tensor constant kept in L2 is read one value per channel.
    if (c.t.constant_operand) w.set("Common.Broadcast.Src2ChannelsW", 1);
    // The planar engine with two operands (3) or one (2); 4: (a + b) * c
    // with c the second operand's next row (records binary_{add,sub,mul}_c*_constant_blob).
    const bool scaled = c.t.constant_operand && c.t.kind == TaskKind::PlanarAdd;
    w.set("Common.Cfg.TaskType", scaled ? 4 : c.two_sources() ? 3 : 2);
    return;
  }
  w.set("Common.Cfg.UnkBit0", 1);
  w.set("Common.Cfg.ActiveNE", engines - 1);
  if (c.t.kind == TaskKind::Conv) {
    // Set exactly when the output is at most 8x8 (every record, both
    // compiler versions). It is more than a hint: stride-2 kernels give each
    // kernel position 4 channel slots under it, 2 without (conv_sparse.cpp).
    const bool small = d.w <= 8 && d.h <= 8;
    w.set("Common.Cfg.SmallSourceMode", small);
    if (c.plan.macos26() && !small) {
      // macOS 26 on larger outputs: ShMax 7 - ceil(log2 Wout), between 0 and
      // 4 (3 at 9 - 16 columns, 2 at 17 - 32, 1 at 33 - 64, 0 from 65; 4 on a
      // column: 482 of the 483 one-task convolution records, the encoder
      // records of 375 and 1500 rows among them; the exception,
      // encoder_conv_idx_c8_n8_k1x1_s1_g8_bias0_valid_pad, writes 3 at 750
      // columns). ShPref and ShMin equal it at stride 1 on at most 32 output
      // rows when a kernel larger than 1x1 has at least 576 taps per output
      // channel (3x3 over 64 channels a group; over 32: 0), or a 1x1 kernel
      // has at least 512 input and 512 output channels (the 1x1 records over
      // 64 - 1024 channels each way: exactly at c512/c1024 x n512/n1024),
      // else 0 (conv_probe_k3_c64_n64_s32_st1: 2 at 32 rows; _s32_st2: stride
      // 2, 0; _s64_st1: 62 and 64 rows, 0).
      const uint32_t sh_max = 7 - std::min(7u, std::max(3u, log2_ceil(d.w)));
      const uint32_t taps = (c.t.depthwise ? 1 : c.t.group_cin()) * c.t.kh * c.t.kw;
      const bool pointwise = c.t.kh * c.t.kw == 1;
      const bool busy = pointwise ? taps >= 512 && cout >= 512 : taps >= 576;
      const uint32_t pref = busy && c.t.stride == 1 && d.h <= 32 ? sh_max : 0;
      w.set("Common.Cfg.ShPref", pref);
      w.set("Common.Cfg.ShMin", pref);
      w.set("Common.Cfg.ShMax", sh_max);
    } else {
      w.set("Common.Cfg.ShPref", 4);
      w.set("Common.Cfg.ShMin", 4);
      w.set("Common.Cfg.ShMax", 4);
    }
    // 1 for 2-64 output channels, 0 for 512 (the rule between is not known);
    // macOS 26: 0 (all 67 convolution records).
    w.set("Common.Cfg.AccDoubleBufEn", !c.plan.macos26() && cout < 512);
  } else if (c.plan.macos26()) {
    // macOS 26: ShMax alone, log2 of the rows up to 3: none on one-row
    // planes (the unary records at 1x1, the copies of
    // reduce_probe_*_ax1_1x1x1x64 and _x512), 2 at 4x4
    // (reduce_probe_max_ax1_1x32x4x4), 3 at 8x8 and 16x16 (binary_real_div_*
    // task 0, reduce_max_axes_1, reduce_probe_max_ax1_1x128x16x16).
    for (const char* f : {"Common.Cfg.ShPref", "Common.Cfg.ShMin", "Common.Cfg.AccDoubleBufEn"}) w.set(f, 0);
    // 0 where each row takes several strips (binary_{add,sub,mul}_c512_constant_blob
    // task 0: two rows of 0x400 bytes in strips of 0x100; _c64_: one strip, 1).
    const bool strips_per_row = c.tall() && strips.strip < s.l2_channel_stride();
    w.set("Common.Cfg.ShMax", strips_per_row ? 0 : std::min(3u, log2_ceil(s.h)));
  } else {
    w.set("Common.Cfg.ShPref", 1);
    // 1 at widths 1 and 16, 0 at 77 (one row); 1 on eiln's 2560 x 1600 (a 128-byte strip).
    w.set("Common.Cfg.ShMin", c.tall() || s.w <= 16);
    w.set("Common.Cfg.ShMax", 1);
    w.set("Common.Cfg.AccDoubleBufEn", !c.plan.macos26());  // macOS 26: 0 on every record
  }
  w.set("Common.TaskInfo.NID", 1);
}

void tile_dma_src(ImageWriter& w, const Ctx& c, uint32_t channels, uint32_t group_channels) {
  const Tensor& s = c.src();
  w.set("TileDMASrc.DMAConfig.En", 1);
  w.set("TileDMASrc.DMAConfig.CacheHint", 2);
  w.set("TileDMASrc.DMAConfig.CacheHintReuse", 14);
  w.set("TileDMASrc.DMAConfig.CacheHintNoReuse", 12);
  w.set("TileDMASrc.Src2DMAConfig.CacheHint", 2);
  w.set("TileDMASrc.Src2DMAConfig.CacheHintReuse", c.source2_by_dma() ? 14 : 2);
  w.set("TileDMASrc.Src2DMAConfig.CacheHintNoReuse", c.source2_by_dma() ? 12 : 2);
  w.dma("TileDMASrc.BaseAddr.Addr", s.offset);
  w.dma("TileDMASrc.RowStride.Stride", s.row_stride);
  w.dma("TileDMASrc.PlaneStride.PlaneStride", s.plane_stride);
  const uint64_t depth = s.depth_stride ? s.depth_stride : uint64_t{channels} * s.plane_stride;
  w.dma("TileDMASrc.DepthStride.Stride", depth);
  // Groups of a grouped convolution follow each other (records: Cin/groups
  // planes); macOS 26 writes the whole tensor for one group.
  if (c.t.row_groups)
    w.dma("TileDMASrc.GroupStride.Stride", c.plan.tensors[s.view_of].row_stride);
  else if (group_channels != channels)
    w.dma("TileDMASrc.GroupStride.Stride", uint64_t{group_channels} * s.plane_stride);
  else if (c.plan.macos26())
    w.dma("TileDMASrc.GroupStride.Stride", depth);
  tensor_format(w, "TileDMASrc.Fmt");
  if (c.source2_by_dma()) {
    const Tensor& b = c.plan.tensors[c.t.src2];
    w.dma("TileDMASrc.Src2RowStride.Stride", b.row_stride);
    w.dma("TileDMASrc.Src2PlaneStride.PlaneStride", b.plane_stride);
    w.dma("TileDMASrc.Src2DepthStride.Stride", uint64_t{b.c} * b.plane_stride);
    if (c.plan.macos26()) w.dma("TileDMASrc.Src2GroupStride.Stride", uint64_t{b.c} * b.plane_stride);
    w.set("TileDMASrc.Src2Fmt.Truncate", 3);
    w.set("TileDMASrc.Src2Fmt.MemFmt", 2);
  }
  if (!c.planar() || c.plan.macos26()) w.word("TileDMASrc.Unk13840.Value", 0x100);
}

void planar_engine(ImageWriter& w, const Ctx& c) {
  if (c.reduce()) {
    w.set("PE.Cfg.PoolMode", c.t.reduce_max ? 2 : 0);
    w.set("PE.BiasScale.Scale", kFp16One);
    w.set("PE.PreScale.PreScale", kFp16One);
    w.set("PE.FinalScale.FinalScale", c.t.final_scale);
    return;
  }
  if (!c.planar()) return;
  // SecSrc 0: one source (y = Scale x + Bias, the affine of a scalar operand).
  w.set("PE.Cfg.SecSrc", !c.two_sources() ? 0 : c.t.subtract_second ? 3 : 2);
  // OpMode 0 add, 1 mul, 2 max, 3 min (docs/simulator.md, "Planar engine").
  const uint32_t op = c.t.kind == TaskKind::PlanarMul ? 1 : c.t.kind == TaskKind::PlanarMax ? 2
                      : c.t.kind == TaskKind::PlanarMin ? 3 : 0;
  w.set("PE.Cfg.OpMode", op);
  w.set("PE.Cfg.Cond", c.t.absolute);  // |y| (records unary_abs_*)
  w.set("PE.BiasScale.Scale", c.t.scale);
  w.set("PE.BiasScale.Bias", c.t.pe_bias);
  w.set("PE.PreScale.PreScale", c.t.pre_scale);
  w.set("PE.FinalScale.FinalScale", kFp32One);
}

void neural_engine(ImageWriter& w, const Ctx& c) {
  if (c.planar() && !c.plan.macos26()) return;
  w.set("NE.KernelCfg.PalettizedBits", 8);
  w.set("NE.MACCfg.UnkBit20", 1);
  if (c.reduce() || c.planar()) return;  // the neural engine idles (records: KernelCfg 0x80, MACCfg 0x100000)
  w.set("NE.PostScale.PostScale", c.t.post_scale);
  if (c.t.kind != TaskKind::Conv && c.plan.macos26()) {
    // macOS 26 writes a pass-through's format and binary point as a convolution's.
    w.set("NE.KernelCfg.KernelFmt", kFmtFp16);
    w.set("NE.MACCfg.BinaryPoint", 28);
  }
  if (c.t.kind == TaskKind::Conv) {
    w.set("NE.KernelCfg.KernelFmt", kFmtFp16);
    w.set("NE.KernelCfg.SparseFmt", c.t.sparse);
    w.set("NE.MACCfg.BinaryPoint", 28);
    w.set("NE.MACCfg.BiasMode", c.t.bias);
    w.set("NE.MACCfg.NonlinearMode", c.t.nonlinear);  // a fused ReLU
  } else {
    if (c.t.acc_bias) {
      w.set("NE.MACCfg.OpMode", 0);  // the accumulator adds AccBias, no kernel multiply
      w.set("NE.AccBias.AccBias", *c.t.acc_bias);
      if (c.plan.macos26()) w.set("Common.DPE.Category", 1);  // record unary_rsqrt_*
    } else if (c.t.channel_max) {
      w.set("NE.MACCfg.OpMode", 3);  // the maximum over the input channels (records reduce_probe_max_ax1_*)
    } else {
      w.set("NE.MACCfg.OpMode", 4);  // pass-through: no multiply-accumulate
    }
    w.set("NE.MACCfg.KernelMode", 1);
    w.set("NE.MACCfg.NonlinearMode", c.t.nonlinear);
  }
}

void tile_dma_dst(ImageWriter& w, const Ctx& c, uint32_t depth_channels, uint32_t group_channels) {
  const Tensor& d = c.dst();
  if (c.result_in_l2()) {
    // Nothing goes out (records binary_real_div_* task 0: 0xc0, Interleave 1).
    w.set("TileDMADst.DMAConfig.CacheHint", 3);
    w.set("TileDMADst.Fmt.Interleave", 1);
    return;
  }
  w.set("TileDMADst.DMAConfig.En", 1);
  w.set("TileDMADst.DMAConfig.CacheHint", 3);
  if ((c.t.kind != TaskKind::Conv && !c.t.out_channels_w) || macos26_conv_l2(c))
    w.set("TileDMADst.DMAConfig.L2BfrMode", 1);
  w.dma("TileDMADst.BaseAddr.Addr", d.offset + uint64_t{c.t.dst_channel_offset} * d.plane_stride);
  w.dma("TileDMADst.RowStride.RowStride", d.row_stride);
  w.dma("TileDMADst.PlaneStride.PlaneStride", d.plane_stride);
  w.dma("TileDMADst.DepthStride.DepthStride", uint64_t{depth_channels} * d.plane_stride);
  if (c.t.row_groups)
    w.dma("TileDMADst.GroupStride.GroupStride", c.plan.tensors[d.view_of].row_stride);
  else if (group_channels != depth_channels)
    w.dma("TileDMADst.GroupStride.GroupStride", uint64_t{group_channels} * d.plane_stride);
  else if (c.plan.macos26())
    w.dma("TileDMADst.GroupStride.GroupStride", uint64_t{depth_channels} * d.plane_stride);
  tensor_format(w, "TileDMADst.Fmt");
  if (!c.planar() || c.plan.macos26()) {
    w.set("TileDMADst.Fmt.ZeroPadLast", 1);
    w.set("TileDMADst.Fmt.ZeroPadFirst", 1);
  }
}

}  // namespace

Expected<RegisterImage> lower_task(const Network& net, const Plan& plan, size_t index, uint64_t kbase,
                                   uint64_t next_at) {
  const Ctx c(plan, plan.tasks[index], index, kbase);
  ImageWriter w;
  const uint32_t channels = c.src().c;  // pass and planar tasks: Cin = Cout = the source's channels
  const bool conv = c.t.kind == TaskKind::Conv;
  // Convolutions: the registers hold one group's channels (depthwise: all);
  // a channel maximum makes one channel.
  const uint32_t cin = conv ? c.t.group_cin() : channels;
  const uint32_t cout = conv ? c.t.group_cout() : c.t.channel_max ? 1 : channels;
  const uint32_t engines = c.planar() || c.reduce() ? 0 : engines_for(conv && c.t.depthwise ? c.t.cout : cout);
  header(w, c, engines, next_at);
  kernel_dma(w, c);
  common(w, c, conv && c.t.depthwise ? c.t.cin : cin, conv && c.t.depthwise ? c.t.cout : cout, engines);
  tile_dma_src(w, c, conv ? c.t.cin : cin, conv && !c.t.depthwise ? cin : (conv ? c.t.cin : cin));
  l2(w, c, c.l2_channels());
  planar_engine(w, c);
  neural_engine(w, c);
  const uint32_t dst_channels = conv ? c.t.cout : c.dst().c;
  tile_dma_dst(w, c, dst_channels, conv && !c.t.depthwise ? cout : dst_channels);
  if (w.error()) {
    SourceRef ref;
    for (const auto& l : net.units)
      if (l.name == c.t.unit) ref = l.ref;
    return network_error(net.path, ref, fmt::format("task {}: {}", index, *w.error()));
  }
  return std::move(w.regs);
}

uint64_t widest_l2_row(const Plan& plan, const TaskPlan& task) {
  const Ctx c(plan, task, 0, 0);
  if (c.tall()) return 0;  // strips of each row (l2_tall), never a whole row
  const FlatRows r = flat_rows(c, c.l2_channels());
  return std::max({r.source, r.source2, r.result});
}

}  // namespace ane::compiler
