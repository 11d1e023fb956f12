// Every output bit of every program the project runs, under every numerics
// setting, is what the simulator produced before its speed work (the table
// in tests/fixtures/golden, written by golden_outputs.cpp built against the
// earlier library; README there). A change that alters a single output bit
// of any example, random program, corpus HWX file or corpus kernel fails
// here and names it.
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "golden_outputs.h"
#include "support.h"

namespace ane {
namespace {

std::map<std::string, std::string> keyed(const std::vector<std::string>& lines) {
  // Key: the line up to its last field (program, setting, output).
  std::map<std::string, std::string> m;
  for (const auto& l : lines) {
    const size_t cut = l.rfind(' ');
    m[l.substr(0, cut)] = l.substr(cut + 1);
  }
  return m;
}

TEST(GoldenOutputs, EveryOutputBitIsUnchanged) {
  // 30 s of simulation in a release build; the sanitizer build runs the same
  // units on the same programs in the other tests.
  if (test::kSanitized) GTEST_SKIP() << "under AddressSanitizer: the bit comparison runs in the release build";
  std::ifstream in(std::string(LIBANE_SOURCE_DIR) + "/tests/fixtures/golden/outputs.txt");
  ASSERT_TRUE(in) << "tests/fixtures/golden/outputs.txt is missing";
  std::vector<std::string> want;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') want.push_back(line);
  const bool corpus = test::corpus_available();
  if (!corpus)
    std::cout << "[ skipped  ] the corpus part (no ../shared): only the examples and random programs are compared\n";
  const auto got = keyed(golden::table(LIBANE_SOURCE_DIR, corpus ? test::corpus_dir() : ""));
  size_t compared = 0;
  for (const auto& [key, value] : keyed(want)) {
    if (!corpus && key.rfind("examples/", 0) != 0 && key.rfind("random/", 0) != 0) continue;
    const auto it = got.find(key);
    ASSERT_NE(it, got.end()) << key << ": no longer produced";
    EXPECT_EQ(it->second, value) << key;
    ++compared;
  }
  EXPECT_EQ(compared, corpus ? want.size() : compared);
  EXPECT_GT(compared, 0u);
  std::cout << "[ golden   ] " << compared << " outputs x settings compared bit for bit\n";
}

}  // namespace
}  // namespace ane
