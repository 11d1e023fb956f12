// Streamed convolutions (stream_conv.h).
#include "stream_conv.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "mac.h"
#include "numerics.h"
#include "tile_dma.h"
#include "two_threads.h"
#include "window.h"

namespace ane::sim::detail {

namespace {

// Pixels per block, a multiple of this where the blocks are pixel ranges.
constexpr uint64_t kBlockAlign = 64;
// The fp32 input (or window) and result blocks together: about 2 MiB.
constexpr uint64_t kBlockFloats = uint64_t{1} << 19;
// Values of a block's input or result below which one thread converts them.
constexpr uint64_t kSplitValues = uint64_t{1} << 17;
// OpenBLAS's small-matrix kernel takes M x N x K <= 10^6; every block stays above this.
constexpr double kMinBlockMacs = double(uint64_t{1} << 21);

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
  const uint64_t target = std::max<uint64_t>(1, kBlockFloats / (ne.reduction() + ne.cout) / b.unit);
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
  auto xb = ws.floats(red * most, "a block of the convolution's input", task);
  if (!xb) return xb.error();
  auto yb = ws.floats(uint64_t{cout} * most, "a block of the convolution's result", task);
  if (!yb) return yb.error();
  auto band = ws.floats(uint64_t{cin} * band_rows * di.w, "the input rows under a block", task);
  if (!band) return band.error();
  const bool ftz = opts.numerics.subnormals == Numerics::Subnormals::FlushToZero;
  const TensorDma& in = p.a.dma;
  const TensorDma& out = p.out.dma;
  const uint8_t* src = a.mem->data() + in.base;
  uint8_t* dst_base = dst->data() + out.base;
  float* x = (*xb)->data();
  float* y = (*yb)->data();

  for (uint64_t k = 0, p0 = 0; k < blocks.count; ++k) {
    const uint64_t n = blocks.pixels(k);
    // Both cores for the conversions only when a block is worth a thread's start.
    const uint64_t split_from = uint64_t{std::max(cin, cout)} * n >= kSplitValues ? 2 : UINT64_MAX;
    if (g.pointwise()) {
      // Channel ic's pixels at x[ic * n].
      on_two_threads(
          cin,
          [&](uint64_t c0, uint64_t c1) {
            uint64_t ignored = 0;  // subnormal counts feed trace notes only
            for (uint64_t ic = c0; ic < c1; ++ic)
              for_runs(p0, n, d.w, [&](uint64_t h, uint32_t w0, uint32_t len, uint64_t at) {
                fp16_row_in(src + ic * in.plane + h * in.row + 2 * uint64_t{w0}, len, x + ic * n + at, ftz, false,
                            ignored);
              });
          },
          split_from);
    } else {
      // Output rows [r0, r1) read input rows [b0, b1); the band starts at b0,
      // so its windows use the padding that is left above it.
      const uint32_t r0 = static_cast<uint32_t>(p0 / d.w), r1 = static_cast<uint32_t>((p0 + n) / d.w);
      const int64_t top = int64_t{r0} * g.sy - g.py;
      const uint64_t b0 = static_cast<uint64_t>(std::max<int64_t>(0, top));
      const uint64_t b1 = static_cast<uint64_t>(
          std::clamp<int64_t>(int64_t{r1 - 1} * g.sy - g.py + g.kh, int64_t(b0), int64_t{di.h}));
      float* bx = (*band)->data();
      on_two_threads(
          cin,
          [&](uint64_t c0, uint64_t c1) {
            uint64_t ignored = 0;
            for (uint64_t ic = c0; ic < c1; ++ic)
              for (uint64_t r = b0; r < b1; ++r)
                fp16_row_in(src + ic * in.plane + r * in.row, di.w, bx + (ic * (b1 - b0) + (r - b0)) * di.w, ftz,
                            false, ignored);
          },
          split_from);
      ConvGeometry band_g = g;
      band_g.py = static_cast<uint32_t>(int64_t(b0) - top);
      gather_windows(bx, cin, static_cast<uint32_t>(b1 - b0), di.w, band_g, r1 - r0, d.w, x);
    }
    mac_sgemm(x, w, bias, cout, static_cast<uint32_t>(red), n, y);
    // The post stage and the output DMA's rounding, row by row into the destination.
    on_two_threads(
        cout,
        [&](uint64_t o0, uint64_t o1) {
          std::vector<uint16_t> bits(n);
          RoundCounts rc;  // counts feed trace notes only
          for (uint64_t oc = o0; oc < o1; ++oc) {
            float* row = y + oc * n;
            if (ne.nonlinear == 1) relu_all(row, n);
            round_to_fp16(row, n, bits.data(), opts.numerics, rc, nullptr);
            for_runs(p0, n, d.w, [&](uint64_t h, uint32_t w0, uint32_t len, uint64_t at) {
              std::memcpy(dst_base + oc * out.plane + h * out.row + 2 * uint64_t{w0}, bits.data() + at,
                          2 * uint64_t{len});
            });
          }
        },
        split_from);
    p0 += n;
  }
  return Ok{};
}

}  // namespace ane::sim::detail
