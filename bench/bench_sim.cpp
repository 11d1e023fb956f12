// Simulator throughput against the BLAS it runs on, side by side in one run:
//   sim_conv/512x512x4096   a hand-made 1x1 convolution task (Cin = Cout = 512,
//                           64x64 pixels) on a Machine: tile DMA in with fp16 ->
//                           fp32, kernel DMA, MAC, round + scatter to fp16
//   sim_conv_ordered/...    the same with acc=fp32-ordered (input-channel order,
//                           blocked loops instead of the BLAS)
//   sim_conv3x3/64x64x64x64 a 3x3 "same" convolution 64 -> 64 on 64x64 pixels,
//                           against im2col + one cblas_sgemm on the CPU (the
//                           "blas" figures of this line are that pair)
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

#include "ane/conv_kernel.h"
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
// 32 output channels (OCGSize 5), as gemm.hwx lays them out; or, with k = 3,
// the 3x3 "same" convolution 64 -> 64 (padding 1, OCGSize 2, lanes as
// ane/conv_kernel.h packs them).
ane::RegisterImage conv_task(uint32_t k = 1, uint32_t c = kC, uint64_t lane_bytes = 0x8000) {
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
    set(r, "KernelDMASrc.CoeffBaseAddr[" + std::to_string(i) + "].Addr", static_cast<uint32_t>(i * lane_bytes >> 6));
    set(r, "KernelDMASrc.CoeffBfrSize[" + std::to_string(i) + "].MemBfrSize", static_cast<uint32_t>(lane_bytes >> 6));
  }
  for (const char* f : {"Common.InDim.Win", "Common.OutDim.Wout"}) set(r, f, kW);
  for (const char* f : {"Common.InDim.Hin", "Common.OutDim.Hout"}) set(r, f, kH);
  set(r, "Common.ConvCfg.Kw", k);
  set(r, "Common.ConvCfg.Kh", k);
  set(r, "Common.ConvCfg.Px", k / 2);
  set(r, "Common.ConvCfg.Py", k / 2);
  for (const char* f : {"Common.InDepth.Din", "Common.OutDepth.Dout",
                        "Common.ConvCfg.Sx", "Common.ConvCfg.Sy", "Common.ConvCfg.Ox", "Common.ConvCfg.Oy",
                        "Common.GroupConvCfg.NumGroups", "TileDMASrc.DMAConfig.En", "TileDMADst.DMAConfig.En",
                        "NE.MACCfg.UnkBit20"})
    set(r, f, 1);
  set(r, "Common.ChCfg.InFmt", 2);
  set(r, "Common.ChCfg.OutFmt", 2);
  set(r, "Common.Cin.Cin", c);
  set(r, "Common.Cout.Cout", c);
  set(r, "Common.ConvCfg.OCGSize", ane::compiler_conv_ocg(c, false, k == 1 ? 1 : kH, k == 1 ? 1 : kW));
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

// Seconds per call of `fn`, best of five runs of at least 50 ms each.
template <typename Fn>
double best_seconds(Fn&& fn) {
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    int iters = 0;
    const auto t0 = std::chrono::steady_clock::now();
    double elapsed = 0;
    do {
      fn();
      ++iters;
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    } while (elapsed < 0.05);
    best = std::min(best, elapsed / iters);
  }
  return best;
}

// Seconds per cblas_sgemm of the shape (M x K) * (K x N).
double sgemm_seconds(int M, int N, int K) {
  std::vector<float> a(size_t(M) * K, 0.5f), b(size_t(K) * N, 0.25f), c(size_t(M) * N);
  const double t = best_seconds([&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, a.data(), K, b.data(), N, 0.0f, c.data(),
                N);
  });
  benchmark::DoNotOptimize(c.data());
  return t;
}

// Total seconds `fn` took over the benchmark's iterations (its setup, done
// before, is not timed).
template <typename Fn>
double timed_iterations(benchmark::State& state, Fn&& fn) {
  double total = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    auto result = fn();
    total += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    benchmark::DoNotOptimize(result);
  }
  return total;
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
  const double sim_total = timed_iterations(state, [&] { return m.run_task(task, 0); });
  report(state, macs, sim_total, blas, m.peak_bytes(), m.slot_bytes());
}

// The same 3x3 convolution two ways: the simulator's task (window gather +
// one sgemm, fp16 in and out) and what a user would write on the CPU: im2col
// of the fp32 input, then one cblas_sgemm (64 x 4096 x 576).
constexpr uint32_t kC3 = 64;

void im2col3x3(const float* x, uint32_t c, uint32_t h, uint32_t w, float* col) {
  for (uint32_t ic = 0; ic < c; ++ic)
    for (uint32_t ky = 0; ky < 3; ++ky)
      for (uint32_t kx = 0; kx < 3; ++kx, col += uint64_t{h} * w)
        for (uint32_t oy = 0; oy < h; ++oy)
          for (uint32_t ox = 0; ox < w; ++ox) {
            const int iy = int(oy) + int(ky) - 1, ix = int(ox) + int(kx) - 1;
            col[oy * w + ox] = (iy < 0 || ix < 0 || iy >= int(h) || ix >= int(w)) ? 0.0f : x[(ic * h + iy) * w + ix];
          }
}

void bm_sim_conv3x3(benchmark::State& state) {
  ane::ConvKernelShape shape;
  shape.cin = shape.cout = kC3;
  shape.kh = shape.kw = 3;
  shape.ocg = ane::compiler_conv_ocg(kC3, false, kH, kW);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-0.1f, 0.1f);
  ane::ConvWeights w;
  for (uint64_t i = 0; i < shape.outputs() * shape.reduction(); ++i) w.weights.push_back(ane::float_to_fp16(dist(rng)));
  auto packed = ane::pack_conv_kernel(shape, w);
  if (!packed) {
    state.SkipWithError(packed.error().str().c_str());
    return;
  }
  ane::sim::Machine m;
  m.set_slot(1, packed->bytes);
  m.set_slot(5, random_fp16(kC3 * kPlane, 4));
  m.set_slot(4, kC3 * kPlane);
  const ane::RegisterImage task = conv_task(3, kC3, packed->lane_size[0]);
  if (auto s = m.run_task(task, 0); !s) {
    state.SkipWithError(s.error().str().c_str());
    return;
  }
  // The CPU alternative, timed the same way: im2col + sgemm, best of several.
  const uint64_t hw = uint64_t{kH} * kW, red = uint64_t{kC3} * 9;
  std::vector<float> x(kC3 * hw, 0.5f), col(red * hw), wf(kC3 * red, 0.25f), y(kC3 * hw);
  const double cpu = best_seconds([&] {
    im2col3x3(x.data(), kC3, kH, kW, col.data());
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kC3, int(hw), int(red), 1.0f, wf.data(), int(red),
                col.data(), int(hw), 0.0f, y.data(), int(hw));
  });
  benchmark::DoNotOptimize(y.data());
  const double sim_total = timed_iterations(state, [&] { return m.run_task(task, 0); });
  report(state, double(kC3) * red * hw, sim_total, cpu, m.peak_bytes(), m.slot_bytes());
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
  const double sim_total = timed_iterations(state, [&] { return sim->run(); });
  report(state, macs, sim_total, blas, sim->machine().peak_bytes(), sim->machine().slot_bytes());
}

}  // namespace

BENCHMARK(bm_sim_conv)->Name("sim_conv/512x512x4096")->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(bm_sim_conv)->Name("sim_conv_ordered/512x512x4096")->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(bm_sim_conv3x3)->Name("sim_conv3x3/64x64x64x64")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(bm_sim_gemm_corpus)->Name("sim_gemm/corpus")->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_MAIN();
