// Convolution kernels in kernel-DMA lanes: which layouts are known, the dense
// layout (stride 1), and packing/reading through it. Evidence: docs/convolution.md.
#include "ane/conv_kernel.h"

#include <algorithm>
#include <bit>

#include <fmt/format.h>

#include "conv_layout.h"

namespace ane {

namespace {

Error unsupported(const std::string& what) { return make_error("unsupported: " + what); }

inline void store16(Bytes& b, uint64_t off, uint16_t v) {
  b[off] = static_cast<uint8_t>(v);
  b[off + 1] = static_cast<uint8_t>(v >> 8);
}
inline uint16_t load16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }

// Largest output-channel interleave any record shows (OCGSize 5: 1x1
// 768->768 and 512-wide matrix products).
constexpr uint32_t kMaxOcg = 5;

}  // namespace

bool known_conv_window(uint32_t kw, uint32_t kh, uint32_t stride) {
  if (kw == kh && (kw == 1 || kw == 3)) return stride == 1 || stride == 2;
  return kw == 1 && kh == 9 && stride == 1;  // encoder_conv_*_k9x1_*: a 9-tap column
}

Status check_conv_kernel(const ConvKernelShape& s) {
  if (s.cin == 0 || s.cout == 0 || s.groups == 0 || s.kh == 0 || s.kw == 0)
    return unsupported(fmt::format("an empty convolution (Cin {}, Cout {}, groups {}, kernel {}x{})", s.cin, s.cout,
                                   s.groups, s.kh, s.kw));
  // The sparse form is stride 2, the dense one stride 1.
  if (!known_conv_window(s.kw, s.kh, s.sparse ? 2 : 1))
    return unsupported(fmt::format("a {}x{} (width x height) kernel{} (records show {})", s.kw, s.kh,
                                   s.sparse ? " at stride 2" : "", kKnownConvWindows));
  if (s.ocg > kMaxOcg) return unsupported(fmt::format("OCGSize {} (no record has more than {})", s.ocg, kMaxOcg));
  if (s.depthwise) {
    if (s.groups != 1) return unsupported(fmt::format("a depthwise kernel with NumGroups {}", s.groups));
    if (s.cin != s.cout) return unsupported(fmt::format("a depthwise kernel with Cin {} != Cout {}", s.cin, s.cout));
    if (s.ocg != 0) return unsupported(fmt::format("a depthwise kernel with OCGSize {} (records: 0)", s.ocg));
  } else if (s.cout > 16 && s.cout % 16 != 0) {
    return unsupported(fmt::format("{} output channels per group (records: up to 16, or multiples of 16)", s.cout));
  } else if (!s.sparse && s.ocg > 0 && s.cout <= (8u << s.ocg)) {
    // 2^OCGSize caps the channels per plane: stride-1 records never cap above
    // the next power of two of Cout / 16 (224 channels: OCGSize 4). At stride
    // 2 a split layer's tasks keep the layer's (64 outputs under OCGSize 4).
    return unsupported(fmt::format("OCGSize {} with {} output channels per group (at most 16 x {})", s.ocg, s.cout,
                                   1u << (s.ocg - 1)));
  } else if (s.groups > 1 && s.cout > (16u << s.ocg)) {
    // Grouped records hold one chunk per group; how a group of several
    // chunks is padded is not shown.
    return unsupported(fmt::format("{} output channels per group in planes of {} (grouped records hold one chunk "
                                   "per group)",
                                   s.cout, 1u << s.ocg));
  }
  if (s.sparse) {
    if (s.mask_group_slots != 8 && s.mask_group_slots != 16)
      return unsupported(fmt::format("zero-skipping masks grouped by {} slots (H13: 8, H14: 16)", s.mask_group_slots));
    // Whole chunks of one width: streams of several widths in a group (768
    // outputs in planes of 32 then 16) are not shown.
    if (const uint32_t width = kernels::chunk_width(s.cout, s.ocg); !s.depthwise && s.cout % (16 * width) != 0)
      return unsupported(fmt::format("the zero-skipping form of {} output channels per group in planes of {} "
                                     "(records: whole chunks of 16 planes of one width)",
                                     s.cout, width));
  }
  return Ok{};
}

uint32_t compiler_conv_ocg(uint32_t cout_per_group, bool depthwise, uint32_t out_h, uint32_t out_w) {
  if (depthwise || cout_per_group <= 16) return 0;
  const uint32_t cap = std::max(out_h, out_w) <= 8 ? 32 : 16;
  return static_cast<uint32_t>(std::countr_zero(std::min(cap, std::bit_ceil((cout_per_group + 15) / 16))));
}

namespace kernels {

DenseLayout dense_layout(const ConvKernelShape& s) {
  DenseLayout d;
  d.rows = s.reduction() + (s.bias ? 1 : 0);
  const uint32_t groups = s.depthwise ? 1 : s.groups;
  std::array<uint64_t, kKernelLanes> cursor{};
  for (uint32_t g = 0; g < groups; ++g) {
    uint32_t start = g * s.cout;
    uint32_t remaining = s.cout;
    while (remaining > 0) {
      const uint32_t width = chunk_width(remaining, s.ocg);
      const uint32_t chunk = std::min(remaining, 16 * width);
      for (uint32_t lane = 0; lane * width < chunk; ++lane) {
        d.planes[lane].push_back({start + lane * width, width, std::min(width, chunk - lane * width), cursor[lane]});
        cursor[lane] += d.rows * width * 2;
      }
      start += chunk;
      remaining -= chunk;
    }
    for (uint64_t& c : cursor) c = align64(c);
  }
  d.lane_bytes = cursor;
  return d;
}

}  // namespace kernels

namespace {

Status check_weights(const ConvKernelShape& s, const ConvWeights& w) {
  if (w.weights.size() != s.outputs() * s.reduction())
    return make_error(fmt::format("the kernel needs {} weights ({} outputs x {}), got {}", s.outputs() * s.reduction(),
                                  s.outputs(), s.reduction(), w.weights.size()));
  if (w.bias.size() != (s.bias ? s.outputs() : 0))
    return make_error(fmt::format("the kernel needs {} bias values, got {}", s.bias ? s.outputs() : 0, w.bias.size()));
  return Ok{};
}

}  // namespace

Expected<PackedConvKernel> pack_conv_kernel(const ConvKernelShape& s, const ConvWeights& w) {
  if (Status st = check_conv_kernel(s); !st) return st.error();
  if (Status st = check_weights(s, w); !st) return st.error();
  if (s.sparse) return kernels::pack_sparse(s, w);
  const kernels::DenseLayout d = kernels::dense_layout(s);
  PackedConvKernel k;
  uint64_t at = 0;
  for (int lane = 0; lane < kKernelLanes; ++lane) {
    k.lane_offset[lane] = d.lane_bytes[lane] ? at : 0;
    k.lane_size[lane] = d.lane_bytes[lane];
    at += d.lane_bytes[lane];
  }
  k.bytes.assign(at, 0);
  const uint64_t lead = s.bias ? 1 : 0, red = s.reduction();
  for (int lane = 0; lane < kKernelLanes; ++lane)
    for (const kernels::Plane& p : d.planes[lane])
      for (uint32_t l = 0; l < p.count; ++l) {
        const uint64_t oc = p.first_oc + l;
        const uint64_t base = k.lane_offset[lane] + p.offset + 2 * l;
        if (s.bias) store16(k.bytes, base, w.bias[oc]);
        for (uint64_t r = 0; r < red; ++r) store16(k.bytes, base + 2 * (r + lead) * p.width, w.weights[oc * red + r]);
      }
  return k;
}

std::array<uint64_t, kKernelLanes> conv_kernel_lane_needs(const ConvKernelShape& s) {
  std::array<uint64_t, kKernelLanes> need{};
  if (!check_conv_kernel(s)) return need;
  if (s.sparse) {
    // A stream has at least its count and one mask byte.
    const uint64_t lanes = s.depthwise ? std::min<uint64_t>(16, s.cout) : 16;
    for (uint64_t i = 0; i < lanes; ++i) need[i] = 3;
    return need;
  }
  const kernels::DenseLayout d = kernels::dense_layout(s);
  for (int lane = 0; lane < kKernelLanes; ++lane) {
    if (d.planes[lane].empty()) continue;
    // The last plane must fit; the 64-byte tail padding need not be mapped.
    const kernels::Plane& last = d.planes[lane].back();
    need[lane] = last.offset + d.rows * last.width * 2;
  }
  return need;
}

Expected<ConvWeights> unpack_conv_kernel(const ConvKernelShape& s, std::span<const KernelLane, kKernelLanes> lanes) {
  if (Status st = check_conv_kernel(s); !st) return st.error();
  if (s.sparse) return kernels::unpack_sparse(s, lanes);
  const auto need = conv_kernel_lane_needs(s);
  for (int lane = 0; lane < kKernelLanes; ++lane) {
    if (!need[lane]) continue;
    if (!lanes[lane].data)
      return make_error(fmt::format("kernel lane {} is off, the layout needs {:#x} bytes", lane, need[lane]));
    if (lanes[lane].size < need[lane])
      return make_error(
          fmt::format("kernel lane {} holds {:#x} bytes, the layout needs {:#x}", lane, lanes[lane].size, need[lane]));
  }
  const kernels::DenseLayout d = kernels::dense_layout(s);
  ConvWeights w;
  const uint64_t lead = s.bias ? 1 : 0, red = s.reduction();
  w.weights.resize(s.outputs() * red);
  w.bias.resize(s.bias ? s.outputs() : 0);
  for (int lane = 0; lane < kKernelLanes; ++lane)
    for (const kernels::Plane& p : d.planes[lane])
      for (uint32_t l = 0; l < p.count; ++l) {
        const uint64_t oc = p.first_oc + l;
        const uint8_t* base = lanes[lane].data + p.offset + 2 * l;
        if (s.bias) w.bias[oc] = load16(base);
        uint16_t* out = w.weights.data() + oc * red;
        const uint64_t step = 2 * uint64_t{p.width};
        const uint8_t* q = base + lead * step;
        for (uint64_t r = 0; r < red; ++r, q += step) out[r] = load16(q);
      }
  return w;
}

}  // namespace ane
