// Streamed convolutions (stream_conv.h).
#include "stream_conv.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "blas_threads.h"
#include "mac.h"
#include "numerics.h"
#include "tile_dma.h"
#include "two_threads.h"
#include "window.h"

namespace ane::sim::detail {

namespace {

// Pixels per block, a multiple of this where the blocks are pixel ranges.
constexpr uint64_t kBlockAlign = 64;
// The fp32 input (or windows) and result of one block together: about
// 256 KiB, so that a worker's block stays in its core's L2 cache from the
// conversion through the sgemm to the rounding, and a fresh process faults in
// little. Measured from 2^15 to 2^19 floats on a 3x3 64 -> 64 convolution
// over 64x64 (2^15 fastest) and 512 -> 512 over 8192 pixels (2^17); 2^16
// is within noise of the best on both.
constexpr uint64_t kBlockFloats = uint64_t{1} << 16;
// Each sgemm call packs the whole weight matrix again (OpenBLAS packs both
// operands per call), a cost per MAC that falls as 1 / pixels. 512 -> 512
// over 64 x 128 pixels, min / median ms, interleaved: blocks of 64 pixels
// 24.6 / 24.9, of 256 23.0 / 23.2 (of 512 the same, but the 1 x 8192 job's
// five tasks then share their blocks unevenly: 26.1 -> 29.9 median).
constexpr uint64_t kMinBlockPixels = 256;
// Weights of at most this many floats (512 KiB) stay in a core's L2 cache
// between calls, where packing them again is cheap: such tasks keep the
// smaller blocks of kBlockFloats, which share out more evenly between the
// cores. 3x3 64 -> 64 over 64 x 64 (36,864 weights), 40 interleaved runs,
// min / median ms: floor 256 pixels 3.84 / 4.35, none 3.68 / 4.08.
constexpr uint64_t kCachedWeightFloats = uint64_t{1} << 17;
// Every block stays above the small-matrix kernel's bound (mac.h).
constexpr double kMinBlockMacs = kMinSgemmMacs;

// A block reads each input channel's run of pixels from a different page, a
// pattern the hardware prefetchers do not follow: the run of the channel this
// many ahead is fetched while one converts. On the 512 -> 512 convolution over
// 1 x 8192 pixels, the conversion's share of the process's samples fell from
// 7.5% to 3.5% (4 and 16 ahead did about as well).
constexpr uint64_t kPrefetchChannels = 8;
void prefetch(const uint8_t* p, uint64_t bytes) {
  for (uint64_t o = 0; o < bytes; o += 64) __builtin_prefetch(p + o);
}

// How a task's output pixels are cut: pointwise convolutions in ranges of
// pixels over the whole plane (a multiple of kBlockAlign), windowed ones in
// bands of output rows (a band's windows need the input rows under it).
// Blocks of `per` units (pixels or rows), the last one `last`; a last block
// too small for the MAC bound joins the one before it.
struct Blocks {
  uint64_t unit = 1;    // pixels per unit: 1, or Wout for rows
  uint64_t per = 0, count = 0, last = 0;
  uint64_t pixels(uint64_t k) const { return (k + 1 == count ? last : per) * unit; }
  uint64_t most() const { return std::max(per, last) * unit; }
};

double macs(const NePlan& ne, uint64_t pixels) { return double(ne.reduction()) * ne.cout * double(pixels); }

Blocks blocks_of(const NePlan& ne, const Dims& out) {
  Blocks b;
  const bool rows = !ne.conv.pointwise();
  b.unit = rows ? out.w : 1;
  const uint64_t total = rows ? out.h : uint64_t{out.h} * out.w;
  const uint64_t align = rows ? 1 : kBlockAlign;
  // Blocks of about kBlockFloats (at least kMinBlockPixels where the weights
  // leave the cache), and never under the MAC bound where the task has that much.
  const uint64_t least = ne.reduction() * ne.cout > kCachedWeightFloats ? kMinBlockPixels : 1;
  const uint64_t by_size = std::max(kBlockFloats / (ne.reduction() + ne.cout), least) / b.unit;
  const auto by_macs = static_cast<uint64_t>(std::ceil(kMinBlockMacs / macs(ne, b.unit)));
  const uint64_t target = std::max<uint64_t>({1, by_size, by_macs});
  const uint64_t count = std::max<uint64_t>(1, total / target);
  b.per = (total + count - 1) / count;
  b.per = (b.per + align - 1) / align * align;
  b.count = (total + b.per - 1) / b.per;
  b.last = total - (b.count - 1) * b.per;
  if (b.count >= 2 && macs(ne, b.last * b.unit) < kMinBlockMacs) {
    b.count -= 1;
    b.last += b.per;
  }
  return b;
}

// Pixels [p0, p0 + n) of a W-wide plane as runs within rows: fn(h, w0, len, at),
// `at` counting from p0.
template <typename Fn>
void for_runs(uint64_t p0, uint64_t n, uint32_t width, Fn fn) {
  for (uint64_t p = p0, end = p0 + n; p < end;) {
    const uint64_t h = p / width;
    const uint32_t w0 = static_cast<uint32_t>(p % width);
    const uint32_t len = static_cast<uint32_t>(std::min<uint64_t>(width - w0, end - p));
    fn(h, w0, len, p - p0);
    p += len;
  }
}

}  // namespace

bool conv_streamable(const TaskPlan& p, const BoundOperand& a, const Memory* dst, const Options& opts) {
  const NePlan& ne = p.ne;
  const Numerics& num = opts.numerics;
  if (p.engine != Engine::Ne || ne.mac != NePlan::Mac::Conv) return false;
  if (ne.conv.depthwise || ne.conv.groups != 1) return false;
  if (num.accumulator != Numerics::Accumulator::Fp32 || num.products != Numerics::Products::Exact) return false;
  if (ne.bias && num.bias != Numerics::BiasPoint::InAccumulator) return false;
  if (ne.nonlinear > 1 || ne.acc_bias != 0 || ne.post_scale != 0x3c00) return false;
  const Operand& in = *a.op;
  if (in.from != Operand::From::Dma || !a.mem || in.retain_l2 || in.dma.channels_inner || in.dma.dims != in.dims)
    return false;
  const Dims& od = p.out.dims;
  if (!dst || p.out.dma.channels_inner || p.out.dma.dims != od) return false;
  if (in.dims.g != 1 || od.g != 1 || in.dims.c != ne.cin || od.c != ne.cout) return false;
  if (ne.conv.pointwise() && (od.h != in.dims.h || od.w != in.dims.w)) return false;
  // Blocks are written while later ones are still to be read.
  const TensorDma& t = p.out.dma;
  if (dst == a.mem && t.base < in.dma.end() && in.dma.base < t.end()) return false;
  const Blocks b = blocks_of(ne, od);
  return b.count >= 2 && macs(ne, std::min(b.per, b.last) * b.unit) >= kMinBlockMacs;
}

Status run_conv_streamed(const TaskPlan& p, const BoundOperand& a, const float* w, const float* bias,
                         const Options& opts, Workspace& ws, uint32_t task, Memory* dst) {
  const NePlan& ne = p.ne;
  const ConvGeometry& g = ne.conv;
  const uint32_t cin = ne.cin, cout = ne.cout;
  const uint64_t red = ne.reduction();
  const Dims& d = p.out.dims;
  const Dims& di = p.a.dims;
  const Blocks blocks = blocks_of(ne, d);
  const uint64_t most = blocks.most();
  // Windowed: the input rows under the largest band, all channels.
  const uint64_t band_rows =
      g.pointwise() ? 0 : std::min<uint64_t>(di.h, (most / d.w - 1) * g.sy + g.kh);

  // Each worker takes whole blocks (convert, gather, sgemm, round) with a
  // one-thread sgemm, so the cores share no step and never wait on each
  // other between them. Without OpenBLAS's thread control, one worker calls
  // the BLAS and leaves the threading to it.
  SingleThreadedBlas blas;
  const uint64_t workers = blas.active() ? worker_count(blocks.count) : 1;
  struct Buffers {
    float* x;     // the block's input (pointwise) or windows, [red][n]
    float* y;     // its result, [cout][n]
    float* band;  // windowed: the input rows under it
  };
  std::vector<Buffers> bufs;
  for (uint64_t i = 0; i < workers; ++i) {
    auto xb = ws.floats(red * most, "a block of the convolution's input", task);
    if (!xb) return xb.error();
    auto yb = ws.floats(uint64_t{cout} * most, "a block of the convolution's result", task);
    if (!yb) return yb.error();
    auto band = ws.floats(uint64_t{cin} * band_rows * di.w, "the input rows under a block", task);
    if (!band) return band.error();
    bufs.push_back({(*xb)->data(), (*yb)->data(), (*band)->data()});
  }
  const bool ftz = opts.numerics.subnormals == Numerics::Subnormals::FlushToZero;
  const TensorDma& in = p.a.dma;
  const TensorDma& out = p.out.dma;
  const uint8_t* src = a.mem->data() + in.base;
  uint8_t* dst_base = dst->data() + out.base;

  auto run_block = [&](uint64_t k, const Buffers& b, std::vector<uint16_t>& bits) {
    const uint64_t n = blocks.pixels(k), p0 = k * blocks.per * blocks.unit;
    uint64_t ignored = 0;  // subnormal counts feed trace notes only
    if (g.pointwise()) {
      // Channel ic's pixels at x[ic * n].
      for (uint64_t ic = 0; ic < cin; ++ic)
        for_runs(p0, n, d.w, [&](uint64_t h, uint32_t w0, uint32_t len, uint64_t at) {
          const uint64_t offset = h * in.row + 2 * uint64_t{w0};
          if (ic + kPrefetchChannels < cin)
            prefetch(src + (ic + kPrefetchChannels) * in.plane + offset, 2 * uint64_t{len});
          fp16_row_in(src + ic * in.plane + offset, len, b.x + ic * n + at, ftz, false, ignored);
        });
    } else {
      // Output rows [r0, r1) read input rows [b0, b1); the band starts at b0,
      // so its windows use the padding that is left above it.
      const uint32_t r0 = static_cast<uint32_t>(p0 / d.w), r1 = static_cast<uint32_t>((p0 + n) / d.w);
      const int64_t top = int64_t{r0} * g.sy - g.py;
      const uint64_t b0 = static_cast<uint64_t>(std::max<int64_t>(0, top));
      const uint64_t b1 = static_cast<uint64_t>(
          std::clamp<int64_t>(int64_t{r1 - 1} * g.sy - g.py + g.kh, int64_t(b0), int64_t{di.h}));
      for (uint64_t ic = 0; ic < cin; ++ic)
        for (uint64_t r = b0; r < b1; ++r) {
          if (ic + kPrefetchChannels < cin)
            prefetch(src + (ic + kPrefetchChannels) * in.plane + r * in.row, 2 * uint64_t{di.w});
          fp16_row_in(src + ic * in.plane + r * in.row, di.w, b.band + (ic * (b1 - b0) + (r - b0)) * di.w, ftz,
                      false, ignored);
        }
      ConvGeometry band_g = g;
      band_g.py = static_cast<uint32_t>(int64_t(b0) - top);
      gather_windows(b.band, cin, static_cast<uint32_t>(b1 - b0), di.w, band_g, r1 - r0, d.w, b.x);
    }
    mac_sgemm_piece(b.x, w, bias, cout, static_cast<uint32_t>(red), n, 0, n, b.y);
    // The post stage and the output DMA's rounding, row by row into the destination.
    bits.resize(n);
    RoundCounts rc;  // counts feed trace notes only
    for (uint64_t oc = 0; oc < cout; ++oc) {
      float* row = b.y + oc * n;
      if (ne.nonlinear == 1) relu_all(row, n);
      round_to_fp16(row, n, bits.data(), opts.numerics, rc, nullptr);
      for_runs(p0, n, d.w, [&](uint64_t h, uint32_t w0, uint32_t len, uint64_t at) {
        std::memcpy(dst_base + oc * out.plane + h * out.row + 2 * uint64_t{w0}, bits.data() + at,
                    2 * uint64_t{len});
      });
    }
  };
  // Blocks are claimed in order; which worker runs one changes no bit (its
  // bounds and its one-thread sgemm are the same either way).
  std::vector<std::vector<uint16_t>> bits(workers);
  on_workers(blocks.count, workers, [&](uint64_t k, uint64_t worker) { run_block(k, bufs[worker], bits[worker]); });
  return Ok{};
}

}  // namespace ane::sim::detail
