// Apple-compiled reductions (macOS 26 ANECompiler, H13) from the public
// records of joshuaswarren/mil-hwx-compiler, transcribed into
// tests/fixtures/oracles/h13/reduce: every tenth name of the sorted reduction
// campaign (README there). For every record the transcription is checked
// (stream headers, task sizes), its all-zero constant section hashes to the
// record's SHA-256, and the simulator either agrees with a reduction written
// here (sum, mean or max over the record's axes) or refuses by name.
#include <cmath>
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ane/anec.h"
#include "ane/fp16.h"
#include "ane/registers.h"
#include "ane/sha256.h"
#include "ane/sim.h"
#include "oracle_fixture.h"
#include "reduce_reference.h"

namespace ane {
namespace {

const std::string kReduceDir = std::string(LIBANE_SOURCE_DIR) + "/tests/fixtures/oracles/h13/reduce";

class OracleReduce : public ::testing::TestWithParam<std::string> {};

TEST_P(OracleReduce, TranscriptionAgreesWithTheRecord) {
  auto f = oracle::load_fixture(GetParam());
  ASSERT_TRUE(f.ok()) << f.error().message;
  ASSERT_NO_FATAL_FAILURE(oracle::expect_tasks_match_record(*f));
  // No weights: the constant section is zeros.
  EXPECT_EQ(sha256_hex(Bytes(f->constant_size, 0)), f->constant_sha256);
}

TEST_P(OracleReduce, SimulatorRunsTheProgramOrRefusesByName) {
  auto f = oracle::load_fixture(GetParam());
  ASSERT_TRUE(f.ok()) << f.error().message;
  const Bytes image = oracle::anec_image(*f, Bytes(f->constant_size, 0));
  auto decoded = parse_program(image, f->name + ".anec");
  ASSERT_TRUE(decoded.ok()) << decoded.error().str();
  ASSERT_EQ(decoded->tasks.size(), f->tasks.size());
  const RegisterImage& first = decoded->tasks.front().regs;
  const RegisterImage& last = decoded->tasks.back().regs;
  const AnecDescriptor d = oracle::io_descriptor(*f, first.get(*RegisterDatabase::h13().find("Header[8].RBase0")),
                                                 last.get(*RegisterDatabase::h13().find("Header[8].WBase")));
  auto p = read_anec(image, f->name + ".anec", &d);
  ASSERT_TRUE(p.ok()) << p.error().str();
  auto sim = sim::Simulator::create(*p);
  ASSERT_TRUE(sim.ok()) << sim.error().str();
  const auto shape = f->tensors.at(0).shape;
  std::mt19937 rng(23);
  std::uniform_real_distribution<float> u(-4, 4);
  sim::Tensor x;
  x.nchw = {static_cast<uint32_t>(shape[0]), static_cast<uint32_t>(shape[1]), static_cast<uint32_t>(shape[2]),
            static_cast<uint32_t>(shape[3])};
  x.data.resize(x.elements());
  for (auto& v : x.data) v = float_to_fp16(u(rng));
  ASSERT_TRUE(sim->set_input("x", x).ok());
  auto run = sim->run();
  if (!run.ok()) {
    EXPECT_EQ(run.error().message.rfind("unsupported: ", 0), 0u) << run.error().message;
    std::cout << "[ refused  ] " << f->name << ": " << run.error().message << "\n";
    return;
  }
  auto y = sim->read_buffer("y");
  ASSERT_TRUE(y.ok()) << y.error().str();
  std::vector<double> ref, mag;
  uint64_t n = 0;
  test::reference_reduce(f->param("operation"), shape, f->param_list("axes"), x.data, ref, mag, n);
  const double worst = test::expect_reduce_outputs(f->param("operation"), n, ref, mag, y->data, f->name);
  std::cout << "[ ran      ] " << f->name << ": worst error " << fmt::format("{:.2f}", worst) << " of tolerance\n";
}

INSTANTIATE_TEST_SUITE_P(Records, OracleReduce, ::testing::ValuesIn(oracle::fixture_files(kReduceDir)), oracle::test_name);

}  // namespace
}  // namespace ane
