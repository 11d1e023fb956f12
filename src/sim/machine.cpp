// One task: plan (envelope + class), bind every DMA (bounds first, before any
// work), gather, run the engine, round and scatter, report.

#include <fmt/format.h>

#include "fields.h"
#include "kernel_dma.h"
#include "ne.h"
#include "pe.h"
#include "plan.h"
#include "state.h"
#include "tile_dma.h"

namespace ane::sim {

namespace {

using namespace detail;

// Lane 0 as a lookup table; without A4 it must be sigmoid.hwx's, bit for bit.
Status read_lut(const Lanes& lanes, const RegisterImage& regs, const Options& opts, uint32_t task, LutTable& table,
                bool& is_sigmoid, std::vector<std::string>& notes) {
  if (Status s = require_lanes(lanes, regs, 1, kLutSlots * 2, task); !s) return s;
  for (int i = 0; i < kLutSlots; ++i) table[i] = load_u16(lanes.data[0] + 2 * i);
  const auto& sig = sigmoid_lut();
  is_sigmoid = table == sig;
  if (is_sigmoid) return Ok{};
  if (!opts.assume.lut_any) {
    int i = 0;
    while (table[i] == sig[i]) ++i;
    return unsupported(fmt::format("LUT[{}]={:#06x}", i, table[i]), task);
  }
  notes.push_back("A4 lut-any");
  return Ok{};
}

std::array<uint32_t, 4> nchw(const TensorDma& t) { return {1, t.c, t.h, t.w}; }

}  // namespace

Status Machine::run_task(const RegisterImage& regs, uint32_t index, uint64_t text_offset, const TraceHook& trace) {
  State& st = *state_;
  const Options& opts = st.opts;
  auto planned = plan_task(regs, opts, index);
  if (!planned) return planned.error();
  const TaskPlan& p = *planned;

  TraceRecord rec;
  rec.task = index;
  rec.text_offset = text_offset;
  rec.engine = p.engine == Engine::Pe ? "PE" : "NE";
  rec.op = p.op;
  rec.in_shape = nchw(p.src);
  rec.out_shape = nchw(p.dst);
  rec.notes = p.notes;
  rec.traced = p.traced;

  // Every DMA is checked before anything is computed or written.
  auto src = tile_dma_bind(st, p.src, false, index, &rec.dma);
  if (!src) return src.error();
  std::vector<uint8_t>* src2 = nullptr;
  if (p.engine == Engine::Pe) {
    auto m = tile_dma_bind(st, p.src2, false, index, &rec.dma);
    if (!m) return m.error();
    src2 = *m;
  }
  Lanes lanes;
  if (p.kernel_slot >= 0) {
    auto l = kernel_dma(st, regs, p.kernel_slot, index, &rec.dma);
    if (!l) return l.error();
    lanes = *l;
  }
  auto dst = tile_dma_bind(st, p.dst, true, index, &rec.dma);
  if (!dst) return dst.error();

  Workspace ws(st);
  const bool ftz = opts.numerics.subnormals == Numerics::Subnormals::FlushToZero;
  const bool count = static_cast<bool>(trace);
  uint64_t subnormal_inputs = 0;
  auto x = ws.floats(p.src.elements(), "the source tensor", index);
  if (!x) return x.error();
  tile_dma_in(**src, p.src, (*x)->data(), ftz, count, subnormal_inputs);

  LutTable lut{};
  bool lut_is_sigmoid = false;
  if (p.nonlinear == 2 && p.engine != Engine::Pe) {
    if (Status s = read_lut(lanes, regs, opts, index, lut, lut_is_sigmoid, rec.notes); !s) return s;
    if (!lut_is_sigmoid) rec.op = "lut";
  }
  const LutTable* lut_ptr = p.nonlinear == 2 ? &lut : nullptr;

  Values y;
  if (p.engine == Engine::Pe) {
    auto b = ws.floats(p.src2.elements(), "the second source tensor", index);
    if (!b) return b.error();
    auto out = ws.doubles(p.dst.elements(), "the planar-engine result", index);
    if (!out) return out.error();
    tile_dma_in(*src2, p.src2, (*b)->data(), ftz, count, subnormal_inputs);
    pe_elementwise(p.pe_op, (*x)->data(), (*b)->data(), (*out)->data(), (*out)->size());
    y.wide = true;
    y.d = *out;
  } else if (p.engine == Engine::NePass) {
    if (Status s = ne_pass(*x, p, lut_ptr, lut_is_sigmoid, opts, ws, index, y, rec.notes); !s) return s;
  } else {
    auto w = ws.floats(uint64_t{p.cout} * p.cin, "the weight matrix", index);
    if (!w) return w.error();
    auto bias = ws.floats(p.bias ? p.cout : 0, "the bias vector", index);
    if (!bias) return bias.error();
    if (Status s = conv_weights(lanes, regs, p, opts, (*w)->data(), (*bias)->data(), subnormal_inputs, rec.notes,
                                index);
        !s)
      return s;
    if (Status s = ne_conv(**x, **w, p.bias ? (*bias)->data() : nullptr, p, lut_ptr, lut_is_sigmoid, opts, ws, index,
                           y, rec.notes);
        !s)
      return s;
  }

  RoundCounts rc;
  OutputStats stats;
  OutputStats* sp = trace ? &stats : nullptr;
  if (y.wide)
    tile_dma_out(**dst, p.dst, y.d->data(), opts.numerics, rc, sp);
  else
    tile_dma_out(**dst, p.dst, y.f->data(), opts.numerics, rc, sp);

  if (!trace) return Ok{};
  if (rc.overflow) rec.notes.push_back(fmt::format("{} ({} values)", setting_note(opts.numerics, "overflow"), rc.overflow));
  if (const uint64_t sub = subnormal_inputs + rc.subnormal)
    rec.notes.push_back(fmt::format("{} ({} values)", setting_note(opts.numerics, "subnormal"), sub));
  stats.store(rec);
  trace(rec);
  return Ok{};
}

}  // namespace ane::sim
