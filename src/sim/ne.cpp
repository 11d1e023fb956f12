// Neural engine: the MAC stage (mac.cpp) chosen by the numerics options, then
// the post stage MAC -> + bias -> x PostScale -> nonlinearity; the output DMA
// rounds.
#include "ne.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "held_patterns.h"
#include "mac.h"
#include "numerics.h"
#include "two_threads.h"
#include "window.h"

namespace ane::sim::detail {

namespace {

// Copies fp32 values into a fp64 buffer (exact), charged to the workspace.
Status widen(Values& v, Workspace& ws, uint32_t task) {
  if (v.wide) return Ok{};
  auto d = ws.doubles(v.f->size(), "widening to fp64", task);
  if (!d) return d.error();
  std::copy(v.f->begin(), v.f->end(), (*d)->begin());
  v.d = *d;
  v.f = nullptr;
  v.wide = true;
  return Ok{};
}

// The table at one value. Only the sigmoid table has an alternative model
// (lut=ideal); every other table is read linearly between its nodes.
// `off_node` is set when a sigmoid input falls between nodes (at nodes every
// model agrees).
inline double table_value(const LutReading& lut, bool ideal, double v, bool& off_node) {
  if (!lut.is_sigmoid) return lut_eval(lut, v);
  off_node |= !std::isnan(v) && !lut_at_node(lut, v);
  return ideal ? lut_ideal_sigmoid(v) : lut_eval(lut, v);
}

// The trace notes of a table task: the LUT model that applied.
void table_notes(const LutReading& lut, bool ideal, bool off_node, std::vector<std::string>& notes) {
  if (!lut.is_sigmoid) {
    notes.push_back("lut=linear");
    if (ideal) notes.push_back("lut=ideal needs the sigmoid table: read linearly");
  } else if (off_node) {
    notes.push_back(ideal ? "lut=ideal" : "lut=linear");
  }
}

// The table lookup on every value.
void apply_lut(Buf<double>& d, const LutReading& lut, const Options& opts, std::vector<std::string>& notes) {
  const bool ideal = opts.numerics.lut == Numerics::Lut::Ideal;
  bool off_node[2] = {false, false};
  on_two_threads(d.size(), [&](uint64_t b, uint64_t e) {
    bool off = false;
    for (uint64_t i = b; i < e; ++i) d[i] = table_value(lut, ideal, d[i], off);
    off_node[b == 0 ? 0 : 1] |= off;
  });
  table_notes(lut, ideal, off_node[0] || off_node[1], notes);
}

// One value of a pass-through task with a table, as post_stage computes it in
// fp64: + AccBias, x PostScale, the table.
struct TableChain {
  const NePlan& p;
  const LutReading& lut;
  bool ideal;
  double acc_bias, scale;
  bool unit;
  double operator()(float x, bool& off_node) const {
    double v = x;
    if (p.acc_bias) v += acc_bias;
    if (!unit) v *= scale;
    return table_value(lut, ideal, v, off_node);
  }
};

// A pass-through task with a table, in place on fp32 values that the output
// rounds to fp16: each result is stored as its fp16_proxy, so no fp64 copy
// of the tensor is needed. Source values are fp16 (tile DMA or L2), so on a
// large tensor the chain is evaluated once per fp16 bit pattern and looked
// up; a value that is not an fp16 takes the chain directly. Either way each
// value goes through the same fp64 function: the same bits.
void table_pass(Buf<float>& x, const NePlan& p, const LutReading& lut, const Options& opts,
                std::vector<std::string>& notes) {
  const TableChain chain{p, lut, opts.numerics.lut == Numerics::Lut::Ideal, fp16_to_float(p.acc_bias),
                         fp16_to_float(p.post_scale), p.post_scale == 0x3c00};
  const uint64_t n = x.size();
  bool off_node[2] = {false, false};
  if (n < (uint64_t{1} << 17)) {
    // Both cores from a few thousand values: each costs tens of nanoseconds.
    on_two_threads(
        n,
        [&](uint64_t b, uint64_t e) {
          bool& off = off_node[b == 0 ? 0 : 1];
          for (uint64_t i = b; i < e; ++i) x[i] = fp16_proxy(chain(x[i], off), opts.numerics.round);
        },
        uint64_t{1} << 13);
  } else {
    const std::vector<uint8_t> held = held_patterns(n, [&](uint64_t b, uint64_t e, std::vector<uint8_t>& mark) {
      constexpr uint64_t kBlock = 2048;
      uint16_t bits[kBlock];
      for (uint64_t at = b; at < e; at += kBlock) {
        const uint64_t len = std::min(kBlock, e - at);
        float_to_fp16_n(x.data() + at, bits, len);
        for (uint64_t i = 0; i < len; ++i) mark[bits[i]] = 1;
      }
    });
    std::vector<float> memo(65536);
    std::vector<uint8_t> memo_off(lut.is_sigmoid ? 65536 : 0);
    on_two_threads(65536, [&](uint64_t b, uint64_t e) {
      for (uint64_t h = b; h < e; ++h) {
        if (!held[h]) continue;
        bool off = false;
        memo[h] = fp16_proxy(chain(fp16_to_float(static_cast<uint16_t>(h)), off), opts.numerics.round);
        if (lut.is_sigmoid) memo_off[h] = off;
      }
    });
    on_two_threads(n, [&](uint64_t b, uint64_t e) {
      constexpr uint64_t kBlock = 2048;
      uint16_t bits[kBlock];
      float back[kBlock];
      bool off = false;
      for (uint64_t at = b; at < e; at += kBlock) {
        const uint64_t len = std::min(kBlock, e - at);
        float* v = x.data() + at;
        float_to_fp16_n(v, bits, len);
        fp16_to_float_n(bits, back, len);
        for (uint64_t i = 0; i < len; ++i) {
          if (std::bit_cast<uint32_t>(back[i]) == std::bit_cast<uint32_t>(v[i])) {
            if (lut.is_sigmoid) off |= memo_off[bits[i]] != 0;
            v[i] = memo[bits[i]];
          } else {
            v[i] = fp16_proxy(chain(v[i], off), opts.numerics.round);
          }
        }
      }
      off_node[b == 0 ? 0 : 1] |= off;
    });
  }
  table_notes(lut, chain.ideal, off_node[0] || off_node[1], notes);
}

// Post stage shared by both NE modes. `scale_exact_in_fp32`: x * PostScale
// is exact in fp32 (fp16 inputs), so fp32 values can stay fp32.
Status post_stage(Values& v, const TaskPlan& tp, const float* bias_after_round, uint64_t hw, bool scale_exact_in_fp32,
                  const LutReading* lut, const Options& opts, Workspace& ws, uint32_t task,
                  std::vector<std::string>& notes) {
  const NePlan& p = tp.ne;
  const bool unit = p.post_scale == 0x3c00;
  const double s = fp16_to_float(p.post_scale);
  const bool wide_needed = bias_after_round || p.nonlinear == 2 || p.acc_bias != 0 || (!unit && !scale_exact_in_fp32);
  if (wide_needed) {
    if (Status st = widen(v, ws, task); !st) return st;
  }
  if (p.acc_bias) {
    // The accumulator bias (AccumulatePass): x + AccBias, exact in fp64.
    const double b = fp16_to_float(p.acc_bias);
    for (double& x : *v.d) x += b;
  }
  if (bias_after_round) {
    // bias=after-round: round the sum to fp16, add the bias, round again later.
    for (uint64_t oc = 0; oc < p.outputs(); ++oc) {
      double* row = v.d->data() + oc * hw;
      const double b = bias_after_round[oc];
      for (uint64_t i = 0; i < hw; ++i) row[i] = fp16_to_float(double_to_fp16(row[i])) + b;
    }
  }
  if (v.wide) {
    if (!unit)
      for (double& x : *v.d) x *= s;
    if (p.nonlinear == 1)
      for (double& x : *v.d) x = relu(x);
    if (p.nonlinear == 2 && lut) apply_lut(*v.d, *lut, opts, notes);
  } else {
    const float sf = static_cast<float>(s);
    if (!unit)
      for (float& x : *v.f) x *= sf;
    if (p.nonlinear == 1)
      relu_all(v.f->data(), v.f->size());
  }
  return Ok{};
}

}  // namespace

namespace {

// y[c] = combine over the n input channels c n .. c n + n - 1, per position.
template <typename Combine>
void combine_channel_groups(const float* x, uint64_t channels, uint32_t n, uint64_t hw, float* y, Combine combine) {
  for (uint64_t c = 0; c < channels; ++c) {
    float* out = y + c * hw;
    const float* in = x + c * n * hw;
    std::copy_n(in, hw, out);
    for (uint32_t k = 1; k < n; ++k)
      for (uint64_t i = 0; i < hw; ++i) out[i] = combine(out[i], in[k * hw + i]);
  }
}

}  // namespace

void ne_channel_max(const float* x, uint64_t channels, uint32_t n, uint64_t hw, float* y) {
  combine_channel_groups(x, channels, n, hw, y, [](float a, float b) {
    return (std::isnan(a) || std::isnan(b)) ? a + b : std::max(a, b);
  });
}

void ne_channel_product(const float* x, uint64_t channels, uint32_t n, uint64_t hw, float* y) {
  combine_channel_groups(x, channels, n, hw, y, [](float a, float b) { return a * b; });
}

void ne_channel_sum(const float* x, uint64_t channels, uint32_t n, uint64_t hw, float* y) {
  combine_channel_groups(x, channels, n, hw, y, [](float a, float b) { return a + b; });
}

Status ne_pass(Buf<float>* x, const TaskPlan& p, const LutReading* lut, const Options& opts, Workspace& ws,
               uint32_t task, Values& out, std::vector<std::string>& notes) {
  out.wide = false;
  out.f = x;
  if (p.ne.nonlinear == 2 && lut) {
    table_pass(*x, p.ne, *lut, opts, notes);
    return Ok{};
  }
  const uint64_t hw = uint64_t{p.a.dims.h} * p.a.dims.w;
  return post_stage(out, p, nullptr, hw, true, lut, opts, ws, task, notes);
}

Status ne_conv(const Buf<float>& x, const Buf<float>& w, const float* bias, const TaskPlan& tp,
               const LutReading* lut, const Options& opts, Workspace& ws, uint32_t task, Values& out,
               std::vector<std::string>& notes) {
  const NePlan& p = tp.ne;
  const Numerics& n = opts.numerics;
  const uint64_t hw_in = uint64_t{tp.a.dims.h} * tp.a.dims.w;
  const uint64_t hw = uint64_t{tp.out.dims.h} * tp.out.dims.w;
  const uint32_t groups = p.conv_groups(), gin = p.group_cin(), gout = p.group_cout();
  const uint32_t red = static_cast<uint32_t>(p.reduction());
  const uint64_t outs = p.outputs() * hw;
  const bool in_acc = bias && n.bias == Numerics::BiasPoint::InAccumulator;
  const float* bias_in_acc = in_acc ? bias : nullptr;
  const bool fixed = n.accumulator == Numerics::Accumulator::FixedQ16;
  const bool fp64 = n.accumulator == Numerics::Accumulator::Fp64 || fixed;  // both give fp64 sums
  if (red > 1 || fixed) notes.push_back(setting_note(n, "acc"));
  if (!fixed) notes.push_back(setting_note(n, "products"));  // q15.16 rounds products its own way
  if (bias) notes.push_back(setting_note(n, "bias"));

  const bool ordered = n.accumulator == Numerics::Accumulator::Fp32Ordered;
  const bool round_products = n.products == Numerics::Products::Fp16;
  const bool dgemm = fp64 && !round_products && !fixed;
  // A window to gather first unless every output reads one input pixel.
  Buf<float>* col = nullptr;
  if (!p.conv.pointwise()) {
    auto c = ws.floats(uint64_t{red} * hw, "the convolution windows", task);
    if (!c) return c.error();
    col = *c;
  }
  Buf<double>*xd = nullptr, *wd = nullptr, *yd = nullptr;
  Buf<float>* yf = nullptr;
  if (dgemm) {
    // acc=fp64: fp16 products are exact in fp64 and the sum loses (almost) nothing.
    auto a = ws.doubles(uint64_t{red} * hw, "the fp64 input matrix", task);
    if (!a) return a.error();
    auto b = ws.doubles(uint64_t{gout} * red, "the fp64 weight matrix", task);
    if (!b) return b.error();
    xd = *a;
    wd = *b;
  }
  if (fp64) {
    auto y = ws.doubles(outs, "the MAC result", task);
    if (!y) return y.error();
    yd = *y;
  } else {
    auto y = ws.floats(outs, "the MAC result", task);
    if (!y) return y.error();
    yf = *y;
  }
  for (uint32_t g = 0; g < groups; ++g) {
    const float* xg = x.data() + uint64_t{g} * gin * hw_in;
    if (col) {
      gather_windows(xg, gin, tp.a.dims.h, tp.a.dims.w, p.conv, tp.out.dims.h, tp.out.dims.w, col->data());
      xg = col->data();
    }
    const float* wg = w.data() + uint64_t{g} * gout * red;
    const float* bg = bias_in_acc ? bias_in_acc + uint64_t{g} * gout : nullptr;
    const uint64_t at = uint64_t{g} * gout * hw;
    if (fixed)
      mac_fixed_q16(xg, wg, bg, gout, red, hw, yd->data() + at);
    else if (dgemm)
      mac_dgemm(xg, wg, bg, gout, red, hw, xd->data(), wd->data(), yd->data() + at);
    else if (fp64)
      mac_ordered(xg, wg, bg, gout, red, hw, true, yd->data() + at);
    else if (ordered || round_products)
      mac_ordered(xg, wg, bg, gout, red, hw, round_products, yf->data() + at);
    else
      mac_sgemm(xg, wg, bg, gout, red, hw, yf->data() + at);
  }
  out.wide = fp64;
  if (fp64) out.d = yd;
  else out.f = yf;
  const float* after = bias && !in_acc ? bias : nullptr;
  return post_stage(out, tp, after, hw, false, lut, opts, ws, task, notes);
}

}  // namespace ane::sim::detail
