// The lane layouts behind conv_kernel.h, shared by the packer and the reader.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "ane/conv_kernel.h"

namespace ane::kernels {

inline uint64_t align64(uint64_t v) { return (v + 63) / 64 * 64; }

// Channels per plane (dense) or per stream (zero-skipping) of a chunk of 16
// planes that begins with `remaining` of a group's output channels left:
// min(2^OCGSize, remaining / 16), one below 16 channels. Below 16 x 2^OCGSize
// channels the width is not a power of two: 224 under OCGSize 4 gives 14
// (stride 1), 192 and 64 give 12 and 4 (the two tasks of a stride-2 layer
// Apple splits, conv_probe_k3_c256_n256_s{32,64}_st2_*: Apple's SHA-256).
inline uint32_t chunk_width(uint32_t remaining, uint32_t ocg) {
  return remaining >= 16 ? std::min(1u << ocg, remaining / 16) : 1;
}

// Dense, grouped and depthwise kernels of stride-1 tasks. A plane holds
// `width` output channels interleaved per halfword: row r (the bias first,
// then the reduction) at bytes (r * width + l) * 2, l = 0..count-1.
struct Plane {
  uint32_t first_oc = 0;
  uint32_t width = 1;  // channels per row (the chunk's lanes-per-plane)
  uint32_t count = 1;  // channels present: < width only never (partial chunks have width 1)
  uint64_t offset = 0; // inside the lane
};

struct DenseLayout {
  uint64_t rows = 0;  // bias + reduction
  std::array<std::vector<Plane>, kKernelLanes> planes;
  std::array<uint64_t, kKernelLanes> lane_bytes{};
};

// The chunk rule: a group's output channels go out in chunks of 16 planes of
// `width` channels, width = min(2^OCGSize, remaining / 16) (224 channels
// under OCGSize 4: one chunk of planes 14 wide; 768 under OCGSize 5: 32 then
// 16), and
// the last (< 16 channels) one channel per plane. Plane p of a chunk is read
// by lane p; each lane's planes follow each other and every group ends on a
// 64-byte boundary. Assumes check_conv_kernel passed.
DenseLayout dense_layout(const ConvKernelShape& s);

// The zero-skipping form (NE.KernelCfg.SparseFmt) of stride-2 tasks: dense,
// grouped and depthwise. See conv_sparse.cpp.
Expected<PackedConvKernel> pack_sparse(const ConvKernelShape& s, const ConvWeights& w);
Expected<ConvWeights> unpack_sparse(const ConvKernelShape& s, std::span<const KernelLane, kKernelLanes> lanes);

}  // namespace ane::kernels
