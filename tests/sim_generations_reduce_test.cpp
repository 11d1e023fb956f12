// H14 reductions from Apple's compiler (mil-hwx-compiler
// research/oracles/h14/h14norm_reduce_*, transcribed under
// tests/fixtures/oracles/h14/reduce: the H13 reduction sample's names under
// the H14 campaign's prefix, README there). Each record, assembled into a
// .hwx, runs on random inputs and must agree with the reduction of
// reduce_reference.h (the H13 records' reference and tolerance), or be
// refused by name.
#include <iostream>
#include <random>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ane/fp16.h"
#include "ane/program.h"
#include "ane/sha256.h"
#include "ane/sim.h"
#include "../src/sim/packed_view.h"
#include "oracle_fixture.h"
#include "packed_fixture.h"
#include "support.h"
#include "reduce_reference.h"

namespace ane {
namespace {

// The record the simulator refuses, for a word docs/simulator.md names
// (InDepth 8, as on H13). Every other record runs,
// h14norm_reduce_max_ax2_1x32x4x4 by rule U12 (its last task leaves L2Cfg
// unwritten after the task before wrote 4), h14norm_reduce_mean_ax2_1x128x16x16
// by rule U2 (Cin unwritten: 16, the H rows it reads as channels).
bool reduce_refused(const std::string& name) {
  static const std::set<std::string> kRefused = {"h14norm_reduce_sum_ax1_2_3_1x64x8x8"};
  return kRefused.count(name) != 0;
}

class H14Reduce : public ::testing::TestWithParam<std::string> {};

TEST_P(H14Reduce, SimulatorRunsTheProgramOrRefusesByName) {
  auto fx = packed::load(GetParam());
  ASSERT_TRUE(fx.ok()) << fx.error().str();
  EXPECT_EQ(fx->target, "h14");
  // No weights: the constant section is zeros.
  if (fx->constant.present) {
    EXPECT_EQ(sha256_hex(Bytes(fx->constant.size, 0)), fx->constant.sha256);
  }
  auto program = parse_program(packed::assemble_hwx(*fx), fx->file);
  ASSERT_TRUE(program.ok()) << program.error().str();
  ASSERT_FALSE(fx->tensors.empty());
  const auto& in = fx->tensors.front();
  ASSERT_EQ(in.shape.size(), 4u);
  const std::array<uint64_t, 4> shape{in.shape[0], in.shape[1], in.shape[2], in.shape[3]};

  std::mt19937 rng(23);
  std::uniform_real_distribution<float> u(-4, 4);
  sim::Tensor x;
  for (int k = 0; k < 4; ++k) x.nchw[k] = static_cast<uint32_t>(shape[k]);
  x.data.resize(x.elements());
  for (auto& v : x.data) v = float_to_fp16(u(rng));
  auto run = test::run_one_input(*program, x);
  if (reduce_refused(fx->name)) {
    ASSERT_FALSE(run.ok()) << fx->name << " ran, but the simulator does not claim it";
  } else {
    ASSERT_TRUE(run.ok()) << run.error().str();
  }
  if (!run.ok()) {
    EXPECT_EQ(run.error().message.rfind("unsupported: ", 0), 0u) << run.error().message;
    std::cout << "[ refused  ] " << fx->name << ": " << run.error().message << "\n";
    return;
  }
  const auto& y = run;
  std::vector<double> ref, mag;
  uint64_t n = 0;
  const std::string op = fx->params.at("operation");
  test::reference_reduce(op, shape, packed::number_list(fx->params.at("axes")), x.data, ref, mag, n);
  const double worst = test::expect_reduce_outputs(op, n, ref, mag, y->data, fx->name);
  std::cout << "[ ran      ] " << fx->name << ": worst error " << fmt::format("{:.2f}", worst) << " of tolerance\n";
}

// Rule U11: the L2 group strides H13's planner reads from its unnamed words
// L2 +0x18 and +0x44 are H14's words at the same slots. The view of
// h14norm_reduce_max_ax2_1x32x4x4's grouped reduction (task 1) holds what
// H13's record of the same MIL writes there (tests/fixtures/oracles/h13/reduce).
TEST(H14ReduceView, GroupStridesInL2AreH13sWords) {
  const std::string root = std::string(LIBANE_SOURCE_DIR) + "/tests/fixtures/oracles/";
  auto fx = packed::load(root + "h14/reduce/h14norm_reduce_max_ax2_1x32x4x4.fx");
  ASSERT_TRUE(fx.ok()) << fx.error().str();
  auto h13 = oracle::load_fixture(root + "h13/reduce/reduce_probe_max_ax2_1x32x4x4.fx");
  ASSERT_TRUE(h13.ok()) << h13.error().message;
  auto program = parse_program(packed::assemble_hwx(*fx), fx->file);
  ASSERT_TRUE(program.ok()) << program.error().str();
  ASSERT_GE(program->tasks.size(), 2u);
  sim::detail::EarlierWrites earlier;
  ASSERT_TRUE(sim::detail::packed_view(*program, program->tasks[0], earlier).ok());
  auto view = sim::detail::packed_view(*program, program->tasks[1], earlier);
  ASSERT_TRUE(view.ok()) << view.error().str();
  for (uint32_t address : {0x4818u, 0x4844u})
    EXPECT_EQ(view->h13.word(address), h13->tasks.at(1).word(address)) << std::hex << address;
}

INSTANTIATE_TEST_SUITE_P(Records, H14Reduce, ::testing::ValuesIn(packed::operation_fixture_files("reduce")), packed::ParamName());

}  // namespace
}  // namespace ane
