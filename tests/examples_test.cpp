// End to end: every example network builds with hwx-build and runs with
// hwx-run, and its outputs equal the reference in expected/. That reference
// is computed by examples/networks/generate.py (Python, written separately
// from libane) from the same weights the plist names: float64 math, rounded to
// fp16 wherever a task writes memory, and the true sigmoid.
#include <filesystem>

#include <gtest/gtest.h>

#include "support.h"

namespace fs = std::filesystem;

namespace ane {
namespace {

std::vector<fs::path> example_dirs() {
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(fs::path(LIBANE_SOURCE_DIR) / "examples" / "networks"))
    if (e.is_directory() && fs::exists(e.path() / "net.plist")) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

// hwx-run's command line for an example: every inputs/<name>.npy bound to <name>.
std::string run_command(const fs::path& dir, const std::string& hwx, const std::string& out,
                        const std::string& extra) {
  std::string cmd = std::string(HWX_RUN_EXE) + " '" + hwx + "' -o '" + out + "' --expect '" +
                    (dir / "expected").string() + "' " + extra;
  for (const auto& f : fs::directory_iterator(dir / "inputs"))
    cmd += " -i '" + f.path().stem().string() + "=" + f.path().string() + "'";
  return cmd;
}

TEST(Examples, EveryNetworkBuildsRunsAndMatchesItsReference) {
  const auto dirs = example_dirs();
  ASSERT_GE(dirs.size(), 10u);
  for (const auto& dir : dirs) {
    SCOPED_TRACE(dir.filename().string());
    test::TempDir tmp;
    const std::string hwx = tmp.file("model.hwx");
    std::string out, err;
    ASSERT_EQ(test::run_command(std::string(HWX_BUILD_EXE) + " '" + (dir / "net.plist").string() + "' -o '" + hwx + "'",
                                &out, &err),
              0)
        << err;
    // With the ideal sigmoid every output is the reference, bit for bit: the
    // examples' sums are exact in fp32, so accumulation order cannot matter.
    EXPECT_EQ(test::run_command(run_command(dir, hwx, tmp.file("ideal"), "--option lut=ideal --tolerance 0"), &out,
                                &err),
              0)
        << out << err;
    // The default straight-line table stays within 0.0035 of the true sigmoid
    // (simulator-semantics.md section 9); everything else is still exact.
    EXPECT_EQ(test::run_command(run_command(dir, hwx, tmp.file("linear"), "--tolerance 0.0035"), &out, &err), 0)
        << out << err;
    for (const auto& e : fs::directory_iterator(dir / "expected"))
      EXPECT_TRUE(fs::exists(tmp.file("linear/" + e.path().filename().string()))) << e.path();
  }
}

// The comparison can fail: a wrong expectation gives exit status 1.
TEST(Examples, ToleranceViolationIsReported) {
  const fs::path dir = fs::path(LIBANE_SOURCE_DIR) / "examples" / "networks" / "sigmoid";
  test::TempDir tmp;
  const std::string hwx = tmp.file("model.hwx");
  std::string out, err;
  ASSERT_EQ(test::run_command(std::string(HWX_BUILD_EXE) + " '" + (dir / "net.plist").string() + "' -o '" + hwx + "'",
                              &out, &err),
            0);
  // Off the table nodes the default straight lines differ from the true sigmoid.
  EXPECT_EQ(test::run_command(run_command(dir, hwx, tmp.file("o"), "--tolerance 0"), &out, &err), 1) << out << err;
  EXPECT_NE(out.find("max |difference| 0.00"), std::string::npos) << out;
}

}  // namespace
}  // namespace ane
