// Output fingerprints of every program the project runs, under every numerics
// setting: the regression lock for speed work (issue "hwx-run as fast as
// numpy"), which must not change a single output bit. Only the public API is
// used, so that this file also compiles against an older libane: the table in
// tests/fixtures/golden/outputs.txt was written by this code built against the
// library as it was before that work (tests/fixtures/golden/README.md).
#include "golden_outputs.h"

#include <filesystem>

#include <fmt/format.h>

#include "ane/compiler.h"
#include "ane/fp16.h"
#include "ane/network.h"
#include "ane/program.h"
#include "ane/sim.h"

namespace ane::golden {

namespace {

// Inputs from a formula both sides can evaluate: SplitMix64 of (buffer
// name's FNV, element index), scaled to [-4, 4) and rounded once to fp16;
// every 97th element a small value (a subnormal or near one), every 101st
// a large one, so that rounding, overflow and flush settings all matter.
uint64_t splitmix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t fnv(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

std::vector<uint16_t> input_values(const std::string& name, size_t n) {
  std::vector<uint16_t> v(n);
  const uint64_t seed = fnv(name);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t r = splitmix(seed ^ (uint64_t{i} * 0x2545f4914f6cdd1dull));
    double x = (static_cast<double>(r >> 11) * 0x1p-53) * 8.0 - 4.0;
    if (i % 97 == 0) x *= 0x1p-16;
    if (i % 101 == 0) x *= 8192.0;
    v[i] = double_to_fp16(x);
  }
  return v;
}

uint64_t fingerprint(const std::vector<uint16_t>& v) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint16_t x : v) h = ((h ^ (x & 0xffu)) * 0x100000001b3ull ^ (x >> 8)) * 0x100000001b3ull;
  return h;
}

// One program under one setting: a line per output, or a line saying why not.
void run(const std::string& label, const Program& p, const std::string& setting, std::vector<std::string>& out) {
  sim::Options opts;
  if (setting != "default")
    if (auto st = sim::apply_option(opts, setting); !st) {
      out.push_back(fmt::format("{} {} error {}", label, setting, st.error().str()));
      return;
    }
  auto s = sim::Simulator::create(p, opts);
  if (!s) {
    out.push_back(fmt::format("{} {} error {}", label, setting, s.error().str()));
    return;
  }
  for (const auto& b : s->inputs()) {
    const auto& l = b.layout;
    const size_t n = l ? l->nchw[0] * l->nchw[1] * l->nchw[2] * l->nchw[3] : 0;
    sim::Tensor t;
    t.nchw = {1, 1, 1, static_cast<uint32_t>(n)};
    t.data = input_values(b.name, n);
    if (auto st = s->set_input(b.name, t); !st) {
      out.push_back(fmt::format("{} {} error {}", label, setting, st.error().str()));
      return;
    }
  }
  if (auto st = s->run(); !st) {
    out.push_back(fmt::format("{} {} error {}", label, setting, st.error().str()));
    return;
  }
  for (const auto& b : s->outputs()) {
    auto t = s->read_buffer(b.name);
    out.push_back(t ? fmt::format("{} {} {} {:016x}", label, setting, b.name, fingerprint(t->data))
                    : fmt::format("{} {} {} error {}", label, setting, b.name, t.error().str()));
  }
}

}  // namespace

const std::vector<std::string>& settings() {
  static const std::vector<std::string> s = {"default",       "acc=fp64",      "acc=fp32-ordered",
                                             "products=fp16", "bias=after-round", "overflow=saturate",
                                             "subnormal=ftz", "lut=ideal"};
  return s;
}

std::vector<std::string> table(const std::string& source_dir, const std::string& corpus_dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  auto each_setting = [&](const std::string& label, const Program& p) {
    for (const auto& s : settings()) run(label, p, s, out);
  };
  // eiln's kernels are element-wise and table programs on 2560x1600: the
  // settings that act on those units (the accumulator and product models
  // act on the MAC: none of these outputs changes under them).
  auto elementwise_settings = [&](const std::string& label, const Program& p) {
    for (const char* s : {"default", "overflow=saturate", "subnormal=ftz", "lut=ideal"}) run(label, p, s, out);
  };
  // The example networks, compiled as hwx-build compiles them.
  std::vector<fs::path> nets;
  for (const auto& d : fs::directory_iterator(fs::path(source_dir) / "examples/networks"))
    if (fs::exists(d.path() / "net.plist")) nets.push_back(d.path());
  std::sort(nets.begin(), nets.end());
  for (const auto& d : nets) {
    const std::string label = "examples/" + d.filename().string();
    auto net = load_network((d / "net.plist").string());
    auto c = net ? compile_network(*net) : Expected<CompiledProgram>(net.error());
    auto p = c ? parse_program(c->bytes, label) : Expected<Program>(c.error());
    if (!p) {
      out.push_back(label + " error " + p.error().str());
      continue;
    }
    each_setting(label, *p);
  }
  if (corpus_dir.empty()) return out;
  // The corpus: Apple's HWX files and eiln's compiled kernels.
  std::vector<fs::path> files;
  for (const auto& f : fs::directory_iterator(fs::path(corpus_dir) / "hwx"))
    if (f.path().extension() == ".hwx") files.push_back(f.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    const std::string label = "corpus/hwx/" + f.filename().string();
    auto p = open_program(f.string());
    if (!p) {
      out.push_back(label + " error " + p.error().str());
      continue;
    }
    each_setting(label, *p);
  }
  std::vector<fs::path> kernels;
  for (const auto& f : fs::recursive_directory_iterator(fs::path(corpus_dir) / "anec"))
    if (f.path().extension() == ".bin") kernels.push_back(f.path());
  std::sort(kernels.begin(), kernels.end());
  OpenOptions anec;
  anec.descriptor_path = (fs::path(corpus_dir) / "anec/MANIFEST.json").string();
  for (const auto& f : kernels) {
    const std::string label = "corpus/anec/" + fs::relative(f, fs::path(corpus_dir) / "anec").string();
    auto p = open_program(f.string(), anec);
    if (!p) {
      out.push_back(label + " error " + p.error().str());
      continue;
    }
    elementwise_settings(label, *p);
  }
  return out;
}

}  // namespace ane::golden
