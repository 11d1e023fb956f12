// The zero-skipping kernel form of stride-2 tasks (NE.KernelCfg.SparseFmt):
// a weight whose fp16 value is +0 or -0 is not stored; a mask byte says which
// of up to eight slots follow. Two shapes have known bytes:
//
//  * dense 1x1, at most 8 channels per plane (one plane per lane):
//      bias[width] | u16 count | per input channel: 0x00, mask, the non-zero
//      halfwords of the plane's channels, max(0, width/2 - 2) zero bytes
//    where count = the bytes after it (the body);
//  * depthwise (1x1, 3x3): channel c in lane c % 16, records back to back:
//      bias | u16 count | 0x00 | per stride phase: mask, the non-zero taps |
//      a zero byte when the body is odd
//    where the taps go by stride phase (even row and column first: for 3x3
//    taps 0 2 6 8, then 1 7, then 3 5, then 4), mask bit 2*(kx/2) + 4*(ky/2),
//    and count = the bytes after the 0x00 (the body, padded to even). The
//    1x1 form is pinned with zero taps, with and without bias (two grid
//    records); the 3x3 form with a bias and no zero tap (index records): the
//    grid's 3x3 records without bias are 4 bytes longer per channel than
//    this rule gives, so those are refused.
//  * one dense 3x3 geometry, captured byte for byte: 1 input channel, 256
//    outputs in 16 planes of 16, bias ("the stem"):
//      bias[16] | u16 count | 0x00 | per tap in stride-phase order: mask,
//      8 halfwords, mask, 8 halfwords, with 2 zero bytes after taps 1 and 7,
//      4 after tap 5 and 5 after tap 4 (counted)
//    taken only with every weight non-zero (where the padding goes when
//    rows shrink is not shown).
// Each lane ends on a 64-byte boundary. Evidence: docs/convolution.md.
#include <algorithm>
#include <bit>
#include <optional>

#include <fmt/format.h>

#include "conv_layout.h"

namespace ane::kernels {

namespace {

inline bool is_zero(uint16_t h) { return (h & 0x7fffu) == 0; }

// One tap of a depthwise kernel in stream order.
struct Tap {
  uint32_t index;  // ky * kw + kx
  uint32_t phase;  // 0..3: (ky % 2, kx % 2) = (0,0), (0,1), (1,0), (1,1)
  uint8_t bit;     // its mask bit
};

// Taps by stride phase, then row, then column; phases without taps are absent.
std::vector<Tap> tap_order(const ConvKernelShape& s) {
  std::vector<Tap> taps;
  for (uint32_t phase = 0; phase < 4; ++phase)
    for (uint32_t ky = phase / 2; ky < s.kh; ky += 2)
      for (uint32_t kx = phase % 2; kx < s.kw; kx += 2)
        taps.push_back({ky * s.kw + kx, phase, static_cast<uint8_t>(1u << (2 * (kx / 2) + 4 * (ky / 2)))});
  return taps;
}

class Writer {
 public:
  void u8(uint8_t v) { b.push_back(v); }
  void u16(uint16_t v) {
    b.push_back(static_cast<uint8_t>(v));
    b.push_back(static_cast<uint8_t>(v >> 8));
  }
  void patch16(uint64_t at, uint16_t v) {
    b[at] = static_cast<uint8_t>(v);
    b[at + 1] = static_cast<uint8_t>(v >> 8);
  }
  Bytes b;
};

// Reads one lane, every access checked against the lane's size.
class Reader {
 public:
  Reader(const KernelLane& l, int lane) : l_(l), lane_(lane) {}
  uint64_t at() const { return at_; }
  Expected<uint8_t> u8() {
    if (at_ >= l_.size) return past_end(1);
    return l_.data[at_++];
  }
  Expected<uint16_t> u16() {
    if (l_.size < 2 || at_ > l_.size - 2) return past_end(2);
    const uint16_t v = static_cast<uint16_t>(l_.data[at_] | l_.data[at_ + 1] << 8);
    at_ += 2;
    return v;
  }
  Status skip(uint64_t n) {
    if (n > l_.size - at_) return past_end(n);
    at_ += n;
    return Ok{};
  }
  Error bad(const std::string& what) const {
    return make_error(fmt::format("kernel lane {} byte {:#x}: {}", lane_, at_, what));
  }
  Error unsupported(const std::string& what) const {
    return make_error(fmt::format("unsupported: kernel lane {} byte {:#x}: {}", lane_, at_, what));
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

#define SPARSE_TRY(v, expr)     \
  auto v##_ = (expr);           \
  if (!v##_) return v##_.error(); \
  const auto v = *v##_

uint32_t dense_pad_bytes(uint32_t width) { return width >= 4 ? width / 2 - 2 : 0; }

// The stem: zero bytes after each tap row, in the stream's tap order.
constexpr uint32_t kStemTaps[9] = {0, 2, 6, 8, 1, 7, 3, 5, 4};
constexpr uint32_t kStemPadAfter[9] = {0, 0, 0, 0, 2, 2, 0, 4, 5};

bool is_stem(const ConvKernelShape& s) { return !s.depthwise && s.kh == 3 && s.kw == 3; }

PackedConvKernel finish(std::array<Bytes, kKernelLanes>& lanes) {
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

Expected<PackedConvKernel> pack_dense_1x1(const ConvKernelShape& s, const ConvWeights& w) {
  const uint32_t width = 1u << s.ocg;
  const uint64_t red = s.reduction();
  std::array<Bytes, kKernelLanes> lanes;
  for (uint32_t lane = 0; lane < 16; ++lane) {
    Writer o;
    const uint64_t first = uint64_t{lane} * width;
    if (s.bias)
      for (uint32_t l = 0; l < width; ++l) o.u16(w.bias[first + l]);
    const uint64_t count_at = o.b.size();
    o.u16(0);
    for (uint64_t r = 0; r < red; ++r) {
      o.u8(0);
      uint8_t mask = 0;
      for (uint32_t l = 0; l < width; ++l) mask |= is_zero(w.weights[(first + l) * red + r]) ? 0 : 1u << l;
      o.u8(mask);
      for (uint32_t l = 0; l < width; ++l)
        if (mask >> l & 1) o.u16(w.weights[(first + l) * red + r]);
      for (uint32_t z = 0; z < dense_pad_bytes(width); ++z) o.u8(0);
    }
    const uint64_t body = o.b.size() - count_at - 2;
    if (body > 0xffff) return make_error(fmt::format("kernel lane {}: a {}-byte zero-skipping body does not fit its "
                                                     "16-bit count", lane, body));
    o.patch16(count_at, static_cast<uint16_t>(body));
    lanes[lane] = std::move(o.b);
  }
  return finish(lanes);
}

Expected<PackedConvKernel> pack_depthwise(const ConvKernelShape& s, const ConvWeights& w) {
  const std::vector<Tap> taps = tap_order(s);
  const uint64_t red = s.reduction();
  std::array<Writer, kKernelLanes> out;
  for (uint64_t oc = 0; oc < s.cout; ++oc) {
    Writer& o = out[oc % 16];
    if (s.bias) o.u16(w.bias[oc]);
    const uint64_t count_at = o.b.size();
    o.u16(0);
    o.u8(0);
    const uint16_t* k = w.weights.data() + oc * red;
    for (size_t i = 0; i < taps.size();) {
      const uint32_t phase = taps[i].phase;
      size_t end = i;
      uint8_t mask = 0;
      for (; end < taps.size() && taps[end].phase == phase; ++end) {
        if (is_zero(k[taps[end].index])) {
          if (s.kh > 1)
            return make_error(fmt::format("unsupported: a zero weight (channel {}, tap {}) in the zero-skipping form "
                                          "of a 3x3 depthwise kernel: Apple's layout of skipped taps is known only "
                                          "for 1x1 kernels",
                                          oc, taps[end].index));
          continue;
        }
        mask |= taps[end].bit;
      }
      o.u8(mask);
      for (; i < end; ++i)
        if (!is_zero(k[taps[i].index])) o.u16(k[taps[i].index]);
    }
    if ((o.b.size() - count_at - 3) % 2) o.u8(0);
    o.patch16(count_at, static_cast<uint16_t>(o.b.size() - count_at - 3));
  }
  std::array<Bytes, kKernelLanes> lanes;
  for (int i = 0; i < kKernelLanes; ++i) lanes[i] = std::move(out[i].b);
  return finish(lanes);
}

Expected<PackedConvKernel> pack_stem(const ConvWeights& w) {
  std::array<Bytes, kKernelLanes> lanes;
  for (uint32_t lane = 0; lane < 16; ++lane) {
    Writer o;
    for (uint32_t l = 0; l < 16; ++l) o.u16(w.bias[16 * lane + l]);
    const uint64_t count_at = o.b.size();
    o.u16(0);
    o.u8(0);
    for (int i = 0; i < 9; ++i) {
      for (uint32_t half = 0; half < 2; ++half) {
        o.u8(0xff);
        for (uint32_t l = 8 * half; l < 8 * half + 8; ++l) {
          const uint16_t v = w.weights[(16 * lane + l) * 9 + kStemTaps[i]];
          if (is_zero(v))
            return make_error(fmt::format("unsupported: a zero weight (output {}, tap {}) in the zero-skipping form "
                                          "of a dense 3x3 kernel: only rows without zeros are known",
                                          16 * lane + l, kStemTaps[i]));
          o.u16(v);
        }
      }
      for (uint32_t z = 0; z < kStemPadAfter[i]; ++z) o.u8(0);
    }
    o.patch16(count_at, static_cast<uint16_t>(o.b.size() - count_at - 2));
    lanes[lane] = std::move(o.b);
  }
  return finish(lanes);
}

Status check_lane_on(const KernelLane& l, int lane) {
  if (!l.data) return make_error(fmt::format("kernel lane {} is off, the zero-skipping layout needs it", lane));
  return Ok{};
}

Expected<ConvWeights> unpack_dense_1x1(const ConvKernelShape& s, std::span<const KernelLane, kKernelLanes> lanes) {
  const uint32_t width = 1u << s.ocg;
  const uint64_t red = s.reduction();
  // Every input channel takes at least 2 bytes of each lane: bound the
  // allocation by what the lanes can hold before making it.
  for (int lane = 0; lane < kKernelLanes; ++lane) {
    if (Status st = check_lane_on(lanes[lane], lane); !st) return st.error();
    if (lanes[lane].size / 2 < red)
      return make_error(fmt::format("kernel lane {} holds {:#x} bytes, too few for {} zero-skipping rows", lane,
                                    lanes[lane].size, red));
  }
  ConvWeights w;
  w.weights.assign(s.outputs() * red, 0);
  w.bias.assign(s.bias ? s.outputs() : 0, 0);
  for (int lane = 0; lane < kKernelLanes; ++lane) {
    Reader in(lanes[lane], lane);
    const uint64_t first = uint64_t(lane) * width;
    if (s.bias)
      for (uint32_t l = 0; l < width; ++l) {
        SPARSE_TRY(b, in.u16());
        w.bias[first + l] = b;
      }
    SPARSE_TRY(count, in.u16());
    const uint64_t body = in.at();
    for (uint64_t r = 0; r < red; ++r) {
      SPARSE_TRY(lead, in.u8());
      if (lead != 0) return in.bad(fmt::format("row {} starts with {:#x}, not 0", r, lead));
      SPARSE_TRY(mask, in.u8());
      if (mask >> width) return in.bad(fmt::format("mask {:#04x} names channels past the plane's {}", mask, width));
      for (uint32_t l = 0; l < width; ++l)
        if (mask >> l & 1) {
          SPARSE_TRY(v, in.u16());
          w.weights[(first + l) * red + r] = v;
        }
      if (Status st = in.skip(dense_pad_bytes(width)); !st) return st.error();
    }
    if (in.at() - body != count)
      return in.bad(fmt::format("the body count says {:#x} bytes, the rows take {:#x}", count, in.at() - body));
  }
  return w;
}

Expected<ConvWeights> unpack_depthwise(const ConvKernelShape& s, std::span<const KernelLane, kKernelLanes> lanes) {
  const std::vector<Tap> taps = tap_order(s);
  const uint64_t red = s.reduction();
  // A record takes at least 3 bytes (count, 0x00) plus a mask per phase.
  for (uint64_t lane = 0; lane < std::min<uint64_t>(16, s.cout); ++lane) {
    if (Status st = check_lane_on(lanes[lane], static_cast<int>(lane)); !st) return st.error();
    const uint64_t records = (s.cout - lane + 15) / 16;
    if (lanes[lane].size / 4 < records)
      return make_error(fmt::format("kernel lane {} holds {:#x} bytes, too few for {} depthwise records", lane,
                                    lanes[lane].size, records));
  }
  ConvWeights w;
  w.weights.assign(s.outputs() * red, 0);
  w.bias.assign(s.bias ? s.outputs() : 0, 0);
  std::array<std::optional<Reader>, kKernelLanes> in;
  for (uint64_t oc = 0; oc < s.cout; ++oc) {
    const int lane = static_cast<int>(oc % 16);
    if (!in[lane]) in[lane].emplace(lanes[lane], lane);
    Reader& r = *in[lane];
    if (s.bias) {
      SPARSE_TRY(b, r.u16());
      w.bias[oc] = b;
    }
    SPARSE_TRY(count, r.u16());
    SPARSE_TRY(lead, r.u8());
    if (lead != 0) return r.bad(fmt::format("channel {} record starts with {:#x}, not 0", oc, lead));
    const uint64_t start = r.at();
    uint16_t* k = w.weights.data() + oc * red;
    for (size_t i = 0; i < taps.size();) {
      const uint32_t phase = taps[i].phase;
      uint8_t allowed = 0;
      size_t end = i;
      for (; end < taps.size() && taps[end].phase == phase; ++end) allowed |= taps[end].bit;
      SPARSE_TRY(mask, r.u8());
      if (mask & ~allowed)
        return r.bad(fmt::format("channel {} mask {:#04x} names taps outside stride phase {}", oc, mask, phase));
      if (mask != allowed && s.kh > 1)
        return r.unsupported(fmt::format("channel {} mask {:#04x} for stride phase {} skips a tap; only {:#04x} "
                                         "(none skipped) is known for 3x3 kernels",
                                         oc, mask, phase, allowed));
      for (; i < end; ++i)
        if (mask & taps[i].bit) {
          SPARSE_TRY(v, r.u16());
          k[taps[i].index] = v;
        }
    }
    if ((r.at() - start) % 2) {  // the body is padded to an even length
      SPARSE_TRY(pad, r.u8());
      (void)pad;
    }
    if (r.at() - start != count)
      return r.bad(fmt::format("channel {} count says {:#x} bytes, the taps take {:#x}", oc, count, r.at() - start));
  }
  return w;
}

Expected<ConvWeights> unpack_stem(std::span<const KernelLane, kKernelLanes> lanes) {
  ConvWeights w;
  w.weights.assign(256 * 9, 0);
  w.bias.assign(256, 0);
  for (int lane = 0; lane < kKernelLanes; ++lane) {
    if (Status st = check_lane_on(lanes[lane], lane); !st) return st.error();
    Reader in(lanes[lane], lane);
    for (uint32_t l = 0; l < 16; ++l) {
      SPARSE_TRY(b, in.u16());
      w.bias[16 * lane + l] = b;
    }
    SPARSE_TRY(count, in.u16());
    const uint64_t body = in.at();
    SPARSE_TRY(lead, in.u8());
    if (lead != 0) return in.bad(fmt::format("the body starts with {:#x}, not 0", lead));
    for (int i = 0; i < 9; ++i) {
      for (uint32_t half = 0; half < 2; ++half) {
        SPARSE_TRY(mask, in.u8());
        if (mask != 0xff)
          return in.unsupported(fmt::format("mask {:#04x} skips a weight; only rows without skipped weights are known",
                                            mask));
        for (uint32_t l = 8 * half; l < 8 * half + 8; ++l) {
          SPARSE_TRY(v, in.u16());
          w.weights[(16 * lane + l) * 9 + kStemTaps[i]] = v;
        }
      }
      if (Status st = in.skip(kStemPadAfter[i]); !st) return st.error();
    }
    if (in.at() - body != count)
      return in.bad(fmt::format("the body count says {:#x} bytes, the rows take {:#x}", count, in.at() - body));
  }
  return w;
}

}  // namespace

Expected<PackedConvKernel> pack_sparse(const ConvKernelShape& s, const ConvWeights& w) {
  if (s.depthwise) return pack_depthwise(s, w);
  return is_stem(s) ? pack_stem(w) : pack_dense_1x1(s, w);
}

Expected<ConvWeights> unpack_sparse(const ConvKernelShape& s, std::span<const KernelLane, kKernelLanes> lanes) {
  if (s.depthwise) return unpack_depthwise(s, lanes);
  return is_stem(s) ? unpack_stem(lanes) : unpack_dense_1x1(s, lanes);
}

}  // namespace ane::kernels
