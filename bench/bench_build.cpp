// hwx-build's compile time: plist parse + lowering + container + the
// read-back check, for every example network and for the corpus gemm pair
// (512 x 512 fp16 weights, 512 KiB of kernel data).
//   build/<name>   load_network + compile_network, from files already cached by the OS
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <benchmark/benchmark.h>

#include "ane/compiler.h"

#ifndef LIBANE_SHARED_DIR
#define LIBANE_SHARED_DIR "../shared"
#endif
#ifndef LIBANE_SOURCE_DIR
#define LIBANE_SOURCE_DIR "."
#endif

namespace {

namespace fs = std::filesystem;

void BM_Build(benchmark::State& state, const std::string& plist) {
  uint64_t bytes = 0;
  for (auto _ : state) {
    auto net = ane::load_network(plist);
    if (!net) {
      state.SkipWithError(net.error().str().c_str());
      return;
    }
    auto p = ane::compile_network(*net);
    if (!p) {
      state.SkipWithError(p.error().str().c_str());
      return;
    }
    bytes = p->bytes.size();
    benchmark::DoNotOptimize(p->bytes.data());
  }
  state.counters["hwx_bytes"] = static_cast<double>(bytes);
}

int register_builds() {
  std::vector<std::pair<std::string, std::string>> plists;
  const fs::path examples = fs::path(LIBANE_SOURCE_DIR) / "examples" / "networks";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(examples, ec))
    if (fs::exists(e.path() / "net.plist")) plists.emplace_back(e.path().filename().string(), (e.path() / "net.plist").string());
  const char* shared = std::getenv("LIBANE_SHARED_DIR");
  const fs::path gemm = fs::path(shared ? shared : LIBANE_SHARED_DIR) / "corpus" / "pairs" / "gemm" / "net.plist";
  if (fs::exists(gemm)) plists.emplace_back("pair_gemm_512x512", gemm.string());
  std::sort(plists.begin(), plists.end());
  for (const auto& [name, path] : plists)
    benchmark::RegisterBenchmark(("build/" + name).c_str(), BM_Build, path)->Unit(benchmark::kMicrosecond);
  return 0;
}

const int registered = register_builds();

}  // namespace
