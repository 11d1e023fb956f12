// hwx-run: execute an Apple Neural Engine .hwx program on the register-level
// simulator and write its outputs as .npy files.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ane/dump.h"
#include "ane/fp16.h"
#include "ane/npy.h"
#include "ane/sim.h"

namespace {

using nlohmann::ordered_json;

// OpenBLAS's pthread server starts its worker threads when the program loads.
// The simulator never calls OpenBLAS threaded (src/sim/mac.h: its own workers
// make one-thread calls), so hwx-run asks for none: starting the worker cost
// about 0.08 ms of every process. Should a threaded call happen (another
// value of OPENBLAS_NUM_THREADS, set by the user, wins), an idle worker would
// spin in sched_yield for 2^28 cycles (about 0.1 s) before it sleeps; 2^4
// puts it to sleep at once. No value depends on either: the sums are the
// one-thread calls'. Priority 101 runs this before OpenBLAS's own
// constructor reads the environment (hwx-run links OpenBLAS statically).
__attribute__((constructor(101))) void quiet_idle_blas_threads() {
  setenv("OPENBLAS_NUM_THREADS", "1", 0);
  setenv("OPENBLAS_THREAD_TIMEOUT", "4", 0);
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HWX_RUN_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define HWX_RUN_SANITIZED 1
#endif

// The end of the process. Whatever it wrote is flushed, so it leaves
// without running destructors: the kernel frees the slots and stops
// OpenBLAS's threads at once, where tearing them down one by one took about
// 0.15 ms of a 5 ms job. Sanitizer builds return normally, so that
// LeakSanitizer still checks every run.
int leave(int code) {
#if defined(HWX_RUN_SANITIZED)
  return code;
#else
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(code);
#endif
}

// Every failure is one line and exit status 2.
int fail(const std::string& where, const std::string& problem) {
  fmt::print(stderr, "hwx-run: {}: {}\n", where, problem);
  return 2;
}

// Buffer names come from the file: keep [A-Za-z0-9_.@-], never a path.
std::string safe_name(const std::string& name) {
  std::string out = ane::sanitize_file_name(name);
  return out.empty() ? "_" : out;
}

std::string shape_text(const std::array<uint32_t, 4>& s) { return fmt::format("[{},{},{},{}]", s[0], s[1], s[2], s[3]); }

ordered_json number_or_null(float v) { return std::isnan(v) ? ordered_json(nullptr) : ordered_json(v); }

// Output summary: value range and the FNV-1a 64 checksum of the fp16 bytes.
ordered_json tensor_summary(const ane::sim::Tensor& t) {
  float lo = NAN, hi = NAN;
  uint64_t nan = 0, inf = 0, fnv = 0xcbf29ce484222325ull;
  for (uint16_t h : t.data) {
    fnv = ((fnv ^ (h & 0xffu)) * 0x100000001b3ull ^ (h >> 8)) * 0x100000001b3ull;
    if (ane::fp16_is_nan(h)) {
      ++nan;
      continue;
    }
    inf += ane::fp16_is_inf(h);
    const float f = ane::fp16_to_float(h);
    lo = std::isnan(lo) ? f : std::min(lo, f);
    hi = std::isnan(hi) ? f : std::max(hi, f);
  }
  return {{"min", number_or_null(lo)}, {"max", number_or_null(hi)}, {"nan", nan}, {"inf", inf},
          {"checksum", fmt::format("{:#018x}", fnv)}};
}

// --expect: the output next to the values it should have. Returns the largest
// |simulated - expected| (NaN counts as equal only to NaN; shapes must hold the
// same number of elements), or an error.
ane::Expected<double> compare(const std::string& name, const ane::sim::Tensor& t, const std::string& expected_path,
                              bool print) {
  auto arr = ane::npy::load(expected_path);
  if (!arr) return ane::make_error(expected_path + ": " + arr.error().str());
  if (arr->elements() != t.data.size())
    return ane::make_error(fmt::format("{}: {} elements, output '{}' has {}", expected_path, arr->elements(), name,
                                       t.data.size()));
  std::vector<double> want(t.data.size());
  for (size_t i = 0; i < want.size(); ++i) {
    if (arr->dtype == ane::npy::Dtype::F32) {
      float f;
      std::memcpy(&f, arr->data.data() + 4 * i, 4);
      want[i] = f;
    } else {
      want[i] = ane::fp16_to_float(static_cast<uint16_t>(arr->data[2 * i] | arr->data[2 * i + 1] << 8));
    }
  }
  double worst = 0;
  size_t at = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double got = ane::fp16_to_float(t.data[i]);
    const double d = (std::isnan(got) && std::isnan(want[i])) ? 0 : std::fabs(got - want[i]);
    if (!(d <= worst)) {  // also takes a NaN difference
      worst = d;
      at = i;
    }
  }
  if (!print) return worst;
  fmt::print("{} {}: simulated vs expected ({})\n", name, shape_text(t.nchw), expected_path);
  const size_t shown = std::min<size_t>(want.size(), 8);
  for (size_t i = 0; i < shown; ++i)
    fmt::print("  [{:3}] {:>12.6g} {:>12.6g}\n", i, ane::fp16_to_float(t.data[i]), want[i]);
  if (shown < want.size()) fmt::print("  ... {} more\n", want.size() - shown);
  fmt::print("  max |difference| {:.6g} at element {} ({:.6g} vs {:.6g})\n", worst, at,
             ane::fp16_to_float(t.data[at]), want[at]);
  return worst;
}

}  // namespace

static int run_tool(int argc, char** argv) {
#if defined(__GLIBC__)
  // Large blocks (the .npy data, converted inputs) are mapped and unmapped:
  // glibc would otherwise raise its threshold after the first free and keep
  // later ones on the heap, holding tens of MiB through the run.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  // Below that, freed memory stays with the process: OpenBLAS's threaded
  // sgemm takes and frees 512 KiB per call, and with glibc's 128 KiB trim
  // threshold each call moved the heap's top down and up again, a system
  // call each way and its pages faulted in again.
  mallopt(M_TRIM_THRESHOLD, 32 << 20);
#endif
  CLI::App app{
      "hwx-run: execute an Apple Neural Engine program on a register-level simulator: an\n"
      ".hwx, or an anec image of eiln's Linux driver (recognised by content). H13 (M1) programs\n"
      "run; H14 - H18 run the forms docs/simulator.md lists (element-wise, broadcasts,\n"
      "tensor constants, activation tables, convolutions, matmuls, softmax, layer_norm,\n"
      "reductions), with the rules they rely on (U1 - U15) and their numerics named in\n"
      "--trace; anything else is refused by name.\n"
      "Inputs are bound by buffer name through the file's own slot table (anec: the driver's\n"
      "convention, buffers src0.., dst0.. unless a descriptor names them); each output is\n"
      "written as OUTDIR/<output name>.npy (float16, [N,C,H,W]).\n\n"
      "Examples:\n"
      "  hwx-run relu.hwx -i image=x.npy -o out/            writes out/probs@output.npy\n"
      "  hwx-run tanh.bin -i src0=x.npy -o out/             an anec kernel: writes out/dst0.npy\n"
      "  hwx-run sum.hwx -i image=a.npy -i image2=b.npy -o out/ --trace\n"
      "  hwx-run gemm.hwx -i image=x.npy -o out/ --option acc=fp64 --json\n"
      "  hwx-run mul.hwx -i a=a.npy -i b=b.npy -o out/ --assume A1\n\n"
      "Inputs: .npy float16 or float32 (rounded to fp16), shape [N,C,H,W] or any shape with\n"
      "the buffer's element count. hwx-dump FILE.hwx lists the buffer names and shapes.\n\n"
      "Numerics (--option, defaults first; simulator-semantics.md section 9; fp32 sums in the\n"
      "BLAS order, fp32-ordered in input-channel order, slower):\n"
      "  acc=fp32|fp64|fp32-ordered|q15.16 (by generation: M1-M3 fp32, M4+ the measured\n"
      "    Q15.16 fixed-point accumulator)  products=exact|fp16  bias=in-acc|after-round\n"
      "  overflow=inf|saturate  subnormal=keep|ftz  lut=linear|ideal  nan=propagate\n"
      "  round=rne|half-away (results to fp16; by generation: M1-M3 rne, M4+ half-away)\n"
      "Assumptions (--assume, all off by default; a task that needs one that is off is\n"
      "refused with 'unsupported: <Field>=<value> in task N'):\n"
      "  A3 post-chain  MAC, bias, scale, nonlinearity in that order     all-assumptions\n"
      "  (A1 pe-minmax, A2 ocg-layout, A4 lut-any: settled by evidence; accepted, no effect)\n\n"
      "Exit status: 0 success, 1 an output differs from --expect by more than --tolerance,\n"
      "2 any error (one line on stderr: 'hwx-run: FILE: problem').",
      "hwx-run"};
  std::string model, outdir, expect_dir, format, descriptor, entry;
  double tolerance = -1;
  std::vector<std::string> input_specs, option_specs, assume_specs;
  bool trace = false, json = false;
  app.add_option("model", model, "The program: .hwx or anec")->required()->type_name("MODEL");
  app.add_option("-i,--input", input_specs, "Bind input buffer NAME to FILE.npy (repeat per input)")
      ->type_name("NAME=FILE.npy");
  app.add_option("-o,--output-dir", outdir, "Directory for the output .npy files (created if missing)")
      ->required()
      ->type_name("OUTDIR");
  app.add_flag("--trace", trace, "One line per task: engine, op, shapes, DMAs, output checksum, notes");
  app.add_flag("--json", json, "Print a machine-readable run summary (trace lines then go to stderr)");
  app.add_option("--option", option_specs, "Numerics setting, e.g. acc=fp64 (repeatable)")->type_name("NAME=VALUE");
  app.add_option("--expect", expect_dir,
                 "Print each output next to DIR/<output name>.npy (float16 or float32) with the largest difference")
      ->type_name("DIR");
  app.add_option("--tolerance", tolerance,
                 "With --expect: exit with status 1 when any |simulated - expected| exceeds T")
      ->type_name("T")
      ->needs("--expect");
  app.add_option("--assume", assume_specs, "Turn on an assumption: A1..A4 or all-assumptions (repeatable)")
      ->type_name("A");
  app.add_option("--format", format, "Read the model as this format instead of deciding by content")
      ->check(CLI::IsMember({"hwx", "anec"}));
  app.add_option("--descriptor", descriptor,
                 "anec only: the descriptor naming buffers and giving shapes (a manifest JSON, one JSON entry, "
                 "or the anec_<name>.h eiln's anect writes)")
      ->type_name("FILE");
  app.add_option("--entry", entry, "With --descriptor: the manifest entry or model to use (default: by file name)")
      ->type_name("NAME");
  // --help without CLI11's exception: a static binary's first throw sorts
  // every unwind entry of its 28 MB (about 3 ms); a run throws none.
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg == "-h" || arg == "--help") {
      fmt::print("{}", app.help());
      return 0;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  // One job per process: put the helper threads on the other cores from the
  // start (docs/simulator.md, "Threads"); the values do not depend on it.
  ane::sim::spread_helper_threads();

  ane::sim::Options opts;
  for (const auto& s : option_specs)
    if (auto st = ane::sim::apply_option(opts, s); !st) return fail("--option", st.error().str());
  for (const auto& s : assume_specs)
    if (auto st = ane::sim::apply_option(opts, s); !st) return fail("--assume", st.error().str());

  ane::OpenOptions open;
  if (!format.empty()) open.format = format == "hwx" ? ane::ContainerFormat::Hwx : ane::ContainerFormat::Anec;
  open.descriptor_path = descriptor;
  open.descriptor_entry = entry;
  // The simulator copies what it needs: the program is dropped before the run.
  auto sim = [&]() -> ane::Expected<ane::sim::Simulator> {
    auto program = ane::open_program(model, open);
    if (!program) return program.error();
    return ane::sim::Simulator::create(*program, opts);
  }();
  if (!sim) return fail(model, sim.error().str());

  ordered_json inputs_json = ordered_json::array();
  std::set<std::string> bound;
  for (const auto& spec : input_specs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      return fail("-i " + spec, "expected NAME=FILE.npy");
    const std::string name = spec.substr(0, eq), file = spec.substr(eq + 1);
    const ane::Buffer* buf = nullptr;
    for (const auto& b : sim->inputs())
      if (b.name == name) buf = &b;
    if (!buf) {
      std::vector<std::string> names;
      for (const auto& b : sim->inputs()) names.push_back("'" + b.name + "'");
      return fail(model, fmt::format("unknown input '{}' (inputs: {})", name, fmt::join(names, ", ")));
    }
    if (!bound.insert(name).second) return fail(model, fmt::format("input '{}' is given twice", name));
    // Mapped, not read: the values go from the file's pages into the slot.
    auto arr = ane::npy::map(file);
    if (!arr) return fail(file, arr.error().str());
    const auto shape = buf->shape();
    std::array<uint32_t, 4> nchw{};
    if (shape) {
      const uint64_t need = shape->nchw[0] * shape->nchw[1] * shape->nchw[2] * shape->nchw[3];
      if (arr->elements() != need)
        return fail(file, fmt::format("{} elements, but input '{}' [{},{},{},{}] needs {}", arr->elements(), name,
                                      shape->nchw[0], shape->nchw[1], shape->nchw[2], shape->nchw[3], need));
      for (int k = 0; k < 4; ++k) nchw[k] = static_cast<uint32_t>(shape->nchw[k]);
    }
    if (auto st = sim->set_input(name, *arr); !st) return fail(file, st.error().str());
    inputs_json.push_back({{"name", name}, {"file", file}, {"shape", nchw}, {"slot", buf->slot}});
  }
  if (auto st = sim->check_inputs(); !st) return fail(model, st.error().str());

  ordered_json tasks_json = ordered_json::array();
  auto hook = [&](const ane::sim::TraceRecord& r) {
    if (json) tasks_json.push_back(ordered_json::parse(r.json()));
    if (trace) fmt::print(json ? stderr : stdout, "{}\n", r.line());
  };
  if (auto st = sim->run(trace || json ? ane::sim::TraceHook(hook) : ane::sim::TraceHook()); !st)
    return fail(model, st.error().str());
  sim->machine().release_working_memory();  // the outputs are in the slots now

  std::error_code ec;
  std::filesystem::create_directories(outdir, ec);
  if (ec) return fail(outdir, "cannot create directory: " + ec.message());
  ordered_json outputs_json = ordered_json::array();
  std::set<std::string> used;
  bool exceeded = false;
  for (size_t i = 0; i < sim->outputs().size(); ++i) {
    const auto& b = sim->outputs()[i];
    std::string file = safe_name(b.name);
    if (!used.insert(file).second) file += fmt::format(".{}", i);  // two names that sanitise alike
    const std::string path = (std::filesystem::path(outdir) / (file + ".npy")).string();
    if (auto st = sim->save_npy(b.name, path); !st) return fail(path, st.error().str());
    // The values themselves only for what looks at them: --json and --expect.
    ane::sim::Tensor values;
    if (json || !expect_dir.empty()) {
      auto t = sim->read_buffer(b.name);
      if (!t) return fail(model, t.error().str());
      values = std::move(*t);
    }
    const auto shape = b.shape();
    std::array<uint32_t, 4> nchw{};
    for (int k = 0; k < 4 && shape; ++k) nchw[k] = static_cast<uint32_t>(shape->nchw[k]);
    ordered_json o = {{"name", b.name}, {"file", path}, {"shape", nchw}, {"slot", b.slot}};
    if (json) o.update(tensor_summary(values));  // only --json shows it
    if (!json) fmt::print("{} -> {} {}\n", b.name, path, shape_text(nchw));
    if (!expect_dir.empty()) {
      const auto* t = &values;
      const std::string want = (std::filesystem::path(expect_dir) / (file + ".npy")).string();
      auto worst = compare(b.name, *t, want, !json);
      if (!worst) return fail(model, worst.error().str());
      o["expected"] = want;
      o["max_abs_difference"] = *worst;
      if (tolerance >= 0 && !(*worst <= tolerance)) exceeded = true;
    }
    outputs_json.push_back(o);
  }
  if (json) {
    const auto& m = sim->machine();
    ordered_json doc = {{"file", model},
                        {"options", ane::sim::describe_options(m.options())},
                        {"inputs", inputs_json},
                        {"outputs", outputs_json},
                        {"tasks", tasks_json},
                        {"slot_bytes", m.slot_bytes()},
                        {"peak_bytes", m.peak_bytes()}};
    fmt::print("{}\n", doc.dump(2, ' ', false, ordered_json::error_handler_t::replace));
  }
  return leave(exceeded ? 1 : 0);
}

// Every exit, --help and failures included, leaves the same way as a run.
int main(int argc, char** argv) { return leave(run_tool(argc, argv)); }
