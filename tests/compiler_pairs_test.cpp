// hwx-build against Apple: each corpus pair (plist + weights + the file
// Apple's compiler wrote) must rebuild to the same bytes, except the 64 hex
// digits of each kernel symbol name (Apple's hash is unknown).
#include <filesystem>

#include <gtest/gtest.h>

#include "ane/compiler.h"
#include "ane/dump.h"
#include "support.h"

namespace fs = std::filesystem;

namespace ane {
namespace {

const char* const kPairs[] = {"conv", "gemm", "sigmoid", "relu", "concat", "sum"};

std::string pair_dir(const std::string& name) { return test::corpus_dir() + "/pairs/" + name; }

// Overwrites the 64 digits after 'K' of every kernel symbol (type 0x0f in
// section 2) with 'X', located through the file's own symbol table.
Bytes mask_kernel_hashes(Bytes bytes) {
  auto file = read_hwx(bytes);
  if (!file) return bytes;
  const auto* st = file->symtab();
  for (const auto& s : file->symbols)
    if (s.nlist.type == 0x0f && s.nlist.sect == 2 && s.name.size() >= 65 && s.name[0] == 'K')
      for (size_t i = 0; i < 64; ++i) bytes[st->stroff + s.nlist.strx + 1 + i] = 'X';
  return bytes;
}

std::string diff_report(const Bytes& expected, const Bytes& built) {
  auto a = parse_program(expected, "expected.hwx");
  auto b = parse_program(built, "built.hwx");
  if (!a || !b) return "cannot decode one side for a field diff";
  return format_diff(*a, *b, diff_programs(*a, *b));
}

class Pair : public ::testing::TestWithParam<const char*> {};

TEST_P(Pair, RebuildsAppleFileExceptKernelHashDigits) {
  ANE_REQUIRE_CORPUS();
  const std::string dir = pair_dir(GetParam());
  auto net = load_network(dir + "/net.plist");
  ASSERT_TRUE(net) << net.error().str();
  CompileOptions opts;
  const Bytes ident = test::read_or_die(dir + "/ident.txt");
  opts.ident.assign(ident.begin(), ident.end());
  auto built = compile_network(*net, opts);
  ASSERT_TRUE(built) << built.error().str();
  const Bytes expected = test::read_or_die(dir + "/expected.hwx");
  ASSERT_EQ(built->bytes.size(), expected.size()) << diff_report(expected, built->bytes);
  const Bytes a = mask_kernel_hashes(expected), b = mask_kernel_hashes(built->bytes);
  if (a != b) {
    size_t first = 0;
    while (a[first] == b[first]) ++first;
    ADD_FAILURE() << "first differing byte at offset 0x" << std::hex << first << "\n"
                  << diff_report(expected, built->bytes);
  }
}

TEST_P(Pair, ThroughTheCommandLineWithIdentFile) {
  ANE_REQUIRE_CORPUS();
  const std::string dir = pair_dir(GetParam());
  test::TempDir tmp;
  const std::string out = tmp.file("model.hwx");
  std::string stdout_text, err;
  ASSERT_EQ(test::run_command(std::string(HWX_BUILD_EXE) + " '" + dir + "/net.plist' -o '" + out +
                                  "' --ident-file '" + dir + "/ident.txt'",
                              &stdout_text, &err),
            0)
      << err;
  EXPECT_EQ(mask_kernel_hashes(test::read_or_die(out)), mask_kernel_hashes(test::read_or_die(dir + "/expected.hwx")));
  // The output is a complete program for the foundation: it dumps and round-trips.
  auto p = open_program(out);
  ASSERT_TRUE(p) << p.error().str();
  EXPECT_EQ(write_hwx(*p->hwx), test::read_or_die(out));
  EXPECT_FALSE(dump_text(*p).empty());
  EXPECT_EQ(test::run_command(std::string(HWX_DUMP_EXE) + " '" + out + "' > /dev/null", nullptr), 0);
}

INSTANTIATE_TEST_SUITE_P(Corpus, Pair, ::testing::ValuesIn(kPairs));

// The digits hwx-build writes instead of Apple's: SHA-256 of the task's kernel
// bytes, so identical kernels get identical names and they can be checked.
TEST(PairHash, KernelSymbolDigitsAreTheSha256OfTheKernelBytes) {
  ANE_REQUIRE_CORPUS();
  auto net = load_network(pair_dir("conv") + "/net.plist");
  ASSERT_TRUE(net);
  auto built = compile_network(*net);
  ASSERT_TRUE(built) << built.error().str();
  const auto blobs = kernel_blobs(built->file);
  ASSERT_EQ(blobs.size(), 3u);
  // Three 64-byte lanes of fp16 2.0 x 3, zero padded.
  Bytes lanes(0xc0, 0);
  for (int lane = 0; lane < 3; ++lane)
    for (int i = 0; i < 3; ++i) lanes[lane * 64 + 2 * i + 1] = 0x40;
  // SHA-256 of those 192 bytes, computed outside libane (Python's hashlib).
  const std::string digits = "74AEB19FE360335F0731A158D37E3BD82EC91F06D9A3041154ED1D428E608363";
  EXPECT_EQ(kernel_symbol_digits(lanes), digits);
  EXPECT_EQ(Bytes(blobs[0].data.begin(), blobs[0].data.end()), Bytes(lanes.begin(), lanes.begin() + 64));
  EXPECT_EQ(blobs[0].symbol, "K" + digits + "_ne_0");
  EXPECT_EQ(blobs[2].symbol, "K" + digits + "_ne_2");
}

}  // namespace
}  // namespace ane
