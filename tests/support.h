// Shared test helpers: where the Apple-compiled corpus lives, and how a test
// behaves when it is missing (skip visibly; fail when CI=true).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ane/bytes.h"
#include "ane/program.h"
#include "ane/sim.h"

namespace ane::test {

// Whether this build runs under AddressSanitizer: tests whose work repeats
// the release build's on larger inputs skip there (each says why).
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
inline constexpr bool kSanitized = __has_feature(address_sanitizer);
#else
inline constexpr bool kSanitized = false;
#endif

// ../shared next to the checkout (configurable with LIBANE_SHARED_DIR).
std::string shared_dir();
std::string corpus_dir();
bool corpus_available();
// Names of the corpus HWX programs ("conv", "gemm", ...), sorted.
std::vector<std::string> corpus_hwx_names();
std::string corpus_hwx_path(const std::string& name);
Bytes read_or_die(const std::string& path);

// Runs a command line through the shell; returns exit status, fills stdout.
int run_command(const std::string& cmd, std::string* out, std::string* err = nullptr);

// A scratch directory, removed with everything in it at the end of the test.
struct TempDir {
  std::string path;
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return path + "/" + name; }
};

// Writes text or bytes to a file; fails the test when it cannot.
void write_text(const std::string& path, const std::string& text);
void write_bytes(const std::string& path, const Bytes& bytes);

// `count` fp16 values of doubles drawn uniformly from [lo, hi) (mt19937 with `seed`),
// rounded to nearest even.
std::vector<uint16_t> uniform_fp16(size_t count, double lo, double hi, uint32_t seed);
// fp16 values as the little-endian bytes of a weight file or slot.
Bytes fp16_le_bytes(std::span<const uint16_t> values);

// Runs a program of one input and one output on `x`: the output, or the
// refusal (the simulator plans every task when it is created, so a refusal
// may come then or from run()).
Expected<sim::Tensor> run_one_input(const Program& program, const sim::Tensor& x);

}  // namespace ane::test

// Use at the top of a corpus test: skips with a visible message when the
// corpus is absent, and fails instead when CI=true.
#define ANE_REQUIRE_CORPUS()                                                  \
  do {                                                                        \
    if (!::ane::test::corpus_available()) {                                   \
      const char* ci = std::getenv("CI");                                     \
      if (ci && std::string(ci) == "true")                                    \
        FAIL() << "corpus missing at " << ::ane::test::corpus_dir()           \
               << " (required when CI=true)";                                 \
      GTEST_SKIP() << "corpus not found at " << ::ane::test::corpus_dir()     \
                   << ": skipping Apple-compiled file checks";                \
    }                                                                         \
  } while (0)
