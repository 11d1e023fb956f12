// eiln's Apple-compiled op kernels (../shared/corpus/anec: [1,1,2560,1600]
// fp16 tensors) through the simulator, side by side with what a user would
// write instead: plain C++ loops doing numpy's job on the same fp16 data
// (convert to fp32, compute with <cmath>, round back to fp16).
//   ops/tanh      1 NE task (the tanh table)
//   ops/add       1 PE task
//   ops/softmax   5 tasks: PE max to L2, PE (x - max) log2(e), exp2 table,
//                 PE 1/sum, PE multiply (rows of 1600)
// Counters: Melem/s of the simulator and of the loops, and their ratio
// (simulator time / loop time: how many times slower the simulation is).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "ane/anec.h"
#include "ane/fp16.h"
#include "ane/sim.h"

#ifndef LIBANE_SHARED_DIR
#define LIBANE_SHARED_DIR "../shared"
#endif

namespace {

constexpr uint32_t kRows = 2560, kCols = 1600;
constexpr uint64_t kN = uint64_t{kRows} * kCols;

std::string anec_path(const char* f) {
  const char* env = std::getenv("LIBANE_SHARED_DIR");
  return std::string(env && *env ? env : LIBANE_SHARED_DIR) + "/corpus/anec/" + f;
}

std::vector<uint16_t> random_fp16(uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<uint16_t> v(kN);
  for (auto& x : v) x = ane::float_to_fp16(u(rng));
  return v;
}

// The numpy-equivalent loops.
void ref_tanh(const std::vector<uint16_t>& x, std::vector<uint16_t>& y) {
  for (uint64_t i = 0; i < kN; ++i) y[i] = ane::float_to_fp16(std::tanh(ane::fp16_to_float(x[i])));
}
void ref_add(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b, std::vector<uint16_t>& y) {
  for (uint64_t i = 0; i < kN; ++i) y[i] = ane::float_to_fp16(ane::fp16_to_float(a[i]) + ane::fp16_to_float(b[i]));
}
void ref_softmax(const std::vector<uint16_t>& x, std::vector<uint16_t>& y) {
  std::vector<float> row(kCols);
  for (uint32_t r = 0; r < kRows; ++r) {
    const uint16_t* in = x.data() + uint64_t{r} * kCols;
    float m = -INFINITY, sum = 0;
    for (uint32_t i = 0; i < kCols; ++i) m = std::max(m, ane::fp16_to_float(in[i]));
    for (uint32_t i = 0; i < kCols; ++i) sum += row[i] = std::exp(ane::fp16_to_float(in[i]) - m);
    for (uint32_t i = 0; i < kCols; ++i) y[uint64_t{r} * kCols + i] = ane::float_to_fp16(row[i] / sum);
  }
}

template <typename F>
double best_of_three_seconds(F&& f) {
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

void bm_op(benchmark::State& state, const char* file, int inputs) {
  auto program = ane::open_program(anec_path(file));
  if (!program) {
    state.SkipWithError(("corpus kernel not found: " + program.error().str()).c_str());
    return;
  }
  auto sim = ane::sim::Simulator::create(*program);
  if (!sim) {
    state.SkipWithError(sim.error().str().c_str());
    return;
  }
  std::vector<std::vector<uint16_t>> in;
  for (int i = 0; i < inputs; ++i) {
    in.push_back(random_fp16(10 + i, -8, 8));
    ane::sim::Tensor t;
    t.nchw = {1, 1, kRows, kCols};
    t.data = in.back();
    if (auto s = sim->set_input("src" + std::to_string(i), t); !s) {
      state.SkipWithError(s.error().str().c_str());
      return;
    }
  }
  std::vector<uint16_t> y(kN);
  const std::string name = file;
  const double loops = best_of_three_seconds([&] {
    if (name.find("tanh") != std::string::npos) ref_tanh(in[0], y);
    if (name.find("add") != std::string::npos) ref_add(in[0], in[1], y);
    if (name.find("softmax") != std::string::npos) ref_softmax(in[0], y);
  });
  benchmark::DoNotOptimize(y.data());
  double total = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    auto s = sim->run();
    total += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!s) {
      state.SkipWithError(s.error().str().c_str());
      return;
    }
  }
  const double per = total / double(state.iterations());
  state.counters["sim_Melem_s"] = double(kN) / per / 1e6;
  state.counters["loops_Melem_s"] = double(kN) / loops / 1e6;
  state.counters["sim_over_loops"] = per / loops;
  state.counters["peak_bytes"] = static_cast<double>(sim->machine().peak_bytes());
}

}  // namespace

BENCHMARK_CAPTURE(bm_op, tanh, "unary/tanh.bin", 1)->Name("ops/tanh")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(bm_op, add, "binary/add.bin", 2)->Name("ops/add")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(bm_op, softmax, "activation/softmax.bin", 1)
    ->Name("ops/softmax")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
