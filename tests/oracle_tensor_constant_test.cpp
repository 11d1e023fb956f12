// H13 records of an element-wise op with a tensor constant from a weight
// blob (`binary_{add,sub,mul,maximum,minimum}_c{64,512}_constant_blob`,
// tests/fixtures/oracles/h13/binary_tensor_constant), and of real_div by a
// scalar (`binary_real_div_c64_constant_scalar`), which Apple compiles as mul
// by its reciprocal once per channel. Apple compiles each as two tasks: the
// neural engine copies the constant section into L2, then the planar engine
// reads it there as channels along W and applies the op.
//
// Each record is checked three ways:
//  * its constant section, rebuilt from the values Apple's compiler read
//    (blob_constant.h) and laid out for the op, hashes to the record;
//  * Apple's two tasks run on the simulator to op(x, v), evaluated here in
//    double and rounded once to fp16, on every input;
//  * hwx-build compiles the record's MIL to Apple's two tasks, field for
//    field outside the version fields, with Apple's constant section;
//  * hwx-build's program (both profiles) runs to op(x, v) bit for bit.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ane/anec.h"
#include "ane/fp16.h"
#include "ane/mil_network.h"
#include "ane/compiler.h"
#include "ane/program.h"
#include "ane/registers.h"
#include "ane/sha256.h"
#include "ane/sim.h"
#include "blob_constant.h"
#include "milblob_writer.h"
#include "oracle_build_fields.h"
#include "compile_net.h"
#include "oracle_fixture.h"
#include "support.h"

namespace ane {
namespace {

const std::string kConstantDir = std::string(LIBANE_SOURCE_DIR) + "/tests/fixtures/oracles/h13/binary_tensor_constant/";

std::vector<std::string> records() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(kConstantDir))
    if (e.path().extension() == ".fx") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The values the compiler read: the campaign's weight file from byte 0
// (docs/simulator.md, "Which values"). real_div by a scalar z written in the
// MIL (`value=fp16(<hex float>)`): 1/z rounded to fp16, once per channel,
// the factor it multiplies by.
std::vector<uint16_t> constant_values(const oracle::Fixture& f) {
  if (f.weights.at("storage") == "inline_scalar") {
    const std::string text = f.weights.at("value");  // fp16(0x1p-1)
    const double z = std::strtod(text.substr(5, text.size() - 6).c_str(), nullptr);
    EXPECT_EQ(f.params.at("operation"), "real_div");
    return std::vector<uint16_t>(f.tensors.at(0).shape[1], float_to_fp16(static_cast<float>(1.0 / z)));
  }
  const uint64_t payload = std::stoull(f.weights.at("payload_bytes"));
  return test::blob_values(test::minted_weight_file(payload), 64, payload / 2);
}

double reference(const std::string& op, double x, double v) {
  if (op == "add") return x + v;
  if (op == "sub") return x - v;
  if (op == "mul" || op == "real_div") return x * v;  // real_div: v is the reciprocal
  if (op == "maximum") return std::max(x, v);
  return std::min(x, v);
}

// Runs the program on `runs` random inputs from `seed` on (x of the
// record's first tensor's shape, [1,C,H,W]) and compares its output `y` with
// op(x, v), v one value per channel, evaluated in double and rounded once to
// fp16 (exact in fp32 for these ops); returns the values compared.
size_t expect_runs_to_op(sim::Simulator& s, const std::string& y_name, const oracle::Fixture& f,
                         const std::vector<uint16_t>& values, uint32_t seed, uint32_t runs) {
  const std::string op = f.params.at("operation");
  const auto shape = f.tensors.at(0).shape;
  const uint32_t c = static_cast<uint32_t>(shape[1]);
  const uint64_t plane = shape[2] * shape[3];
  size_t checked = 0;
  for (uint32_t k = seed; k < seed + runs; ++k) {
    sim::Tensor x;
    x.nchw = {1, c, static_cast<uint32_t>(shape[2]), static_cast<uint32_t>(shape[3])};
    x.data = test::uniform_fp16(c * plane, -4, 4, k);
    EXPECT_TRUE(s.set_input("x", x).ok());
    auto run = s.run();
    EXPECT_TRUE(run.ok()) << run.error().str();
    auto y = s.read_buffer(y_name);
    EXPECT_TRUE(y.ok()) << (y ? "" : y.error().str());
    if (!run || !y || y->data.size() != c * plane) return checked;
    for (uint64_t i = 0; i < c * plane; ++i, ++checked) {
      const uint16_t v = values[i / plane];
      const uint16_t want =
          float_to_fp16(static_cast<float>(reference(op, fp16_to_float(x.data[i]), fp16_to_float(v))));
      if (y->data[i] != want) {
        ADD_FAILURE() << f.name << " value " << i << ": x " << std::hex << x.data[i] << " v " << v << " gives "
                      << y->data[i] << ", want " << want;
        return checked;
      }
    }
  }
  return checked;
}

uint32_t word_at(std::span<const uint8_t> b, uint64_t at) {
  return uint32_t{b[at]} | uint32_t{b[at + 1]} << 8 | uint32_t{b[at + 2]} << 16 | uint32_t{b[at + 3]} << 24;
}

class TensorConstantRecord : public ::testing::TestWithParam<std::string> {};

TEST_P(TensorConstantRecord, SectionHashesAndApplesTasksRunToTheOp) {
  auto f = oracle::load_fixture(GetParam());
  ASSERT_TRUE(f.ok()) << f.error().message;
  ASSERT_EQ(f->tasks.size(), 2u) << f->name;
  const std::string op = f->params.at("operation");
  const auto values = constant_values(*f);
  const Bytes section = test::blob_constant_section(op, values);
  ASSERT_EQ(section.size(), f->constant_size) << f->name;
  ASSERT_EQ(sha256_hex(section), f->constant_sha256) << f->name << ": the section is not the values laid for " << op;

  const Bytes image = oracle::anec_image(*f, section);
  auto decoded = parse_program(image, f->name + ".anec");
  ASSERT_TRUE(decoded.ok()) << decoded.error().str();
  // The second task reads x and writes y.
  const RegisterImage& op_task = decoded->tasks.back().regs;
  const auto& db = RegisterDatabase::h13();
  const AnecDescriptor d = oracle::io_descriptor(*f, op_task.get(*db.find("Header[8].RBase0")),
                                                 op_task.get(*db.find("Header[8].WBase")));
  auto program = read_anec(image, f->name + ".anec", &d);
  ASSERT_TRUE(program.ok()) << program.error().str();
  auto s = sim::Simulator::create(*program);
  ASSERT_TRUE(s.ok()) << s.error().str();
  EXPECT_EQ(expect_runs_to_op(*s, "y", *f, values, 3, 16), 16u * f->tensors.at(0).shape[1]);
}

// The record's MIL next to a MILBlob v2 weight file of the values Apple's
// compiler read, as the MIL's BLOBFILE offset 64 names them (the campaign's
// own file is not one: hwx-build's strict reader refuses its record).
Expected<Network> load_record_mil(const std::string& fx, const oracle::Fixture& f, test::TempDir& dir) {
  test::write_text(dir.file("model.mil"), read_text(fx.substr(0, fx.size() - 3) + ".mil"));
  if (!f.weights.count("payload_bytes")) return load_model(dir.file("model.mil"));  // a constant in the text
  const std::vector<uint16_t> values = constant_values(f);
  const test::MilBlob blob{mil::BlobDataType::Fp16, test::fp16_data(values), 0};
  const test::MilBlobFile file = test::write_milblob(std::span(&blob, 1));
  EXPECT_EQ(file.offsets.at(0), 64u);
  test::write_bytes(dir.file("weights.bin"), file.bytes);
  return load_model(dir.file("model.mil"));
}

Expected<CompiledProgram> compile(const Network& net, CompilerProfile profile) {
  return test::compile_as(net, profile, "libane tensor constant test");
}

// hwx-build's program for `net`, under both profiles, run as
// expect_runs_to_op does; `tasks` (when not 0) the task count expected.
void expect_both_profiles_run_to_op(const Network& net, const oracle::Fixture& f,
                                    const std::vector<uint16_t>& values, uint32_t seed, uint32_t runs,
                                    size_t tasks = 0) {
  const auto shape = f.tensors.at(0).shape;
  for (CompilerProfile profile : {CompilerProfile::Macos26, CompilerProfile::V421}) {
    SCOPED_TRACE(compiler_profile_name(profile));
    auto built = compile(net, profile);
    ASSERT_TRUE(built.ok()) << built.error().str();
    if (tasks) {
      EXPECT_EQ(built->tasks.size(), tasks);
    }
    auto program = parse_program(built->bytes, "built.hwx");
    ASSERT_TRUE(program.ok()) << program.error().str();
    auto s = sim::Simulator::create(*program);
    ASSERT_TRUE(s.ok()) << s.error().str();
    EXPECT_EQ(expect_runs_to_op(*s, "y@output", f, values, seed, runs), runs * shape[1] * shape[2] * shape[3]);
  }
}

// Both tasks as Apple's, field for field outside the version fields
// (oracle_build_fields.h), in Apple's stream layout, with Apple's constant
// section (its SHA-256).
TEST_P(TensorConstantRecord, HwxBuildWritesApplesTwoTasks) {
  auto f = oracle::load_fixture(GetParam());
  ASSERT_TRUE(f.ok()) << f.error().message;
  test::TempDir dir;
  auto net = load_record_mil(GetParam(), *f, dir);
  ASSERT_TRUE(net.ok()) << net.error().str();
  auto built = compile(*net, CompilerProfile::Macos26);
  ASSERT_TRUE(built.ok()) << built.error().str();
  auto apple = parse_program(oracle::anec_image(*f, Bytes(f->constant_size, 0)), f->name + ".anec");
  ASSERT_TRUE(apple.ok()) << apple.error().str();
  ASSERT_EQ(built->tasks.size(), 2u);
  size_t compared = 0;
  for (size_t t = 0; t < 2; ++t) {
    EXPECT_EQ(oracle::stream_shape(built->tasks[t]), oracle::stream_shape(f->tasks[t])) << f->name << " task " << t;
    for (const FieldInfo& fi : RegisterDatabase::h13().fields()) {
      if (oracle::version_field(fi.name)) continue;
      ++compared;
      EXPECT_EQ(built->tasks[t].regs.get(fi), apple->tasks[t].regs.get(fi))
          << f->name << " task " << t << ": " << fi.name;
    }
  }
  EXPECT_GT(compared, 200u);
  // The version fields too (this is the macos26 profile): every field, and
  // so every word Apple wrote, where Apple placed it in __text.
  for (size_t t = 0; t < 2; ++t)
    for (const FieldInfo& fi : RegisterDatabase::h13().fields())
      EXPECT_EQ(built->tasks[t].regs.get(fi), apple->tasks[t].regs.get(fi))
          << f->name << " task " << t << ": " << fi.name << " (macos26)";
  const auto* text = built->file.find_section("__TEXT", "__text");
  ASSERT_NE(text, nullptr);
  const auto code = built->file.section_data(*text);
  uint64_t at = 0;
  for (size_t t = 0; t < 2; ++t) {
    const std::vector<uint32_t> words = f->tasks[t].stream();
    ASSERT_LE(at + 4 * words.size(), code.size()) << f->name;
    for (size_t i = 0; i < words.size(); ++i)
      ASSERT_EQ(word_at(code, at + 4 * i), words[i]) << f->name << " task " << t << " word " << i;
    at = f->tasks[t].header[7];  // NextPointer: where Apple put the next task
  }
  const auto* konst = built->file.find_section("__TEXT", "__const");
  ASSERT_NE(konst, nullptr);
  const auto data = built->file.section_data(*konst);
  EXPECT_EQ(sha256_hex(Bytes(data.begin(), data.end())), f->constant_sha256) << f->name;
}

// hwx-build's program runs to x op v bit for bit, under both profiles.
TEST_P(TensorConstantRecord, HwxBuildsProgramRunsToTheOp) {
  auto f = oracle::load_fixture(GetParam());
  ASSERT_TRUE(f.ok()) << f.error().message;
  const auto values = constant_values(*f);
  test::TempDir dir;
  auto net = load_record_mil(GetParam(), *f, dir);
  ASSERT_TRUE(net.ok()) << net.error().str();
  expect_both_profiles_run_to_op(*net, *f, values, 5, 4, 2);
}

INSTANTIATE_TEST_SUITE_P(Records, TensorConstantRecord, ::testing::ValuesIn(records()), oracle::test_name);

// The MIL program y = op(x, z), x of `x_type`, z the const `z_statement`
// declares.
std::string one_op_mil(const std::string& x_type, const std::string& z_statement, const std::string& op) {
  return "program(1.3)\n{\n  func main<ios18>(" + x_type + " x) {\n    " + z_statement + "\n    " + x_type +
         " y = " + op + "(x = x, y = z)[name = string(\"y\")];\n  } -> (y);\n}\n";
}

// The const z of `type` from the weight blob's record at 64.
std::string blob_z(const std::string& type) {
  return type + " z = const()[name = string(\"z\"), val = " + type +
         "(BLOBFILE(path = string(\"@model_path/weights.bin\"), offset = uint64(64)))];";
}

// A fixture holding what expect_runs_to_op reads: the op and x's shape.
oracle::Fixture op_fixture(const std::string& op, uint32_t c, uint32_t h, uint32_t w) {
  oracle::Fixture f;
  f.name = fmt::format("{} [1, {}, {}, {}]", op, c, h, w);
  f.params["operation"] = op;
  f.tensors.push_back({});
  f.tensors[0].shape = {1, c, h, w};
  return f;
}

// Shapes no H13 record holds: one channel (one value: the scalar's task),
// rows that are not a multiple of 64 bytes (the section's rows padded), 4096
// channels; and x on larger planes, the constant repeated along H and W
// (add, sub, mul). Both profiles, against op(x, v) rounded once.
TEST(TensorConstantShapes, OtherShapesRunToTheOp) {
  struct Shape {
    uint32_t c, h, w;
  };
  for (const Shape sh : {Shape{1, 1, 1}, Shape{3, 1, 1}, Shape{24, 1, 1}, Shape{4096, 1, 1}, Shape{64, 8, 8},
                         Shape{3, 5, 7}, Shape{16, 1, 100}, Shape{1, 4, 4}})
    for (const std::string op : {"add", "sub", "mul", "maximum", "minimum"}) {
      const bool plane = sh.h * sh.w > 1;
      if (plane && sh.c > 1 && (op == "maximum" || op == "minimum")) continue;  // refused (MilErrors)
      const std::string dims = fmt::format("{}, {}, {}", sh.c, sh.h, sh.w);
      SCOPED_TRACE(op + " [1, " + dims + "]");
      std::vector<uint16_t> values = test::uniform_fp16(sh.c, -3, 3, sh.c + 1);
      test::TempDir dir;
      const test::MilBlob blob{mil::BlobDataType::Fp16, test::fp16_data(values), 0};
      test::write_bytes(dir.file("weights.bin"), test::write_milblob(std::span(&blob, 1)).bytes);
      test::write_text(dir.file("model.mil"),
                       one_op_mil("tensor<fp16, [1, " + dims + "]>",
                                  blob_z(fmt::format("tensor<fp16, [1, {}, 1, 1]>", sh.c)), op));
      auto net = load_model(dir.file("model.mil"));
      ASSERT_TRUE(net.ok()) << net.error().str();
      expect_both_profiles_run_to_op(*net, op_fixture(op, sh.c, sh.h, sh.w), values, 9, 2,
                                     sh.c == 1 ? 1 : 2);  // one value: the scalar's task
    }
}

// real_div by a scalar z written in the text: x times fp16(1/z) rounded
// once, both profiles, on planes the record does not hold; and within fp16's
// rounding of x / z.
TEST(TensorConstantShapes, RealDivByAScalarRunsToTheProductWithItsReciprocal) {
  struct Shape {
    uint32_t c, h, w;
  };
  for (const Shape sh : {Shape{1, 1, 1}, Shape{3, 1, 1}, Shape{64, 1, 1}, Shape{512, 1, 1}, Shape{64, 8, 8},
                         Shape{3, 5, 7}, Shape{16, 1, 100}})
    for (const uint32_t seed : {1u, 2u}) {
      const std::string dims = fmt::format("{}, {}, {}", sh.c, sh.h, sh.w);
      // A divisor of either sign, away from 0: in [1/4, 4).
      uint16_t z = test::uniform_fp16(1, 0.25, 4, sh.c + seed).front();
      if (seed == 2) z ^= 0x8000;
      SCOPED_TRACE(fmt::format("[1, {}] by {}", dims, fp16_to_float(z)));
      test::TempDir dir;
      test::write_text(dir.file("model.mil"),
                       one_op_mil("tensor<fp16, [1, " + dims + "]>",
                                  fmt::format("fp16 z = const()[name = string(\"z\"), val = fp16({:a})];",
                                              double(fp16_to_float(z))),
                                  "real_div"));
      auto net = load_model(dir.file("model.mil"));
      ASSERT_TRUE(net.ok()) << net.error().str();
      const uint16_t reciprocal = float_to_fp16(1.0f / fp16_to_float(z));
      expect_both_profiles_run_to_op(*net, op_fixture("real_div", sh.c, sh.h, sh.w),
                                     std::vector<uint16_t>(sh.c, reciprocal), 11, 2,
                                     sh.c == 1 ? 1 : 2);  // one channel: one task
      // x * fp16(1/z) is x / z to within fp16's rounding of 1/z and of the product.
      EXPECT_NEAR(fp16_to_float(reciprocal) * double(fp16_to_float(z)), 1.0, 1.0 / 1024);
    }
}

// Refused by name: dividing by 0 (no finite reciprocal), and by a tensor
// constant from a blob, which Apple's compiler refuses (record
// binary_real_div_c64_constant_blob: callback_status 22).
TEST(TensorConstantShapes, RealDivRefusals) {
  const std::string t = "tensor<fp16, [1, 8, 1, 1]>";
  test::TempDir dir;
  test::write_text(dir.file("model.mil"),
                   one_op_mil(t, "fp16 z = const()[name = string(\"z\"), val = fp16(0x0p+0)];", "real_div"));
  auto net = load_model(dir.file("model.mil"));
  ASSERT_TRUE(net.ok()) << net.error().str();
  auto built = compile(*net, CompilerProfile::Macos26);
  ASSERT_FALSE(built.ok());
  EXPECT_NE(built.error().str().find("model.mil:5: op 'real_div': argument 'y': the divisor 0 has no finite fp16 "
                                     "reciprocal"),
            std::string::npos)
      << built.error().str();

  const std::vector<uint16_t> divisors(8, 0x4000);
  const test::MilBlob b{mil::BlobDataType::Fp16, test::fp16_data(divisors), 0};
  test::write_bytes(dir.file("weights.bin"), test::write_milblob(std::span(&b, 1)).bytes);
  test::write_text(dir.file("model.mil"), one_op_mil(t, blob_z(t), "real_div"));
  auto blob = load_model(dir.file("model.mil"));
  ASSERT_FALSE(blob.ok());
  EXPECT_NE(blob.error().str().find("model.mil:5: op 'real_div': argument 'y': a divisor of several values"),
            std::string::npos)
      << blob.error().str();
}

}  // namespace
}  // namespace ane
