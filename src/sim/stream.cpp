// Streamed element-wise tasks (stream.h).
#include "stream.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "held_patterns.h"
#include "ne.h"
#include "numerics.h"
#include "pe.h"
#include "tile_dma.h"
#include "two_threads.h"

namespace ane::sim::detail {

namespace {

// Values per piece of work: the piece's buffers stay in the core's cache, and
// pe_elementwise runs a piece on the calling thread.
constexpr uint64_t kPiece = 4096;
// Below this many values the whole-tensor path is as fast.
constexpr uint64_t kMinValues = uint64_t{1} << 16;

bool readable(const BoundOperand& b) {
  const Operand& op = *b.op;
  if (op.from == Operand::From::Dma) return b.mem && !op.dma.channels_inner && op.dma.dims == op.dims;
  return op.from == Operand::From::L2 && b.l2.result && b.l2.index.empty() && b.l2.gathered.empty();
}

// Whether [begin, end) of one memory and another range overlap.
bool overlaps(const Memory* m1, const TensorDma& t1, const Memory* m2, const TensorDma& t2) {
  return m1 == m2 && t1.base < t2.end() && t2.base < t1.end();
}

// A run of values of one row of the task's tensor: row `row` (over g, c, h),
// columns [w0, w0 + len).
struct Run {
  uint64_t row;
  uint32_t w0, len;
};

struct RowAt {
  uint64_t g, c, h;
};
RowAt row_at(const Dims& d, uint64_t r) { return {r / (uint64_t{d.h} * d.c), r / d.h % d.c, r % d.h}; }

// The fp16 bits of one run of an operand.
void read_run(const BoundOperand& b, const Run& run, uint16_t* out) {
  const Operand& op = *b.op;
  const RowAt at = row_at(op.dims, run.row);
  if (b.mem) {
    const TensorDma& t = op.dma;
    const uint8_t* src = b.mem->data() + t.base + at.g * t.group + at.c * t.plane + at.h * t.row + 2 * uint64_t{run.w0};
    std::memcpy(out, src, 2 * uint64_t{run.len});
    return;
  }
  // As machine.cpp's gather: broadcast axes repeat, a slice starts at its first channel.
  const Dims s = b.l2.slice ? b.l2.result->dims : op.stored();
  const uint64_t row = (((op.broadcast_g ? 0 : at.g) * s.c + b.l2.first_channel + (op.broadcast_c ? 0 : at.c)) * s.h +
                        (op.broadcast_h ? 0 : at.h)) *
                       s.w;
  const uint16_t* data = b.l2.result->data.data();
  if (op.broadcast_w)
    std::fill_n(out, run.len, data[row]);
  else
    std::memcpy(out, data + row + run.w0, 2 * uint64_t{run.len});
}

// Where a run of the result goes.
uint8_t* write_at(const TaskPlan& p, Memory* dst, uint16_t* l2_out, const Run& run) {
  const Dims& d = p.out.dims;
  if (!dst) return reinterpret_cast<uint8_t*>(l2_out + run.row * d.w + run.w0);
  const TensorDma& t = p.out.dma;
  const RowAt at = row_at(d, run.row);
  return dst->data() + t.base + at.g * t.group + at.c * t.plane + at.h * t.row + 2 * uint64_t{run.w0};
}

// The task's values [begin, end) in pieces: `piece(runs, n)` gets the runs of
// one piece (n values in all).
template <typename Fn>
void for_pieces(uint64_t begin, uint64_t end, uint32_t w, Fn piece) {
  std::vector<Run> runs;
  for (uint64_t e = begin; e < end;) {
    runs.clear();
    uint64_t n = 0;
    while (n < kPiece && e < end) {
      const uint64_t row = e / w;
      const uint32_t w0 = static_cast<uint32_t>(e % w);
      const uint32_t len = static_cast<uint32_t>(std::min({uint64_t{w} - w0, kPiece - n, end - e}));
      runs.push_back({row, w0, len});
      n += len;
      e += len;
    }
    piece(runs, n);
  }
}

void flush_subnormals(uint16_t* bits, uint64_t n) {
  uint64_t ignored = 0;
  for (uint64_t i = 0; i < n; ++i) bits[i] = load_fp16_bits(bits[i], true, ignored);
}

// The single-operand task's result for the fp16 bit patterns of its input
// that `held` marks (held_patterns.h; the others are left 0), computed by the whole-tensor
// path's own functions on a tensor of those patterns. Each value is computed
// alone, so a pattern's result does not depend on which others are there.
Status result_table(const TaskPlan& p, const LutReading* lut, const Options& opts, Workspace& ws, uint32_t task,
                    const std::vector<uint8_t>& held, std::vector<uint16_t>& table) {
  constexpr uint64_t kPatterns = 65536;
  std::vector<uint16_t> patterns;
  patterns.reserve(kPatterns);
  for (uint64_t h = 0; h < kPatterns; ++h)
    if (held[h]) patterns.push_back(static_cast<uint16_t>(h));
  const uint64_t m = patterns.size();
  table.assign(kPatterns, 0);
  if (m == 0) return Ok{};
  auto x = ws.floats(m, "the result table", task);
  if (!x) return x.error();
  const bool ftz = opts.numerics.subnormals == Numerics::Subnormals::FlushToZero;
  uint64_t ignored = 0;
  for (uint64_t i = 0; i < m; ++i) (**x)[i] = fp16_to_float(load_fp16_bits(patterns[i], ftz, ignored));
  Values y;
  std::vector<std::string> notes;  // trace notes: no trace here
  if (p.engine == Engine::Ne) {
    if (Status s = ne_pass(*x, p, lut, opts, ws, task, y, notes); !s) return s;
  } else {
    pe_elementwise(p.pe, (*x)->data(), nullptr, (*x)->data(), m);
    y.f = *x;
  }
  std::vector<uint16_t> results(m);
  RoundCounts rc;
  if (y.wide)
    round_to_fp16(y.d->data(), m, results.data(), opts.numerics, rc, nullptr);
  else
    round_to_fp16(y.f->data(), m, results.data(), opts.numerics, rc, nullptr);
  for (uint64_t i = 0; i < m; ++i) table[patterns[i]] = results[i];
  return Ok{};
}

}  // namespace

bool reduce_streamable(const TaskPlan& p, const BoundOperand& a) {
  return p.engine == Engine::PeReduce && !p.pe.square && p.b.from == Operand::From::None && !p.a.retain_l2 &&
         p.a.dims.elements() >= kMinValues && readable(a);
}

void run_reduce_streamed(const TaskPlan& p, const BoundOperand& a, const Options& opts, bool fp64_sum, double* out) {
  const Dims& d = p.a.dims;
  const uint64_t planes = uint64_t{d.g} * d.c, n = uint64_t{d.h} * d.w;
  const bool ftz = opts.numerics.subnormals == Numerics::Subnormals::FlushToZero;
  // Planes in groups of about 2^16 values (one plane at least).
  const uint64_t per = std::max<uint64_t>(1, kMinValues / std::max<uint64_t>(n, 1));
  on_two_threads(
      planes,
      [&](uint64_t p0, uint64_t p1) {
        std::vector<uint16_t> bits(std::min(per, p1 - p0) * n);
        std::vector<float> x(bits.size());
        for (uint64_t r0 = p0; r0 < p1; r0 += per) {
          const uint64_t r1 = std::min(p1, r0 + per), count = (r1 - r0) * n;
          for (uint64_t row = r0 * d.h; row < r1 * d.h; ++row)
            read_run(a, {row, 0, d.w}, bits.data() + (row - r0 * d.h) * d.w);
          if (ftz) flush_subnormals(bits.data(), count);
          fp16_to_float_n(bits.data(), x.data(), count);
          Dims group = d;
          group.g = 1;
          group.c = static_cast<uint32_t>(r1 - r0);
          pe_reduce(p.pe, x.data(), group, fp64_sum, out + r0);
        }
      },
      planes * n >= 2 * kMinValues ? 2 : UINT64_MAX);
}

bool streamable(const TaskPlan& p, const BoundOperand& a, const BoundOperand* b, const Memory* dst) {
  const uint64_t n = p.a.dims.elements();
  // TaskType 4's third operand has no streamed path.
  if (n < kMinValues || p.a.retain_l2 || p.out.dims != p.a.dims || p.c.from != Operand::From::None) return false;
  if (p.engine == Engine::Ne) {
    if (b || (p.ne.mac != NePlan::Mac::Pass && p.ne.mac != NePlan::Mac::AccumulatePass)) return false;
  } else if (p.engine != Engine::Pe) {
    return false;
  }
  if (!readable(a) || (b && (!readable(*b) || p.b.dims != p.a.dims))) return false;
  if (dst) {
    const TensorDma& t = p.out.dma;
    if (t.channels_inner || t.dims != p.out.dims) return false;
    // Whole-tensor reads come before any write; a streamed write must not
    // land on bytes a later piece still reads.
    if (a.mem && overlaps(dst, t, a.mem, p.a.dma)) return false;
    if (b && b->mem && overlaps(dst, t, b->mem, p.b.dma)) return false;
  }
  return true;
}

Status run_streamed(const TaskPlan& p, const BoundOperand& a, const BoundOperand* b, const LutReading* lut,
                    const Options& opts, Workspace& ws, uint32_t task, Memory* dst, uint16_t* l2_out) {
  const uint64_t n = p.a.dims.elements();
  const uint32_t w = p.a.dims.w;
  const Numerics& num = opts.numerics;
  if (!b) {
    const std::vector<uint8_t> held = held_patterns(n, [&](uint64_t begin, uint64_t end, std::vector<uint8_t>& mark) {
      std::vector<uint16_t> bits(kPiece);
      for_pieces(begin, end, w, [&](const std::vector<Run>& runs, uint64_t) {
        for (const Run& run : runs) {
          read_run(a, run, bits.data());
          for (uint32_t i = 0; i < run.len; ++i) mark[bits[i]] = 1;
        }
      });
    });
    std::vector<uint16_t> table;
    if (Status s = result_table(p, lut, opts, ws, task, held, table); !s) return s;
    on_two_threads(n, [&](uint64_t begin, uint64_t end) {
      std::vector<uint16_t> bits(kPiece);
      for_pieces(begin, end, w, [&](const std::vector<Run>& runs, uint64_t) {
        for (const Run& run : runs) {
          read_run(a, run, bits.data());
          for (uint32_t i = 0; i < run.len; ++i) bits[i] = table[bits[i]];
          std::memcpy(write_at(p, dst, l2_out, run), bits.data(), 2 * uint64_t{run.len});
        }
      });
    });
    return Ok{};
  }
  const bool ftz = num.subnormals == Numerics::Subnormals::FlushToZero;
  on_two_threads(n, [&](uint64_t begin, uint64_t end) {
    std::vector<uint16_t> bits_a(kPiece), bits_b(kPiece);
    std::vector<float> fa(kPiece), fb(kPiece);
    RoundCounts rc;  // counts feed trace notes only
    for_pieces(begin, end, w, [&](const std::vector<Run>& runs, uint64_t count) {
      uint64_t at = 0;
      for (const Run& run : runs) {
        read_run(a, run, bits_a.data() + at);
        read_run(*b, run, bits_b.data() + at);
        at += run.len;
      }
      if (ftz) {
        flush_subnormals(bits_a.data(), count);
        flush_subnormals(bits_b.data(), count);
      }
      fp16_to_float_n(bits_a.data(), fa.data(), count);
      fp16_to_float_n(bits_b.data(), fb.data(), count);
      pe_elementwise(p.pe, fa.data(), fb.data(), fa.data(), count);
      round_to_fp16(fa.data(), count, bits_a.data(), num, rc, nullptr);
      at = 0;
      for (const Run& run : runs) {
        std::memcpy(write_at(p, dst, l2_out, run), bits_a.data() + at, 2 * uint64_t{run.len});
        at += run.len;
      }
    });
  });
  return Ok{};
}

}  // namespace ane::sim::detail
