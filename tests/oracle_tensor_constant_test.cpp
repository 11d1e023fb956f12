// H13 records of an element-wise op with a tensor constant from a weight
// blob (`binary_{add,sub,mul,maximum,minimum}_c{64,512}_constant_blob`,
// tests/fixtures/oracles/h13/binary_tensor_constant). Apple compiles each as
// two tasks: the neural engine copies the constant section into L2, then the
// planar engine reads it there as channels along W and applies the op.
//
// Each record is checked three ways:
//  * its constant section, rebuilt from the values Apple's compiler read
//    (blob_constant.h) and laid out for the op, hashes to the record;
//  * Apple's two tasks run on the simulator to op(x, v), evaluated here in
//    double and rounded once to fp16, on every input;
//  * hwx-build refuses the record's MIL by name (tensor constants as
//    operands are not compiled yet).
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
// (docs/simulator.md, "Which values").
std::vector<uint16_t> constant_values(const oracle::Fixture& f) {
  const uint64_t payload = std::stoull(f.weights.at("payload_bytes"));
  return test::blob_values(test::minted_weight_file(payload), 64, payload / 2);
}

double reference(const std::string& op, double x, double v) {
  if (op == "add") return x + v;
  if (op == "sub") return x - v;
  if (op == "mul") return x * v;
  if (op == "maximum") return std::max(x, v);
  return std::min(x, v);
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
  const uint32_t c = static_cast<uint32_t>(f->tensors.at(0).shape[1]);
  size_t checked = 0;
  for (uint32_t seed = 3; seed < 3 + 16; ++seed) {
    sim::Tensor x;
    x.nchw = {1, c, 1, 1};
    x.data = test::uniform_fp16(c, -4, 4, seed);
    ASSERT_TRUE(s->set_input("x", x).ok());
    auto run = s->run();
    ASSERT_TRUE(run.ok()) << run.error().str();
    auto y = s->read_buffer("y");
    ASSERT_TRUE(y.ok()) << y.error().str();
    ASSERT_EQ(y->data.size(), c);
    for (uint32_t i = 0; i < c; ++i, ++checked) {
      const uint16_t want = float_to_fp16(static_cast<float>(
          reference(op, fp16_to_float(x.data[i]), fp16_to_float(values[i]))));  // exact in fp32, one rounding
      ASSERT_EQ(y->data[i], want) << f->name << " channel " << i << ": x " << std::hex << x.data[i] << " v "
                                  << values[i];
    }
  }
  EXPECT_EQ(checked, 16u * c);
}

TEST_P(TensorConstantRecord, HwxBuildRefusesTheMilByName) {
  auto f = oracle::load_fixture(GetParam());
  ASSERT_TRUE(f.ok()) << f.error().message;
  const std::string mil = GetParam().substr(0, GetParam().size() - 3) + ".mil";
  test::TempDir dir;
  test::write_text(dir.file("model.mil"), read_text(mil));
  test::write_bytes(dir.file("weights.bin"), test::minted_weight_file(std::stoull(f->weights.at("payload_bytes"))));
  auto net = load_model(dir.file("model.mil"));
  std::string message;
  if (!net) {
    message = net.error().str();
  } else {
    auto built = compile_network(*net);
    ASSERT_FALSE(built.ok()) << f->name << " compiled, but tensor constant operands are not claimed";
    message = built.error().str();
  }
  EXPECT_NE(message.find("model.mil:6: op '"), std::string::npos) << message;
  EXPECT_NE(message.find("tensor constants as operands are not supported"), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(Records, TensorConstantRecord, ::testing::ValuesIn(records()), oracle::test_name);

}  // namespace
}  // namespace ane
