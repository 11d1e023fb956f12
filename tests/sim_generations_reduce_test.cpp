// H14 reductions from Apple's compiler (mil-hwx-compiler
// research/oracles/h14/h14norm_reduce_*, transcribed under
// tests/fixtures/oracles/h14/reduce: the H13 reduction sample's names under
// the H14 campaign's prefix, README there). Each record, assembled into a
// .hwx, runs on random inputs and must agree with the reduction of
// reduce_reference.h (the H13 records' reference and tolerance), or be
// refused by name.
#include <iostream>
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ane/fp16.h"
#include "ane/program.h"
#include "ane/sha256.h"
#include "ane/sim.h"
#include "packed_fixture.h"
#include "support.h"
#include "reduce_reference.h"

namespace ane {
namespace {

std::string name_of(const ::testing::TestParamInfo<std::string>& info) { return packed::test_name(info.param); }

// "0,2,3" as numbers.
std::vector<uint64_t> numbers(const std::string& text) {
  std::vector<uint64_t> out;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    out.push_back(std::stoull(text.substr(pos, comma - pos)));
    pos = comma + 1;
  }
  return out;
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
  if (!run.ok()) {
    EXPECT_EQ(run.error().message.rfind("unsupported: ", 0), 0u) << run.error().message;
    std::cout << "[ refused  ] " << fx->name << ": " << run.error().message << "\n";
    return;
  }
  const auto& y = run;
  std::vector<double> ref, mag;
  uint64_t n = 0;
  const std::string op = fx->params.at("operation");
  test::reference_reduce(op, shape, numbers(fx->params.at("axes")), x.data, ref, mag, n);
  const double worst = test::expect_reduce_outputs(op, n, ref, mag, y->data, fx->name);
  std::cout << "[ ran      ] " << fx->name << ": worst error " << fmt::format("{:.2f}", worst) << " of tolerance\n";
}

INSTANTIATE_TEST_SUITE_P(Records, H14Reduce, ::testing::ValuesIn(packed::operation_fixture_files("reduce")), name_of);

}  // namespace
}  // namespace ane
