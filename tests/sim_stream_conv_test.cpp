// Large pointwise convolutions run streamed by blocks of pixels
// (src/sim/stream_conv.h) unless a trace asks for per-task statistics, which
// the whole-tensor path gives. Both must write the same bits under every
// numerics option it takes (bias=after-round falls back to the whole path),
// on shapes whose blocks cut rows, with and without bias and ReLU; and the
// streamed run must hold less than the whole path's fp32 copies. On a BLAS
// whose sums depend on where a call's columns start (OpenBLAS's Haswell and
// Zen kernels; src/sim/stream_conv.h) the two paths may differ as two fp32
// sums of the same products do.
#include <gtest/gtest.h>

#include <cblas.h>
#if defined(__linux__)
#include <sched.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ane/fp16.h"
#include "ane/sim.h"
#include "compile_net.h"
#include "plist_builder.h"
#include "support.h"

namespace ane {
namespace {

using namespace test::pl;

struct ConvShape {
  int cin, cout, h, w;
  bool bias_relu;
  int k = 1, stride = 1, pad = 0;     // a k x k window (kw = 1, kh = 9: the column kernel)
  bool column = false;
  uint32_t weight_seed = 3;
};

// A convolution of the shape's window (+ GOC bias + ReLU, fused into its one task).
Expected<Program> compile_conv(const ConvShape& s, test::TempDir& dir) {
  Net n;
  n.inputs = {{"x", input(s.cin, s.w, s.h)}};
  const int kw = s.column ? 1 : s.k, kh = s.column ? 9 : s.k;
  Dict params = with(with(conv_params(), "KernelWidth", integer(kw)), "KernelHeight", integer(kh));
  params = with(params, "Step", array({integer(s.stride), integer(s.stride)}));
  for (const char* side : {"PadTop", "PadBot", "PadLeft", "PadRight"})
    if (s.pad) params = with(params, side, integer(s.pad));
  n.units = {{"conv", conv("x", s.cout, params)}};
  std::string last = "conv";
  Bytes weights = test::fp16_le_bytes(test::uniform_fp16(size_t(s.cin) * s.cout * kw * kh, -0.1, 0.1, s.weight_seed));
  if (s.bias_relu) {
    n.units.push_back({"bias", unit("conv", "GOC", {{"BiasScaleGroupData",
                                                      dict({{"BiasCount", integer(s.cout)},
                                                            {"BiasIndex", integer(0)},
                                                            {"BiasOffset", integer(int64_t(weights.size()))},
                                                            {"BiasType", str("Float16")}})}})});
    const Bytes bias = test::fp16_le_bytes(test::uniform_fp16(size_t(s.cout), -0.5, 0.5, 4));
    weights.insert(weights.end(), bias.begin(), bias.end());
    n.units.push_back({"relu", unit("bias", "Neuron", {{"Type", str("ReLU")}})});
    last = "relu";
  }
  n.outputs = {{"y@output", output(last)}};
  n.weights = {"w.weights"};
  test::write_bytes(dir.file("w.weights"), weights);
  return test::compile_net(n, dir);
}

struct ConvOutcome {
  std::vector<uint16_t> out;
  uint64_t peak = 0;
};

ConvOutcome run(const Program& p, const std::vector<uint16_t>& x, const ConvShape& s, bool traced,
        const sim::Options& o) {
  auto sim = sim::Simulator::create(p, o);
  EXPECT_TRUE(sim.ok()) << (sim ? "" : sim.error().str());
  if (!sim) return {};
  sim::Tensor t;
  t.nchw = {1, uint32_t(s.cin), uint32_t(s.h), uint32_t(s.w)};
  t.data = x;
  EXPECT_TRUE(sim->set_input("x", t).ok());
  sim::TraceHook hook;
  if (traced) hook = [](const sim::TraceRecord&) {};
  auto st = sim->run(hook);
  EXPECT_TRUE(st.ok()) << (st ? "" : st.error().str());
  ConvOutcome r;
  r.peak = sim->machine().peak_bytes();
  auto out = sim->read_buffer("y@output");
  EXPECT_TRUE(out.ok());
  if (out) r.out = out->data;
  return r;
}

// Whether this BLAS's sgemm gives the same bits for a product computed whole
// and in two column pieces. Each piece stays above OpenBLAS's small-matrix
// bound (M x N x K <= 10^6 takes another kernel, as the streamed blocks never
// do); the cut is no multiple of a kernel's column step.
bool blas_sums_independent_of_cut() {
  constexpr int kM = 32, kK = 128, kN = 640, kCut = 301;
  std::vector<float> a(kM * kK), b(kK * kN), whole(kM * kN), pieces(kM * kN);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1, 1);
  for (float& v : a) v = u(rng);
  for (float& v : b) v = u(rng);
  auto sgemm = [&](int n, const float* bp, float* c) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kM, n, kK, 1.0f, a.data(), kK, bp, kN, 0.0f, c, kN);
  };
  sgemm(kN, b.data(), whole.data());
  sgemm(kCut, b.data(), pieces.data());
  sgemm(kN - kCut, b.data() + kCut, pieces.data() + kCut);
  return whole == pieces;
}

// Whether the two paths agree as the BLAS allows: bit for bit, or where its
// sums depend on the cut, as two fp32 sums of the same products may after
// rounding: within one fp16 step of the larger, or 2^-14 where the products
// cancel (weights in [-0.1, 0.1], inputs in [-2, 2]); inf (overflow) next to
// the largest finite value, NaN for NaN.
::testing::AssertionResult paths_agree(const std::vector<uint16_t>& streamed, const std::vector<uint16_t>& whole) {
  if (streamed.size() != whole.size() || streamed.empty()) return ::testing::AssertionFailure() << "sizes differ";
  if (streamed == whole) return ::testing::AssertionSuccess();
  static const bool exact = blas_sums_independent_of_cut();
  if (exact) return ::testing::AssertionFailure() << "bits differ";
  for (size_t i = 0; i < streamed.size(); ++i) {
    const uint16_t a = streamed[i], b = whole[i];
    if (a == b) continue;
    if (fp16_is_nan(a) || fp16_is_nan(b)) return ::testing::AssertionFailure() << "NaN at " << i;
    if ((a & 0x7fff) >= 0x7bff && (b & 0x7fff) >= 0x7bff && (a & 0x8000) == (b & 0x8000)) continue;
    const double fa = fp16_to_float(a), fb = fp16_to_float(b);
    const double big = std::max(std::abs(fa), std::abs(fb));
    const double step = big >= 0x1p-14 ? std::ldexp(1.0, std::ilogb(big) - 10) : 0x1p-24;
    if (std::abs(fa - fb) > step + 0x1p-14)
      return ::testing::AssertionFailure() << fmt::format("value {}: {:#06x} vs {:#06x}", i, a, b);
  }
  return ::testing::AssertionSuccess();
}

std::vector<sim::Options> streamed_conv_numerics() {
  // The accumulator and product options always take the whole-tensor path
  // (conv_streamable), as bias=after-round does; the slow ones are left out.
  std::vector<sim::Options> all(4);
  all[1].numerics.subnormals = sim::Numerics::Subnormals::FlushToZero;
  all[2].numerics.overflow = sim::Numerics::Overflow::Saturate;
  all[3].numerics.bias = sim::Numerics::BiasPoint::AfterRound;
  return all;
}

TEST(SimStreamConv, BlocksOfPixelsGiveTheWholeTensorPathsBits) {
  const ConvShape shapes[] = {
      {512, 512, 1, 1536, false},  // blocks of whole rows of pixels
      {512, 512, 16, 130, true},   // blocks that cut rows, a shorter last one; bias and ReLU
      {64, 48, 97, 131, false},    // cout not a power of two
      {1024, 16, 16, 64, false},   // a wide reduction
      {64, 64, 64, 64, false, 3, 1, 1},   // 3x3 "same": bands of rows, padding at both ends
      {32, 64, 90, 70, true, 3, 1, 1},    // bands that cut the input unevenly; bias and ReLU
      {64, 16, 161, 121, false, 3, 2, 1}, // stride 2 (the zero-skipping kernel form)
      {48, 32, 80, 50, false, 3, 1, 0},   // no padding: the output is smaller than the input
  };
  for (const ConvShape& s : shapes) {
    SCOPED_TRACE(fmt::format("{} -> {} on {}x{}, {}x{} window, stride {}, pad {}{}", s.cin, s.cout, s.h, s.w, s.k,
                             s.k, s.stride, s.pad, s.bias_relu ? " + bias + relu" : ""));
    test::TempDir dir;
    auto p = compile_conv(s, dir);
    ASSERT_TRUE(p.ok()) << p.error().str();
    ASSERT_EQ(p->tasks.size(), 1u);
    auto x = test::uniform_fp16(size_t(s.cin) * s.h * s.w, -2, 2, 5);
    // Edges: subnormals, overflow-prone values, NaN.
    for (size_t i = 0; i < x.size(); i += 101) x[i] = static_cast<uint16_t>(0x0001 + i % 0x3ff);
    for (size_t i = 7; i < x.size(); i += 4999) x[i] = 0x7bff;
    x[x.size() / 2] = 0x7e00;
    for (const auto& o : streamed_conv_numerics()) {
      const ConvOutcome streamed = run(*p, x, s, false, o), whole = run(*p, x, s, true, o);
      ASSERT_TRUE(paths_agree(streamed.out, whole.out))
          << "options: " << fmt::format("{}", fmt::join(sim::describe_options(o), " "));
    }
    // Streamed, the task holds a block's worth of fp32 per worker (about
    // 256 KiB each) and the input rows under one, instead of fp32 copies of
    // its whole input, windows and result.
    const ConvOutcome streamed = run(*p, x, s, false, {}), whole = run(*p, x, s, true, {});
    const uint64_t out_pixels = streamed.out.size() / s.cout;
    const uint64_t windows = s.k == 1 && !s.column ? 0 : uint64_t(s.cin) * (s.column ? 9 : s.k * s.k) * out_pixels;
    const uint64_t fp32_copies = (uint64_t(s.cin) * s.h * s.w + windows + uint64_t(s.cout) * out_pixels) * 4;
    EXPECT_LE(streamed.peak + fp32_copies, whole.peak + (uint64_t{5} << 20)) << streamed.peak << " vs " << whole.peak;
    EXPECT_LT(streamed.peak, whole.peak) << "not streamed";
    // ... which on the larger shapes is most of what the whole path holds.
    if (fp32_copies >= (uint64_t{8} << 20)) {
      EXPECT_GE(whole.peak, streamed.peak + fp32_copies / 2) << streamed.peak << " vs " << whole.peak;
    }
  }
}

// The simulator keeps a convolution's fp32 weight matrix for the next task
// that reads the same kernel bytes (KeptConvWeights, src/sim/state.h). Here
// the machine that ran program A has every slot overwritten with program B's
// memory (B: the same shapes and addresses, other weights) and runs again: it
// must give B's bits, streamed and traced, with the matrix from A still kept.
TEST(SimStreamConv, KeptWeightsFollowTheKernelBytes) {
  for (ConvShape s : {ConvShape{512, 512, 1, 1536, true}, ConvShape{64, 64, 64, 64, false, 3, 1, 1}}) {
    test::TempDir dir_a, dir_b;
    auto a = compile_conv(s, dir_a);
    s.weight_seed = 8;
    auto b = compile_conv(s, dir_b);
    ASSERT_TRUE(a.ok() && b.ok());
    sim::Tensor x;
    x.nchw = {1, uint32_t(s.cin), uint32_t(s.h), uint32_t(s.w)};
    x.data = test::uniform_fp16(size_t(s.cin) * s.h * s.w, -2, 2, 5);
    for (bool traced : {false, true}) {
      SCOPED_TRACE(fmt::format("{}x{} window, {}", s.k, s.k, traced ? "traced" : "streamed"));
      sim::TraceHook hook;
      if (traced) hook = [](const sim::TraceRecord&) {};
      auto sim_a = sim::Simulator::create(*a), sim_b = sim::Simulator::create(*b);
      ASSERT_TRUE(sim_a.ok() && sim_b.ok());
      ASSERT_TRUE(sim_a->set_input("x", x).ok() && sim_b->set_input("x", x).ok());
      ASSERT_TRUE(sim_a->run(hook).ok());
      const auto out_a = sim_a->read_buffer("y@output");
      int copied = 0;
      for (int k = 0; k < 32; ++k) {
        Memory* to = sim_a->machine().slot(k);
        const Memory* from = sim_b->machine().slot(k);
        if (!to || !from) continue;
        ASSERT_EQ(to->size(), from->size()) << "slot " << k;
        std::copy(from->data(), from->data() + from->size(), to->data());
        ++copied;
      }
      ASSERT_GT(copied, 0);
      ASSERT_TRUE(sim_a->run(hook).ok());
      ASSERT_TRUE(sim_b->run(hook).ok());
      const auto again = sim_a->read_buffer("y@output"), out_b = sim_b->read_buffer("y@output");
      ASSERT_TRUE(out_a.ok() && again.ok() && out_b.ok());
      EXPECT_NE(out_a->data, out_b->data) << "the two programs' weights give the same outputs";
      EXPECT_EQ(again->data, out_b->data);
    }
  }
}

#if defined(__linux__)
// spread_helper_threads (hwx-run's first step) moves OpenBLAS's workers and
// the simulator's helper threads off the caller's core. The thread counts
// stay, so no bit may change: a streamed 3x3 convolution (one-thread sgemms)
// and a pointwise one whose blocks convert on two threads, before and after.
TEST(SimStreamConv, SpreadingHelperThreadsChangesNoBit) {
  const ConvShape shapes[] = {{64, 64, 64, 64, false, 3, 1, 1}, {512, 512, 16, 130, true}};
  std::vector<test::TempDir> dirs(2);
  std::vector<Program> programs;
  std::vector<std::vector<uint16_t>> inputs, before;
  for (size_t i = 0; i < 2; ++i) {
    auto p = compile_conv(shapes[i], dirs[i]);
    ASSERT_TRUE(p.ok()) << p.error().str();
    programs.push_back(std::move(*p));
    const ConvShape& s = shapes[i];
    inputs.push_back(test::uniform_fp16(size_t(s.cin) * s.h * s.w, -2, 2, 9));
    before.push_back(run(programs[i], inputs[i], s, false, {}).out);
    ASSERT_FALSE(before.back().empty());
  }
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  const bool spread = sim::spread_helper_threads();
  EXPECT_EQ(spread, CPU_COUNT(&allowed) >= 2) << "spread wherever there is another core";
  if (spread && openblas_get_num_threads() >= 2) {
    // Worker 0 is OpenBLAS's first thread of its own; it must not share the
    // caller's current core now.
    cpu_set_t worker;
    ASSERT_EQ(openblas_getaffinity(0, sizeof worker, &worker), 0);
    const int here = sched_getcpu();
    cpu_set_t mine;
    CPU_ZERO(&mine);
    CPU_SET(here, &mine);
    cpu_set_t both;
    CPU_AND(&both, &worker, &mine);
    EXPECT_EQ(CPU_COUNT(&both), 0) << "OpenBLAS's worker may still run on core " << here;
  }
  for (size_t i = 0; i < 2; ++i) EXPECT_EQ(run(programs[i], inputs[i], shapes[i], false, {}).out, before[i]) << i;
}

// acc=fp32's sums are OpenBLAS's one-thread sums over pieces cut by the
// shape alone (mac.h), so a machine with one core gives the bits two give,
// on every BLAS kernel (the Haswell kernels included, whose sums follow the
// cut): both paths, streamed and whole, with every core and with one.
TEST(SimStreamConv, SumsDoNotDependOnTheCoreCount) {
  // Every online core for "all" (this thread's own mask may have been
  // narrowed), the mask it had put back at the end.
  cpu_set_t before, allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  CPU_ZERO(&allowed);
  for (long c = 0; c < sysconf(_SC_NPROCESSORS_ONLN) && c < CPU_SETSIZE; ++c) CPU_SET(c, &allowed);
  if (sched_setaffinity(0, sizeof allowed, &allowed) != 0 || sched_getaffinity(0, sizeof allowed, &allowed) != 0 ||
      CPU_COUNT(&allowed) < 2) {
    sched_setaffinity(0, sizeof before, &before);
    GTEST_SKIP() << "one core: nothing to compare";
  }
  // Streamed and cut by pixels; a 3x3 band; a whole-path product cut by
  // pixels; one over 16 pixels, cut by output channels.
  const ConvShape shapes[] = {{512, 512, 16, 130, true},
                              {64, 64, 64, 64, false, 3, 1, 1},
                              {256, 256, 1, 700, false},
                              {1024, 1024, 1, 16, true}};
  for (const ConvShape& s : shapes) {
    SCOPED_TRACE(fmt::format("{} -> {} on {}x{}, {}x{} window", s.cin, s.cout, s.h, s.w, s.k, s.k));
    test::TempDir dir;
    auto p = compile_conv(s, dir);
    ASSERT_TRUE(p.ok()) << p.error().str();
    const auto x = test::uniform_fp16(size_t(s.cin) * s.h * s.w, -2, 2, 13);
    const ConvOutcome streamed = run(*p, x, s, false, {}), whole = run(*p, x, s, true, {});
    cpu_set_t one;
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &allowed)) {
        CPU_SET(c, &one);
        break;
      }
    ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
    const ConvOutcome streamed1 = run(*p, x, s, false, {}), whole1 = run(*p, x, s, true, {});
    ASSERT_EQ(sched_setaffinity(0, sizeof allowed, &allowed), 0);
    ASSERT_FALSE(streamed.out.empty());
    EXPECT_EQ(streamed1.out, streamed.out) << "streamed path";
    EXPECT_EQ(whole1.out, whole.out) << "whole-tensor path";
  }
  sched_setaffinity(0, sizeof before, &before);
}
#endif

}  // namespace
}  // namespace ane
