// One task: plan (which units, from where, to where), bind every DMA and L2
// read (bounds first, before any work), gather the operands, run the engine
// the registers select, round and deliver the result, report.
#include <algorithm>

#include <fmt/format.h>

#include "fields.h"
#include "kernel_dma.h"
#include "lut.h"
#include "ne.h"
#include "pe.h"
#include "plan.h"
#include "state.h"
#include "stream.h"
#include "stream_conv.h"
#include "tile_dma.h"

namespace ane::sim {

namespace {

using namespace detail;

std::array<uint32_t, 4> shape_of(const Dims& d) { return {d.g, d.c, d.h, d.w}; }

Expected<BoundOperand> bind_operand(MachineState& st, const Operand& op, const char* what, uint32_t task,
                            std::vector<DmaRecord>* record) {
  BoundOperand b;
  b.op = &op;
  if (op.from == Operand::From::Dma) {
    auto mem = tile_dma_bind(st, op.dma, false, task, record);
    if (!mem) return mem.error();
    b.mem = *mem;
  } else {
    auto r = st.l2.get(op.l2, op, what, task);
    if (!r) return r.error();
    b.l2 = *r;
    if (record) record->push_back({"L2", -1, op.l2, op.l2 + 2 * op.stored().elements(), -1});
  }
  return b;
}

// Fills `out` [g][c][h][w] at the operand's dims from values stored at dims
// `s` (from channel `first` on), each repeated along the broadcast axes.
template <typename Read>
void repeat_broadcast(const Operand& op, const Dims& s, uint64_t first, float* out, Read read) {
  const Dims d = op.dims;
  for (uint64_t g = 0; g < d.g; ++g)
    for (uint64_t c = 0; c < d.c; ++c)
      for (uint64_t h = 0; h < d.h; ++h) {
        const uint64_t row =
            (((op.broadcast_g ? 0 : g) * s.c + first + (op.broadcast_c ? 0 : c)) * s.h + (op.broadcast_h ? 0 : h)) * s.w;
        for (uint64_t w = 0; w < d.w; ++w) *out++ = read(row + (op.broadcast_w ? 0 : w));
      }
}

// The operand as dense fp32 [g][c][h][w]; a DMA operand or an L2 result that
// broadcasts is read at its stored size and repeated along the broadcast axes.
void gather(const BoundOperand& b, float* out, bool ftz, bool count, uint64_t& subnormals) {
  const Operand& op = *b.op;
  if (b.mem && !op.broadcasts()) {
    tile_dma_in(*b.mem, op.dma, out, ftz, count, subnormals);
    return;
  }
  if (b.mem) {
    std::vector<float> stored(op.dma.dims.elements());
    tile_dma_in(*b.mem, op.dma, stored.data(), ftz, count, subnormals);
    repeat_broadcast(op, op.dma.dims, 0, out, [&](uint64_t i) { return stored[i]; });
    return;
  }
  if (!b.l2.gathered.empty()) {  // gathered across results
    for (uint64_t i = 0; i < b.l2.gathered.size(); ++i)
      out[i] = fp16_to_float(load_fp16_bits(b.l2.gathered[i], ftz, subnormals));
    return;
  }
  const auto& data = b.l2.result->data;
  if (!b.l2.index.empty()) {  // gathered by address
    for (uint64_t i = 0; i < b.l2.index.size(); ++i)
      out[i] = fp16_to_float(load_fp16_bits(data[b.l2.index[i]], ftz, subnormals));
    return;
  }
  // A channel slice reads channels first.. of the result.
  const Dims s = b.l2.slice ? b.l2.result->dims : op.stored();
  const uint16_t* from = data.data() + b.l2.first_value;
  repeat_broadcast(op, s, b.l2.first_channel, out,
                   [&](uint64_t i) { return fp16_to_float(load_fp16_bits(from[i], ftz, subnormals)); });
}

// A result task `task` leaves in L2, its values still to come.
L2Result l2_result(const Destination& out, uint32_t task) {
  L2Result r;
  r.dims = out.dims;
  r.task = task;
  r.channel_stride = out.l2_channel;
  r.row_stride = out.l2_row;
  r.group_stride = out.l2_group;
  r.channels_inner = out.channels_inner;
  return r;
}

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
  rec.engine = p.engine == Engine::Ne ? "NE" : "PE";
  rec.op = p.op;
  rec.in_shape = shape_of(p.a.dims);
  rec.out_shape = shape_of(p.out.dims);
  rec.notes = p.notes;
  rec.traced = p.traced;
  auto* record = trace ? &rec.dma : nullptr;

  // Every DMA and L2 read is checked before anything is computed or written.
  auto a = bind_operand(st, p.a, "first source", index, record);
  if (!a) return a.error();
  std::optional<BoundOperand> b, c;
  if (p.b.from != Operand::From::None) {
    auto bb = bind_operand(st, p.b, "second source", index, record);
    if (!bb) return bb.error();
    b = *bb;
  }
  if (p.c.from != Operand::From::None) {
    auto cc = bind_operand(st, p.c, "second source's next row", index, record);
    if (!cc) return cc.error();
    c = *cc;
  }
  Lanes lanes;
  if (p.ne.kernel_slot >= 0) {
    auto l = kernel_dma(st, regs, p.ne.kernel_slot, index, record);
    if (!l) return l.error();
    lanes = *l;
  }
  Memory* dst = nullptr;
  if (p.out.to == Destination::To::Dma) {
    auto d = tile_dma_bind(st, p.out.dma, true, index, record);
    if (!d) return d.error();
    dst = *d;
  }
  std::optional<LutReading> lut;
  if (p.engine == Engine::Ne && p.ne.nonlinear == 2) {
    if (Status s = require_lanes(lanes, regs, 1, kLutSlots * 2, index); !s) return s;
    LutTable table;
    for (int i = 0; i < kLutSlots; ++i) table[i] = load_u16(lanes.data[0] + 2 * i);
    auto r = read_lut(table, index);
    if (!r) return r.error();
    lut = *r;
    if (!lut->is_sigmoid) rec.op = "table";
    else rec.op = "sigmoid";
  }

  // Kept convolution weights last only while consecutive tasks read them, so
  // that what the machine holds stays within one task's working set.
  if (p.engine != Engine::Ne || p.ne.mac != NePlan::Mac::Conv || !kept_weights_match(st.kept_weights, lanes, p, opts))
    st.kept_weights.clear();

  Workspace ws(st);
  // The streamed paths round to nearest even in bulk.
  const bool bulk_rounding = opts.numerics.round != Numerics::Round::HalfAway;
  if (!trace && bulk_rounding && streamable(p, *a, b ? &*b : nullptr, dst)) {
    const LutReading* table = lut ? &*lut : nullptr;
    if (dst) return run_streamed(p, *a, b ? &*b : nullptr, table, opts, ws, index, dst, nullptr);
    if (Status s = ws.reserve(2 * p.out.dims.elements(), "the result kept in L2", index); !s) return s;
    L2Result r = l2_result(p.out, index);
    r.data.resize(p.out.dims.elements());
    if (Status s = run_streamed(p, *a, b ? &*b : nullptr, table, opts, ws, index, nullptr, r.data.data()); !s)
      return s;
    st.l2.put(p.out.l2, std::move(r));
    st.note_peak();
    return Ok{};
  }
  const bool ftz = opts.numerics.subnormals == Numerics::Subnormals::FlushToZero;
  const bool count = static_cast<bool>(trace);
  uint64_t subnormal_inputs = 0;
  // The weight matrix and bias of a convolution, as fp32.
  auto conv_matrices = [&]() -> Expected<std::pair<Buf<float>*, Buf<float>*>> {
    if (Status s = keep_conv_weights(st, ws, lanes, p, index); !s) return s.error();
    subnormal_inputs += st.kept_weights.subnormals;
    return std::pair{&st.kept_weights.w, &st.kept_weights.bias};
  };
  if (!trace && bulk_rounding && conv_streamable(p, *a, dst, opts)) {
    auto m = conv_matrices();
    if (!m) return m.error();
    return run_conv_streamed(p, *a, m->first->data(), p.ne.bias ? m->second->data() : nullptr, opts, ws, index, dst);
  }
  // The result through the output DMA or into L2, rounded to fp16; the trace record.
  auto write_result = [&](const Values& y) -> Status {
    RoundCounts rc;
    OutputStats stats;
    OutputStats* sp = trace ? &stats : nullptr;
    if (dst) {
      if (y.wide)
        tile_dma_out(*dst, p.out.dma, y.d->data(), opts.numerics, rc, sp);
      else
        tile_dma_out(*dst, p.out.dma, y.f->data(), opts.numerics, rc, sp);
    } else {
      if (Status s = ws.reserve(2 * p.out.dims.elements(), "the result kept in L2", index); !s) return s;
      L2Result r = l2_result(p.out, index);
      r.data.resize(p.out.dims.elements());
      if (y.wide)
        round_to_fp16(y.d->data(), r.data.size(), r.data.data(), opts.numerics, rc, sp);
      else
        round_to_fp16(y.f->data(), r.data.size(), r.data.data(), opts.numerics, rc, sp);
      if (trace) rec.dma.push_back({"L2", -1, p.out.l2, p.out.l2 + 2 * r.data.size(), -1});
      st.l2.put(p.out.l2, std::move(r));
      st.note_peak();
    }

    if (!trace) return Ok{};
    if (rc.overflow)
      rec.notes.push_back(fmt::format("{} ({} values)", setting_note(opts.numerics, "overflow"), rc.overflow));
    if (const uint64_t sub = subnormal_inputs + rc.subnormal)
      rec.notes.push_back(fmt::format("{} ({} values)", setting_note(opts.numerics, "subnormal"), sub));
    stats.store(rec);
    trace(rec);
    return Ok{};
  };
  Values y;
  const bool fp64_sum = opts.numerics.accumulator == Numerics::Accumulator::Fp64;
  if (!trace && reduce_streamable(p, *a)) {
    // No whole-tensor fp32 copy of the source: plane by plane.
    auto out = ws.doubles(p.out.dims.elements(), "the reduction result", index);
    if (!out) return out.error();
    run_reduce_streamed(p, *a, opts, fp64_sum, (*out)->data());
    y.wide = true;
    y.d = *out;
    return write_result(y);
  }
  auto x = ws.floats(p.a.dims.elements(), "the first source", index);
  if (!x) return x.error();
  gather(*a, (*x)->data(), ftz, count, subnormal_inputs);
  if (p.a.retain_l2) {
    // The staged source stays in L2 for later tasks, bit for bit.
    if (Status s = ws.reserve(2 * p.a.dims.elements(), "the source kept in L2", index); !s) return s;
    L2Result r;
    r.dims = p.a.dims;
    r.task = index;
    r.channel_stride = p.a.l2_channel;
    r.row_stride = p.a.l2_row;
    r.group_stride = p.a.l2_group;
    r.data.reserve(p.a.dims.elements());
    const TensorDma& t = p.a.dma;
    const uint8_t* base = a->mem->data() + t.base;
    for (uint64_t g = 0; g < t.dims.g; ++g)
      for (uint64_t c = 0; c < t.dims.c; ++c)
        for (uint64_t h = 0; h < t.dims.h; ++h)
          for (uint64_t w = 0; w < t.dims.w; ++w) r.data.push_back(load_u16(base + t.offset(g, c, h, w)));
    if (trace) rec.dma.push_back({"L2", -1, p.a.l2, p.a.l2 + 2 * r.data.size(), -1});
    st.l2.put(p.a.l2, std::move(r));
  }

  // A second (or third) operand as dense fp32, in a buffer of its own.
  auto gathered = [&](const BoundOperand& bound, const char* what) -> Expected<Buf<float>*> {
    auto m = ws.floats(bound.op->dims.elements(), what, index);
    if (!m) return m.error();
    gather(bound, (*m)->data(), ftz, count, subnormal_inputs);
    return *m;
  };
  if (p.engine == Engine::Pe) {
    Buf<float>* bv = nullptr;
    if (b) {
      auto m = gathered(*b, "the second source");
      if (!m) return m.error();
      bv = *m;
    }
    // In place: each result needs only its own operands, and the plan makes
    // an element-wise result the shape of its first operand (check_no_window).
    if (c) {
      auto m = gathered(*c, "the second source's next row");
      if (!m) return m.error();
      pe_normalize((*x)->data(), bv->data(), (*m)->data(), p.pe.second == 3, (*x)->data(), (*x)->size(),
                   opts.numerics.round);
    } else {
      pe_elementwise(p.pe, (*x)->data(), bv ? bv->data() : nullptr, (*x)->data(), (*x)->size(), opts.numerics.round);
    }
    y.wide = false;
    y.f = *x;
  } else if (p.engine == Engine::PeReduce) {
    auto out = ws.doubles(p.out.dims.elements(), "the reduction result", index);
    if (!out) return out.error();
    // Squares of fp16 values are exact in fp32 (22 significant bits).
    if (b) {
      auto m = gathered(*b, "the second source");
      if (!m) return m.error();
      pe_square_difference((*x)->data(), (*m)->data(), (*x)->size());
    } else if (p.pe.square) {
      for (float& v : **x) v *= v;
    }
    pe_reduce(p.pe, (*x)->data(), p.a.dims, fp64_sum, (*out)->data());
    if (p.pe.reduce == PePlan::Reduce::Sum && p.a.dims.w > 1)
      rec.notes.push_back(fp64_sum ? "acc=fp64" : "reduce sums in fp32, W order");
    y.wide = true;
    y.d = *out;
  } else if (p.ne.mac != NePlan::Mac::Conv) {
    Buf<float>* src = *x;
    if (p.ne.over_channel_groups()) {
      auto m = ws.floats(p.out.dims.elements(), "the channel groups' results", index);
      if (!m) return m.error();
      const uint64_t channels = uint64_t{p.out.dims.g} * p.out.dims.c, hw = uint64_t{p.out.dims.h} * p.out.dims.w;
      if (p.ne.mac == NePlan::Mac::ChannelSum)
        ne_channel_sum(src->data(), channels, p.ne.unicast_cin, hw, (*m)->data());
      else if (p.ne.mac == NePlan::Mac::ChannelMax)
        ne_channel_max(src->data(), channels, p.ne.unicast_cin, hw, (*m)->data());
      else
        ne_channel_product(src->data(), channels, p.ne.unicast_cin, hw, (*m)->data());
      src = *m;
    }
    if (Status s = ne_pass(src, p, lut ? &*lut : nullptr, opts, ws, index, y, rec.notes); !s) return s;
  } else {
    auto m = conv_matrices();
    if (!m) return m.error();
    if (Status s = ne_conv(**x, *m->first, p.ne.bias ? m->second->data() : nullptr, p, lut ? &*lut : nullptr, opts,
                           ws, index, y, rec.notes);
        !s)
      return s;
  }

  return write_result(y);
}

}  // namespace ane::sim
