// The register-level simulator (include/ane/sim.h) against
//  * the hardware observations of simulator-semantics.md section 10, and
//  * the independent reference in reference/ane_ref.h,
// on the six corpus programs, unmodified and with modified registers.
// Expected values come from the docs or from the reference, never from the
// simulator. "§" numbers refer to ../shared/docs/simulator-semantics.md.
//
// Programs with modified registers run two ways: through Simulator on a
// re-encoded copy of the file, and through Machine::run_task on slots built
// here from the slot table (§2.2). Both must give the expected result.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "ane/dump.h"
#include "ane/sim.h"
#include "ane/task.h"
#include "reference/ane_ref.h"
#include "support.h"

namespace {

namespace ref = ane_ref;
using ane::sim::Numerics;
using ane::sim::Options;
using Fp16 = std::vector<uint16_t>;
using Inputs = std::map<std::string, Fp16>;

uint16_t h(double v) { return ref::to_fp16(v); }  // rounded by the reference
double d(uint16_t x) { return ref::to_double(x); }

std::string hex(uint16_t x) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "0x%04x (%.9g)", x, d(x));
  return buf;
}

// ---- programs -------------------------------------------------------------------

ane::Program load(const std::string& name) {
  auto p = ane::open_program(ane::test::corpus_hwx_path(name));
  EXPECT_TRUE(p.ok()) << name << ": " << (p ? "" : p.error().str());
  return p ? std::move(p).value() : ane::Program{};
}

ane::BufferInfo buffer(const ane::Program& p, const std::string& name) {
  for (const auto& b : p.file.buffers())
    if (b.name == name) return b;
  ADD_FAILURE() << "no buffer " << name;
  return {};
}

std::string output_name(const ane::Program& p) {
  for (const auto& b : p.file.buffers())
    if (b.direction == ane::BufferDirection::Output) return b.name;
  ADD_FAILURE() << "no output buffer";
  return {};
}

size_t elements(const ane::Program& p, const std::string& name) {
  const auto s = buffer(p, name).shape();
  return s ? s->nchw[0] * s->nchw[1] * s->nchw[2] * s->nchw[3] : 0;
}

uint32_t field(const ane::RegisterImage& r, const char* name) {
  auto v = r.get(name);
  EXPECT_TRUE(v.ok()) << name;
  return v ? *v : 0;
}

std::vector<ane::RegisterImage> regs_of(const ane::Program& p) {
  std::vector<ane::RegisterImage> r;
  for (const auto& t : p.tasks) r.push_back(t.regs);
  return r;
}

using Changes = std::vector<std::pair<std::string, uint32_t>>;

// The program's register images with `changes` applied to task `task`.
std::vector<ane::RegisterImage> modified(const ane::Program& p, const Changes& changes, size_t task = 0) {
  auto r = regs_of(p);
  for (const auto& [name, value] : changes) {
    auto st = r.at(task).set(name, value);
    EXPECT_TRUE(st.ok()) << name << ": " << (st ? "" : st.error().str());
  }
  return r;
}

// Byte offset of kernel lane i in __const: CoeffBaseAddr[i] (64-byte units, §3).
uint64_t lane_offset(const ane::Program& p, int i) {
  return 64ull *
         field(p.tasks[0].regs, ("KernelDMASrc.CoeffBaseAddr[" + std::to_string(i) + "].Addr").c_str());
}

// Kernel lane i of a task, as §6.3 defines it: CoeffBfrSize[i] bytes at
// slot[KBase0] + CoeffBaseAddr[i]; KBase0 is the __const slot in every corpus file.
Fp16 lane(const ane::Program& p, const ane::RegisterImage& r, int i) {
  const std::string n = std::to_string(i);
  const uint64_t base = lane_offset(p, i);
  const uint64_t size = 64ull * field(r, ("KernelDMASrc.CoeffBfrSize[" + n + "].MemBfrSize").c_str());
  EXPECT_EQ(field(r, "Header[9].KBase0"), 1u);
  const auto* cs = p.file.find_section("__TEXT", "__const");
  EXPECT_NE(cs, nullptr);
  Fp16 out;
  if (!cs) return out;
  const auto bytes = p.file.section_data(*cs);
  for (uint64_t o = base; o + 1 < base + size && o + 1 < bytes.size(); o += 2)
    out.push_back(static_cast<uint16_t>(bytes[o] | bytes[o + 1] << 8));
  return out;
}

// W[oc][ic] of an OCGSize = 0 convolution without bias: lane oc holds
// W[oc][0..Cin-1] (§6.3).
Fp16 conv_weights(const ane::Program& p, int cin, int cout) {
  Fp16 w;
  for (int oc = 0; oc < cout; ++oc) {
    const Fp16 l = lane(p, p.tasks[0].regs, oc);
    w.insert(w.end(), l.begin(), l.begin() + cin);
  }
  return w;
}

ref::Lut sigmoid_table(const ane::Program& p) {
  const Fp16 l = lane(p, p.tasks[0].regs, 0);
  ref::Lut t{};
  EXPECT_EQ(l.size(), t.size());
  std::copy_n(l.begin(), std::min(l.size(), t.size()), t.begin());
  return t;
}

// A copy of p whose tasks carry `regs` and whose __const holds `lanes`
// (byte offset -> fp16 values), re-encoded and re-parsed, so the Simulator
// sees the change whichever representation of the program it reads.
ane::Program patched(const ane::Program& p, const std::vector<ane::RegisterImage>& regs,
                     const std::map<uint64_t, Fp16>& lanes = {}) {
  ane::HwxFile f = p.file;
  for (auto& lc : f.commands) {
    auto* seg = lc.as<ane::SegmentCommand>();
    if (!seg || seg->segname != "__TEXT") continue;
    for (const auto& s : seg->sections) {
      const uint64_t at = s.offset - seg->fileoff;
      if (s.sectname == "__text")
        for (size_t i = 0; i < p.tasks.size(); ++i)
          ane::put_bytes(seg->contents, at + p.tasks[i].text_offset,
                         ane::encode_task(regs[i], p.tasks[i].streams));
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

Outcome run_sim(const ane::Program& p, const Inputs& in, const Options& o = {}) {
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
uint64_t element_offset(const ane::BufferInfo::Shape& s, uint64_t e) {
  const auto& n = s.nchw;
  const uint64_t w = e % n[3], hh = e / n[3] % n[2], c = e / (n[3] * n[2]) % n[1],
                 b = e / (n[3] * n[2] * n[1]);
  return b * s.strides[0] + c * s.strides[1] + hh * s.strides[2] + w * s.strides[3];
}

// Slots as §2.2 allocates them: __text and __const bytes, zeroed tensor
// buffers of their section size with the inputs scattered by their strides.
ane::sim::Machine machine_for(const ane::Program& p, const Inputs& in, const Options& o = {}) {
  ane::sim::Machine m(o);
  const auto info = p.file.program();
  EXPECT_TRUE(info.has_value());
  if (!info) return m;
  const auto bufs = p.file.buffers();
  for (int k = 0; k < 32; ++k) {
    const uint64_t addr = info->slots[k];
    if (addr == 0) continue;
    for (const char* name : {"__text", "__const"}) {
      const auto* s = p.file.find_section("__TEXT", name);
      if (!s || s->addr != addr) continue;
      const auto data = p.file.section_data(*s);
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

Outcome run_machine(const ane::Program& p, const std::vector<ane::RegisterImage>& regs, const Inputs& in,
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
void run_both(const ane::Program& p, const std::vector<ane::RegisterImage>& regs, const Inputs& in,
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
bool same(uint16_t a, uint16_t b) {
  return a == b || (ref::is_zero(a) && ref::is_zero(b)) || (ref::is_nan(a) && ref::is_nan(b));
}

::testing::AssertionResult values_equal(const Outcome& got, const Fp16& want, const Fp16& in = {}) {
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
::testing::AssertionResult values_within(const Outcome& got, const Fp16& lo, const Fp16& hi,
                                         const Fp16& in = {}) {
  if (!got.ok) return ::testing::AssertionFailure() << "run failed: " << got.error;
  if (got.out.size() != lo.size())
    return ::testing::AssertionFailure() << got.out.size() << " values, expected " << lo.size();
  std::ostringstream os;
  size_t bad = 0;
  for (size_t i = 0; i < lo.size(); ++i) {
    const uint16_t g = got.out[i];
    const bool nan_expected = ref::is_nan(lo[i]) || ref::is_nan(hi[i]);
    const bool good =
        nan_expected ? ref::is_nan(g) : (!ref::is_nan(g) && d(lo[i]) <= d(g) && d(g) <= d(hi[i]));
    if (good) continue;
    if (++bad <= 8) {
      os << "\n  [" << i << "] got " << hex(g) << ", expected within [" << hex(lo[i]) << ", " << hex(hi[i])
         << "]";
      if (i < in.size()) os << " (input " << hex(in[i]) << ")";
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << lo.size() << " values out of range:" << os.str();
}

// ---- inputs ---------------------------------------------------------------------------

// fp16 edge values: signed zeros, smallest/largest subnormal, smallest normal,
// +-65504, values around 2048 where the spacing becomes 2, and +-Inf.
const Fp16 kEdges = {0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x83ff, 0x0400, 0x8400, 0x7bff,
                     0xfbff, 0x3c00, 0xbc00, 0x3c01, 0x67ff, 0x6800, 0x6801, 0x7c00, 0xfc00};

// A random non-NaN fp16 value, an edge value one time in four.
uint16_t random_fp16(std::mt19937& rng, bool with_inf = true) {
  for (;;) {
    const uint16_t x = rng() % 4 == 0 ? kEdges[rng() % kEdges.size()] : static_cast<uint16_t>(rng());
    if (ref::is_nan(x) || (!with_inf && ref::is_inf(x))) continue;
    return x;
  }
}

Fp16 random_vector(std::mt19937& rng, size_t n, bool with_inf = true) {
  Fp16 v(n);
  for (auto& x : v) x = random_fp16(rng, with_inf);
  return v;
}

// True when RN-to-fp16 of the exact value v is a tie (rounding jumps at v).
bool is_tie(double v) {
  return std::isfinite(v) && h(std::nextafter(v, -INFINITY)) != h(std::nextafter(v, INFINITY));
}

// Pairs for the planar engine: random values and edges, pairs whose exact
// result is a rounding tie, pairs that overflow, and pairs that underflow.
std::pair<Fp16, Fp16> pe_pairs(std::mt19937& rng, size_t n, bool multiply) {
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
  push(0x7bff, 0x4c00), push(0xfbff, 0xcc00), push(0x7bff, 0x4800), push(0x7bff, 0x7bff),
      push(0xfbff, 0xfbff);
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
Fp16 map2(const Fp16& a, const Fp16& b, F f) {
  Fp16 y(a.size());
  for (size_t i = 0; i < a.size(); ++i) y[i] = f(a[i], b[i]);
  return y;
}

template <typename F>
Fp16 map1(const Fp16& a, F f) {
  Fp16 y(a.size());
  for (size_t i = 0; i < a.size(); ++i) y[i] = f(a[i]);
  return y;
}

// Every non-NaN fp16 bit pattern, in chunks of n (padded with zeros).
std::vector<Fp16> all_fp16_in_chunks(size_t n) {
  std::vector<Fp16> chunks{{}};
  for (uint32_t x = 0; x < 0x10000; ++x) {
    if (ref::is_nan(static_cast<uint16_t>(x))) continue;
    if (chunks.back().size() == n) chunks.emplace_back();
    chunks.back().push_back(static_cast<uint16_t>(x));
  }
  chunks.back().resize(n, 0);
  return chunks;
}

Fp16 filled(size_t n, uint16_t v) { return Fp16(n, v); }
Fp16 padded(size_t n, Fp16 v) {
  v.resize(n, 0);
  return v;
}

// The sigmoid.hwx input / output: 77 values (§12).
constexpr size_t kRow = 77;

// ===== the reference itself ==============================================================

TEST(SimReferenceSelf, Fp16ConversionKnownValues) {
  EXPECT_EQ(d(0x3c00), 1.0);
  EXPECT_EQ(d(0x0001), 0x1p-24);
  EXPECT_EQ(d(0x03ff), 1023 * 0x1p-24);
  EXPECT_EQ(d(0x0400), 0x1p-14);
  EXPECT_EQ(d(0x7bff), 65504.0);
  EXPECT_EQ(d(0xfbff), -65504.0);
  EXPECT_EQ(d(0x3b9f), 0.95263671875);  // sigmoid(3) on hardware (§3, H8)
  EXPECT_TRUE(std::isinf(d(0x7c00)) && d(0x7c00) > 0);
  EXPECT_TRUE(std::isnan(d(0x7e00)));
  EXPECT_TRUE(std::signbit(d(0x8000)));
  // Round to nearest, ties to even.
  EXPECT_EQ(h(2049), 0x6800);       // tie between 2048 and 2050 -> 2048
  EXPECT_EQ(h(2051), 0x6802);       // tie between 2050 and 2052 -> 2052
  EXPECT_EQ(h(2049.0001), 0x6801);  // just above the tie
  EXPECT_EQ(h(65519.99), 0x7bff);
  EXPECT_EQ(h(65520), 0x7c00);  // tie between 65504 and 65536 -> Inf
  EXPECT_EQ(h(1e10), 0x7c00);
  EXPECT_EQ(h(-1e10), 0xfc00);
  EXPECT_EQ(h(0x1p-25), 0x0000);    // tie between 0 and 2^-24 -> 0
  EXPECT_EQ(h(0x1.8p-24), 0x0002);  // tie between 1 and 2 subnormal steps -> 2
  EXPECT_EQ(h(0x1.0000001p-25), 0x0001);
  EXPECT_EQ(h(0x1.ff8p-15), 0x03ff);  // largest subnormal
  EXPECT_EQ(h(0x1.ffcp-15), 0x0400);  // tie between 0x03ff and 0x0400 -> even, a normal
  EXPECT_EQ(h(-0.0), 0x8000);
  EXPECT_TRUE(is_tie(2049) && is_tie(0x1p-25) && is_tie(65520));  // the test helper
  EXPECT_FALSE(is_tie(2048) || is_tie(2050) || is_tie(2049.5));
  EXPECT_TRUE(ref::is_nan(h(NAN)));
  for (uint32_t x = 0; x < 0x10000; ++x)
    if (!ref::is_nan(static_cast<uint16_t>(x))) {
      ASSERT_EQ(h(d(static_cast<uint16_t>(x))), x);
    }
}

TEST(SimReferenceSelf, ReferenceOpsOnKnownValues) {
  EXPECT_EQ(ref::pe_add(h(3), h(2)), h(5));
  EXPECT_EQ(ref::pe_add(0x7bff, 0x7bff), 0x7c00);
  EXPECT_EQ(ref::pe_add(h(2048), h(1)), h(2048));
  EXPECT_EQ(ref::pe_mul(h(3), h(2)), h(6));
  EXPECT_EQ(ref::pe_mul(h(0x1p-12), h(0x1p-13)), 0x0000);  // 2^-25: tie -> 0
  EXPECT_EQ(ref::relu(h(-3)), 0x0000);
  EXPECT_EQ(ref::relu(h(5)), h(5));
  EXPECT_EQ(ref::pass(h(5), 0x0000), 0x0000);
  EXPECT_EQ(ref::sigmoid_ideal(h(3)), 0x3b9f);
  EXPECT_EQ(ref::sigmoid_ideal(h(-17)), 0x0001);  // 4.1e-8 rounds to the smallest subnormal
  const ref::Tensor3 x{3, 1, 1, {h(1), h(2), h(3)}};
  EXPECT_EQ(ref::conv1x1(x, Fp16(9, h(2)), 3).v, Fp16(3, h(12)));
  EXPECT_EQ(ref::conv1x1(x, {h(1), h(0), h(0), h(0), h(1), h(0), h(0), h(0), h(1)}, 3, {h(1), h(1), h(1)}).v,
            (Fp16{h(2), h(3), h(4)}));
  const ref::Tensor3 y{1, 1, 1, {h(7)}};
  EXPECT_EQ(ref::concat_channels(x, y).v, (Fp16{h(1), h(2), h(3), h(7)}));
}

// §6.6: slots 4..36 are RN(sigmoid(-8 + i/2)), bit for bit, and the slopes
// reach the clamps at slots 0 / 1; straight lines miss sigmoid by < 0.0035 (§9).
TEST(SimReferenceSelf, SigmoidTableReadingMatchesTheDocs) {
  ANE_REQUIRE_CORPUS();
  const auto t = sigmoid_table(load("sigmoid"));
  EXPECT_EQ(t[2], 0x0000);
  EXPECT_EQ(t[3], 0x3c00);
  for (int i = 0; i <= 32; ++i) {
    const uint16_t x = h(-8 + 0.5 * i);
    EXPECT_EQ(t[4 + i], ref::sigmoid_ideal(x)) << "node " << i;
    EXPECT_EQ(ref::sigmoid_lut(t, x), t[4 + i]) << "node " << i;
  }
  EXPECT_NEAR(d(t[4]) + d(t[37]) * (d(t[0]) + 8), 0.0, 1e-6);
  EXPECT_NEAR(d(t[36]) + d(t[39]) * (d(t[1]) - 8), 1.0, 1e-3);
  for (const auto& chunk : all_fp16_in_chunks(1024))
    for (uint16_t x : chunk)
      if (!ref::is_inf(x)) {
        ASSERT_LE(std::fabs(d(ref::sigmoid_lut(t, x)) - 1 / (1 + std::exp(-d(x)))), 0.0035) << hex(x);
      }
}

// ===== hardware observations (§10) ===========================================================

TEST(SimReferenceHardware, H1_SumThreePlusTwo) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("sum");
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", filled(64, h(3))}, {"image2", filled(64, h(2))}}),
                           filled(64, h(5))));
}

TEST(SimReferenceHardware, H2_SumOnePlusTwo) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("sum");
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", filled(64, h(1))}, {"image2", filled(64, h(2))}}),
                           filled(64, h(3))));
}

TEST(SimReferenceHardware, H3_ReluOfThree) {
  ANE_REQUIRE_CORPUS();
  EXPECT_TRUE(values_equal(run_sim(load("relu"), {{"image", filled(kRow, h(3))}}), filled(kRow, h(3))));
}

TEST(SimReferenceHardware, H4_H5_ReluMixedSigns) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("relu");
  for (const auto& [in, want] :
       std::vector<std::pair<Fp16, Fp16>>{{{h(-3), h(5), h(-1), h(2)}, {h(0), h(5), h(0), h(2)}},  // H4
                                          {{h(-3), h(5)}, {h(0), h(5)}}}) {                        // H5
    Outcome r = run_sim(p, {{"image", padded(kRow, in)}});
    if (r.ok) r.out.resize(want.size());  // the observation covers these elements
    EXPECT_TRUE(values_equal(r, want, in));
  }
}

// H6: relu with MACCfg 0x0000000C (NonlinearMode 0, bit 20 clear) passes [-3, 5] through.
TEST(SimReferenceHardware, H6_ReluWithNonlinearModeZero) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("relu");
  const auto regs = modified(p, {{"NE.MACCfg.NonlinearMode", 0}, {"NE.MACCfg.UnkBit20", 0}});
  EXPECT_EQ(regs[0].word(0xc804), 0x0000000cu);
  run_both(p, regs, {{"image", padded(kRow, {h(-3), h(5)})}}, {}, [](const Outcome& r) {
    Outcome head = r;
    if (head.ok) head.out.resize(2);
    EXPECT_TRUE(values_equal(head, {h(-3), h(5)}));
  });
}

// H7: relu with PostScale 0 gives [0, 0].
TEST(SimReferenceHardware, H7_ReluWithPostScaleZero) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("relu");
  run_both(p, modified(p, {{"NE.PostScale.PostScale", 0}}), {{"image", padded(kRow, {h(-3), h(5)})}}, {},
           [](const Outcome& r) {
             Outcome head = r;
             if (head.ok) head.out.resize(2);
             EXPECT_TRUE(values_equal(head, {h(0), h(0)}));
           });
}

TEST(SimReferenceHardware, H8_SigmoidOfThreeIs0x3B9F) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("sigmoid");
  const Outcome r = run_sim(p, {{"image", filled(kRow, h(3))}});
  EXPECT_TRUE(values_equal(r, filled(kRow, 0x3b9f)));
  EXPECT_TRUE(values_equal(r, filled(kRow, ref::sigmoid_lut(sigmoid_table(p), h(3)))));
}

// H9: [-5, 0, 5] -> [0.007, 0.5, 0.993] to 3 digits. All three are table nodes,
// where every interpolation model gives RN(sigmoid(x)) (§9), so also exactly that.
TEST(SimReferenceHardware, H9_SigmoidAtNodes) {
  ANE_REQUIRE_CORPUS();
  const Fp16 in{h(-5), h(0), h(5)};
  Outcome r = run_sim(load("sigmoid"), {{"image", padded(kRow, in)}});
  ASSERT_TRUE(r.ok) << r.error;
  r.out.resize(3);
  const double printed[] = {0.007, 0.5, 0.993};
  for (int i = 0; i < 3; ++i) EXPECT_EQ(std::round(d(r.out[i]) * 1000) / 1000, printed[i]) << i;
  EXPECT_TRUE(values_equal(r, map1(in, ref::sigmoid_ideal), in));
}

// H10: sigmoid.hwx with MACCfg 0x0011000C / 0x0010000C / 0x0001000C / 0x0000000C
// (ReLU or nothing, bit 20 set or clear; the table lane stays enabled) returns 3.0 for 3.0.
TEST(SimReferenceHardware, H10_SigmoidProgramWithOtherMacCfg) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("sigmoid");
  for (const auto& [mode, bit20, word] : std::vector<std::tuple<uint32_t, uint32_t, uint32_t>>{
           {1, 1, 0x0011000c}, {0, 1, 0x0010000c}, {1, 0, 0x0001000c}, {0, 0, 0x0000000c}}) {
    SCOPED_TRACE(hex(static_cast<uint16_t>(word >> 16)) + " in MACCfg[31:16]");
    const auto regs = modified(p, {{"NE.MACCfg.NonlinearMode", mode}, {"NE.MACCfg.UnkBit20", bit20}});
    EXPECT_EQ(regs[0].word(0xc804), word);
    run_both(p, regs, {{"image", filled(kRow, h(3))}}, {},
             [](const Outcome& r) { EXPECT_TRUE(values_equal(r, filled(kRow, h(3)))); });
  }
}

TEST(SimReferenceHardware, H11_ConvOfThrees) {
  ANE_REQUIRE_CORPUS();
  EXPECT_TRUE(values_equal(run_sim(load("conv"), {{"image", filled(3, h(3))}}), filled(3, h(18))));
}

// H12 ("raw": the TD's register values written by hand): [1, 2, 3] -> 12 per
// channel. Run also through Machine::run_task with the decoded registers.
TEST(SimReferenceHardware, H12_ConvOfOneTwoThree) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("conv");
  const Inputs in{{"image", {h(1), h(2), h(3)}}};
  EXPECT_TRUE(values_equal(run_sim(p, in), filled(3, h(12))));
  EXPECT_TRUE(values_equal(run_machine(p, regs_of(p), in), filled(3, h(12))));
}

TEST(SimReferenceHardware, H13_GemmWithZeroWeights) {
  ANE_REQUIRE_CORPUS();
  EXPECT_TRUE(values_equal(run_sim(load("gemm"), {{"image", filled(512, h(3))}}), filled(512, h(0))));
}

TEST(SimReferenceHardware, H14_ConcatTwoTasks) {
  ANE_REQUIRE_CORPUS();
  Fp16 want = filled(16384, h(2));
  want.resize(16400, h(3));
  EXPECT_TRUE(values_equal(
      run_sim(load("concat"), {{"input_0", filled(16384, h(2))}, {"input_1", filled(16, h(3))}}), want));
}

// H15-style: sum.hwx's task with PE.Cfg.OpMode = 1 (multiply, §7) gives 6.0 for 3 x 2.
TEST(SimReferenceHardware, H15_PeMultiply) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("sum");
  const auto regs = modified(p, {{"PE.Cfg.OpMode", 1}});
  EXPECT_EQ(regs[0].word(0x8800), 0x00080004u);  // mul.hwx's PE.Cfg (§7)
  run_both(p, regs, {{"image", filled(64, h(3))}, {"image2", filled(64, h(2))}}, {},
           [](const Outcome& r) { EXPECT_TRUE(values_equal(r, filled(64, h(6)))); });
}

// ===== random inputs against the reference =======================================================

TEST(SimReferenceRandom, ReluRandomAndEdges) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("relu");
  for (unsigned seed : {1u, 2u, 3u, 4u}) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    const Fp16 in = random_vector(rng, kRow);
    EXPECT_TRUE(values_equal(run_sim(p, {{"image", in}}), map1(in, ref::relu), in));
  }
}

TEST(SimReferenceRandom, ReluEveryFp16Value) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("relu");
  for (const auto& in : all_fp16_in_chunks(kRow))
    ASSERT_TRUE(values_equal(run_sim(p, {{"image", in}}), map1(in, ref::relu), in));
}

// Default Numerics::Lut::Linear off the nodes. Two bounds:
//  * the straight-line model of §6.6, evaluated in any precision at least fp32:
//    its terms are at most ~1.65 |y| between nodes (consecutive nodes differ by
//    at most a factor e^0.5) or at most slot 4 (3.4e-4 < 2^-11) in the left
//    extrapolation, and a few fp32 roundings (2^-24 each) stay below
//    delta = 2^-20 (|y| + 2^-11); the result is then RN(y') with |y' - y| <= delta;
//  * the docs' own test rule (§9): within 0.0035 of the true sigmoid.
// At the 33 nodes, and for +-Inf (clamps 0 and 1), every model agrees: exact.
void check_sigmoid_linear(const ane::Program& p, const Fp16& in) {
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

TEST(SimReferenceRandom, SigmoidRandomAndEdges) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("sigmoid");
  for (unsigned seed : {11u, 12u, 13u, 14u}) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    Fp16 in = random_vector(rng, kRow);
    for (int i = 0; i < 20; ++i) in[i] = h(-10 + (rng() % 41) * 0.5);  // nodes and beyond
    check_sigmoid_linear(p, in);
  }
}

TEST(SimReferenceRandom, SigmoidEveryFp16Value) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("sigmoid");
  for (const auto& in : all_fp16_in_chunks(kRow)) {
    check_sigmoid_linear(p, in);
    if (HasFailure()) break;
  }
}

TEST(SimReferenceRandom, SumRandomTiesOverflowUnderflow) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("sum");
  for (unsigned seed : {21u, 22u, 23u, 24u, 25u}) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    const auto [a, b] = pe_pairs(rng, 64, false);
    // sum.hwx reads image through RBase0 and image2 through RBase1 (§12); a + b is symmetric.
    EXPECT_TRUE(values_equal(run_sim(p, {{"image", a}, {"image2", b}}), map2(a, b, ref::pe_add), a));
  }
}

TEST(SimReferenceRandom, MultiplyRandomTiesOverflowUnderflow) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("sum");
  const auto regs = modified(p, {{"PE.Cfg.OpMode", 1}});
  for (unsigned seed : {31u, 32u, 33u}) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    // Plain names, not a structured binding: clang 14 cannot capture those in lambdas.
    const auto pairs = pe_pairs(rng, 64, true);
    const auto& a = pairs.first;
    const auto& b = pairs.second;
    run_both(p, regs, {{"image", a}, {"image2", b}}, {},
             [&](const Outcome& r) { EXPECT_TRUE(values_equal(r, map2(a, b, ref::pe_mul), a)); });
  }
}

TEST(SimReferenceRandom, ConcatRandomAndEdges) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("concat");
  for (unsigned seed : {41u, 42u}) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    const ref::Tensor3 a{16384, 1, 1, random_vector(rng, 16384)}, b{16, 1, 1, random_vector(rng, 16)};
    EXPECT_TRUE(values_equal(run_sim(p, {{"input_0", a.v}, {"input_1", b.v}}), ref::concat_channels(a, b).v));
  }
}

// Sums every model computes exactly: x = k/8 with |k| <= 256, weights 2.0, so
// products are multiples of 1/4, |partial sums| <= 192 < 512, exact in fp16 and fp32.
TEST(SimReferenceRandom, ConvExactSums) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("conv");
  const Fp16 w = conv_weights(p, 3, 3);
  EXPECT_EQ(w, Fp16(9, h(2)));  // §12: conv.hwx has W = 2.0
  for (unsigned seed : {51u, 52u, 53u, 54u, 55u, 56u, 57u, 58u}) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    ref::Tensor3 x{3, 1, 1, {}};
    for (int i = 0; i < 3; ++i) x.v.push_back(h((static_cast<int>(rng() % 513) - 256) / 8.0));
    EXPECT_TRUE(values_equal(run_sim(p, {{"image", x.v}}), ref::conv1x1(x, w, 3).v, x.v));
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
std::pair<Fp16, Fp16> conv_range(const ref::Tensor3& x, const Fp16& w, int cout, const Fp16& bias = {}) {
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

TEST(SimReferenceRandom, ConvRandomFp16AndEdges) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("conv");
  const Fp16 w = conv_weights(p, 3, 3);
  for (unsigned seed = 60; seed < 100; ++seed) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    const ref::Tensor3 x{3, 1, 1, random_vector(rng, 3)};
    const auto [lo, hi] = conv_range(x, w, 3);
    EXPECT_TRUE(values_within(run_sim(p, {{"image", x.v}}), lo, hi, x.v));
  }
}

// conv.hwx with other kernel bytes and BiasMode = 1: lane oc = [b, W[oc][0..2]]
// (§6.3, §6.4; orientation from the ramp build). Values chosen so every sum is
// exact (weights k/2, |k| <= 8; x = k/4, |k| <= 32; bias k/8, |k| <= 32:
// multiples of 1/8 below 256), so all models agree: exact comparison.
TEST(SimReferenceRandom, ConvOwnWeightsAndBias) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("conv");
  for (bool bias : {false, true}) {
    for (unsigned seed : {61u, 62u, 63u, 64u}) {
      SCOPED_TRACE(std::to_string(seed) + (bias ? " with bias" : " without bias"));
      std::mt19937 rng(seed);
      auto pick = [&](int range, double unit) {
        return h((static_cast<int>(rng() % (2 * range + 1)) - range) * unit);
      };
      Fp16 w, b;
      std::map<uint64_t, Fp16> lanes;
      for (int oc = 0; oc < 3; ++oc) {
        Fp16 l(32, 0);  // 0x40 bytes
        if (bias) b.push_back(l[0] = pick(32, 0.125));
        for (int ic = 0; ic < 3; ++ic) w.push_back(l[bias + ic] = pick(8, 0.5));
        lanes[lane_offset(p, oc)] = l;
      }
      ref::Tensor3 x{3, 1, 1, {}};
      for (int i = 0; i < 3; ++i) x.v.push_back(pick(32, 0.25));
      run_both(
          p, modified(p, {{"NE.MACCfg.BiasMode", bias}}), {{"image", x.v}}, {},
          [&](const Outcome& r) { EXPECT_TRUE(values_equal(r, ref::conv1x1(x, w, 3, b).v, x.v)); }, lanes);
    }
  }
}

// Random full-range weights and inputs through own kernel bytes: the range of conv_range.
TEST(SimReferenceRandom, ConvOwnRandomWeights) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("conv");
  for (unsigned seed : {71u, 72u, 73u, 74u, 75u, 76u}) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    Fp16 w;
    std::map<uint64_t, Fp16> lanes;
    for (int oc = 0; oc < 3; ++oc) {
      Fp16 l(32, 0);
      for (int ic = 0; ic < 3; ++ic) w.push_back(l[ic] = random_fp16(rng, false));
      lanes[lane_offset(p, oc)] = l;
    }
    const ref::Tensor3 x{3, 1, 1, random_vector(rng, 3)};
    const auto range = conv_range(x, w, 3);
    const auto& lo = range.first;
    const auto& hi = range.second;
    run_both(
        p, regs_of(p), {{"image", x.v}}, {},
        [&](const Outcome& r) { EXPECT_TRUE(values_within(r, lo, hi, x.v)); }, lanes);
  }
}

// §6.2: the same sum applies at every pixel (CE; no hardware run had W*H > 1).
// conv.hwx with InDim = OutDim = 4x1: each 64-byte plane of its buffers holds
// the 4-pixel row. Read and written directly in the slots (the named buffers
// are declared 1x1). Exact-sum values as in ConvExactSums.
TEST(SimReferenceRandom, ConvEveryPixel) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("conv");
  const auto regs = modified(p, {{"Common.InDim.Win", 4}, {"Common.OutDim.Wout", 4}});
  const Fp16 w = conv_weights(p, 3, 3);
  const auto in = buffer(p, "image"), out = buffer(p, output_name(p));
  const uint64_t in_plane = in.shape()->strides[1], out_plane = out.shape()->strides[1];
  for (unsigned seed : {65u, 66u, 67u}) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    ref::Tensor3 x{3, 1, 4, {}};
    for (int i = 0; i < 12; ++i) x.v.push_back(h((static_cast<int>(rng() % 513) - 256) / 8.0));
    ane::sim::Machine m = machine_for(p, {});
    for (int c = 0; c < 3; ++c)
      for (int px = 0; px < 4; ++px) ane::put_u16(*m.slot(in.slot), c * in_plane + 2 * px, x.at(c, px));
    const auto st = m.run_task(regs[0], 0);
    ASSERT_TRUE(st.ok()) << st.error().str();
    Outcome r{true, "", {}};
    const auto& mem = *m.slot(out.slot);
    for (int c = 0; c < 3; ++c)
      for (int px = 0; px < 4; ++px) {
        const uint64_t o = c * out_plane + 2 * px;
        r.out.push_back(static_cast<uint16_t>(mem[o] | mem[o + 1] << 8));
      }
    EXPECT_TRUE(values_equal(r, ref::conv1x1(x, w, 3).v, x.v));
  }
}

// §6 / §7: the tile DMA reads at slot[RBase0] + TileDMASrc.BaseAddr. Concat's
// task 1 moved one 64-byte channel up (BaseAddr 0x40, 15 channels) copies
// input_1[1..15]; the last output channel keeps its initial zero (§2.2).
TEST(SimReferenceRandom, ConcatSourceBaseAddress) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("concat");
  const auto regs =
      modified(p, {{"TileDMASrc.BaseAddr.Addr", 1}, {"Common.Cin.Cin", 15}, {"Common.Cout.Cout", 15}}, 1);
  std::mt19937 rng(68);
  const Fp16 a = random_vector(rng, 16384), b = random_vector(rng, 16);
  Fp16 want = a;
  want.insert(want.end(), b.begin() + 1, b.end());
  want.push_back(0);
  run_both(p, regs, {{"input_0", a}, {"input_1", b}}, {},
           [&](const Outcome& r) { EXPECT_TRUE(values_equal(r, want)); });
}

// gemm.hwx: every weight is 0 (§12), so finite inputs give exactly 0.
TEST(SimReferenceRandom, GemmZeroWeightsGiveZero) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("gemm");
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(lane(p, p.tasks[0].regs, i), Fp16(0x4000, 0)) << "lane " << i;  // 0x8000 bytes of +0
  for (unsigned seed : {81u, 82u, 83u}) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    const Fp16 in = random_vector(rng, 512, false);
    EXPECT_TRUE(values_equal(run_sim(p, {{"image", in}}), filled(512, 0)));
  }
}

// Products are exact IEEE products (§9) and NaN propagates (§9 default
// nan=propagate): 0 x Inf is NaN, so one infinite input makes every output
// channel NaN, since each output sums over all 512 inputs.
TEST(SimReferenceRandom, GemmZeroTimesInfinityIsNaN) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("gemm");
  for (uint16_t inf : {uint16_t{0x7c00}, uint16_t{0xfc00}}) {
    Fp16 in = filled(512, h(1));
    in[100] = inf;
    const Fp16 want = ref::conv1x1(ref::Tensor3{512, 1, 1, in}, Fp16(512 * 512, 0), 512).v;
    EXPECT_TRUE(ref::is_nan(want[0]));
    EXPECT_TRUE(values_equal(run_sim(p, {{"image", in}}), want));
  }
}

// §9 NaN: propagate. NaN inputs give NaN outputs on every engine and op.
TEST(SimReferenceRandom, NaNPropagates) {
  ANE_REQUIRE_CORPUS();
  const Fp16 nans{0x7e00, 0xfe00, 0x7c01, 0x7fff};
  const Fp16 in = padded(kRow, nans);
  EXPECT_TRUE(values_equal(run_sim(load("relu"), {{"image", in}}), map1(in, ref::relu), in));
  const auto sig = load("sigmoid");
  EXPECT_TRUE(values_equal(run_sim(sig, {{"image", in}}),
                           map1(in, [&](uint16_t x) { return ref::sigmoid_lut(sigmoid_table(sig), x); }),
                           in));
  const Fp16 nan64 = filled(64, 0x7e00);
  EXPECT_TRUE(values_equal(run_sim(load("sum"), {{"image", nan64}, {"image2", filled(64, h(1))}}), nan64));
  EXPECT_TRUE(values_equal(run_sim(load("conv"), {{"image", {0x7e00, h(1), h(1)}}}), filled(3, 0x7e00)));
  EXPECT_TRUE(values_equal(
      run_sim(load("concat"), {{"input_0", filled(16384, 0x7e00)}, {"input_1", filled(16, 0x7e00)}}),
      filled(16400, 0x7e00)));
}

// ===== numerics options (§9): each changes the result where it should, and only there =====

Options numerics(const std::function<void(Numerics&)>& set) {
  Options o;
  set(o.numerics);
  return o;
}

TEST(SimReferenceOptions, LutIdealIsRoundedSigmoidForEveryFp16Value) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("sigmoid");
  const Options ideal = numerics([](Numerics& n) { n.lut = Numerics::Lut::Ideal; });
  for (const auto& in : all_fp16_in_chunks(kRow))
    ASSERT_TRUE(values_equal(run_sim(p, {{"image", in}}, ideal), map1(in, ref::sigmoid_ideal), in));
}

// At the nodes Linear and Ideal agree; at 1.25 the straight line between the
// nodes 1.0 and 1.5 is exactly 0.7744140625 (0x3A32), RN(sigmoid(1.25)) is 0x3A38.
TEST(SimReferenceOptions, LutIdealDiffersFromLinearOnlyOffTheNodes) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("sigmoid");
  const auto t = sigmoid_table(p);
  Fp16 nodes;
  for (int i = 0; i <= 32; ++i) nodes.push_back(h(-8 + 0.5 * i));
  const Options ideal = numerics([](Numerics& n) { n.lut = Numerics::Lut::Ideal; });
  const Fp16 in = padded(kRow, nodes);  // the zeros of the padding are a node too
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", in}}), map1(in, ref::sigmoid_ideal), in));
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", in}}, ideal), map1(in, ref::sigmoid_ideal), in));
  ASSERT_EQ(ref::sigmoid_lut(t, h(1.25)), 0x3a32);
  ASSERT_EQ(ref::sigmoid_ideal(h(1.25)), 0x3a38);
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", filled(kRow, h(1.25))}}), filled(kRow, 0x3a32)));
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", filled(kRow, h(1.25))}}, ideal), filled(kRow, 0x3a38)));
}

const Options kFtz = numerics([](Numerics& n) { n.subnormals = Numerics::Subnormals::FlushToZero; });
const Options kSaturate = numerics([](Numerics& n) { n.overflow = Numerics::Overflow::Saturate; });

// FlushToZero flushes subnormal inputs and results (§9: inputs, weights, results).
// The reference: flush(op(flush(a), flush(b))).
TEST(SimReferenceOptions, FlushToZeroOnPlanarAdd) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("sum");
  // subnormal + subnormal; normals whose difference is subnormal; subnormal
  // inputs next to normal ones, whose flushing changes the result.
  Fp16 a{0x0001, 0x0600, 0x0400, 0x03ff, 0x8200}, b{0x0001, 0x8400, 0x83ff, 0x0400, 0x0500};
  auto keep = [](uint16_t x, uint16_t y) { return ref::pe_add(x, y); };
  auto ftz = [](uint16_t x, uint16_t y) { return ref::flush(ref::pe_add(ref::flush(x), ref::flush(y))); };
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_FALSE(same(keep(a[i], b[i]), ftz(a[i], b[i]))) << i;  // cases that matter
  // Normal inputs with normal (or zero / infinite) results: FlushToZero must change nothing.
  std::mt19937 rng(91);
  while (a.size() < 64) {
    const uint16_t x = random_fp16(rng), y = random_fp16(rng);
    if (ref::is_subnormal(x) || ref::is_subnormal(y) || ref::is_subnormal(keep(x, y))) continue;
    a.push_back(x), b.push_back(y);
  }
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", a}, {"image2", b}}), map2(a, b, keep), a));
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", a}, {"image2", b}}, kFtz), map2(a, b, ftz), a));
}

TEST(SimReferenceOptions, FlushToZeroOnReluEveryFp16Value) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("relu");
  for (const auto& in : all_fp16_in_chunks(kRow))
    ASSERT_TRUE(values_equal(run_sim(p, {{"image", in}}, kFtz),
                             map1(in, [](uint16_t x) { return ref::flush(ref::relu(ref::flush(x))); }), in));
}

TEST(SimReferenceOptions, FlushToZeroOnConcatCopy) {
  ANE_REQUIRE_CORPUS();
  std::mt19937 rng(92);
  const ref::Tensor3 a{16384, 1, 1, random_vector(rng, 16384)},
      b{16, 1, 1, padded(16, {0x0001, 0x8001, 0x03ff, 0x83ff, 0x0400})};
  const Fp16 want = ref::concat_channels(a, b).v;
  const auto p = load("concat");
  EXPECT_TRUE(values_equal(run_sim(p, {{"input_0", a.v}, {"input_1", b.v}}), want));
  EXPECT_TRUE(values_equal(run_sim(p, {{"input_0", a.v}, {"input_1", b.v}}, kFtz), map1(want, ref::flush)));
}

// Subnormal inputs, subnormal weights and subnormal results of a convolution.
TEST(SimReferenceOptions, FlushToZeroOnConvolution) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("conv");
  const Fp16 w = conv_weights(p, 3, 3);
  const ref::Tensor3 tiny{3, 1, 1, {0x0001, 0x0001, 0x0001}};  // 2 * 3 * 2^-24: subnormal in and out
  ASSERT_EQ(ref::conv1x1(tiny, w, 3).v, filled(3, 0x0006));
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", tiny.v}}), filled(3, 0x0006)));
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", tiny.v}}, kFtz), filled(3, 0)));
  const ref::Tensor3 normal{3, 1, 1, {h(1.5), h(-0.25), h(1000)}};  // nothing subnormal: no change
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", normal.v}}, kFtz), ref::conv1x1(normal, w, 3).v));
  // A subnormal weight (2^-24) times 1024 is the normal 2^-14: kept, or 0 when weights flush.
  std::map<uint64_t, Fp16> lanes;
  for (int oc = 0; oc < 3; ++oc) lanes[lane_offset(p, oc)] = padded(32, {0x0001, 0, 0});
  const Inputs in{{"image", {h(1024), h(1), h(1)}}};
  run_both(
      p, regs_of(p), in, {}, [](const Outcome& r) { EXPECT_TRUE(values_equal(r, filled(3, 0x0400))); },
      lanes);
  run_both(
      p, regs_of(p), in, kFtz, [](const Outcome& r) { EXPECT_TRUE(values_equal(r, filled(3, 0))); }, lanes);
}

// sigmoid(-17) = 4.1e-8 rounds to the subnormal 2^-24 (Lut::Ideal); FlushToZero makes it 0.
TEST(SimReferenceOptions, FlushToZeroOnSigmoidResult) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("sigmoid");
  Options ideal = numerics([](Numerics& n) { n.lut = Numerics::Lut::Ideal; });
  const Fp16 in = padded(kRow, {h(-17), h(-1), h(0), h(2.5)});
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", in}}, ideal), map1(in, ref::sigmoid_ideal), in));
  ideal.numerics.subnormals = Numerics::Subnormals::FlushToZero;
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", in}}, ideal),
                           map1(in, [](uint16_t x) { return ref::flush(ref::sigmoid_ideal(x)); }), in));
  EXPECT_EQ(ref::flush(ref::sigmoid_ideal(h(-17))), 0);
}

// Saturate gives +-65504 where the default gives +-Inf, and changes nothing else.
TEST(SimReferenceOptions, SaturateOnPlanarAddAndMultiply) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("sum");
  Fp16 a{0x7bff, 0xfbff, 0x7bff, h(40000), h(256)}, b{0x7bff, 0xfbff, 0x4c00, h(30000), h(256)};
  std::mt19937 rng(93);
  while (a.size() < 64) {
    const uint16_t x = random_fp16(rng, false), y = random_fp16(rng, false);
    a.push_back(x), b.push_back(y);
  }
  auto sat_add = [](uint16_t x, uint16_t y) { return ref::saturate(ref::pe_add(x, y)); };
  auto sat_mul = [](uint16_t x, uint16_t y) { return ref::saturate(ref::pe_mul(x, y)); };
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(ref::is_inf(ref::pe_add(a[i], b[i]))) << i;  // overflow cases
  EXPECT_TRUE(ref::is_inf(ref::pe_mul(a[4], b[4])));                                   // 256 * 256 = 65536
  const Inputs in{{"image", a}, {"image2", b}};
  EXPECT_TRUE(values_equal(run_sim(p, in), map2(a, b, ref::pe_add), a));
  EXPECT_TRUE(values_equal(run_sim(p, in, kSaturate), map2(a, b, sat_add), a));
  const auto mul = modified(p, {{"PE.Cfg.OpMode", 1}});
  run_both(p, mul, in, {},
           [&](const Outcome& r) { EXPECT_TRUE(values_equal(r, map2(a, b, ref::pe_mul), a)); });
  run_both(p, mul, in, kSaturate,
           [&](const Outcome& r) { EXPECT_TRUE(values_equal(r, map2(a, b, sat_mul), a)); });
}

TEST(SimReferenceOptions, SaturateOnConvolution) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("conv");
  const Fp16 w = conv_weights(p, 3, 3);
  for (const Fp16& in :
       {Fp16{h(60000), h(60000), h(0)}, Fp16{h(-60000), h(-1), h(-60000)}, Fp16{h(100), h(-7), h(0.5)}}) {
    const Fp16 want = ref::conv1x1(ref::Tensor3{3, 1, 1, in}, w, 3).v;
    EXPECT_TRUE(values_equal(run_sim(p, {{"image", in}}), want, in));
    EXPECT_TRUE(values_equal(run_sim(p, {{"image", in}}, kSaturate), map1(want, ref::saturate), in));
  }
}

// Accumulator: with x = [2^14, 2^-12, -2^14] and weights 2, an fp32
// accumulator in input-channel order loses 2^-11 next to 2^15 (§9 default
// acc=fp32) and returns 0; an fp64 one keeps it: 2^-11.
TEST(SimReferenceOptions, AccumulatorPrecision) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("conv");
  const Fp16 w = conv_weights(p, 3, 3);
  const ref::Tensor3 x{3, 1, 1, {h(0x1p14), h(0x1p-12), h(-0x1p14)}};
  const Fp16 f32 = ref::conv1x1(x, w, 3, {}, 0x3c00, ref::Acc::Float).v;
  const Fp16 f64 = ref::conv1x1(x, w, 3, {}, 0x3c00, ref::Acc::Double).v;
  ASSERT_EQ(f32, filled(3, 0));
  ASSERT_EQ(f64, filled(3, h(0x1p-11)));
  const Options acc64 = numerics([](Numerics& n) { n.accumulator = Numerics::Accumulator::Fp64; });
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", x.v}}), f32));
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", x.v}}, acc64), f64));
  const ref::Tensor3 exact{3, 1, 1, {h(1.5), h(-0.25), h(1000)}};  // exact sums: no difference
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", exact.v}}, acc64), ref::conv1x1(exact, w, 3).v));
}

// The §9 default acc=fp32 sums in input-channel order, also over 512 channels.
// gemm.hwx (A2 for the lane order) with weights and inputs in [1, 2] on the
// 2^-10 grid, built to cancel: x[ic + 256] = -x[ic] and W[oc][ic + 256] =
// W[oc][ic] + {0, +-2^-10}. Partial sums reach ~600, where fp32 keeps nothing
// below 2^-14, while the exact result is ~2^-5. So acc=fp64 gives RN(exact sum)
// (exact in double: multiples of 2^-20 below 2^11), acc=fp32 in input-channel
// order gives the reference's sequential float sum, and any order lies within
// conv_range.
TEST(SimReferenceOptions, AccumulatorOrderOver512Channels) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("gemm");
  const int n = 32;  // 2^OCGSize output channels per lane (A2, §11.2)
  std::mt19937 rng(112);
  auto pick = [&] { return h(1 + (rng() % 1024) / 1024.0); };
  ref::Tensor3 x{512, 1, 1, Fp16(512)};
  for (int ic = 0; ic < 256; ++ic) x.v[ic] = pick(), x.v[ic + 256] = x.v[ic] ^ 0x8000;
  Fp16 w(512 * 512);
  for (int oc = 0; oc < 512; ++oc)
    for (int ic = 0; ic < 256; ++ic) {
      const uint16_t a = pick();
      w[oc * 512 + ic] = a;
      w[oc * 512 + ic + 256] = h(d(a) + (static_cast<int>(rng() % 3) - 1) * 0x1p-10);
    }
  std::map<uint64_t, Fp16> lanes;
  for (int g = 0; g < 16; ++g) {
    Fp16 l(512 * n);
    for (int j = 0; j < n; ++j)
      for (int ic = 0; ic < 512; ++ic) l[ic * n + j] = w[(g * n + j) * 512 + ic];
    lanes[lane_offset(p, g)] = l;
  }
  const auto range = conv_range(x, w, 512);
  const auto& lo = range.first;
  const auto& hi = range.second;
  const Fp16 f32 = ref::conv1x1(x, w, 512, {}, 0x3c00, ref::Acc::Float).v;
  const Fp16 f64 = ref::conv1x1(x, w, 512, {}, 0x3c00, ref::Acc::Double).v;
  size_t differ = 0;
  for (size_t i = 0; i < f32.size(); ++i) differ += f32[i] != f64[i];
  EXPECT_GT(differ, 400u);  // the accumulator matters for nearly every output
  Options a2;
  a2.assume.ocg_layout = true;
  // Default acc=fp32: fp32 sums in the BLAS's own (blocked) order: inside the
  // any-order bound, not necessarily equal to the sequential sum.
  run_both(
      p, regs_of(p), {{"image", x.v}}, a2, [&](const Outcome& r) { EXPECT_TRUE(values_within(r, lo, hi)); },
      lanes);
  // acc=fp32-ordered: fp32 sums in input-channel order (section 9), bit for bit.
  a2.numerics.accumulator = Numerics::Accumulator::Fp32Ordered;
  run_both(
      p, regs_of(p), {{"image", x.v}}, a2,
      [&](const Outcome& r) {
        EXPECT_TRUE(values_within(r, lo, hi));
        EXPECT_TRUE(values_equal(r, f32));
      },
      lanes);
  a2.numerics.accumulator = Numerics::Accumulator::Fp64;
  run_both(
      p, regs_of(p), {{"image", x.v}}, a2, [&](const Outcome& r) { EXPECT_TRUE(values_equal(r, f64)); },
      lanes);
}

// Products: 2 * 40000 = 80000 is exact in fp32 but Inf in fp16, so with
// products rounded to fp16 the sum 80000 - 80000 + 2 becomes Inf - Inf = NaN.
TEST(SimReferenceOptions, ProductsRoundedToFp16) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("conv");
  const Fp16 w = conv_weights(p, 3, 3);
  const ref::Tensor3 x{3, 1, 1, {h(40000), h(-40000), h(1)}};
  ASSERT_TRUE(ref::is_inf(ref::pe_mul(w[0], x.v[0])));
  const Options fp16_products = numerics([](Numerics& n) { n.products = Numerics::Products::Fp16; });
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", x.v}}), ref::conv1x1(x, w, 3).v));
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", x.v}}, fp16_products), filled(3, 0x7e00)));
  const ref::Tensor3 exact{3, 1, 1, {h(1.5), h(-0.25), h(1000)}};  // products exact in fp16: no difference
  EXPECT_TRUE(values_equal(run_sim(p, {{"image", exact.v}}, fp16_products), ref::conv1x1(exact, w, 3).v));
}

// Bias point: lanes [b=1, 1, 1, 1] and x = [2048, 1, 0]: in the accumulator
// 1 + 2049 = 2050; after rounding RN(2049) = 2048, then RN(2048 + 1) = 2048.
TEST(SimReferenceOptions, BiasInAccumulatorOrAfterRounding) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("conv");
  std::map<uint64_t, Fp16> lanes;
  for (int oc = 0; oc < 3; ++oc) lanes[lane_offset(p, oc)] = padded(32, {h(1), h(1), h(1), h(1)});
  const Fp16 w(9, h(1)), b(3, h(1));
  const auto regs = modified(p, {{"NE.MACCfg.BiasMode", 1}});
  const Options after = numerics([](Numerics& n) { n.bias = Numerics::BiasPoint::AfterRound; });
  for (const Fp16& in : {Fp16{h(2048), h(1), h(0)}, Fp16{h(3), h(-0.5), h(10)}}) {
    const ref::Tensor3 x{3, 1, 1, in};
    const Fp16 in_acc = ref::conv1x1(x, w, 3, b).v;
    const Fp16 after_round = map2(ref::conv1x1(x, w, 3).v, b, ref::pe_add);
    run_both(
        p, regs, {{"image", in}}, {}, [&](const Outcome& r) { EXPECT_TRUE(values_equal(r, in_acc, in)); },
        lanes);
    run_both(
        p, regs, {{"image", in}}, after,
        [&](const Outcome& r) { EXPECT_TRUE(values_equal(r, after_round, in)); }, lanes);
  }
  EXPECT_EQ(ref::conv1x1(ref::Tensor3{3, 1, 1, {h(2048), h(1), h(0)}}, w, 3, b).v[0], h(2050));
  EXPECT_EQ(ref::pe_add(ref::conv1x1(ref::Tensor3{3, 1, 1, {h(2048), h(1), h(0)}}, w, 3).v[0], h(1)),
            h(2048));
}

// ===== refusals (§11.1, §11.3) and assumptions (§11.2) ====================================

// The error line of `changes` on task `task` of `name`, run both ways.
std::vector<std::string> errors_of(const std::string& name, const Changes& changes, size_t task = 0,
                                   const Options& o = {}, const std::map<uint64_t, Fp16>& lanes = {}) {
  const auto p = load(name);
  std::vector<std::string> errors;
  run_both(
      p, modified(p, changes, task), {}, o,
      [&](const Outcome& r) {
        EXPECT_FALSE(r.ok) << "expected a refusal";
        if (!r.ok) errors.push_back(r.error);
      },
      lanes);
  return errors;
}

TEST(SimReferenceRefusal, ExactMessages) {
  ANE_REQUIRE_CORPUS();
  struct Case {
    const char* program;
    Changes changes;
    size_t task;
    const char* message;
  };
  const std::vector<Case> cases{
      {"conv", {{"Common.ConvCfg.Kw", 3}}, 0, "unsupported: Common.ConvCfg.Kw=3 in task 0"},
      {"conv", {{"Common.ConvCfg.Kh", 3}}, 0, "unsupported: Common.ConvCfg.Kh=3 in task 0"},
      {"relu", {{"NE.MACCfg.NonlinearMode", 3}}, 0, "unsupported: NE.MACCfg.NonlinearMode=3 in task 0"},
      {"sum", {{"PE.Cfg.OpMode", 4}}, 0, "unsupported: PE.Cfg.OpMode=4 in task 0"},
      {"concat", {{"Common.ConvCfg.Kw", 3}}, 1, "unsupported: Common.ConvCfg.Kw=3 in task 1"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.message);
    for (const auto& e : errors_of(c.program, c.changes, c.task)) EXPECT_EQ(e, c.message);
  }
}

TEST(SimReferenceRefusal, MessagesNameFieldAndTask) {
  ANE_REQUIRE_CORPUS();
  struct Case {
    const char* program;
    Changes changes;
    const char* field;  // "" where the docs do not say which field the message names
  };
  const std::vector<Case> cases{
      {"conv", {{"Common.ConvCfg.Sx", 2}}, "Common.ConvCfg.Sx=2"},                          // §11.3 #3
      {"conv", {{"Common.ConvCfg.Px", 1}}, "Common.ConvCfg.Px=1"},                          // #2
      {"conv", {{"Common.ConvCfg.Ox", 2}}, "Common.ConvCfg.Ox=2"},                          // #3
      {"conv", {{"Common.GroupConvCfg.NumGroups", 32}}, "Common.GroupConvCfg.NumGroups="},  // #4
      {"conv", {{"KernelDMASrc.CoeffDMAConfig[2].En", 0}}, "CoeffDMAConfig[2]"},            // §11.1 lanes
      {"conv", {{"NE.MACCfg.NonlinearMode", 1}}, "NE.MACCfg.NonlinearMode=1"},              // A3 off
      {"relu", {{"Common.ChCfg.InFmt", 1}}, "Common.ChCfg.InFmt=1"},                        // #6
      {"relu", {{"TileDMASrc.DMAConfig.En", 0}}, "TileDMASrc.DMAConfig.En=0"},              // #9
      {"relu", {{"TileDMASrc.Fmt.Interleave", 2}}, "TileDMASrc.Fmt.Interleave=2"},          // #10
      {"relu", {{"NE.MACCfg.MatrixBiasEn", 1}}, "NE.MACCfg.MatrixBiasEn=1"},                // #7
      {"relu", {{"NE.MACCfg.OpMode", 3}}, "NE.MACCfg.OpMode=3"},                            // §11.1 MACCfg
      {"relu", {{"NE.PostScale.PostScale", 0x7e00}}, "NE.PostScale.PostScale"},             // #13 NaN scale
      {"relu", {{"Header[9].KBE1", 1}}, "Header[9].KBE1=1"},                                // §11.1 Header
      {"relu", {{"PE.Cfg.OpMode", 1}}, ""},                              // §5: one source, PE.Cfg != 0
      {"relu", {{"Header[8].RBE1", 1}, {"Header[8].RBase1", 5}}, ""},    // §5: two sources, PE.Cfg = 0
      {"sigmoid", {{"NE.MACCfg.UnkBit20", 0}}, "NE.MACCfg.UnkBit20=0"},  // §11.1 bit 20 with the LUT
      {"gemm", {{"NE.MACCfg.BiasMode", 1}}, "NE.MACCfg.BiasMode=1"},     // #7: bias with OCGSize 5
      {"sum", {{"PE.Cfg.OpMode", 2}}, "PE.Cfg.OpMode=2"},                // A1 off
      {"sum", {{"PE.Cfg.OpMode", 3}}, "PE.Cfg.OpMode=3"},                // A1 off
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.program) + ": " + c.changes[0].first + "=" +
                 std::to_string(c.changes[0].second));
    for (const auto& e : errors_of(c.program, c.changes)) {
      EXPECT_EQ(e.rfind("unsupported: ", 0), 0u) << e;
      EXPECT_PRED_FORMAT2(::testing::IsSubstring, c.field, e);
      EXPECT_PRED_FORMAT2(::testing::IsSubstring, " in task 0", e);
    }
  }
}

// §11.1: a LUT other than sigmoid.hwx's needs A4; with A4 the table in memory is read
// as §6.6 says. Node 16 (x = 0, slot 20) changed from 0.5 to 0.25.
TEST(SimReferenceRefusal, OtherLookupTableNeedsLutAny) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("sigmoid");
  auto t = sigmoid_table(p);
  t[20] = h(0.25);
  const uint64_t base = lane_offset(p, 0);
  const std::map<uint64_t, Fp16> lanes{{base, Fp16(t.begin(), t.end())}};
  for (const auto& e : errors_of("sigmoid", {}, 0, {}, lanes)) {
    EXPECT_EQ(e.rfind("unsupported: ", 0), 0u) << e;
    EXPECT_PRED_FORMAT2(::testing::IsSubstring, " in task 0", e);
  }
  Options any;
  any.assume.lut_any = true;
  const Fp16 in = padded(kRow, {h(0), h(0.25), h(-0.25), h(3)});
  run_both(
      p, regs_of(p), {{"image", in}}, any,
      [&](const Outcome& r) {
        EXPECT_TRUE(values_equal(r, map1(in, [&](uint16_t x) { return ref::sigmoid_lut(t, x); }), in));
      },
      lanes);
  EXPECT_EQ(ref::sigmoid_lut(t, h(0)), h(0.25));
}

// A1 pe_minmax: PE OpMode 2 = max(a, b), 3 = min(a, b) (§7, §11.2).
TEST(SimReferenceRefusal, PeMinMaxWithAssumption) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("sum");
  Options a1;
  a1.assume.pe_minmax = true;
  std::mt19937 rng(101);
  const Fp16 a = random_vector(rng, 64), b = random_vector(rng, 64);
  auto max = [](uint16_t x, uint16_t y) { return d(x) >= d(y) ? x : y; };
  auto min = [](uint16_t x, uint16_t y) { return d(x) <= d(y) ? x : y; };
  run_both(p, modified(p, {{"PE.Cfg.OpMode", 2}}), {{"image", a}, {"image2", b}}, a1,
           [&](const Outcome& r) { EXPECT_TRUE(values_equal(r, map2(a, b, max), a)); });
  run_both(p, modified(p, {{"PE.Cfg.OpMode", 3}}), {{"image", a}, {"image2", b}}, a1,
           [&](const Outcome& r) { EXPECT_TRUE(values_equal(r, map2(a, b, min), a)); });
}

// A3 post_chain: convolution followed by ReLU, MAC -> PostScale -> ReLU -> round.
TEST(SimReferenceRefusal, ConvolutionWithReluWithAssumption) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("conv");
  const Fp16 w = conv_weights(p, 3, 3);
  Options a3;
  a3.assume.post_chain = true;
  for (const Fp16& in : {Fp16{h(1), h(2), h(3)}, Fp16{h(1), h(2), h(-10)}}) {
    const Fp16 want = map1(ref::conv1x1(ref::Tensor3{3, 1, 1, in}, w, 3).v, ref::relu);
    run_both(p, modified(p, {{"NE.MACCfg.NonlinearMode", 1}}), {{"image", in}}, a3,
             [&](const Outcome& r) { EXPECT_TRUE(values_equal(r, want, in)); });
  }
}

// A2 ocg_layout: gemm with weights that differ per output channel is refused
// without A2; with it, lane g serves output channels 32g .. 32g+31 and weight
// (oc_local, ic) sits at byte 2 (ic * 32 + oc_local) (§11.2). Weights are
// nonzero only where ic = oc (mod 16), small integers: every sum is exact.
TEST(SimReferenceRefusal, GemmWeightLayoutWithAssumption) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("gemm");
  const int n = 1 << field(p.tasks[0].regs, "Common.ConvCfg.OCGSize");
  ASSERT_EQ(n, 32);
  Fp16 w(512 * 512, 0);
  std::map<uint64_t, Fp16> lanes;
  for (int g = 0; g < 16; ++g) {
    Fp16 l(512 * n, 0);
    for (int j = 0; j < n; ++j) {
      const int oc = g * n + j;
      for (int ic = oc % 16; ic < 512; ic += 16) {
        const uint16_t v = h((oc * 5 + ic * 3) % 7 - 3);  // differs per output channel
        w[static_cast<size_t>(oc) * 512 + ic] = l[static_cast<size_t>(ic) * n + j] = v;
      }
    }
    lanes[lane_offset(p, g)] = l;
  }
  std::mt19937 rng(111);
  ref::Tensor3 x{512, 1, 1, {}};
  for (int i = 0; i < 512; ++i) x.v.push_back(h(static_cast<int>(rng() % 9) - 4));
  for (const auto& e : errors_of("gemm", {}, 0, {}, lanes)) EXPECT_EQ(e.rfind("unsupported: ", 0), 0u) << e;
  Options a2;
  a2.assume.ocg_layout = true;
  run_both(
      p, regs_of(p), {{"image", x.v}}, a2,
      [&](const Outcome& r) { EXPECT_TRUE(values_equal(r, ref::conv1x1(x, w, 512).v)); }, lanes);
}

// §1, §2.2: an unbound slot or a DMA outside its slot is an error, not a crash.
TEST(SimReferenceRefusal, BadMemoryIsAnError) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("relu");
  ane::sim::Machine m;
  const auto st = m.run_task(p.tasks[0].regs, 0);
  EXPECT_FALSE(st.ok());
  for (const char* f : {"TileDMASrc.BaseAddr.Addr", "TileDMADst.BaseAddr.Addr"}) {
    SCOPED_TRACE(f);
    run_both(p, modified(p, {{f, 0x10000}}), {}, {}, [](const Outcome& r) {
      EXPECT_FALSE(r.ok);
      EXPECT_PRED_FORMAT2(::testing::IsSubstring, "task 0", r.error);
    });
  }
}

}  // namespace
