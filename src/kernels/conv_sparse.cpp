// The zero-skipping kernel form of stride-2 tasks (NE.KernelCfg.SparseFmt).
// One rule covers every record (dense, grouped, depthwise; 1x1 and 3x3):
//
//  * A lane holds streams. Dense and grouped: per group, one stream per lane
//    and chunk of 16 planes, with the lane's n output channels of the chunk
//    (lane l: channels l*n .. l*n+n-1 of it), n = min(2^OCGSize, Cout / 16)
//    as in the dense form (a stride-2 layer Apple splits as 64 + 192 outputs
//    under OCGSize 4: streams of 4 and 12). A group's streams are
//    back to back and its last one ends on a 64-byte boundary (1024 outputs
//    in planes of 32: two streams a lane). Depthwise: one stream per channel
//    c in lane c % 16, back to back.
//  * A stream: the bias of its channels (when BiasMode), a 24-bit count of the
//    body's bytes, then the body padded to an even length.
//  * The body: per input channel of the group, per kernel position, `slots`
//    channel slots; every 8 slots a mask byte (bit i: slot i holds a non-zero
//    weight) followed by those weights. A weight whose fp16 value is +0 or -0
//    is not stored. H14 groups 16 slots: their two mask bytes, then their
//    weights (ConvKernelShape::mask_group_slots; its 30 stride-2 records'
//    hashes).
//  * Kernel positions go by stride phase: (even row, even column), (even,
//    odd), (odd, even), (odd, odd); a phase with taps takes 4 positions (its
//    2x2 sub-kernel, row-major), a phase without taps none. 3x3: taps 0 2 6 8 |
//    1 - 7 - | 3 5 - - | 4 - - -; 1x1: 0 - - -.
//  * slots = max(n, 4) when Common.Cfg.SmallSourceMode is set, else max(n, 2).
//
// Evidence (docs/convolution.md): Apple's constant hashes for 36 stride-2
// records of the grid and the encoder index campaigns, and the captured stem;
// for several chunks a group, three H13 and two H14 records of 1024 outputs;
// for streams narrower than 2^OCGSize, the eight records of a split layer.
#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "conv_layout.h"

namespace ane::kernels {

namespace {

inline bool is_zero(uint16_t h) { return (h & 0x7fffu) == 0; }

constexpr int kNoTap = -1;
constexpr uint32_t kMaxBody = 0xffffff;  // the count is 24 bits

// The kernel positions of one input channel in stream order: the tap index
// (ky * kw + kx) or kNoTap.
std::vector<int> positions(const ConvKernelShape& s) {
  std::vector<int> pos;
  for (uint32_t py = 0; py < 2; ++py)
    for (uint32_t px = 0; px < 2; ++px) {
      if (py >= s.kh || px >= s.kw) continue;  // the phase has no taps
      for (uint32_t sy = 0; sy < 2; ++sy)
        for (uint32_t sx = 0; sx < 2; ++sx) {
          const uint32_t ky = py + 2 * sy, kx = px + 2 * sx;
          pos.push_back(ky < s.kh && kx < s.kw ? static_cast<int>(ky * s.kw + kx) : kNoTap);
        }
    }
  return pos;
}

// One stream: `count` output channels from `first` (consecutive), each with
// `red` weights (oc * red + r in ConvWeights).
struct Stream {
  int lane;
  uint64_t first;
  uint32_t count;
  bool align64;  // dense / grouped: the next stream starts on 64 bytes
};

struct SparseLayout {
  std::vector<Stream> streams;  // in lane order, then in stream order
  uint32_t slots = 0;           // channel slots per kernel position
  uint32_t inputs = 0;          // input channels per stream
  std::vector<int> pos;
};

SparseLayout sparse_layout(const ConvKernelShape& s) {
  SparseLayout l;
  l.pos = positions(s);
  const uint32_t n = s.depthwise ? 1 : chunk_width(s.cout, s.ocg);  // channels per stream
  l.slots = std::max(n, s.small_source ? 4u : 2u);
  if (s.depthwise) {
    l.inputs = 1;
    for (int lane = 0; lane < kKernelLanes; ++lane)
      for (uint64_t oc = lane; oc < s.cout; oc += kKernelLanes) l.streams.push_back({lane, oc, 1, false});
  } else {
    // Per group, chunks of 16 planes as the dense form cuts them (a group
    // wider than 16 planes of n: several chunks, each lane's streams in chunk
    // order); check_conv_kernel: grouped tasks hold one chunk per group.
    l.inputs = s.cin;
    for (int lane = 0; lane < kKernelLanes; ++lane)
      for (uint32_t g = 0; g < s.groups; ++g)
        for (uint32_t start = 0; start < s.cout; start += 16 * n)
          l.streams.push_back({lane, uint64_t{g} * s.cout + start + uint64_t(lane) * n, n, start + 16 * n >= s.cout});
  }
  return l;
}

void put16(Bytes& b, uint16_t v) {
  b.push_back(static_cast<uint8_t>(v));
  b.push_back(static_cast<uint8_t>(v >> 8));
}

// Reads one lane, every access checked against the lane's size.
class Reader {
 public:
  Reader(const KernelLane& l, int lane) : l_(l), lane_(lane) {}
  uint64_t at() const { return at_; }
  Expected<uint32_t> bytes(int n) {
    if (l_.size < uint64_t(n) || at_ > l_.size - n) return past_end(n);
    uint32_t v = 0;
    for (int i = 0; i < n; ++i) v |= uint32_t{l_.data[at_ + i]} << (8 * i);
    at_ += n;
    return v;
  }
  Status to64() {
    const uint64_t next = align64(at_);
    if (next > l_.size && at_ < l_.size) at_ = l_.size;  // the lane's tail padding need not be mapped
    else at_ = next;
    return Ok{};
  }
  Error bad(const std::string& what) const {
    return make_error(fmt::format("kernel lane {} byte {:#x}: {}", lane_, at_, what));
  }

 private:
  Error past_end(uint64_t n) const {
    return make_error(fmt::format("kernel lane {}: the zero-skipping stream needs {} more byte(s) at {:#x}, past the "
                                  "lane's {:#x} bytes",
                                  lane_, n, at_, l_.size));
  }
  const KernelLane& l_;
  int lane_;
  uint64_t at_ = 0;
};

#define SPARSE_TRY(v, expr)         \
  auto v##_ = (expr);               \
  if (!v##_) return v##_.error();   \
  const auto v = *v##_

}  // namespace

Expected<PackedConvKernel> pack_sparse(const ConvKernelShape& s, const ConvWeights& w) {
  const SparseLayout l = sparse_layout(s);
  const uint64_t red = s.reduction(), taps = uint64_t{s.kh} * s.kw;
  std::array<Bytes, kKernelLanes> lanes;
  std::vector<uint16_t> values;
  std::vector<uint8_t> masks;
  for (const Stream& st : l.streams) {
    Bytes& o = lanes[st.lane];
    if (s.bias)
      for (uint32_t j = 0; j < st.count; ++j) put16(o, w.bias[st.first + j]);
    const uint64_t count_at = o.size();
    o.insert(o.end(), 3, 0);
    const uint32_t total = static_cast<uint32_t>(l.pos.size()) * l.slots;
    for (uint32_t ic = 0; ic < l.inputs; ++ic) {
      uint32_t slot = 0;
      uint8_t mask = 0;
      masks.clear();
      values.clear();
      for (int tap : l.pos)
        for (uint32_t j = 0; j < l.slots; ++j, ++slot) {
          if (tap != kNoTap && j < st.count) {
            const uint16_t v = w.weights[(st.first + j) * red + ic * taps + tap];
            if (!is_zero(v)) {
              mask |= static_cast<uint8_t>(1u << (slot % 8));
              values.push_back(v);
            }
          }
          if (slot % 8 != 7) continue;
          masks.push_back(mask);
          mask = 0;
          // A group's mask bytes, then its weights (the last group of an
          // input channel may be short).
          if ((slot + 1) % s.mask_group_slots == 0 || slot + 1 == total) {
            o.insert(o.end(), masks.begin(), masks.end());
            for (uint16_t v : values) put16(o, v);
            masks.clear();
            values.clear();
          }
        }
    }
    uint64_t body = o.size() - count_at - 3;
    if (body % 2) {
      o.push_back(0);
      ++body;
    }
    if (body > kMaxBody)
      return make_error(fmt::format("kernel lane {}: a {}-byte zero-skipping body does not fit its 24-bit count",
                                    st.lane, body));
    for (int i = 0; i < 3; ++i) o[count_at + i] = static_cast<uint8_t>(body >> (8 * i));
    if (st.align64) o.resize(align64(o.size()), 0);
  }
  PackedConvKernel k;
  uint64_t at = 0;
  for (int i = 0; i < kKernelLanes; ++i) {
    if (lanes[i].empty()) continue;
    lanes[i].resize(align64(lanes[i].size()), 0);
    k.lane_offset[i] = at;
    k.lane_size[i] = lanes[i].size();
    at += lanes[i].size();
    k.bytes.insert(k.bytes.end(), lanes[i].begin(), lanes[i].end());
  }
  return k;
}

Expected<ConvWeights> unpack_sparse(const ConvKernelShape& s, std::span<const KernelLane, kKernelLanes> lanes) {
  const SparseLayout l = sparse_layout(s);
  const uint64_t red = s.reduction(), taps = uint64_t{s.kh} * s.kw;
  // Every stream takes at least its count and one mask byte per 8 slots of
  // each input channel: bound the allocation by what the lanes can hold.
  const uint64_t min_stream = 3 + uint64_t{l.inputs} * ((l.pos.size() * l.slots + 7) / 8);
  std::array<uint64_t, kKernelLanes> streams{};
  for (const Stream& st : l.streams) ++streams[st.lane];
  for (int lane = 0; lane < kKernelLanes; ++lane) {
    if (!streams[lane]) continue;
    if (!lanes[lane].data) return make_error(fmt::format("kernel lane {} is off, the zero-skipping layout needs it", lane));
    if (lanes[lane].size / streams[lane] < min_stream)
      return make_error(fmt::format("kernel lane {} holds {:#x} bytes, too few for {} zero-skipping streams of at least "
                                    "{:#x} bytes",
                                    lane, lanes[lane].size, streams[lane], min_stream));
  }
  ConvWeights w;
  w.weights.assign(s.outputs() * red, 0);
  w.bias.assign(s.bias ? s.outputs() : 0, 0);
  std::array<std::optional<Reader>, kKernelLanes> in;
  for (const Stream& st : l.streams) {
    if (!in[st.lane]) in[st.lane].emplace(lanes[st.lane], st.lane);
    Reader& r = *in[st.lane];
    if (s.bias)
      for (uint32_t j = 0; j < st.count; ++j) {
        SPARSE_TRY(b, r.bytes(2));
        w.bias[st.first + j] = static_cast<uint16_t>(b);
      }
    SPARSE_TRY(count, r.bytes(3));
    const uint64_t start = r.at();
    for (uint32_t ic = 0; ic < l.inputs; ++ic) {
      const uint32_t total = static_cast<uint32_t>(l.pos.size()) * l.slots;
      // Whole mask bytes only, as the packer writes them.
      const uint32_t whole = total / 8 * 8;
      for (uint32_t group = 0; group < whole; group += s.mask_group_slots) {
        const uint32_t bytes = std::min(s.mask_group_slots, whole - group) / 8;
        std::array<uint8_t, 8> masks{};
        for (uint32_t m = 0; m < bytes; ++m) {
          SPARSE_TRY(mask, r.bytes(1));
          masks[m] = static_cast<uint8_t>(mask);
        }
        for (uint32_t b = 0; b < 8 * bytes; ++b) {
          const uint8_t mask = masks[b / 8];
          if (!(mask >> (b % 8) & 1)) continue;
          const uint32_t slot = group + b, j = slot % l.slots;
          const int tap = l.pos[slot / l.slots];
          if (tap == kNoTap || j >= st.count)
            return r.bad(fmt::format("mask {:#04x} of input channel {} marks slot {}, which holds no weight (kernel "
                                     "position {} channel {} of {})",
                                     mask, ic, slot, slot / l.slots, j, st.count));
          SPARSE_TRY(v, r.bytes(2));
          w.weights[(st.first + j) * red + ic * taps + tap] = static_cast<uint16_t>(v);
        }
      }
    }
    if ((r.at() - start) % 2) {  // the body is padded to an even length
      SPARSE_TRY(pad, r.bytes(1));
      (void)pad;
    }
    if (r.at() - start != count)
      return r.bad(fmt::format("the stream of output channel {} counts {:#x} bytes, its masks and weights take {:#x}",
                               st.first, count, r.at() - start));
    if (st.align64)
      if (Status a = r.to64(); !a) return a.error();
  }
  return w;
}

}  // namespace ane::kernels
