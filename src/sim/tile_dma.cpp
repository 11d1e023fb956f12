// Tile DMA in (gather + fp16 -> fp32) and out (round + scatter).
#include "tile_dma.h"

#include <cmath>
#include <limits>
#include <type_traits>

#include <fmt/format.h>

namespace ane::sim::detail {

Expected<Memory*> tile_dma_bind(MachineState& st, const TensorDma& t, bool write, uint32_t task,
                                              std::vector<DmaRecord>* record) {
  auto mem = st.memory(t.slot, t.slot_field->name.c_str(), task);
  if (!mem) return mem.error();
  const std::string what = fmt::format("{} {}", t.unit, write ? "writes" : "reads");
  if (Status s = st.check_range(t.slot, t.base, t.end(), what, task); !s) return s.error();
  if (record) record->push_back({t.unit, t.slot, t.base, t.end(), -1});
  return mem;
}

void fp16_row_in(const uint8_t* row, uint64_t n, float* out, bool ftz, bool count, uint64_t& subnormals) {
  if (!ftz && !count) {
    fp16_to_float_n(row, out, n);  // the hot path: F16C where available
    return;
  }
  for (uint64_t w = 0; w < n; ++w) out[w] = fp16_to_float(load_fp16_bits(load_u16(row + 2 * w), ftz, subnormals));
}

void tile_dma_in(const Memory& mem, const TensorDma& t, float* out, bool ftz, bool count,
                 uint64_t& subnormals) {
  const uint8_t* base = mem.data() + t.base;
  const Dims& d = t.dims;
  for (uint64_t r = 0; r < uint64_t{d.g} * d.c * d.h; ++r) {
    const uint64_t h = r % d.h, c = r / d.h % d.c, g = r / (uint64_t{d.h} * d.c);
    fp16_row_in(base + g * t.group + c * t.plane + h * t.row, d.w, out + r * d.w, ftz, count, subnormals);
  }
}

void OutputStats::add(uint16_t h) {
  checksum = (checksum ^ (h & 0xffu)) * 0x100000001b3ull;
  checksum = (checksum ^ (h >> 8)) * 0x100000001b3ull;
  if (fp16_is_nan(h)) {
    ++nan;
    return;
  }
  if (fp16_is_inf(h)) ++inf;
  if (fp16_is_subnormal(h)) ++subnormal;
  const float f = fp16_to_float(h);
  if (!any) {
    min = max = f;
    any = true;
  } else {
    min = std::min(min, f);
    max = std::max(max, f);
  }
}

void OutputStats::store(TraceRecord& r) const {
  r.min = any ? min : std::numeric_limits<float>::quiet_NaN();
  r.max = any ? max : std::numeric_limits<float>::quiet_NaN();
  r.nan = nan;
  r.inf = inf;
  r.subnormal = subnormal;
  r.checksum = checksum;
}

namespace {

inline uint16_t round_one(float v, const Numerics& n, RoundCounts& rc) {
  const uint16_t h = n.round == Numerics::Round::HalfAway ? double_to_fp16_half_away(v) : float_to_fp16(v);
  return finish_fp16(h, std::isinf(v), n, rc);
}
inline uint16_t round_one(double v, const Numerics& n, RoundCounts& rc) {
  return finish_fp16(round_fp16(v, n.round), std::isinf(v), n, rc);
}

// The hardware conversion (nearest even) serves when no option changes it.
inline bool plain_rounding(const Numerics& n) {
  return n.overflow == Numerics::Overflow::Inf && n.subnormals == Numerics::Subnormals::Keep &&
         n.round != Numerics::Round::HalfAway;
}

template <typename T>
void scatter(Memory& mem, const TensorDma& t, const T* y, const Numerics& n, RoundCounts& rc,
             OutputStats* stats) {
  uint8_t* base = mem.data() + t.base;
  const Dims& dd = t.dims;
  if (t.channels_inner) {  // element by element: a transposed result is small
    uint64_t i = 0;
    for (uint64_t g = 0; g < dd.g; ++g)
      for (uint64_t c = 0; c < dd.c; ++c)
        for (uint64_t h = 0; h < dd.h; ++h)
          for (uint64_t w = 0; w < dd.w; ++w) {
            const uint16_t v = round_one(y[i++], n, rc);
            store_u16(base + t.offset(g, c, h, w), v);
            if (stats) stats->add(v);
          }
    return;
  }
  // fp32 rows without saturate/ftz/statistics round in bulk; the counters
  // for notes come from one cheap pass over the fp16 results.
  const bool bulk = std::is_same_v<T, float> && plain_rounding(n);
  const Dims& d = t.dims;
  for (uint64_t r = 0; r < uint64_t{d.g} * d.c * d.h; ++r) {
    const uint64_t h = r % d.h, c = r / d.h % d.c, g = r / (uint64_t{d.h} * d.c);
    uint8_t* row = base + g * t.group + c * t.plane + h * t.row;
    const T* src = y + r * d.w;
    if constexpr (std::is_same_v<T, float>) {
      if (bulk) {
        float_to_fp16_n(src, row, d.w);
        if (!stats) continue;
        for (uint32_t w = 0; w < d.w; ++w) {
          const uint16_t v = load_u16(row + 2 * uint64_t{w});
          finish_fp16(v, std::isinf(src[w]), n, rc);  // counts only: no option changes v
          stats->add(v);
        }
        continue;
      }
    }
    for (uint32_t w = 0; w < d.w; ++w) {
      const uint16_t v = round_one(src[w], n, rc);
      store_u16(row + 2 * uint64_t{w}, v);
      if (stats) stats->add(v);
    }
  }
}

}  // namespace

template <typename T>
void round_dense(const T* y, uint64_t count, uint16_t* out, const Numerics& n, RoundCounts& rc, OutputStats* stats) {
  // As scatter: fp32 without saturate/ftz/statistics rounds in bulk (the
  // counters only feed trace notes, which come with statistics).
  if constexpr (std::is_same_v<T, float>) {
    if (!stats && plain_rounding(n)) {
      float_to_fp16_n(y, out, count);
      return;
    }
  }
  for (uint64_t i = 0; i < count; ++i) {
    out[i] = round_one(y[i], n, rc);
    if (stats) stats->add(out[i]);
  }
}

void round_to_fp16(const float* y, uint64_t count, uint16_t* out, const Numerics& n, RoundCounts& rc,
                   OutputStats* stats) {
  round_dense(y, count, out, n, rc, stats);
}
void round_to_fp16(const double* y, uint64_t count, uint16_t* out, const Numerics& n, RoundCounts& rc,
                   OutputStats* stats) {
  round_dense(y, count, out, n, rc, stats);
}

void tile_dma_out(Memory& mem, const TensorDma& t, const float* y, const Numerics& n, RoundCounts& rc,
                  OutputStats* stats) {
  scatter(mem, t, y, n, rc, stats);
}

void tile_dma_out(Memory& mem, const TensorDma& t, const double* y, const Numerics& n,
                  RoundCounts& rc, OutputStats* stats) {
  scatter(mem, t, y, n, rc, stats);
}

}  // namespace ane::sim::detail
