// MIL real_div against Apple's records (tests/fixtures/oracles/h13/binary_div,
// MIL verbatim): Apple compiles x / y to two tasks, the neural engine's
// reciprocal table on y with its result kept in L2, then the planar engine's
// product with x. hwx-build's macOS 26 profile must write both tasks as
// Apple's, field for field outside the version fields and the fields listed
// below, with the constant section's SHA-256; Apple's own task words, given
// that constant section, must compute what hwx-build's program computes; and
// both profiles (v4.2.1 goes through memory) the same bits.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ane/anec.h"
#include "ane/compiler.h"
#include "ane/fp16.h"
#include "ane/mil_network.h"
#include "ane/program.h"
#include "ane/registers.h"
#include "ane/sha256.h"
#include "ane/sim.h"
#include "oracle_build_fields.h"
#include "compile_net.h"
#include "oracle_fixture.h"
#include "support.h"

namespace ane {
namespace {

const std::string kDivDir = std::string(LIBANE_SOURCE_DIR) + "/tests/fixtures/oracles/h13/binary_div";

// Fields hwx-build writes otherwise than Apple, and why. Each entry must be
// needed by some record (RealDivRecordList), so the list cannot hide a change.
struct Listed {
  const char* prefix;
  bool one_value_plane;  // only for planes of one value (1xCx1x1)
  const char* why;
};
const std::vector<Listed>& listed_fields() {
  static const std::vector<Listed> v = {
      // Apple lays a one-value plane's reciprocal out with its channels
      // innermost, on half the lanes, and the product reads it broadcast:
      // hwx-build keeps the channels-in-planes layout of every other shape.
      {"Common.Cfg.ChannelsInner", true, "channels innermost"},
      {"Common.Cfg.ActiveNE", true, "as ChannelsInner: fewer engines"},
      {"Header[8].ENE", true, "as ActiveNE"},
      {"KernelDMASrc.CoeffDMAConfig[", true, "as ActiveNE: lanes 8 - 15 off"},
      {"KernelDMASrc.CoeffBfrSize[", true, "as ActiveNE: lanes 8 - 15 sized 0x10"},
      {"Common.Broadcast.Src2ChannelsW", true, "the product reads the channels-innermost reciprocal"},
      // Bit 13: set at 512 channels, clear at 64 and on the taller planes;
      // the rule is not known (docs/compiler.md). hwx-build clears it on Inv.
      {"Header[4].DebugLogEvents", true, "bit 13, by a rule not known"},
  };
  return v;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

Expected<Network> load_record_mil(const std::string& fx, test::TempDir& dir) {
  test::write_text(dir.file("model.mil"), read_text(fx.substr(0, fx.size() - 3) + ".mil"));
  return load_model(dir.file("model.mil"));
}

Expected<CompiledProgram> compile(const Network& net, CompilerProfile profile) {
  return test::compile_as(net, profile, "libane real_div test");
}

// Random fp16 values in [lo, hi) of either sign.
sim::Tensor random_tensor(std::array<uint64_t, 4> shape, uint32_t seed, float lo, float hi) {
  sim::Tensor t;
  t.nchw = {static_cast<uint32_t>(shape[0]), static_cast<uint32_t>(shape[1]), static_cast<uint32_t>(shape[2]),
            static_cast<uint32_t>(shape[3])};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::bernoulli_distribution sign(0.5);
  for (size_t i = 0; i < t.elements(); ++i) t.data.push_back(float_to_fp16(sign(rng) ? -u(rng) : u(rng)));
  return t;
}

// The program's y for inputs x and z (the divisor).
std::vector<uint16_t> run(const Program& p, const sim::Tensor& x, const sim::Tensor& z, const std::string& y) {
  auto sim = sim::Simulator::create(p);
  EXPECT_TRUE(sim.ok()) << sim.error().str();
  if (!sim) return {};
  EXPECT_TRUE(sim->set_input("x", x).ok());
  EXPECT_TRUE(sim->set_input("z", z).ok());
  auto st = sim->run();
  EXPECT_TRUE(st.ok()) << st.error().str();
  auto out = sim->read_buffer(y);
  EXPECT_TRUE(out.ok()) << (out ? "" : out.error().str());
  return out ? out->data : std::vector<uint16_t>{};
}

void compare_record(const std::string& fx, std::set<std::string>& used) {
  auto f = oracle::load_fixture(fx);
  ASSERT_TRUE(f.ok()) << f.error().message;
  test::TempDir dir;
  auto net = load_record_mil(fx, dir);
  ASSERT_TRUE(net.ok()) << net.error().str();
  auto built = compile(*net, CompilerProfile::Macos26);
  ASSERT_TRUE(built.ok()) << built.error().str();
  auto apple = parse_program(oracle::anec_image(*f, Bytes(f->constant_size, 0)), f->name + ".anec");
  ASSERT_TRUE(apple.ok()) << apple.error().str();
  ASSERT_EQ(apple->tasks.size(), 2u);
  ASSERT_EQ(built->tasks.size(), 2u);
  const auto shape = f->tensors.at(0).shape;
  const bool one_value = shape[2] == 1 && shape[3] == 1;
  // macOS 26's stream layout: the table task's whole kernel-DMA block, the
  // product's without the lane words (compiler.md, "Stream layout").
  for (size_t t = 0; t < 2; ++t)
    EXPECT_EQ(oracle::stream_shape(built->tasks[t]), oracle::stream_shape(f->tasks[t])) << f->name << " task " << t;
  for (size_t t = 0; t < 2; ++t)
    for (const FieldInfo& fi : RegisterDatabase::h13().fields()) {
      const uint32_t ours = built->tasks[t].regs.get(fi), theirs = apple->tasks[t].regs.get(fi);
      if (ours == theirs || oracle::version_field(fi.name)) continue;
      const Listed* hit = nullptr;
      for (const auto& l : listed_fields())
        if (fi.name.rfind(l.prefix, 0) == 0 && (!l.one_value_plane || one_value)) hit = &l;
      if (hit) {
        used.insert(hit->prefix);
        continue;
      }
      ADD_FAILURE() << f->name << " task " << t << ": " << fi.name << " hwx-build " << ours << ", Apple " << theirs;
    }
  const auto* konst = built->file.find_section("__TEXT", "__const");
  ASSERT_NE(konst, nullptr);
  const auto data = built->file.section_data(*konst);
  Bytes bytes(data.begin(), data.end());
  if (one_value) {
    // Apple's one-value form reads the table on 8 lanes: a 1024-byte section,
    // the first half of hwx-build's 16-lane one (the table, then zeros).
    ASSERT_GE(bytes.size(), f->constant_size);
    EXPECT_TRUE(std::all_of(bytes.begin() + static_cast<std::ptrdiff_t>(f->constant_size), bytes.end(),
                            [](uint8_t b) { return b == 0; }));
    bytes.resize(f->constant_size);
  }
  EXPECT_EQ(sha256_hex(bytes), f->constant_sha256) << f->name;
}

class RealDivRecord : public ::testing::TestWithParam<std::string> {};

TEST_P(RealDivRecord, TranscriptionMatchesTheRecordsOwnFigures) {
  auto f = oracle::load_fixture(GetParam());
  ASSERT_TRUE(f.ok()) << f.error().message;
  oracle::expect_tasks_match_record(*f);
}

TEST_P(RealDivRecord, CompilesAsAppleOutsideTheListedFields) {
  std::set<std::string> used;
  compare_record(GetParam(), used);
}

// Apple's task words with hwx-build's constant section (the same bytes: the
// SHA-256 above) against hwx-build's program, on divisors of every size the
// table covers, and the two profiles against each other.
TEST_P(RealDivRecord, ApplesTasksComputeWhatHwxBuildsDo) {
  auto f = oracle::load_fixture(GetParam());
  ASSERT_TRUE(f.ok()) << f.error().message;
  test::TempDir dir;
  auto net = load_record_mil(GetParam(), dir);
  ASSERT_TRUE(net.ok()) << net.error().str();
  auto macos26 = compile(*net, CompilerProfile::Macos26);
  auto v421 = compile(*net, CompilerProfile::V421);
  ASSERT_TRUE(macos26.ok() && v421.ok());
  const auto* konst = macos26->file.find_section("__TEXT", "__const");
  ASSERT_NE(konst, nullptr);
  const auto data = macos26->file.section_data(*konst);
  const Bytes image = oracle::anec_image(*f, Bytes(data.begin(), data.end()));
  auto decoded = parse_program(image, f->name + ".anec");
  ASSERT_TRUE(decoded.ok()) << decoded.error().str();
  // The inputs in the record's order (x, z); each one's slot is the one the
  // task reading it names: the product reads x, the reciprocal z.
  const auto* rbase = RegisterDatabase::h13().find("Header[8].RBase0");
  const auto* wbase = RegisterDatabase::h13().find("Header[8].WBase");
  AnecDescriptor d;
  d.source = f->file;
  int inputs = 0;
  for (const auto& t : f->tensors) {
    AnecTensor a;
    const bool in = t.binding == 1;
    a.name = in ? (inputs++ == 0 ? "x" : "z") : "y";
    a.direction = in ? BufferDirection::Input : BufferDirection::Output;
    a.slot = static_cast<int>(!in ? decoded->tasks[1].regs.get(*wbase)
                                  : decoded->tasks[a.name == "x" ? 1 : 0].regs.get(*rbase));
    a.nchw = t.shape;
    a.strides = t.strides;
    d.tensors.push_back(a);
  }
  auto theirs = read_anec(image, f->name + ".anec", &d);
  ASSERT_TRUE(theirs.ok()) << theirs.error().str();
  auto ours = parse_program(macos26->bytes, "macos26.hwx");
  auto through_memory = parse_program(v421->bytes, "v421.hwx");
  ASSERT_TRUE(ours.ok() && through_memory.ok());
  const auto shape = f->tensors.at(0).shape;
  const sim::Tensor x = random_tensor(shape, 5, 0.0f, 8.0f);
  for (const auto& [lo, hi] : std::vector<std::pair<float, float>>{{0.125f, 8.0f}, {1e-3f, 0.125f}, {8.0f, 4096.0f}}) {
    SCOPED_TRACE(::testing::Message() << "divisors of magnitude [" << lo << ", " << hi << ")");
    const sim::Tensor z = random_tensor(shape, 9, lo, hi);
    const auto want = run(*ours, x, z, "y@output");
    ASSERT_EQ(want.size(), x.data.size());
    EXPECT_EQ(run(*theirs, x, z, "y"), want) << f->name;
    EXPECT_EQ(run(*through_memory, x, z, "y@output"), want) << f->name;
  }
}

INSTANTIATE_TEST_SUITE_P(Records, RealDivRecord, ::testing::ValuesIn(oracle::fixture_files(kDivDir)),
                         oracle::test_name);

TEST(RealDivRecordList, EveryListedFieldIsNeeded) {
  std::set<std::string> used;
  for (const auto& fx : oracle::fixture_files(kDivDir)) compare_record(fx, used);
  for (const auto& l : listed_fields()) EXPECT_TRUE(used.count(l.prefix)) << l.prefix;
}

// x / z through the reciprocal table and the product: within 5e-3 of the
// exact quotient (the table's own error, 2^-8 / 8 * 16 near 0.5, then two
// roundings to fp16), for divisors of either sign from 1/8 to 8. Rows of 16
// values keep the reciprocal in L2; rows of 80 (the engines' strips differ)
// pass it through memory.
TEST(MilRealDiv, FollowsTheQuotient) {
  const auto* wbe = RegisterDatabase::h13().find("Header[8].WBE");
  for (const auto& [shape, kept] : std::vector<std::pair<std::array<uint64_t, 4>, bool>>{{{1, 32, 4, 16}, true},
                                                                                        {{1, 8, 2, 80}, false}}) {
    const std::string type = fmt::format("tensor<fp16, [1, {}, {}, {}]>", shape[1], shape[2], shape[3]);
    SCOPED_TRACE(type);
    test::TempDir dir;
    test::write_text(dir.file("model.mil"), "program(1.3)\n{\n  func main<ios18>(" + type + " x, " + type +
                                                " z) {\n    " + type +
                                                " y = real_div(x = x, y = z)[name = string(\"y\")];\n"
                                                "  } -> (y);\n}\n");
    auto net = load_model(dir.file("model.mil"));
    ASSERT_TRUE(net.ok()) << net.error().str();
    auto built = compile(*net, CompilerProfile::Macos26);
    ASSERT_TRUE(built.ok()) << built.error().str();
    ASSERT_EQ(built->tasks.size(), 2u);
    EXPECT_EQ(built->tasks[0].regs.get(*wbe), kept ? 0u : 1u) << "task 0 writes through tile DMA";
    auto p = parse_program(built->bytes, "m.hwx");
    ASSERT_TRUE(p.ok());
    const sim::Tensor x = random_tensor(shape, 3, 0.0f, 8.0f);
    const sim::Tensor z = random_tensor(shape, 4, 0.125f, 8.0f);
    const auto y = run(*p, x, z, "y@output");
    ASSERT_EQ(y.size(), x.data.size());
    for (size_t i = 0; i < y.size(); ++i) {
      const double want = double(fp16_to_float(x.data[i])) / fp16_to_float(z.data[i]);
      EXPECT_NEAR(fp16_to_float(y[i]), want, 5e-3 * std::fabs(want) + 1e-6)
          << "x " << fp16_to_float(x.data[i]) << " z " << fp16_to_float(z.data[i]);
    }
  }
}

// A table task's result that another task also reads (here through a view:
// a channel sum reads its channels as rows) is not kept in L2: both readers
// get it from memory, and both profiles compute the same bits.
TEST(MilL2Chain, AResultWithAnotherReaderGoesThroughMemory) {
  test::TempDir dir;
  test::write_text(dir.file("model.mil"),
                   "program(1.3)\n{\n  func main<ios18>(tensor<fp16, [1, 64, 1, 1]> x, tensor<fp16, [1, 64, 1, 1]> z) {\n"
                   "    tensor<fp16, [1, 64, 1, 1]> r = inverse(x = z)[name = string(\"r\")];\n"
                   "    tensor<fp16, [1, 64, 1, 1]> y = mul(x = x, y = r)[name = string(\"y\")];\n"
                   "    tensor<int32, [1]> ax = const()[name = string(\"ax\"), val = tensor<int32, [1]>([1])];\n"
                   "    bool kd = const()[name = string(\"kd\"), val = bool(true)];\n"
                   "    tensor<fp16, [1, 1, 1, 1]> s = reduce_sum(x = r, axes = ax, keep_dims = kd)[name = string(\"s\")];\n"
                   "  } -> (y, s);\n}\n");
  auto net = load_model(dir.file("model.mil"));
  ASSERT_TRUE(net.ok()) << net.error().str();
  auto macos26 = compile(*net, CompilerProfile::Macos26);
  auto v421 = compile(*net, CompilerProfile::V421);
  ASSERT_TRUE(macos26.ok()) << macos26.error().str();
  ASSERT_TRUE(v421.ok()) << v421.error().str();
  ASSERT_EQ(macos26->tasks.size(), 3u);
  EXPECT_EQ(macos26->tasks[0].regs.get(*RegisterDatabase::h13().find("Header[8].WBE")), 1u);
  auto pa = parse_program(macos26->bytes, "a.hwx");
  auto pb = parse_program(v421->bytes, "b.hwx");
  ASSERT_TRUE(pa.ok() && pb.ok());
  const sim::Tensor x = random_tensor({1, 64, 1, 1}, 1, 0.0f, 4.0f);
  const sim::Tensor z = random_tensor({1, 64, 1, 1}, 2, 0.25f, 4.0f);
  for (const char* out : {"y@output", "s@output"}) {
    const auto a = run(*pa, x, z, out), b = run(*pb, x, z, out);
    ASSERT_FALSE(a.empty());
    EXPECT_EQ(a, b) << out;
  }
}

TEST(MilRealDiv, RefusesWhatTheRecordsDoNotShow) {
  auto refusal = [](const std::string& body) {
    test::TempDir dir;
    test::write_text(dir.file("model.mil"),
                     "program(1.3)\n{\n  func main<ios18>(tensor<fp16, [1, 8, 2, 2]> x, tensor<fp16, [1, 8, 1, 1]> s) {\n" +
                         body + "  } -> (y);\n}\n");
    auto net = load_model(dir.file("model.mil"));
    return net.ok() ? std::string() : net.error().str();
  };
  // A constant divisor compiles (TensorConstantShapes); a constant dividend does not.
  const std::string dividend = refusal(
      "    fp16 c = const()[name = string(\"c\"), val = fp16(0x1p+1)];\n"
      "    tensor<fp16, [1, 8, 2, 2]> y = real_div(x = c, y = x)[name = string(\"y\")];\n");
  EXPECT_NE(dividend.find("model.mil:5: op 'real_div': argument 'x': a constant dividend (c / y) is not supported"),
            std::string::npos)
      << dividend;
  const std::string broadcast =
      refusal("    tensor<fp16, [1, 8, 2, 2]> y = real_div(x = x, y = s)[name = string(\"y\")];\n");
  EXPECT_NE(broadcast.find("op 'real_div': argument 'y'"), std::string::npos) << broadcast;
  EXPECT_NE(broadcast.find("broadcasting is not supported"), std::string::npos) << broadcast;
}

}  // namespace
}  // namespace ane
