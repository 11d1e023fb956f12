// How a convolution's weights sit in the 16 kernel-DMA lanes of an H13 task,
// in both directions: hwx-build packs with it, hwx-run reads with it. One
// description of each layout (dense, grouped, depthwise; the zero-skipping
// "sparse" form of stride-2 tasks) serves both. The rules and the
// Apple-compiled records that show them are in docs/convolution.md.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "ane/bytes.h"
#include "ane/error.h"

namespace ane {

constexpr int kKernelLanes = 16;

// What the task's registers say about its kernel.
struct ConvKernelShape {
  uint32_t groups = 1;         // Common.GroupConvCfg.NumGroups
  uint32_t cin = 0, cout = 0;  // Common.Cin / Cout: per group; depthwise: the channel count
  uint32_t kh = 1, kw = 1;     // Common.ConvCfg.Kh / Kw
  bool depthwise = false;      // GroupConvCfg.UnicastEn: output channel c reads input channel c only
  bool bias = false;           // NE.MACCfg.BiasMode: one bias per output channel in the kernel data
  uint32_t ocg = 0;            // Common.ConvCfg.OCGSize: log2(output channels per lane), first chunk
  bool sparse = false;         // NE.KernelCfg.SparseFmt: zero weights are not stored (stride 2)
  // Common.Cfg.SmallSourceMode: in the zero-skipping form each kernel
  // position holds at least 4 channel slots (else 2).
  bool small_source = true;
  // The zero-skipping form's mask grouping: the slots whose mask bytes come
  // together, before those slots' weights. H13: 8 (each mask byte followed
  // by its weights); H14: 16 (two mask bytes, then the weights).
  uint32_t mask_group_slots = 8;

  // Weights per output channel: (depthwise ? 1 : cin) * kh * kw.
  uint64_t reduction() const { return uint64_t{depthwise ? 1u : cin} * kh * kw; }
  // Output channels in all groups.
  uint64_t outputs() const { return depthwise ? cout : uint64_t{groups} * cout; }

  bool operator==(const ConvKernelShape&) const = default;
};

// A convolution's parameters as fp16 bit patterns: weights[oc][r] with the
// reduction index r = ic * kh * kw + ky * kw + kx (ic within the group), and
// bias[oc] (empty without a bias).
struct ConvWeights {
  std::vector<uint16_t> weights, bias;
};

// The kernel section of one task: lanes back to back, each padded to 64 bytes.
struct PackedConvKernel {
  Bytes bytes;
  std::array<uint64_t, kKernelLanes> lane_offset{}, lane_size{};  // bytes; size 0: lane off
};

// One lane as the task's kernel DMA points to it (data null: the lane is off).
struct KernelLane {
  const uint8_t* data = nullptr;
  uint64_t size = 0;
};

// Kernel shapes (width x height) whose layout the records show: 1x1 and 3x3
// at strides 1 and 2, and the 1x9 column at stride 1.
bool known_conv_window(uint32_t kw, uint32_t kh, uint32_t stride);
inline constexpr const char* kKnownConvWindows = "1x1 and 3x3, and 1x9 at stride 1";

// Ok when the layout of this shape is known; else "unsupported: ..." naming
// what is missing (e.g. the zero-skipping form of a 3x3 dense kernel).
Status check_conv_kernel(const ConvKernelShape& shape);

// OCGSize as Apple's compiler chooses it: the next power of two of Cout / 16,
// capped at 16 (32 when the output is at most 8x8, as SmallSourceMode;
// records conv_probe_k3_c{512,1024}_n1024_s16_st2_*_valid: 16x16 in, 7x7
// out, planes of 32 on H13 and H14); grouped: per group; depthwise: 0. The
// planes then take min(2^OCGSize, remaining / 16) channels each
// (conv_layout.h).
uint32_t compiler_conv_ocg(uint32_t cout_per_group, bool depthwise, uint32_t out_h, uint32_t out_w);

// The bytes each lane must hold for the layout (0: the lane is not read).
// Exact for dense layouts; for the zero-skipping form a lower bound (the
// stream's length depends on the weights).
std::array<uint64_t, kKernelLanes> conv_kernel_lane_needs(const ConvKernelShape& shape);

Expected<PackedConvKernel> pack_conv_kernel(const ConvKernelShape& shape, const ConvWeights& w);

// The inverse of pack_conv_kernel over the lanes a task points to. Errors
// name the lane and the byte that does not fit the layout.
Expected<ConvWeights> unpack_conv_kernel(const ConvKernelShape& shape, std::span<const KernelLane, kKernelLanes> lanes);

}  // namespace ane
