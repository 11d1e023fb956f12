// Simulator throughput against the BLAS it runs on, side by side in one run:
//   sim_conv/512x512x4096   a hand-made 1x1 convolution task (Cin = Cout = 512,
//                           64x64 pixels) on a Machine: tile DMA in with fp16 ->
//                           fp32, kernel DMA, MAC, round + scatter to fp16
//   sim_conv_ordered/...    the same with acc=fp32-ordered (input-channel order,
//                           blocked loops instead of the BLAS)
//   sim_gemm/corpus         the Apple-compiled gemm.hwx (512x512, one pixel)
// Each reports its GMAC/s, the GMAC/s of one cblas_sgemm of the same shape
// measured in the same process just before it, their ratio (target >= 0.7),
// and the machine's peak memory next to the program's own slot bytes
// (buffers + weights).
//
// The conv task is built field by field through RegisterImage::set, so it
// depends only on the register database, not on the compiler.
#include <cblas.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "ane/dump.h"
#include "ane/fp16.h"
#include "ane/registers.h"
#include "ane/sim.h"

#ifndef LIBANE_SHARED_DIR
#define LIBANE_SHARED_DIR "../shared"
#endif

namespace {

constexpr uint32_t kC = 512, kH = 64, kW = 64;
constexpr uint64_t kRow = 128, kPlane = kRow * kH;  // bytes: roundup(2W, 64), row * H

void set(ane::RegisterImage& r, const std::string& name, uint32_t v) {
  if (auto s = r.set(name, v); !s) {
    std::fprintf(stderr, "bench_sim: %s\n", s.error().str().c_str());
    std::exit(1);
  }
}

// A 1x1 convolution Cin = Cout = 512 over H x W pixels, weights in 16 lanes of
// 32 output channels (OCGSize 5), as gemm.hwx lays them out.
ane::RegisterImage conv_task() {
  ane::RegisterImage r;
  set(r, "Header[8].RBase0", 5);
  set(r, "Header[8].RBE0", 1);
  set(r, "Header[8].WBase", 4);
  set(r, "Header[8].WBE", 1);
  set(r, "Header[8].ENE", 1);                // a neural-engine task
  set(r, "L2.SourceCfg.SourceType", 2);      // operand and result through tile DMA
  set(r, "L2.ResultCfg.ResultType", 2);
  set(r, "Header[9].KBase0", 1);
  set(r, "Header[9].KBE0", 1);
  for (int i = 0; i < 16; ++i) {
    set(r, "KernelDMASrc.CoeffDMAConfig[" + std::to_string(i) + "].En", 1);
    set(r, "KernelDMASrc.CoeffBaseAddr[" + std::to_string(i) + "].Addr", i * 0x8000 >> 6);
    set(r, "KernelDMASrc.CoeffBfrSize[" + std::to_string(i) + "].MemBfrSize", 0x8000 >> 6);
  }
  for (const char* f : {"Common.InDim.Win", "Common.OutDim.Wout"}) set(r, f, kW);
  for (const char* f : {"Common.InDim.Hin", "Common.OutDim.Hout"}) set(r, f, kH);
  for (const char* f : {"Common.InDepth.Din", "Common.OutDepth.Dout", "Common.ConvCfg.Kw", "Common.ConvCfg.Kh",
                        "Common.ConvCfg.Sx", "Common.ConvCfg.Sy", "Common.ConvCfg.Ox", "Common.ConvCfg.Oy",
                        "Common.GroupConvCfg.NumGroups", "TileDMASrc.DMAConfig.En", "TileDMADst.DMAConfig.En",
                        "NE.MACCfg.UnkBit20"})
    set(r, f, 1);
  set(r, "Common.ChCfg.InFmt", 2);
  set(r, "Common.ChCfg.OutFmt", 2);
  set(r, "Common.Cin.Cin", kC);
  set(r, "Common.Cout.Cout", kC);
  set(r, "Common.ConvCfg.OCGSize", 5);
  for (const char* b : {"TileDMASrc", "TileDMADst"}) {
    const std::string B = b;
    set(r, B + ".Fmt.FmtMode", 1);
    set(r, B + ".Fmt.Truncate", 3);
    set(r, B + ".Fmt.MemFmt", 2);
    set(r, B + ".Fmt.Interleave", 1);
  }
  set(r, "TileDMASrc.RowStride.Stride", kRow >> 6);
  set(r, "TileDMASrc.PlaneStride.PlaneStride", kPlane >> 6);
  set(r, "TileDMADst.RowStride.RowStride", kRow >> 6);
  set(r, "TileDMADst.PlaneStride.PlaneStride", kPlane >> 6);
  set(r, "NE.KernelCfg.KernelFmt", 2);
  set(r, "NE.PostScale.PostScale", ane::kFp16One);
  return r;
}

std::vector<uint8_t> random_fp16(uint64_t bytes, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<uint8_t> out(bytes);
  for (uint64_t i = 0; i + 1 < bytes; i += 2) {
    const uint16_t h = ane::float_to_fp16(dist(rng));
    out[i] = static_cast<uint8_t>(h);
    out[i + 1] = static_cast<uint8_t>(h >> 8);
  }
  return out;
}

// Seconds per cblas_sgemm of the shape (M x K) * (K x N), best of a few runs.
double sgemm_seconds(int M, int N, int K) {
  std::vector<float> a(size_t(M) * K, 0.5f), b(size_t(K) * N, 0.25f), c(size_t(M) * N);
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    int iters = 0;
    const auto t0 = std::chrono::steady_clock::now();
    double elapsed = 0;
    do {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, a.data(), K, b.data(), N, 0.0f,
                  c.data(), N);
      ++iters;
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    } while (elapsed < 0.05);
    best = std::min(best, elapsed / iters);
  }
  benchmark::DoNotOptimize(c.data());
  return best;
}

// Counters: GMAC/s of the simulator and of the BLAS, their ratio, memory.
void report(benchmark::State& state, double macs, double sim_seconds, double blas_seconds, uint64_t peak,
            uint64_t program) {
  const double per_iter = sim_seconds / double(state.iterations());
  state.counters["sim_GMACs"] = macs / per_iter / 1e9;
  state.counters["blas_GMACs"] = macs / blas_seconds / 1e9;
  state.counters["ratio"] = blas_seconds / per_iter;
  state.counters["peak_bytes"] = static_cast<double>(peak);
  state.counters["program_bytes"] = static_cast<double>(program);
  state.counters["peak_over_program"] = static_cast<double>(peak) / static_cast<double>(program);
}

// state.range(0): 0 = default numerics (acc=fp32, one sgemm), 1 = acc=fp32-ordered.
void bm_sim_conv(benchmark::State& state) {
  ane::sim::Options opts;
  opts.assume.ocg_layout = true;  // random (non-uniform) weights in OCGSize-5 lanes: A2 order
  if (state.range(0) == 1) opts.numerics.accumulator = ane::sim::Numerics::Accumulator::Fp32Ordered;
  ane::sim::Machine m(opts);
  m.set_slot(1, random_fp16(16 * 0x8000, 1));
  m.set_slot(5, random_fp16(kC * kPlane, 2));
  m.set_slot(4, kC * kPlane);
  const ane::RegisterImage task = conv_task();
  if (auto s = m.run_task(task, 0); !s) {
    state.SkipWithError(s.error().str().c_str());
    return;
  }
  const double macs = double(kC) * kC * kH * kW;
  const double blas = sgemm_seconds(kC, kH * kW, kC);
  double sim_total = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    auto s = m.run_task(task, 0);
    sim_total += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    benchmark::DoNotOptimize(s);
  }
  report(state, macs, sim_total, blas, m.peak_bytes(), m.slot_bytes());
}

void bm_sim_gemm_corpus(benchmark::State& state) {
  const char* env = std::getenv("LIBANE_SHARED_DIR");
  const std::string path = std::string(env && *env ? env : LIBANE_SHARED_DIR) + "/corpus/hwx/gemm.hwx";
  auto program = ane::open_program(path);
  if (!program) {
    state.SkipWithError(("corpus gemm.hwx not found: " + program.error().str()).c_str());
    return;
  }
  auto sim = ane::sim::Simulator::create(*program);
  if (!sim) {
    state.SkipWithError(sim.error().str().c_str());
    return;
  }
  ane::sim::Tensor x;
  x.nchw = {1, 512, 1, 1};
  x.data.assign(512, 0x4200);  // 3.0
  if (auto s = sim->set_input("image", x); !s) {
    state.SkipWithError(s.error().str().c_str());
    return;
  }
  const double macs = 512.0 * 512.0;
  const double blas = sgemm_seconds(512, 1, 512);
  double sim_total = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    auto s = sim->run();
    sim_total += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    benchmark::DoNotOptimize(s);
  }
  report(state, macs, sim_total, blas, sim->machine().peak_bytes(), sim->machine().slot_bytes());
}

}  // namespace

BENCHMARK(bm_sim_conv)->Name("sim_conv/512x512x4096")->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(bm_sim_conv)->Name("sim_conv_ordered/512x512x4096")->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(bm_sim_gemm_corpus)->Name("sim_gemm/corpus")->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_MAIN();
