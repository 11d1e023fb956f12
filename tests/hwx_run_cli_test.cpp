// hwx-run through the real binary: outputs as .npy, --trace, --json,
// options, and the one-line errors with exit status 2.
#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ane/dump.h"
#include "ane/fp16.h"
#include "ane/npy.h"
#include "support.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ane {
namespace {

struct Result {
  int rc = -1;
  std::string out, err;
};

Result hwx_run(const std::string& args) {
  Result r;
  r.rc = test::run_command(std::string(HWX_RUN_EXE) + " " + args, &r.out, &r.err);
  return r;
}

std::string q(const std::string& s) { return "'" + s + "'"; }

// An fp16 .npy of the given shape and values.
std::string write_npy(const test::TempDir& dir, const std::string& name, std::vector<uint64_t> shape,
                      const std::vector<float>& v) {
  std::vector<uint16_t> h;
  for (float f : v) h.push_back(float_to_fp16(f));
  const std::string path = dir.file(name);
  test::write_bytes(path, npy::encode_f16(h, shape));
  return path;
}

std::vector<float> read_npy(const std::string& path, std::vector<uint64_t>* shape = nullptr) {
  auto a = npy::load(path);
  EXPECT_TRUE(a.ok()) << path << ": " << (a.ok() ? "" : a.error().str());
  if (!a.ok()) return {};
  if (shape) *shape = a->shape;
  std::vector<float> out;
  for (uint16_t h : a->to_fp16()) out.push_back(fp16_to_float(h));
  return out;
}

// Exit status 2 and exactly one line on stderr.
void expect_error(const Result& r, const std::string& line) {
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_EQ(r.err, line + "\n");
}

TEST(HwxRunCli, ReluWritesItsOutputAsNpy) {
  ANE_REQUIRE_CORPUS();
  test::TempDir dir;
  std::vector<float> x(77), want(77);
  for (int i = 0; i < 77; ++i) {
    x[i] = i % 2 ? 5.0f : -3.0f;
    want[i] = std::max(0.0f, x[i]);
  }
  const std::string in = write_npy(dir, "x.npy", {1, 1, 1, 77}, x);
  const Result r = hwx_run(q(test::corpus_hwx_path("relu")) + " -i image=" + q(in) + " -o " + q(dir.file("out")));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "");
  std::vector<uint64_t> shape;
  EXPECT_EQ(read_npy(dir.file("out/probs@output.npy"), &shape), want);
  EXPECT_EQ(shape, (std::vector<uint64_t>{1, 1, 1, 77}));
  EXPECT_NE(r.out.find("probs@output"), std::string::npos);
}

// The H14 examples run from the command line as the README shows; an H16
// program is refused in one line.
TEST(HwxRunCli, RunsTheH14Examples) {
  const std::string ex = std::string(LIBANE_SOURCE_DIR) + "/examples/h14/";
  test::TempDir dir;
  const Result tanh_run = hwx_run(q(ex + "tanh_c64.hwx") + " -i x=" + q(ex + "inputs/x.npy") + " -o " +
                                  q(dir.file("out")) + " --expect " + q(ex + "expected") + " --tolerance 0.002 --trace");
  ASSERT_EQ(tanh_run.rc, 0) << tanh_run.err << tanh_run.out;
  EXPECT_NE(tanh_run.out.find("NE table"), std::string::npos) << tanh_run.out;
  EXPECT_NE(tanh_run.out.find("H14 numerics"), std::string::npos) << tanh_run.out;

  std::vector<float> x(64 * 64), z(64 * 64), want(64 * 64);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<float>(i % 97) / 8 - 6;
    z[i] = static_cast<float>(i % 31) / 4 - 3;
    want[i] = fp16_to_float(float_to_fp16(x[i] + z[i]));  // both exact in fp16; the sum rounded once
  }
  const std::string xs = write_npy(dir, "x.npy", {1, 64, 8, 8}, x), zs = write_npy(dir, "z.npy", {1, 64, 8, 8}, z);
  const Result add = hwx_run(q(ex + "add_1x64x8x8.hwx") + " -i x=" + q(xs) + " -i z=" + q(zs) + " -o " +
                             q(dir.file("sum")));
  ASSERT_EQ(add.rc, 0) << add.err;
  EXPECT_EQ(read_npy(dir.file("sum/y.npy")), want);

  // H16 runs with M4's reported rounding, and says so; these sums are exact
  // in fp16, so either rounding gives them.
  const std::string h16 = std::string(LIBANE_SOURCE_DIR) + "/examples/h16/add_1x64x8x8.hwx";
  const Result m4 = hwx_run(q(h16) + " -i x=" + q(xs) + " -i z=" + q(zs) + " -o " + q(dir.file("h16")) + " --trace");
  ASSERT_EQ(m4.rc, 0) << m4.err;
  EXPECT_NE(m4.out.find("H16 numerics: results rounded ties away from zero"), std::string::npos) << m4.out;
  EXPECT_EQ(read_npy(dir.file("h16/y.npy")), want);
  const Result json = hwx_run(q(h16) + " -i x=" + q(xs) + " -i z=" + q(zs) + " -o " + q(dir.file("h16j")) + " --json");
  ASSERT_EQ(json.rc, 0) << json.err;
  const auto options = json::parse(json.out).at("options");
  EXPECT_NE(std::find(options.begin(), options.end(), "round=half-away"), options.end()) << options.dump();
}

TEST(HwxRunCli, Float32InputsOfAnyShapeWithTheRightCount) {
  ANE_REQUIRE_CORPUS();
  test::TempDir dir;
  // A '<f4' file of shape (3,), written from bytes: 1.0, 2.0, 3.0.
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
  std::string header = dict;
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::string file = "\x93NUMPY\x01";
  file += '\0';
  file += static_cast<char>(header.size());
  file += '\0';
  file += header;
  for (uint32_t f : {0x3f800000u, 0x40000000u, 0x40400000u})
    for (int i = 0; i < 4; ++i) file += static_cast<char>(f >> (8 * i));
  test::write_text(dir.file("x.npy"), file);
  const Result r = hwx_run(q(test::corpus_hwx_path("conv")) + " -i image=" + q(dir.file("x.npy")) + " -o " +
                           q(dir.file("out")));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(read_npy(dir.file("out/probs@output.npy")), (std::vector<float>{12, 12, 12}));
}

TEST(HwxRunCli, TracePrintsOneLinePerTask) {
  ANE_REQUIRE_CORPUS();
  test::TempDir dir;
  const std::string a = write_npy(dir, "a.npy", {1, 16384, 1, 1}, std::vector<float>(16384, 2));
  const std::string b = write_npy(dir, "b.npy", {1, 16, 1, 1}, std::vector<float>(16, 3));
  const Result r = hwx_run(q(test::corpus_hwx_path("concat")) + " -i input_0=" + q(a) + " -i input_1=" + q(b) +
                           " -o " + q(dir.file("o")) + " --trace");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 3) << r.out;  // two tasks, one output
  EXPECT_EQ(r.out.rfind("task 0 +0x0 NE pass in 1x16384x1x1 out 1x16384x1x1", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\ntask 1 +0x300 NE pass in 1x16x1x1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("TileDMADst s4[0x100000,0x1003c2)"), std::string::npos) << r.out;
  const auto y = read_npy(dir.file("o/output@output.npy"));
  ASSERT_EQ(y.size(), 16400u);
  EXPECT_EQ(y[16383], 2.0f);
  EXPECT_EQ(y[16384], 3.0f);
}

TEST(HwxRunCli, JsonSummary) {
  ANE_REQUIRE_CORPUS();
  test::TempDir dir;
  const std::string a = write_npy(dir, "a.npy", {1, 64, 1, 1}, std::vector<float>(64, 3));
  const std::string b = write_npy(dir, "b.npy", {64}, std::vector<float>(64, 2));
  const Result r = hwx_run(q(test::corpus_hwx_path("sum")) + " -i image=" + q(a) + " -i image2=" + q(b) + " -o " +
                           q(dir.file("o")) + " --json --option acc=fp64 --assume A1");
  ASSERT_EQ(r.rc, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["file"], test::corpus_hwx_path("sum"));
  EXPECT_NE(std::find(j["options"].begin(), j["options"].end(), "acc=fp64"), j["options"].end());
  EXPECT_EQ(std::find(j["options"].begin(), j["options"].end(), "A1 pe-minmax"), j["options"].end())
      << "A1 is retired: accepted, but no longer an assumption";
  ASSERT_EQ(j["inputs"].size(), 2u);
  ASSERT_EQ(j["outputs"].size(), 1u);
  EXPECT_EQ(j["outputs"][0]["name"], "probs@output");
  EXPECT_EQ(j["outputs"][0]["slot"], 4);
  EXPECT_EQ(j["outputs"][0]["min"], 5.0);
  EXPECT_EQ(j["outputs"][0]["max"], 5.0);
  ASSERT_EQ(j["tasks"].size(), 1u);
  EXPECT_EQ(j["tasks"][0]["engine"], "PE");
  EXPECT_EQ(j["tasks"][0]["op"], "add");
  EXPECT_EQ(j["tasks"][0]["checksum"], j["outputs"][0]["checksum"]) << "the task wrote the whole output densely";
  EXPECT_GE(j["peak_bytes"].get<uint64_t>(), j["slot_bytes"].get<uint64_t>());
}

TEST(HwxRunCli, OutputNamesAreSanitised) {
  ANE_REQUIRE_CORPUS();
  test::TempDir dir;
  // relu.hwx with its output renamed "pr/bs@output" everywhere the name occurs.
  Bytes bytes = test::read_or_die(test::corpus_hwx_path("relu"));
  const std::string from = "probs@output", to = "pr/bs@output";
  for (auto it = std::search(bytes.begin(), bytes.end(), from.begin(), from.end()); it != bytes.end();
       it = std::search(it, bytes.end(), from.begin(), from.end()))
    std::copy(to.begin(), to.end(), it);
  test::write_bytes(dir.file("renamed.hwx"), bytes);
  const std::string x = write_npy(dir, "x.npy", {1, 1, 1, 77}, std::vector<float>(77, 1));
  const Result r = hwx_run(q(dir.file("renamed.hwx")) + " -i image=" + q(x) + " -o " + q(dir.file("o")));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir.file("o/pr_bs@output.npy"))) << r.out;
}

TEST(HwxRunCli, ErrorsAreOneLineWithStatus2) {
  ANE_REQUIRE_CORPUS();
  test::TempDir dir;
  const std::string sum = test::corpus_hwx_path("sum"), relu = test::corpus_hwx_path("relu");
  const std::string x64 = write_npy(dir, "x64.npy", {1, 64, 1, 1}, std::vector<float>(64, 1));
  const std::string x76 = write_npy(dir, "x76.npy", {76}, std::vector<float>(76, 1));
  const std::string out = " -o " + q(dir.file("o"));

  expect_error(hwx_run(q(sum) + " -i image=" + q(x64) + out),
               "hwx-run: " + sum + ": missing input 'image2'");
  expect_error(hwx_run(q(sum) + " -i imag=" + q(x64) + out), "hwx-run: " + sum + ": unknown input 'imag' (inputs: 'image2', 'image')");
  expect_error(hwx_run(q(relu) + " -i image=" + q(x76) + out),
               "hwx-run: " + x76 + ": 76 elements, but input 'image' [1,1,1,77] needs 77");
  expect_error(hwx_run(q(relu) + " -i image" + out), "hwx-run: -i image: expected NAME=FILE.npy");
  expect_error(hwx_run(q(relu) + " -i image=" + q(relu) + out),
               "hwx-run: " + relu + ": offset 0x0: not a .npy file (no \\x93NUMPY magic)");
  expect_error(hwx_run(q(relu) + " -i image=" + q(dir.file("none.npy")) + out),
               "hwx-run: " + dir.file("none.npy") + ": cannot open: No such file or directory");
  expect_error(hwx_run(q(relu) + " --option acc=fp16" + out),
               "hwx-run: --option: unknown value 'fp16' for option acc (choose fp32, fp64, fp32-ordered, q15.16)");

  // A malformed container: the first 0x100 bytes of relu.hwx.
  Bytes head = test::read_or_die(relu);
  head.resize(0x100);
  test::write_bytes(dir.file("short.hwx"), head);
  const Result m = hwx_run(q(dir.file("short.hwx")) + " -i image=" + q(x64) + out);
  EXPECT_EQ(m.rc, 2);
  EXPECT_EQ(m.err.rfind("hwx-run: " + dir.file("short.hwx") + ": offset 0x", 0), 0u) << m.err;
  EXPECT_EQ(std::count(m.err.begin(), m.err.end(), '\n'), 1);

  // An unsupported register value: relu.hwx with NonlinearMode 3.
  Bytes bytes = test::read_or_die(relu);
  const Program p = *open_program(relu);
  const auto& t = p.tasks[0];
  for (const auto& s : t.streams)
    if (s.address == 0xC800) {
      const uint64_t at = t.file_offset + s.task_offset + 4 + 4;  // MACCfg, the second NE register
      put_u32(bytes, at, (t.regs.word(0xC804) & ~0x30000u) | 0x30000u);
    }
  test::write_bytes(dir.file("nl3.hwx"), bytes);
  const std::string x77 = write_npy(dir, "x77.npy", {1, 1, 1, 77}, std::vector<float>(77, 1));
  expect_error(hwx_run(q(dir.file("nl3.hwx")) + " -i image=" + q(x77) + out),
               "hwx-run: " + dir.file("nl3.hwx") + ": unsupported: NE.MACCfg.NonlinearMode=3 in task 0");

  EXPECT_EQ(hwx_run(q(relu)).rc, 2) << "-o is required";
}

TEST(HwxRunCli, HelpTeachesWithExamples) {
  const Result r = hwx_run("--help");
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("Examples:"), std::string::npos);
  EXPECT_NE(r.out.find("acc=fp32|fp64|fp32-ordered|q15.16"), std::string::npos);
  EXPECT_NE(r.out.find("A1 pe-minmax"), std::string::npos);
}

}  // namespace
}  // namespace ane
