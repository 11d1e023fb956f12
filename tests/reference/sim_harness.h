// Shared by the tests/sim_reference_*_test.cpp files: the corpus programs,
// ways to run them through the simulator (Simulator and Machine::run_task),
// comparisons and inputs. Expected values come from the docs or from the
// independent reference (ane_ref.h), never from the simulator.
// "§" numbers refer to ../shared/docs/simulator-semantics.md.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "../support.h"
#include "ane/dump.h"
#include "ane/sim.h"
#include "ane/task.h"
#include "ane_ref.h"

namespace ane_ref::harness {

namespace ref = ane_ref;
using ane::sim::Numerics;
using ane::sim::Options;
using Fp16 = std::vector<uint16_t>;
using Inputs = std::map<std::string, Fp16>;

inline uint16_t h(double v) { return ref::to_fp16(v); }  // rounded by the reference
inline double d(uint16_t x) { return ref::to_double(x); }

inline std::string hex(uint16_t x) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "0x%04x (%.9g)", x, d(x));
  return buf;
}

// ---- programs -------------------------------------------------------------------

inline ane::Program load(const std::string& name) {
  auto p = ane::open_program(ane::test::corpus_hwx_path(name));
  EXPECT_TRUE(p.ok()) << name << ": " << (p ? "" : p.error().str());
  return p ? std::move(p).value() : ane::Program{};
}

inline ane::BufferInfo buffer(const ane::Program& p, const std::string& name) {
  for (const auto& b : p.hwx->buffers())
    if (b.name == name) return b;
  ADD_FAILURE() << "no buffer " << name;
  return {};
}

inline std::string output_name(const ane::Program& p) {
  for (const auto& b : p.hwx->buffers())
    if (b.direction == ane::BufferDirection::Output) return b.name;
  ADD_FAILURE() << "no output buffer";
  return {};
}

inline size_t elements(const ane::Program& p, const std::string& name) {
  const auto s = buffer(p, name).shape();
  return s ? s->nchw[0] * s->nchw[1] * s->nchw[2] * s->nchw[3] : 0;
}

inline uint32_t field(const ane::RegisterImage& r, const char* name) {
  auto v = r.get(name);
  EXPECT_TRUE(v.ok()) << name;
  return v ? *v : 0;
}

inline std::vector<ane::RegisterImage> regs_of(const ane::Program& p) {
  std::vector<ane::RegisterImage> r;
  for (const auto& t : p.tasks) r.push_back(t.regs);
  return r;
}

using Changes = std::vector<std::pair<std::string, uint32_t>>;

// The program's register images with `changes` applied to task `task`.
inline std::vector<ane::RegisterImage> modified(const ane::Program& p, const Changes& changes, size_t task = 0) {
  auto r = regs_of(p);
  for (const auto& [name, value] : changes) {
    auto st = r.at(task).set(name, value);
    EXPECT_TRUE(st.ok()) << name << ": " << (st ? "" : st.error().str());
  }
  return r;
}

// Byte offset of kernel lane i in __const: CoeffBaseAddr[i] (64-byte units, §3).
inline uint64_t lane_offset(const ane::Program& p, int i) {
  return 64ull * field(p.tasks[0].regs, ("KernelDMASrc.CoeffBaseAddr[" + std::to_string(i) + "].Addr").c_str());
}

// Kernel lane i of a task, as §6.3 defines it: CoeffBfrSize[i] bytes at
// slot[KBase0] + CoeffBaseAddr[i]; KBase0 is the __const slot in every corpus file.
inline Fp16 lane(const ane::Program& p, const ane::RegisterImage& r, int i) {
  const std::string n = std::to_string(i);
  const uint64_t base = lane_offset(p, i);
  const uint64_t size = 64ull * field(r, ("KernelDMASrc.CoeffBfrSize[" + n + "].MemBfrSize").c_str());
  EXPECT_EQ(field(r, "Header[9].KBase0"), 1u);
  const auto* cs = p.hwx->find_section("__TEXT", "__const");
  EXPECT_NE(cs, nullptr);
  Fp16 out;
  if (!cs) return out;
  const auto bytes = p.hwx->section_data(*cs);
  for (uint64_t o = base; o + 1 < base + size && o + 1 < bytes.size(); o += 2)
    out.push_back(static_cast<uint16_t>(bytes[o] | bytes[o + 1] << 8));
  return out;
}

// W[oc][ic] of an OCGSize = 0 convolution without bias: lane oc holds
// W[oc][0..Cin-1] (§6.3).
inline Fp16 conv_weights(const ane::Program& p, int cin, int cout) {
  Fp16 w;
  for (int oc = 0; oc < cout; ++oc) {
    const Fp16 l = lane(p, p.tasks[0].regs, oc);
    w.insert(w.end(), l.begin(), l.begin() + cin);
  }
  return w;
}

inline ref::Lut sigmoid_table(const ane::Program& p) {
  const Fp16 l = lane(p, p.tasks[0].regs, 0);
  ref::Lut t{};
  EXPECT_EQ(l.size(), t.size());
  std::copy_n(l.begin(), std::min(l.size(), t.size()), t.begin());
  return t;
}

// A copy of p whose tasks carry `regs` and whose __const holds `lanes`
// (byte offset -> fp16 values), re-encoded and re-parsed, so the Simulator
// sees the change whichever representation of the program it reads.
inline ane::Program patched(const ane::Program& p, const std::vector<ane::RegisterImage>& regs,
                            const std::map<uint64_t, Fp16>& lanes = {}) {
  ane::HwxFile f = *p.hwx;
  for (auto& lc : f.commands) {
    auto* seg = lc.as<ane::SegmentCommand>();
    if (!seg || seg->segname != "__TEXT") continue;
    for (const auto& s : seg->sections) {
      const uint64_t at = s.offset - seg->fileoff;
      if (s.sectname == "__text")
        for (size_t i = 0; i < p.tasks.size(); ++i)
          ane::put_bytes(seg->contents, at + p.tasks[i].text_offset, ane::encode_task(regs[i], p.tasks[i].streams));
      if (s.sectname == "__const")
        for (const auto& [off, values] : lanes)
          for (size_t k = 0; k < values.size(); ++k) ane::put_u16(seg->contents, at + off + 2 * k, values[k]);
    }
  }
  auto q = ane::parse_program(ane::write_hwx(f), p.path);
  EXPECT_TRUE(q.ok()) << (q ? "" : q.error().str());
  if (!q) return {};
  for (size_t i = 0; i < regs.size(); ++i) EXPECT_TRUE(q->tasks.at(i).regs == regs[i]) << "task " << i;
  return std::move(q).value();
}

// ---- running ----------------------------------------------------------------------

struct Outcome {
  bool ok = false;
  std::string error;  // Error::str(), the one line a user sees
  Fp16 out;           // the program's output buffer, dense NCHW
};

inline Outcome run_sim(const ane::Program& p, const Inputs& in, const Options& o = {}) {
  auto sim = ane::sim::Simulator::create(p, o);
  if (!sim) return {false, sim.error().str(), {}};
  for (const auto& [name, data] : in) {
    ane::sim::Tensor t;
    t.nchw = {1, 1, 1, static_cast<uint32_t>(data.size())};
    t.data = data;
    if (auto st = sim->set_input(name, t); !st) return {false, "set_input: " + st.error().str(), {}};
  }
  if (auto st = sim->run(); !st) return {false, st.error().str(), {}};
  auto out = sim->read_buffer(output_name(p));
  if (!out) return {false, "read_buffer: " + out.error().str(), {}};
  return {true, "", out->data};
}

// Byte offset of dense element e inside a buffer laid out with `s`'s strides (§3).
inline uint64_t element_offset(const ane::BufferInfo::Shape& s, uint64_t e) {
  const auto& n = s.nchw;
  const uint64_t w = e % n[3], hh = e / n[3] % n[2], c = e / (n[3] * n[2]) % n[1], b = e / (n[3] * n[2] * n[1]);
  return b * s.strides[0] + c * s.strides[1] + hh * s.strides[2] + w * s.strides[3];
}

// Slots as §2.2 allocates them: __text and __const bytes, zeroed tensor
// buffers of their section size with the inputs scattered by their strides.
inline ane::sim::Machine machine_for(const ane::Program& p, const Inputs& in, const Options& o = {}) {
  ane::sim::Machine m(o);
  const auto info = p.hwx->program();
  EXPECT_TRUE(info.has_value());
  if (!info) return m;
  const auto bufs = p.hwx->buffers();
  for (int k = 0; k < 32; ++k) {
    const uint64_t addr = info->slots[k];
    if (addr == 0) continue;
    for (const char* name : {"__text", "__const"}) {
      const auto* s = p.hwx->find_section("__TEXT", name);
      if (!s || s->addr != addr) continue;
      const auto data = p.hwx->section_data(*s);
      std::vector<uint8_t> bytes(data.begin(), data.end());
      bytes.resize(s->size);
      m.set_slot(k, std::move(bytes));
    }
    for (const auto& b : bufs) {
      if (b.slot != k) continue;
      std::vector<uint8_t> bytes(b.size);
      if (in.count(b.name))
        for (size_t e = 0; e < in.at(b.name).size(); ++e)
          ane::put_u16(bytes, element_offset(*b.shape(), e), in.at(b.name)[e]);
      m.set_slot(k, std::move(bytes));
    }
  }
  return m;
}

inline Outcome run_machine(const ane::Program& p, const std::vector<ane::RegisterImage>& regs, const Inputs& in,
                           const Options& o = {}) {
  ane::sim::Machine m = machine_for(p, in, o);
  for (size_t i = 0; i < regs.size(); ++i)
    if (auto st = m.run_task(regs[i], static_cast<uint32_t>(i), p.tasks.at(i).text_offset); !st)
      return {false, st.error().str(), {}};
  const auto out = buffer(p, output_name(p));
  const auto* mem = m.slot(out.slot);
  if (!mem) return {false, "output slot unbound", {}};
  Outcome r{true, "", {}};
  for (uint64_t e = 0; e < elements(p, out.name); ++e) {
    const uint64_t off = element_offset(*out.shape(), e);
    if (off + 1 >= mem->size()) return {false, "output slot smaller than its buffer", {}};
    r.out.push_back(static_cast<uint16_t>((*mem)[off] | (*mem)[off + 1] << 8));
  }
  return r;
}

// Runs modified registers (and kernel bytes) both ways; `check` sees each outcome.
inline void run_both(const ane::Program& p, const std::vector<ane::RegisterImage>& regs, const Inputs& in,
                     const Options& o, const std::function<void(const Outcome&)>& check,
                     const std::map<uint64_t, Fp16>& lanes = {}) {
  const ane::Program q = patched(p, regs, lanes);
  {
    SCOPED_TRACE("via Simulator");
    check(run_sim(q, in, o));
  }
  {
    SCOPED_TRACE("via Machine::run_task");
    check(run_machine(q, regs, in, o));
  }
}

// ---- comparing ------------------------------------------------------------------------

// Equal fp16 values. The docs fix neither the sign of a zero result nor NaN
// payloads, so +0/-0 match each other and any NaN matches any NaN.
inline bool same(uint16_t a, uint16_t b) {
  return a == b || (ref::is_zero(a) && ref::is_zero(b)) || (ref::is_nan(a) && ref::is_nan(b));
}

inline ::testing::AssertionResult values_equal(const Outcome& got, const Fp16& want, const Fp16& in = {}) {
  if (!got.ok) return ::testing::AssertionFailure() << "run failed: " << got.error;
  if (got.out.size() != want.size())
    return ::testing::AssertionFailure() << got.out.size() << " values, expected " << want.size();
  std::ostringstream os;
  size_t bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (same(got.out[i], want[i])) continue;
    if (++bad <= 8) {
      os << "\n  [" << i << "] got " << hex(got.out[i]) << ", expected " << hex(want[i]);
      if (i < in.size()) os << " (input " << hex(in[i]) << ")";
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << want.size() << " values differ:" << os.str();
}

// lo[i] <= got[i] <= hi[i] by value; a NaN bound means the result must be NaN.
inline ::testing::AssertionResult values_within(const Outcome& got, const Fp16& lo, const Fp16& hi,
                                                const Fp16& in = {}) {
  if (!got.ok) return ::testing::AssertionFailure() << "run failed: " << got.error;
  if (got.out.size() != lo.size())
    return ::testing::AssertionFailure() << got.out.size() << " values, expected " << lo.size();
  std::ostringstream os;
  size_t bad = 0;
  for (size_t i = 0; i < lo.size(); ++i) {
    const uint16_t g = got.out[i];
    const bool nan_expected = ref::is_nan(lo[i]) || ref::is_nan(hi[i]);
    const bool good = nan_expected ? ref::is_nan(g) : (!ref::is_nan(g) && d(lo[i]) <= d(g) && d(g) <= d(hi[i]));
    if (good) continue;
    if (++bad <= 8) {
      os << "\n  [" << i << "] got " << hex(g) << ", expected within [" << hex(lo[i]) << ", " << hex(hi[i]) << "]";
      if (i < in.size()) os << " (input " << hex(in[i]) << ")";
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << lo.size() << " values out of range:" << os.str();
}

// ---- inputs ---------------------------------------------------------------------------

// fp16 edge values: signed zeros, smallest/largest subnormal, smallest normal,
// +-65504, values around 2048 where the spacing becomes 2, and +-Inf.
inline const Fp16 kEdges = {0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x83ff, 0x0400, 0x8400, 0x7bff,
                            0xfbff, 0x3c00, 0xbc00, 0x3c01, 0x67ff, 0x6800, 0x6801, 0x7c00, 0xfc00};

// A random non-NaN fp16 value, an edge value one time in four.
inline uint16_t random_fp16(std::mt19937& rng, bool with_inf = true) {
  for (;;) {
    const uint16_t x = rng() % 4 == 0 ? kEdges[rng() % kEdges.size()] : static_cast<uint16_t>(rng());
    if (ref::is_nan(x) || (!with_inf && ref::is_inf(x))) continue;
    return x;
  }
}

inline Fp16 random_vector(std::mt19937& rng, size_t n, bool with_inf = true) {
  Fp16 v(n);
  for (auto& x : v) x = random_fp16(rng, with_inf);
  return v;
}

// True when RN-to-fp16 of the exact value v is a tie (rounding jumps at v).
inline bool is_tie(double v) {
  return std::isfinite(v) && h(std::nextafter(v, -INFINITY)) != h(std::nextafter(v, INFINITY));
}

// Pairs for the planar engine: random values and edges, pairs whose exact
// result is a rounding tie, pairs that overflow, and pairs that underflow.
inline std::pair<Fp16, Fp16> pe_pairs(std::mt19937& rng, size_t n, bool multiply) {
  Fp16 a, b;
  auto push = [&](uint16_t x, uint16_t y) {
    if (a.size() < n) a.push_back(x), b.push_back(y);
  };
  for (size_t i = 0; i < n / 4; ++i) push(random_fp16(rng), random_fp16(rng));
  // Ties: the exact result lies halfway between two fp16 values.
  for (int tries = 0; tries < 4000000 && a.size() < n / 2; ++tries) {
    const uint16_t x = random_fp16(rng, false);
    uint16_t y = random_fp16(rng, false);
    if (!multiply && rng() % 2) {  // b = +-(1 or 3) half-ulps of a makes a + b a tie
      const double half = ref::ulp(x) / 2 * (rng() % 2 ? 3 : 1) * (rng() % 2 ? -1 : 1);
      if (std::fabs(half) < 0x1p-24) continue;
      y = h(half);
    }
    const double exact = multiply ? d(x) * d(y) : d(x) + d(y);
    if (is_tie(exact)) push(x, y);
  }
  // Overflow to +-Inf (65504 + 16 = 65520 is the tie that rounds to Inf), and
  // 65504 + 8 that does not.
  push(0x7bff, 0x4c00), push(0xfbff, 0xcc00), push(0x7bff, 0x4800), push(0x7bff, 0x7bff), push(0xfbff, 0xfbff);
  push(h(256), h(256)), push(h(-300), h(300));
  for (size_t i = 0; i < 16; ++i) {
    const uint16_t big = static_cast<uint16_t>(0x7800 + rng() % 0x3ff);  // [32768, 65504]
    push(big, multiply ? static_cast<uint16_t>(0x4000 + rng() % 0x3ff) : big);
  }
  // Underflow into and below the subnormals.
  push(0x0001, 0x0001), push(0x03ff, 0x0001), push(0x0600, 0x8400), push(h(0x1p-12), h(0x1p-13));
  push(h(0x1p-12), h(0x1.8p-13)), push(0x0400, 0x3800);
  while (a.size() < n) push(random_fp16(rng), random_fp16(rng));
  return {a, b};
}

template <typename F>
inline Fp16 map2(const Fp16& a, const Fp16& b, F f) {
  Fp16 y(a.size());
  for (size_t i = 0; i < a.size(); ++i) y[i] = f(a[i], b[i]);
  return y;
}

template <typename F>
inline Fp16 map1(const Fp16& a, F f) {
  Fp16 y(a.size());
  for (size_t i = 0; i < a.size(); ++i) y[i] = f(a[i]);
  return y;
}

// Every non-NaN fp16 bit pattern, in chunks of n (padded with zeros).
inline std::vector<Fp16> all_fp16_in_chunks(size_t n) {
  std::vector<Fp16> chunks{{}};
  for (uint32_t x = 0; x < 0x10000; ++x) {
    if (ref::is_nan(static_cast<uint16_t>(x))) continue;
    if (chunks.back().size() == n) chunks.emplace_back();
    chunks.back().push_back(static_cast<uint16_t>(x));
  }
  chunks.back().resize(n, 0);
  return chunks;
}

inline Fp16 filled(size_t n, uint16_t v) { return Fp16(n, v); }
inline Fp16 padded(size_t n, Fp16 v) {
  v.resize(n, 0);
  return v;
}

// The sigmoid.hwx input / output: 77 values (§12).
constexpr size_t kRow = 77;

// Default Numerics::Lut::Linear off the nodes. Two bounds:
//  * the straight-line model of §6.6, evaluated in any precision at least fp32:
//    its terms are at most ~1.65 |y| between nodes (consecutive nodes differ by
//    at most a factor e^0.5) or at most slot 4 (3.4e-4 < 2^-11) in the left
//    extrapolation, and a few fp32 roundings (2^-24 each) stay below
//    delta = 2^-20 (|y| + 2^-11); the result is then RN(y') with |y' - y| <= delta;
//  * the docs' own test rule (§9): within 0.0035 of the true sigmoid.
// At the 33 nodes, and for +-Inf (clamps 0 and 1), every model agrees: exact.
inline void check_sigmoid_linear(const ane::Program& p, const Fp16& in) {
  const auto t = sigmoid_table(p);
  Fp16 lo(in.size()), hi(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const double y = ref::sigmoid_lut_exact(t, d(in[i]));
    const double delta = 0x1p-20 * (std::fabs(y) + 0x1p-11);
    lo[i] = h(y - delta), hi[i] = h(y + delta);
  }
  const Outcome r = run_sim(p, {{"image", in}});
  ASSERT_TRUE(values_within(r, lo, hi, in));
  for (size_t i = 0; i < in.size(); ++i) {
    const double x = d(in[i]);
    if (ref::is_inf(in[i]) || (std::fabs(x) <= 8 && std::fmod(x, 0.5) == 0)) {
      EXPECT_EQ(r.out[i], ref::sigmoid_ideal(in[i])) << "node or infinity " << hex(in[i]);
    } else {
      EXPECT_LE(std::fabs(d(r.out[i]) - 1 / (1 + std::exp(-x))), 0.0035) << hex(in[i]);
    }
  }
}

// Expected range of a 1x1 convolution in any accumulation order and precision
// at least fp32 (default numerics: products exact, one final rounding, §9).
// The k = Cin + 1 terms are the products and the bias (or 0). Summing k terms in
// fp32 in any order errs by at most gamma_(k-1) sum|term| < k 2^-24 sum|term|;
// the reference's double sum adds < k 2^-53 sum|term|. With bound =
// k 2^-23 sum|term| every such result RN(y') has |y' - y| <= bound, and RN is
// monotone, so it lies in [RN(y - bound), RN(y + bound)]. Infinite or NaN sums
// must come out exactly so.
inline std::pair<Fp16, Fp16> conv_range(const ref::Tensor3& x, const Fp16& w, int cout, const Fp16& bias = {}) {
  Fp16 lo, hi;
  for (int oc = 0; oc < cout; ++oc) {
    const double b = bias.empty() ? 0.0 : d(bias[oc]);
    const double s = ref::conv_sum(x, 0, &w[static_cast<size_t>(oc) * x.c], b, ref::Acc::Double);
    const double bound = (x.c + 1) * 0x1p-23 * ref::conv_abs_sum(x, 0, &w[static_cast<size_t>(oc) * x.c], b);
    if (!std::isfinite(s)) {
      lo.push_back(h(s)), hi.push_back(h(s));
    } else {
      lo.push_back(h(s - bound)), hi.push_back(h(s + bound));
    }
  }
  return {lo, hi};
}

inline Options numerics(const std::function<void(Numerics&)>& set) {
  Options o;
  set(o.numerics);
  return o;
}

}  // namespace ane_ref::harness
