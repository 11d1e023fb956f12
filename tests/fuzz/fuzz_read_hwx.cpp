// libFuzzer target: arbitrary bytes through the whole read path.
//
// Every input goes through parse_program (container + task chain). When that
// succeeds, everything that renders a program runs as well (text and JSON
// dumps, a diff of the program against itself, kernel data slicing), so the
// sanitizers see every code path a malformed file can reach. Invariants whose
// violation is a library bug abort():
//   * write_hwx(read_hwx(x)) == x for every x that read_hwx accepts;
//   * a program differs from nothing when diffed against itself.
//
// Build: cmake -DCMAKE_CXX_COMPILER=clang++ -DLIBANE_FUZZ=ON ... (see .ci/run)
// Run:   fuzz_read_hwx CORPUS_DIR -max_total_time=60
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>

#include "ane/dump.h"
#include "ane/hwx.h"

namespace {

[[noreturn]] void fail(const char* what, size_t detail) {
  std::fprintf(stderr, "fuzz_read_hwx: invariant violated: %s (%zu)\n", what, detail);
  std::abort();
}

// write_hwx must reproduce exactly the bytes the model was read from.
void check_round_trip(const ane::HwxFile& file, std::span<const uint8_t> input) {
  const ane::Bytes out = ane::write_hwx(file);
  if (out.size() != input.size()) fail("write_hwx(read_hwx(x)).size() != x.size()", out.size());
  // One memcmp (not a byte loop: that would feed the fuzzer a comparison per byte).
  if (!out.empty() && std::memcmp(out.data(), input.data(), out.size()) != 0) {
    size_t i = 0;
    while (out[i] == input[i]) ++i;
    fail("write_hwx(read_hwx(x)) differs from x at offset", i);
  }
}

// Keeps the optimizer from dropping work whose result is otherwise unused.
volatile size_t g_sink = 0;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> input(data, size);

  auto program = ane::parse_program(input, "fuzz");
  if (!program) {
    // The container may still be readable (the task chain is what failed):
    // the round trip must hold for everything read_hwx accepts.
    (void)program.error().str();
    if (auto file = ane::read_hwx(input)) check_round_trip(*file, input);
    return 0;
  }
  const ane::Program& p = *program;
  if (p.hwx) check_round_trip(*p.hwx, input);

  // raw = true renders everything the default does plus the raw task words
  // (rendering both would cost time and reach no further code).
  ane::DumpOptions raw;
  raw.raw = true;
  size_t n = 0;
  n += ane::dump_text(p, raw).size();
  n += ane::dump_json(p, raw).size();

  const auto diff = ane::diff_programs(p, p);
  if (!diff.empty()) fail("diff_programs(p, p) is not empty; entries", diff.size());
  n += ane::format_diff(p, p, diff).size();

  if (p.hwx)
    for (const auto& k : ane::kernel_blobs(*p.hwx)) n += k.data.size() + k.symbol.size();
  g_sink = g_sink + n;
  return 0;
}
