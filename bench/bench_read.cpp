// Benchmarks of the read path on the Apple-compiled corpus:
//   read_hwx/<file>      container parse only
//   decode_tasks/<file>  read_hwx + decode_tasks (what every tool does first)
//   dump_json/<file>     JSON rendering of an already parsed program
// plus task_codec, an encode_task + decode_task round of one task in the
// default v4.2.1 stream layout (no corpus needed).
//
// The corpus is <shared>/corpus/hwx/*.hwx, where <shared> is the environment
// variable LIBANE_SHARED_DIR when set, else the LIBANE_SHARED_DIR the build
// was configured with (../shared next to the checkout). Without it the corpus
// benchmarks are skipped with a message.
//
// Each file is read into memory once, before any timing. Rates: bytes/s counts
// the input file's bytes, items/s counts tasks.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>

#include "ane/bytes.h"
#include "ane/dump.h"
#include "ane/hwx.h"
#include "ane/registers.h"
#include "ane/task.h"

#ifndef LIBANE_SHARED_DIR
#define LIBANE_SHARED_DIR "../shared"
#endif

namespace {

namespace fs = std::filesystem;

struct CorpusFile {
  std::string name;  // "conv.hwx"
  ane::Bytes bytes;
  size_t tasks = 0;
};

std::string shared_dir() {
  const char* env = std::getenv("LIBANE_SHARED_DIR");
  return env && *env ? env : LIBANE_SHARED_DIR;
}

// Loads every corpus file that parses; explains on stderr what it skips.
std::vector<CorpusFile> load_corpus() {
  std::vector<CorpusFile> out;
  const fs::path dir = fs::path(shared_dir()) / "corpus" / "hwx";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    std::fprintf(stderr,
                 "bench: corpus not found at %s: skipping the corpus benchmarks "
                 "(set LIBANE_SHARED_DIR to the directory holding corpus/)\n",
                 dir.string().c_str());
    return out;
  }
  std::vector<fs::path> paths;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file() && e.path().extension() == ".hwx") paths.push_back(e.path());
  std::sort(paths.begin(), paths.end());
  for (const auto& path : paths) {
    auto bytes = ane::read_file(path.string());
    if (!bytes) {
      std::fprintf(stderr, "bench: skipping %s: %s\n", path.string().c_str(), bytes.error().str().c_str());
      continue;
    }
    auto program = ane::parse_program(*bytes, path.string());
    if (!program) {
      std::fprintf(stderr, "bench: skipping %s: %s\n", path.string().c_str(), program.error().str().c_str());
      continue;
    }
    out.push_back({path.filename().string(), std::move(bytes).value(), program->tasks.size()});
  }
  if (out.empty()) std::fprintf(stderr, "bench: no usable .hwx file in %s\n", dir.string().c_str());
  return out;
}

void set_rates(benchmark::State& state, size_t bytes, size_t items) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
  if (items) state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(items));
}

void bm_read_hwx(benchmark::State& state, const CorpusFile* f) {
  for (auto _ : state) {
    auto file = ane::read_hwx(f->bytes);
    if (!file) {
      state.SkipWithError(file.error().str().c_str());
      break;
    }
    benchmark::DoNotOptimize(file);
  }
  set_rates(state, f->bytes.size(), 0);
}

void bm_decode_tasks(benchmark::State& state, const CorpusFile* f) {
  for (auto _ : state) {
    auto file = ane::read_hwx(f->bytes);
    if (!file) {
      state.SkipWithError(file.error().str().c_str());
      break;
    }
    auto tasks = ane::decode_tasks(*file);
    if (!tasks) {
      state.SkipWithError(tasks.error().str().c_str());
      break;
    }
    benchmark::DoNotOptimize(tasks);
  }
  set_rates(state, f->bytes.size(), f->tasks);
  state.counters["tasks"] = static_cast<double>(f->tasks);
}

void bm_dump_json(benchmark::State& state, const CorpusFile* f) {
  auto program = ane::parse_program(f->bytes, f->name);
  if (!program) {
    state.SkipWithError(program.error().str().c_str());
    return;
  }
  size_t json_bytes = 0;
  for (auto _ : state) {
    std::string json = ane::dump_json(*program);
    json_bytes = json.size();
    benchmark::DoNotOptimize(json);
  }
  set_rates(state, f->bytes.size(), f->tasks);
  state.counters["json_bytes"] = static_cast<double>(json_bytes);
}

// One task in the default stream layout with a few representative fields set.
ane::RegisterImage synthetic_task() {
  ane::RegisterImage regs;
  regs.header[0] = 0x02000000;  // Header[0]: EON, single task
  const std::pair<const char*, uint32_t> fields[] = {
      {"Common.InDim.Win", 64},   {"Common.InDim.Hin", 32},  {"Common.Cin.Cin", 16},
      {"Common.Cout.Cout", 16},   {"Common.OutDim.Wout", 64}, {"Common.OutDim.Hout", 32},
      {"Common.ChCfg.InFmt", 2},  {"Common.ChCfg.OutFmt", 2},
  };
  for (const auto& [name, value] : fields) (void)regs.set(name, value);
  // Something non-zero in every register of every stream.
  for (const auto& s : ane::default_stream_layout())
    for (uint32_t k = 0; k < s.count; ++k)
      if (!regs.written(s.address + 4 * k)) regs.set_word(s.address + 4 * k, 0x01010101u * (k + 1));
  return regs;
}

void bm_task_codec(benchmark::State& state) {
  const ane::RegisterImage regs = synthetic_task();
  const auto layout = ane::default_stream_layout();
  const ane::Bytes reference = ane::encode_task(regs, layout);
  {
    auto t = ane::decode_task(reference, 0);
    if (!t || ane::encode_task(t->regs, t->streams) != reference) {
      state.SkipWithError("decode_task(encode_task(x)) does not encode back to the same bytes");
      return;
    }
  }
  for (auto _ : state) {
    ane::Bytes bytes = ane::encode_task(regs, layout);
    auto t = ane::decode_task(bytes, 0);
    benchmark::DoNotOptimize(bytes);
    benchmark::DoNotOptimize(t);
  }
  set_rates(state, reference.size(), 1);
  state.counters["task_bytes"] = static_cast<double>(reference.size());
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  // Registered benchmarks keep pointers into `corpus`: it outlives the run.
  static const std::vector<CorpusFile> corpus = load_corpus();
  for (const auto& f : corpus) benchmark::RegisterBenchmark(("read_hwx/" + f.name).c_str(), bm_read_hwx, &f);
  for (const auto& f : corpus)
    benchmark::RegisterBenchmark(("decode_tasks/" + f.name).c_str(), bm_decode_tasks, &f);
  for (const auto& f : corpus) benchmark::RegisterBenchmark(("dump_json/" + f.name).c_str(), bm_dump_json, &f);
  benchmark::RegisterBenchmark("task_codec/default_layout", bm_task_codec);

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
