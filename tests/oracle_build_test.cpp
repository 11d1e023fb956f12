// hwx-build against Apple: for every convolution record of
// tests/fixtures/oracles/h13/conv, the plist that says the same thing (a Conv
// unit with the record's kernel, stride, padding and groups, a GOC for the
// bias, the weights the compiler saw) is compiled and its task compared with
// the record's task field by field. Fields whose value is a choice of the
// compiler version (hwx-build writes what v4.2.1 writes; the records come
// from macOS 26) are listed in kVersionFields with the reason, as in
// docs/compiler.md; every other field must be equal. The kernel section must
// hash to the record's SHA-256. Records whose layout hwx-build does not know
// must be refused with the same reason the packer gives.
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ane/compiler.h"
#include "ane/conv_kernel.h"
#include "ane/network.h"
#include "ane/program.h"
#include "ane/registers.h"
#include "ane/sha256.h"
#include "oracle_build_fields.h"
#include "oracle_fixture.h"
#include "oracle_plists.h"
#include "plist_builder.h"
#include "support.h"

namespace ane {
namespace {

using namespace test::pl;
using oracle::reduction_version_field;
using oracle::version_field;

const std::string kBuildConvDir = std::string(LIBANE_SOURCE_DIR) + "/tests/fixtures/oracles/h13/conv";

class OracleBuild : public ::testing::TestWithParam<std::string> {};

TEST_P(OracleBuild, HwxBuildWritesTheRecordsTask) {
  auto f = oracle::load_fixture(GetParam());
  ASSERT_TRUE(f.ok()) << f.error().message;
  const oracle::ConvRecord c = oracle::ConvRecord::of(*f);
  if (oracle::too_large_for_sanitizers(c)) GTEST_SKIP() << "under AddressSanitizer: checked in the release build";
  auto k = oracle::rebuild_constants(*f, c.weight_count(), c.bias ? c.cout : 0);
  ASSERT_TRUE(k.ok()) << k.error().message;

  test::TempDir dir;
  const Net net = oracle::conv_record_network(c);
  test::write_text(dir.file("net.plist"), net.xml());
  test::write_bytes(dir.file("w.weights"), test::fp16_le_bytes(k->weights));
  if (c.bias) test::write_bytes(dir.file("b.weights"), test::fp16_le_bytes(k->bias));
  auto n = load_network(dir.file("net.plist"));
  ASSERT_TRUE(n.ok()) << n.error().str();
  auto built = compile_network(*n);

  auto apple = parse_program(oracle::anec_image(*f, Bytes(f->constant_size, 0)), f->name + ".anec");
  ASSERT_TRUE(apple.ok()) << apple.error().str();
  if (!built) {
    // Only where libane does not know Apple's kernel layout (the packer's
    // refusal, checked against the record in oracle_conv_test).
    std::cout << "[ refused  ] " << f->name << ": " << built.error().message << "\n";
    EXPECT_NE(built.error().message.find("unsupported: "), std::string::npos) << built.error().message;
    EXPECT_NE(built.error().message.find("zero-skipping"), std::string::npos) << built.error().message;
    return;
  }
  ASSERT_EQ(built->tasks.size(), 1u);
  if (f->tasks.size() > 1) {
    // Apple split this convolution over output-channel slices (its tiling
    // for the L2 size); hwx-build writes one task. The slices run in
    // oracle_conv_test; here only the whole-task records are compared.
    std::cout << "[ tiled    ] " << f->name << ": Apple wrote " << f->tasks.size() << " tasks, hwx-build one\n";
    return;
  }
  const RegisterImage& ours = built->tasks[0].regs;
  const RegisterImage& theirs = apple->tasks[0].regs;
  size_t compared = 0, version = 0;
  for (const FieldInfo& fi : RegisterDatabase::h13().fields()) {
    const uint32_t a = ours.get(fi), b = theirs.get(fi);
    if (version_field(fi.name)) {
      version += a != b;
      continue;
    }
    ++compared;
    EXPECT_EQ(a, b) << f->name << ": " << fi.name << " hwx-build " << a << ", Apple " << b;
  }
  // The kernel section: Apple's bytes exactly.
  const auto* konst = built->file.find_section("__TEXT", "__const");
  ASSERT_NE(konst, nullptr);
  EXPECT_EQ(sha256_hex(built->file.section_data(*konst)), f->constant_sha256) << f->name;
  std::cout << "[ built    ] " << f->name << ": " << compared << " fields equal, " << version
            << " version-dependent fields differ\n";
}

// The plist Reduction for a reduction record, when the vocabulary says the
// same thing: a Sum / Avg / Max over the whole H x W plane (both axes, or the
// one longer than 1), reduced axes kept.
std::optional<Net> reduction_network(const oracle::Fixture& f, std::string& why) {
  const std::string op = f.param("operation");
  const auto axes = f.param_list("axes");
  const auto shape = f.param_list("shape");
  // The record's output keeps the reduced axes as 1 (the plist Reduction's
  // only form), or lays the result out otherwise (keep_dims false).
  std::array<uint64_t, 4> kept{shape[0], shape[1], shape[2], shape[3]};
  for (uint64_t a : axes) kept[a] = 1;
  if (f.tensors.at(1).shape != kept) {
    why = "its output is not the input with reduced axes kept as 1 (keep_dims false)";
    return std::nullopt;
  }
  std::vector<std::string> dims;
  for (uint64_t a : axes) dims.push_back(a == 1 ? "Channel" : a == 2 ? "Height" : a == 3 ? "Width" : "Batch");
  // Sums and means over the channels of 1x1 planes read the channels as rows.
  const bool channels_of_points = axes == std::vector<uint64_t>{1} &&
                                  ((shape[2] == 1 && shape[3] == 1) || shape[1] == 1 || op == "reduce_max");
  if (std::find(axes.begin(), axes.end(), 1) != axes.end() && !channels_of_points) {
    why = "a channel sum or mean over planes larger than 1x1";
    return std::nullopt;
  }
  const bool plane = (axes == std::vector<uint64_t>{2, 3}) || (axes == std::vector<uint64_t>{3} && shape[2] == 1) ||
                     (axes == std::vector<uint64_t>{2} && shape[3] == 1) || channels_of_points;
  if (!plane) {
    why = "a reduction over one axis of a plane with both longer than 1 (hwx-build reduces whole planes)";
    return std::nullopt;
  }
  const std::string type = op == "reduce_sum" ? "Sum" : op == "reduce_mean" ? "Avg" : "Max";
  Net n;
  n.inputs = {{"x", input(static_cast<int>(shape[1]), static_cast<int>(shape[3]), static_cast<int>(shape[2]))}};
  std::vector<std::string> dim_items;
  for (const auto& d : dims) dim_items.push_back(str(d));
  n.units = {{"y", unit("x", "Reduction", {{"Type", str(type)}, {"Dimension", array(dim_items)}})}};
  n.outputs = {{"y@output", output("y")}};
  return n;
}

class OracleReduceBuild : public ::testing::TestWithParam<std::string> {};

TEST_P(OracleReduceBuild, HwxBuildWritesTheRecordsTask) {
  auto f = oracle::load_fixture(GetParam());
  ASSERT_TRUE(f.ok()) << f.error().message;
  std::string why;
  const auto net = reduction_network(*f, why);
  if (!net) {
    std::cout << "[ no plist ] " << f->name << ": " << why << "\n";
    return;
  }
  test::TempDir dir;
  test::write_text(dir.file("net.plist"), net->xml());
  auto n = load_network(dir.file("net.plist"));
  ASSERT_TRUE(n.ok()) << n.error().str();
  auto built = compile_network(*n);
  ASSERT_TRUE(built.ok()) << built.error().str();
  ASSERT_EQ(built->tasks.size(), 1u);
  auto apple = parse_program(oracle::anec_image(*f, Bytes(f->constant_size, 0)), f->name + ".anec");
  ASSERT_TRUE(apple.ok()) << apple.error().str();
  const RegisterImage& theirs = apple->tasks[0].regs;
  const RegisterImage& ours = built->tasks[0].regs;
  const auto* win = RegisterDatabase::h13().find("Common.InDim.Win");
  if (apple->tasks.size() != 1 || theirs.get(*win) != ours.get(*win)) {
    // Apple folds long rows (128 -> 4 rows of 32): a layout choice.
    std::cout << "[ folded   ] " << f->name << ": Apple's task reads the plane as " << theirs.get(*win)
              << "-wide rows, hwx-build as " << ours.get(*win) << "\n";
    return;
  }
  // Over one channel the reduction is a copy, and a channel maximum a
  // pass-through task too: macOS 26 writes their kernel format.
  const bool copy = f->param_list("axes") == std::vector<uint64_t>{1} &&
                    (f->param_list("shape")[1] == 1 || f->param("operation") == "reduce_max");
  size_t compared = 0, version = 0;
  for (const FieldInfo& fi : RegisterDatabase::h13().fields()) {
    const uint32_t a = ours.get(fi), b = theirs.get(fi);
    if (version_field(fi.name) || reduction_version_field(fi.name) || (copy && oracle::passthrough_version_field(fi.name))) {
      version += a != b;
      continue;
    }
    ++compared;
    EXPECT_EQ(a, b) << f->name << ": " << fi.name << " hwx-build " << a << ", Apple " << b;
  }
  std::cout << "[ built    ] " << f->name << ": " << compared << " fields equal, " << version
            << " version-dependent fields differ\n";
}

INSTANTIATE_TEST_SUITE_P(Records, OracleBuild, ::testing::ValuesIn(oracle::fixture_files(kBuildConvDir)), oracle::test_name);
INSTANTIATE_TEST_SUITE_P(Records, OracleReduceBuild,
                         ::testing::ValuesIn(oracle::fixture_files(std::string(LIBANE_SOURCE_DIR) +
                                                                   "/tests/fixtures/oracles/h13/reduce")),
                         oracle::test_name);

}  // namespace
}  // namespace ane
