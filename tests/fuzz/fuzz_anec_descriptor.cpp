// libFuzzer target: hostile anec descriptors (a manifest or one JSON entry,
// or the C header eiln's anect writes), parsed and then applied to a small
// fixed anec image (one NE copy task, 64 fp16 values).
//
// Invariants whose violation is a library bug abort(): every error is one
// non-empty line; a descriptor that parses either applies or gives such an
// error.
//
// Build: cmake -DCMAKE_CXX_COMPILER=clang++ -DLIBANE_FUZZ=ON ... (see .ci/run)
// Run:   fuzz_anec_descriptor SEED_DIR -max_total_time=60
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "ane/anec.h"
#include "ane/registers.h"
#include "ane/task.h"

namespace {

[[noreturn]] void fail(const std::string& detail) {
  std::fprintf(stderr, "fuzz_anec_descriptor: invariant violated: %s\n", detail.c_str());
  std::abort();
}

void check_error(const ane::Error& e) {
  const std::string s = e.str();
  if (s.empty() || s.find('\n') != std::string::npos) fail("error is not one non-empty line: " + s);
}

// One NE pass task copying [1,1,1,64] fp16 from slot 5 to slot 4.
const ane::Bytes& image() {
  static const ane::Bytes b = [] {
    ane::RegisterImage r;
    auto set = [&](const char* name, uint32_t v) { (void)r.set(name, v); };
    set("Header[0].EON", 1);
    set("Header[8].RBase0", 5), set("Header[8].RBE0", 1), set("Header[8].WBase", 4), set("Header[8].WBE", 1);
    set("Header[8].ENE", 1);
    set("Common.InDim.Win", 64), set("Common.InDim.Hin", 1), set("Common.OutDim.Wout", 64), set("Common.OutDim.Hout", 1);
    set("Common.Cin.Cin", 1), set("Common.Cout.Cout", 1), set("Common.GroupConvCfg.NumGroups", 1);
    set("TileDMASrc.DMAConfig.En", 1), set("TileDMADst.DMAConfig.En", 1);
    set("L2.SourceCfg.SourceType", 2), set("L2.ResultCfg.ResultType", 2);
    ane::Bytes t = ane::encode_task(r, ane::default_stream_layout());
    t.resize((t.size() + 15) / 16 * 16, 0);
    return t;
  }();
  return b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto d = ane::parse_anec_descriptor(text, "", "fuzz.anec");
  if (!d) {
    check_error(d.error());
    return 0;
  }
  auto p = ane::read_anec(image(), "fuzz.anec", &*d);
  if (!p) check_error(p.error());
  return 0;
}
