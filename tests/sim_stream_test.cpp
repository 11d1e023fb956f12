// Large element-wise tasks run streamed, row by row (src/sim/stream.h), unless
// a trace asks for per-task statistics, which the whole-tensor path gives.
// Both must write the same bits, under every numerics option, and the planar
// add and multiply and the ReLU pass must equal the independent reference.
#include <gtest/gtest.h>

#include <random>

#include "reference/sim_harness.h"
#include "sim_support.h"

namespace ane {
namespace {

namespace ref = ane_ref;
using ane_ref::harness::random_vector;
using ane_ref::harness::same;
using test::set;

constexpr uint32_t kC = 9, kW = 8000;  // 72,000 values: above the streaming threshold
constexpr uint64_t kValues = uint64_t{kC} * kW;

using Fp16 = std::vector<uint16_t>;

std::vector<uint8_t> slot_of(const Fp16& v) {
  std::vector<uint8_t> m(kC * test::row_bytes(kW), 0xee);  // row padding never read
  for (uint64_t i = 0; i < v.size(); ++i) test::put16(m, i / kW * test::row_bytes(kW) + 2 * (i % kW), v[i]);
  return m;
}

struct Outcome {
  Fp16 out;
  std::string error;
};

// The task on slots 5 (a), 6 (b) and 4 (result), traced or not; slot 1 holds
// the sigmoid table for a table task.
Outcome run(const RegisterImage& r, const Fp16& a, const Fp16& b, bool traced, const sim::Options& o = {}) {
  sim::Machine m(o);
  m.set_slot(5, slot_of(a));
  m.set_slot(6, slot_of(b));
  m.set_slot(4, kC * test::row_bytes(kW));
  std::vector<uint8_t> lut(0x80);
  for (int i = 0; i < 64; ++i) test::put16(lut, 2 * i, sim::sigmoid_lut()[i]);
  m.set_slot(1, lut);
  Outcome res;
  sim::TraceHook hook;
  if (traced) hook = [](const sim::TraceRecord&) {};
  res.error = test::error_of(m.run_task(r, 0, 0, hook));
  for (uint64_t i = 0; res.error.empty() && i < kValues; ++i)
    res.out.push_back(test::get16(*m.slot(4), i / kW * test::row_bytes(kW) + 2 * (i % kW)));
  return res;
}

// Random values and edges, every NaN payload class included.
Fp16 inputs(unsigned seed) {
  std::mt19937 rng(seed);
  Fp16 v = random_vector(rng, kValues);
  for (uint64_t i = 0; i < kValues; i += 997) v[i] = static_cast<uint16_t>(0x7c01 + rng() % 0x3ff);  // NaN
  return v;
}

std::vector<sim::Options> every_numerics() {
  std::vector<sim::Options> all(4);
  all[1].numerics.subnormals = sim::Numerics::Subnormals::FlushToZero;
  all[2].numerics.overflow = sim::Numerics::Overflow::Saturate;
  all[3].numerics.subnormals = sim::Numerics::Subnormals::FlushToZero;
  all[3].numerics.overflow = sim::Numerics::Overflow::Saturate;
  return all;
}

void expect_same_both_ways(const RegisterImage& r, const Fp16& a, const Fp16& b) {
  for (const auto& o : every_numerics()) {
    const Outcome streamed = run(r, a, b, false, o), whole = run(r, a, b, true, o);
    ASSERT_EQ(streamed.error, "");
    ASSERT_EQ(whole.error, "");
    ASSERT_EQ(streamed.out, whole.out);
  }
}

TEST(SimStream, PlanarOpsAgreeWithTheWholeTensorPathUnderEveryOption) {
  const Fp16 a = inputs(1), b = inputs(2);
  for (uint32_t op = 0; op < 4; ++op) {
    SCOPED_TRACE(op);
    expect_same_both_ways(test::pe_task(kC, 1, kW, op), a, b);
  }
  RegisterImage sub = test::pe_task(kC, 1, kW, 0);
  set(sub, "PE.Cfg.SecSrc", 3);
  set(sub, "PE.PreScale.PreScale", 0x3e00);  // 1.5
  set(sub, "PE.BiasScale.Scale", 0x3555);    // ~1/3
  set(sub, "PE.BiasScale.Bias", 0xb800);     // -0.5
  expect_same_both_ways(sub, a, b);
  RegisterImage mul = test::pe_task(kC, 1, kW, 1);
  set(mul, "PE.BiasScale.Scale", 0x3555);
  expect_same_both_ways(mul, a, b);
}

TEST(SimStream, PlanarAddAndMultiplyEqualTheReference) {
  const Fp16 a = inputs(3), b = inputs(4);
  const Outcome add = run(test::pe_task(kC, 1, kW, 0), a, b, false), mul = run(test::pe_task(kC, 1, kW, 1), a, b, false);
  ASSERT_EQ(add.error, "");
  ASSERT_EQ(mul.error, "");
  uint64_t bad = 0;
  for (uint64_t i = 0; i < kValues; ++i) {
    if (ref::is_nan(a[i]) || ref::is_nan(b[i])) {
      bad += !ref::is_nan(add.out[i]) || !ref::is_nan(mul.out[i]);
      continue;
    }
    bad += !same(add.out[i], ref::pe_add(a[i], b[i]));
    bad += !same(mul.out[i], ref::pe_mul(a[i], b[i]));
  }
  EXPECT_EQ(bad, 0u);
}

TEST(SimStream, PassThroughReluAndTableAgreeWithTheWholeTensorPath) {
  const Fp16 a = inputs(5);
  expect_same_both_ways(test::pass_task(kC, 1, kW, 1), a, a);
  expect_same_both_ways(test::pass_task(kC, 1, kW, 2), a, a);
  RegisterImage scaled = test::pass_task(kC, 1, kW, 1);
  set(scaled, "NE.PostScale.PostScale", 0x3555);
  expect_same_both_ways(scaled, a, a);
  const Outcome relu = run(test::pass_task(kC, 1, kW, 1), a, a, false);
  ASSERT_EQ(relu.error, "");
  uint64_t bad = 0;
  for (uint64_t i = 0; i < kValues; ++i)
    bad += ref::is_nan(a[i]) ? !ref::is_nan(relu.out[i]) : !same(relu.out[i], ref::relu(a[i]));
  EXPECT_EQ(bad, 0u);
}

TEST(SimStream, AResultWrittenOverItsOwnSourceIsComputedFromTheSource) {
  // The destination is the first source's bytes, in place and one row further
  // on: no value may be read after a result replaced it.
  const Fp16 a = inputs(6), b = inputs(7);
  const Outcome want = run(test::pe_task(kC, 1, kW, 0), a, b, true);
  ASSERT_EQ(want.error, "");
  for (uint32_t shift_rows : {0u, 1u}) {
    RegisterImage r = test::pe_task(kC, 1, kW, 0);
    set(r, "Header[8].WBase", 5);  // the destination in slot 5, where a is
    set(r, "TileDMADst.BaseAddr.Addr", static_cast<uint32_t>(shift_rows * test::row_bytes(kW) >> 6));
    for (bool traced : {false, true}) {
      SCOPED_TRACE(testing::Message() << "shift " << shift_rows << " traced " << traced);
      sim::Machine m;
      std::vector<uint8_t> slot = slot_of(a);
      slot.resize(slot.size() + test::row_bytes(kW));
      m.set_slot(5, slot);
      m.set_slot(6, slot_of(b));
      sim::TraceHook hook;
      if (traced) hook = [](const sim::TraceRecord&) {};
      ASSERT_EQ(test::error_of(m.run_task(r, 0, 0, hook)), "");
      uint64_t bad = 0;
      for (uint64_t i = 0; i < kValues; ++i)
        bad += test::get16(*m.slot(5), (i / kW + shift_rows) * test::row_bytes(kW) + 2 * (i % kW)) != want.out[i];
      EXPECT_EQ(bad, 0u);
    }
  }
}

}  // namespace
}  // namespace ane
