// libFuzzer target: arbitrary bytes through hwx-build's whole front end.
//
// Input -> plist::parse -> parse_network -> compile_network (which writes the
// program and checks it by reading it back). Weight files resolve into a
// scratch directory holding one 64 KiB file, w.weights, of varied fp16 values,
// so kernels and biases of fuzzed plists can be read and laid out.
// Invariants whose violation is a library bug abort():
//   * a compiled program decodes to as many tasks as were compiled and
//     round-trips through write_hwx(read_hwx(bytes)).
//
// Build: cmake -DCMAKE_CXX_COMPILER=clang++ -DLIBANE_FUZZ=ON ... (see .ci/run)
// Run:   fuzz_plist CORPUS_DIR -max_total_time=60   (seeds: examples/networks/*/net.plist)
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "ane/compiler.h"
#include "ane/plist.h"

namespace {

std::string weights_dir() {
  static const std::string dir = [] {
    auto d = std::filesystem::temp_directory_path() / "libane_fuzz_plist_weights";
    std::filesystem::create_directories(d);
    ane::Bytes w(1 << 16);
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<uint8_t>(i * 131 + (i >> 7));
    (void)ane::write_file((d / "w.weights").string(), w);
    return d.string();
  }();
  return dir;
}

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_plist: invariant violated: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto root = ane::plist::parse(std::span<const uint8_t>(data, size));
  if (!root) return 0;
  ane::ParseOptions popts;
  popts.weights_dir = weights_dir();
  auto net = ane::parse_network(*root, "fuzz.plist", popts);
  if (!net) return 0;
  // Only the prepared weight file may be read: a fuzzed plist could name any path.
  for (auto& p : net->weight_paths) p = popts.weights_dir + "/w.weights";
  ane::CompileOptions copts;
  copts.profile = size % 2 ? ane::CompilerProfile::Macos26 : ane::CompilerProfile::V421;  // both layouts
  auto program = ane::compile_network(*net, copts);
  if (!program) return 0;
  auto back = ane::read_hwx(program->bytes);
  if (!back) fail("compiled program does not read back");
  if (ane::write_hwx(*back) != program->bytes) fail("compiled program does not round-trip");
  auto tasks = ane::decode_tasks(*back);
  if (!tasks || tasks->size() != program->tasks.size()) fail("compiled task chain does not decode");
  return 0;
}
