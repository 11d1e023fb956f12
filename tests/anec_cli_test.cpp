// The CLIs on anec images: hwx-run writes dst0.npy, hwx-dump summarises and
// converts an HWX into an anec that runs the same.
#include <filesystem>

#include <gtest/gtest.h>

#include "ane/fp16.h"
#include "ane/npy.h"
#include "support.h"

namespace ane {
namespace {

struct Result {
  int rc = -1;
  std::string out, err;
};

Result run(const std::string& exe, const std::string& args) {
  Result r;
  r.rc = test::run_command(exe + " " + args, &r.out, &r.err);
  return r;
}

std::string q(const std::string& s) { return "'" + s + "'"; }
std::string anec(const std::string& f) { return test::corpus_dir() + "/anec/" + f; }

std::vector<uint16_t> load_f16(const std::string& path, std::vector<uint64_t>* shape = nullptr) {
  auto a = npy::load(path);
  EXPECT_TRUE(a.ok()) << path;
  if (!a.ok()) return {};
  if (shape) *shape = a->shape;
  return a->to_fp16();
}

TEST(AnecCli, HwxRunWritesDst0) {
  ANE_REQUIRE_CORPUS();
  test::TempDir dir;
  std::vector<uint16_t> x(2560 * 1600);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float_to_fp16(static_cast<float>(i % 17) - 8.0f);
  test::write_bytes(dir.file("x.npy"), npy::encode_f16(x, std::vector<uint64_t>{1, 1, 2560, 1600}));
  const Result r = run(HWX_RUN_EXE, q(anec("activation/relu.bin")) + " -i src0=" + q(dir.file("x.npy")) + " -o " +
                                        q(dir.file("out")));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("dst0 -> "), std::string::npos) << r.out;
  std::vector<uint64_t> shape;
  const auto y = load_f16(dir.file("out/dst0.npy"), &shape);
  EXPECT_EQ(shape, (std::vector<uint64_t>{1, 1, 2560, 1600}));
  ASSERT_EQ(y.size(), x.size());
  for (size_t i = 0; i < x.size(); i += 997) EXPECT_EQ(fp16_to_float(y[i]), std::max(0.0f, fp16_to_float(x[i]))) << i;
  // The wrong name is named, with the ones there are.
  const Result bad = run(HWX_RUN_EXE, q(anec("activation/relu.bin")) + " -i x=" + q(dir.file("x.npy")) + " -o " +
                                          q(dir.file("out")));
  EXPECT_EQ(bad.rc, 2);
  EXPECT_EQ(bad.err, "hwx-run: " + anec("activation/relu.bin") + ": unknown input 'x' (inputs: 'src0')\n");
}

TEST(AnecCli, DumpSummaryNamesWhatEachTaskComputes) {
  ANE_REQUIRE_CORPUS();
  const Result r = run(HWX_DUMP_EXE, "--summary " + q(anec("activation/softmax.bin")));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("Tasks (5)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("task 0: PE reduce-max"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("task 2: NE table[exp2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("task 3: PE reduce-sum-reciprocal"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("Task 0 at"), std::string::npos) << "--summary prints no registers";
  // The full dump has the same line before each task's registers.
  const Result full = run(HWX_DUMP_EXE, q(anec("activation/softmax.bin")));
  ASSERT_EQ(full.rc, 0);
  const size_t task = full.out.find("Task 2 at image+0x600");
  ASSERT_NE(task, std::string::npos);
  EXPECT_EQ(full.out.find("  task 2: NE table[exp2", task), full.out.find('\n', task) + 1);
  // A descriptor only fits anec images.
  const Result hwx = run(HWX_DUMP_EXE, "--descriptor x.json " + q(test::corpus_hwx_path("relu")));
  EXPECT_EQ(hwx.rc, 2);
  EXPECT_NE(hwx.err.find("only applies to anec programs"), std::string::npos) << hwx.err;
}

TEST(AnecCli, ToAnecThenRunGivesTheHwxResult) {
  ANE_REQUIRE_CORPUS();
  test::TempDir dir;
  const Result w = run(HWX_DUMP_EXE, "--to-anec " + q(dir.file("a")) + " " + q(test::corpus_hwx_path("sigmoid")));
  ASSERT_EQ(w.rc, 0) << w.err;
  for (const char* f : {"a/sigmoid.anec", "a/sigmoid.json", "a/anec_sigmoid.h"})
    EXPECT_TRUE(std::filesystem::exists(dir.file(f))) << f;
  std::vector<uint16_t> x(77);
  for (int i = 0; i < 77; ++i) x[i] = float_to_fp16(-9.5f + 0.25f * static_cast<float>(i));
  test::write_bytes(dir.file("x.npy"), npy::encode_f16(x, std::vector<uint64_t>{1, 1, 1, 77}));
  const Result h = run(HWX_RUN_EXE, q(test::corpus_hwx_path("sigmoid")) + " -i image=" + q(dir.file("x.npy")) +
                                        " -o " + q(dir.file("h")));
  ASSERT_EQ(h.rc, 0) << h.err;
  const Result a = run(HWX_RUN_EXE, q(dir.file("a/sigmoid.anec")) + " --descriptor " + q(dir.file("a/sigmoid.json")) +
                                        " -i image=" + q(dir.file("x.npy")) + " -o " + q(dir.file("o")));
  ASSERT_EQ(a.rc, 0) << a.err;
  EXPECT_EQ(load_f16(dir.file("o/probs@output.npy")), load_f16(dir.file("h/probs@output.npy")));
  // Without the descriptor: the driver's names.
  const Result plain = run(HWX_RUN_EXE, q(dir.file("a/sigmoid.anec")) + " -i src0=" + q(dir.file("x.npy")) +
                                            " -o " + q(dir.file("p")));
  ASSERT_EQ(plain.rc, 0) << plain.err;
  EXPECT_EQ(load_f16(dir.file("p/dst0.npy")), load_f16(dir.file("h/probs@output.npy")));
}

}  // namespace
}  // namespace ane
