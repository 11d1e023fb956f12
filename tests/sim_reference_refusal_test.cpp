// Register values outside the supported envelope (section 11) are refused
// with "unsupported: <Field>=<value> in task N"; assumptions widen it.
// Programs with modified registers run two ways: through Simulator on a
// re-encoded copy of the file, and through Machine::run_task on slots built
// from the slot table (section 2.2). Both must give the expected result.
#include "reference/sim_harness.h"

namespace {

using namespace ane_ref::harness;

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
      {"conv", {{"Common.ConvCfg.Kw", 3}}, 0, "unsupported: Common.ConvCfg.Kw=3 with Common.ConvCfg.Kh=1 in task 0"},
      {"conv", {{"Common.ConvCfg.Kh", 3}}, 0, "unsupported: Common.ConvCfg.Kw=1 with Common.ConvCfg.Kh=3 in task 0"},
      {"relu", {{"NE.MACCfg.NonlinearMode", 3}}, 0, "unsupported: NE.MACCfg.NonlinearMode=3 in task 0"},
      {"sum", {{"PE.Cfg.OpMode", 4}}, 0, "unsupported: PE.Cfg.OpMode=4 in task 0"},
      {"concat", {{"Common.ConvCfg.Kw", 3}}, 1, "unsupported: Common.ConvCfg.Kw=3 in task 1"},
      {"conv", {{"Common.ConvCfg.Kw", 5}, {"Common.ConvCfg.Kh", 5}}, 0,
       "unsupported: a 5x5 (width x height) kernel (records show 1x1 and 3x3, and 1x9 at stride 1) in task 0"},
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
      {"conv", {{"Common.GroupConvCfg.NumGroups", 32}}, "Common.GroupConvCfg.NumGroups=32"},  // one chunk per group
      {"conv", {{"KernelDMASrc.CoeffDMAConfig[2].En", 0}}, "CoeffDMAConfig[2]"},            // §11.1 lanes
      {"conv", {{"NE.MACCfg.NonlinearMode", 2}}, "NE.MACCfg.NonlinearMode=2"},              // A3 off
      {"relu", {{"Common.ChCfg.InFmt", 1}}, "Common.ChCfg.InFmt=1"},                        // #6
      {"relu", {{"TileDMASrc.DMAConfig.En", 0}}, "TileDMASrc.DMAConfig.En=0"},              // #9
      {"relu", {{"TileDMASrc.Fmt.Interleave", 2}}, "TileDMASrc.Fmt.Interleave=2"},          // #10
      {"relu", {{"NE.MACCfg.MatrixBiasEn", 1}}, "NE.MACCfg.MatrixBiasEn=1"},                // #7
      {"relu", {{"NE.MACCfg.OpMode", 6}}, "NE.MACCfg.OpMode=6"},                            // §11.1 MACCfg
      {"relu", {{"NE.PostScale.PostScale", 0x7e00}}, "NE.PostScale.PostScale"},             // #13 NaN scale
      {"relu", {{"Header[9].KBE1", 1}}, "Header[9].KBE1=1"},                                // §11.1 Header
      {"relu", {{"PE.Cfg.OpMode", 1}}, ""},                              // §5: one source, PE.Cfg != 0
      {"relu", {{"Header[8].RBE1", 1}, {"Header[8].RBase1", 5}}, ""},    // §5: two sources, PE.Cfg = 0
      {"sigmoid", {{"NE.MACCfg.UnkBit20", 0}}, "NE.MACCfg.UnkBit20=0"},  // §11.1 bit 20 with the LUT
      {"gemm", {{"NE.MACCfg.BiasMode", 1}}, "CoeffBfrSize[0]"},          // a bias row the lanes lack
      {"sum", {{"PE.Cfg.OpMode", 5}}, "PE.Cfg.OpMode=5"},                // §11.3 #5
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.program) + ": " + c.changes[0].first + "=" + std::to_string(c.changes[0].second));
    for (const auto& e : errors_of(c.program, c.changes)) {
      EXPECT_EQ(e.rfind("unsupported: ", 0), 0u) << e;
      EXPECT_PRED_FORMAT2(::testing::IsSubstring, c.field, e);
      EXPECT_PRED_FORMAT2(::testing::IsSubstring, " in task 0", e);
    }
  }
}

// The general table reading applies to any table: node 16 of sigmoid.hwx's
// (x = 0, slot 20) changed from 0.5 to 0.25 is read like every other node.
TEST(SimReferenceRefusal, AnyLookupTableIsReadGenerally) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("sigmoid");
  auto t = sigmoid_table(p);
  t[20] = h(0.25);
  const uint64_t base = lane_offset(p, 0);
  const std::map<uint64_t, Fp16> lanes{{base, Fp16(t.begin(), t.end())}};
  const Fp16 in = padded(kRow, {h(0), h(0.25), h(-0.25), h(3)});
  run_both(
      p, regs_of(p), {{"image", in}}, {},
      [&](const Outcome& r) {
        EXPECT_TRUE(values_equal(r, map1(in, [&](uint16_t x) { return ref::sigmoid_lut(t, x); }), in));
      },
      lanes);
  EXPECT_EQ(ref::sigmoid_lut(t, h(0)), h(0.25));
  // A mode the evidence does not cover is refused, naming the slot.
  t[42] = 2;
  const std::map<uint64_t, Fp16> bad{{base, Fp16(t.begin(), t.end())}};
  for (const auto& e : errors_of("sigmoid", {}, 0, {}, bad)) EXPECT_EQ(e, "unsupported: LUT[42]=0x0002 (transform) in task 0");
}

// PE OpMode 2 = max(a, b), 3 = min(a, b): eiln's max kernel and
// mil-hwx-compiler's minimum records settled the former assumption A1.
TEST(SimReferenceRefusal, PeMaxAndMin) {
  ANE_REQUIRE_CORPUS();
  const auto p = load("sum");
  std::mt19937 rng(101);
  const Fp16 a = random_vector(rng, 64), b = random_vector(rng, 64);
  auto max = [](uint16_t x, uint16_t y) { return d(x) >= d(y) ? x : y; };
  auto min = [](uint16_t x, uint16_t y) { return d(x) <= d(y) ? x : y; };
  run_both(p, modified(p, {{"PE.Cfg.OpMode", 2}}), {{"image", a}, {"image2", b}}, {},
           [&](const Outcome& r) { EXPECT_TRUE(values_equal(r, map2(a, b, max), a)); });
  run_both(p, modified(p, {{"PE.Cfg.OpMode", 3}}), {{"image", a}, {"image2", b}}, {},
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

// gemm with weights that differ per output channel: lane g serves output
// channels 32g .. 32g+31 and weight (oc_local, ic) sits at byte
// 2 (ic * 32 + oc_local) (§11.2's guess A2, now the records' layout). Weights are
// nonzero only where ic = oc (mod 16), small integers: every sum is exact.
TEST(SimReferenceRefusal, GemmWeightLayout) {
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
  run_both(
      p, regs_of(p), {{"image", x.v}}, Options{},
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
