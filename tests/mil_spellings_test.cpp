// One network in each MIL printer's spelling compiles to the same program,
// and that program is the one its network plist gives, and computes the
// network (the simulator against a direct loop). Then the bundled Core ML
// sample (tests/fixtures/coreml/add_model.mlmodelc) through load_model, the
// simulator and the hwx-build command line.
#include <cmath>
#include <filesystem>
#include <tuple>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ane/compiler.h"
#include "ane/fp16.h"
#include "ane/mil.h"
#include "ane/mil_network.h"
#include "ane/program.h"
#include "ane/sim.h"
#include "milblob_writer.h"
#include "plist_builder.h"
#include "support.h"

namespace ane {
namespace {

namespace fs = std::filesystem;
using namespace test::pl;

const std::string kSpellingsIdent = "libane mil spellings test";

// y = relu(conv(x, w, pad 1) + b): x [1, 4, 6, 6], w [8, 4, 3, 3], b [8].
constexpr uint32_t kCin = 4, kCout = 8, kH = 6, kW = 6;

// Multiples of 1/64 in [-1, 1] and 1/16 in [-0.5, 0.5]: exact in fp16 and
// in six decimals, so every spelling's literals say the same values.
std::vector<uint16_t> kernel() {
  std::vector<uint16_t> k(kCout * kCin * 9);
  for (size_t i = 0; i < k.size(); ++i) k[i] = float_to_fp16(static_cast<float>(int((i * 37 + 11) % 129) - 64) / 64);
  return k;
}
std::vector<uint16_t> bias() {
  std::vector<uint16_t> b(kCout);
  for (size_t i = 0; i < b.size(); ++i) b[i] = float_to_fp16(static_cast<float>(int(i * 5 % 17) - 8) / 16);
  return b;
}

// `%f` as the compact spelling prints its values.
std::string values(const std::vector<uint16_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += fmt::format("{}{:f}", i ? "," : "", fp16_to_float(v[i]));
  return s;
}

// Spelling 1: macOS 26 records: program(1.3), empty buildInfo, string("..")
// names, plain scalar types, every conv argument a named const.
std::string macos26(uint64_t w, uint64_t b) {
  return fmt::format(R"(program(1.3)
[buildInfo = dict<string, string>({{}})]
{{
  func main<ios18>(tensor<fp16, [1, 4, 6, 6]> x) {{
    string pt = const()[name = string("pt"), val = string("same")];
    tensor<int32, [2]> st = const()[name = string("st"), val = tensor<int32, [2]>([1, 1])];
    tensor<int32, [4]> pd = const()[name = string("pd"), val = tensor<int32, [4]>([0, 0, 0, 0])];
    tensor<int32, [2]> dl = const()[name = string("dl"), val = tensor<int32, [2]>([1, 1])];
    int32 gp = const()[name = string("gp"), val = int32(1)];
    tensor<fp16, [8, 4, 3, 3]> w = const()[name = string("w"), val = tensor<fp16, [8, 4, 3, 3]>(BLOBFILE(path = string("@model_path/weights/weight.bin"), offset = uint64({})))];
    tensor<fp16, [8]> b = const()[name = string("b"), val = tensor<fp16, [8]>(BLOBFILE(path = string("@model_path/weights/weight.bin"), offset = uint64({})))];
    tensor<fp16, [1, 8, 6, 6]> c = conv(bias = b, dilations = dl, groups = gp, pad = pd, pad_type = pt, strides = st, weight = w, x = x)[name = string("c")];
    tensor<fp16, [1, 8, 6, 6]> y = relu(x = c)[name = string("y")];
  }} -> (y);
}}
)",
                     w, b);
}

// Spelling 2: coremltools 8 (iOS 16/17 targets): program(1.0), a buildInfo
// of tensor<string, []>, names and scalars as rank-0 tensors, and BLOBFILE's
// path and offset as rank-0 tensors too (`offset = tensor<uint64, []>(64)`,
// as coremltools' own tests expect of its output:
// coremltools/test/ml_program/test_utils.py, validate_mil_text).
std::string coremltools8(uint64_t w, uint64_t b) {
  return fmt::format(R"(program(1.0)
[buildInfo = dict<tensor<string, []>, tensor<string, []>>({{{{"coremlc-component-MIL", "3402.3.2"}}, {{"coremlc-version", "3402.4.1"}}, {{"coremltools-version", "8.1"}}}})]
{{
    func main<ios16>(tensor<fp16, [1, 4, 6, 6]> x) {{
            tensor<string, []> c_pad_type_0 = const()[name = tensor<string, []>("c_pad_type_0"), val = tensor<string, []>("same")];
            tensor<int32, [2]> c_strides_0 = const()[name = tensor<string, []>("c_strides_0"), val = tensor<int32, [2]>([1, 1])];
            tensor<int32, [4]> c_pad_0 = const()[name = tensor<string, []>("c_pad_0"), val = tensor<int32, [4]>([0, 0, 0, 0])];
            tensor<int32, [2]> c_dilations_0 = const()[name = tensor<string, []>("c_dilations_0"), val = tensor<int32, [2]>([1, 1])];
            tensor<int32, []> c_groups_0 = const()[name = tensor<string, []>("c_groups_0"), val = tensor<int32, []>(1)];
            tensor<fp16, [8, 4, 3, 3]> w_to_fp16 = const()[name = tensor<string, []>("w_to_fp16"), val = tensor<fp16, [8, 4, 3, 3]>(BLOBFILE(path = tensor<string, []>("@model_path/weights/weight.bin"), offset = tensor<uint64, []>({})))];
            tensor<fp16, [8]> b_to_fp16 = const()[name = tensor<string, []>("b_to_fp16"), val = tensor<fp16, [8]>(BLOBFILE(path = tensor<string, []>("@model_path/weights/weight.bin"), offset = tensor<uint64, []>({})))];
            tensor<fp16, [1, 8, 6, 6]> c = conv(bias = b_to_fp16, dilations = c_dilations_0, groups = c_groups_0, pad = c_pad_0, pad_type = c_pad_type_0, strides = c_strides_0, weight = w_to_fp16, x = x)[name = tensor<string, []>("c_cast_fp16")];
            tensor<fp16, [1, 8, 6, 6]> y = relu(x = c)[name = tensor<string, []>("y_cast_fp16")];
        }} -> (y);
}}
)",
                     w, b);
}

// Spelling 3: coremlc's CoreML8 form: program(1), no attributes, rank-0
// tensors for scalars, BLOBFILE as string(..) / uint64(..); the padding
// written out ("custom" [1, 1, 1, 1] is what "same" makes here).
std::string coreml8(uint64_t w, uint64_t b) {
  return fmt::format(R"(program(1)
{{
  func main<CoreML8>(tensor<fp16, [1, 4, 6, 6]> x) {{
    tensor<string, []> pt = const()[name = tensor<string, []>("pt"), val = tensor<string, []>("custom")];
    tensor<int32, [2]> st = const()[name = tensor<string, []>("st"), val = tensor<int32, [2]>([1, 1])];
    tensor<int32, [4]> pd = const()[name = tensor<string, []>("pd"), val = tensor<int32, [4]>([1, 1, 1, 1])];
    tensor<int32, []> gp = const()[name = tensor<string, []>("gp"), val = tensor<int32, []>(1)];
    tensor<fp16, [8, 4, 3, 3]> w = const()[val = tensor<fp16, [8, 4, 3, 3]>(BLOBFILE(path = string("@model_path/weights/weight.bin"), offset = uint64({})))];
    tensor<fp16, [8]> b = const()[val = tensor<fp16, [8]>(BLOBFILE(path = string("@model_path/weights/weight.bin"), offset = uint64({})))];
    tensor<fp16, [1, 8, 6, 6]> c = conv(bias = b, groups = gp, pad = pd, pad_type = pt, strides = st, weight = w, x = x)[name = tensor<string, []>("c")];
    tensor<fp16, [1, 8, 6, 6]> y = relu(x = c)[name = tensor<string, []>("y")];
  }} -> (y);
}}
)",
                     w, b);
}

// Spelling 4: compact and hand-written: no spaces, arguments written in
// place, the weights as `%f` literals in the text, defaults left out.
std::string compact() {
  return "program(1.3)\n{\n    func main<ios18>(tensor<fp16, [1,4,6,6]> x) {\n"
         "        tensor<fp16, [8,4,3,3]> w = const()[name=string(\"w\"), val=tensor<fp16, [8,4,3,3]>([" +
         values(kernel()) +
         "])];\n"
         "        tensor<fp16, [8]> b = const()[name=string(\"b\"), val=tensor<fp16, [8]>([" +
         values(bias()) +
         "])];\n"
         "        tensor<fp16, [1,8,6,6]> c = conv(x=x,weight=w,bias=b,pad_type=string(\"same\"),"
         "strides=tensor<int32, [2]>([1,1]));\n"
         "        tensor<fp16, [1,8,6,6]> y = relu(x=c);\n"
         "    } -> (y);\n}\n";
}

// The network as a plist, its units named as the lowering names them.
std::string plist() {
  Dict params = conv_params();
  params = with(params, "KernelWidth", integer(3));
  params = with(params, "KernelHeight", integer(3));
  for (const char* k : {"PadTop", "PadBot", "PadLeft", "PadRight"}) params = with(params, k, integer(1));
  Dict conv_dict = conv("x", kCout, params);
  conv_dict.emplace_back("NumGroups", integer(1));
  Net n;
  n.inputs = {{"x", input(kCin, kW, kH)}};
  n.units = {{"c@conv", conv_dict},
             {"c", unit("c@conv", "GOC",
                        {{"BiasScaleGroupData", dict({{"BiasIndex", integer(1)},
                                                      {"BiasOffset", integer(0)},
                                                      {"BiasCount", integer(kCout)},
                                                      {"BiasType", str("Float16")}})}})},
             {"y", unit("c", "Neuron", {{"Type", str("ReLU")}})}};
  n.outputs = {{"y@output", output("y")}};
  n.weights = {"w.weights", "b.weights"};
  return n.xml();
}

Expected<CompiledProgram> compile_path(const std::string& path) {
  auto net = load_model(path);
  if (!net) return net.error();
  CompileOptions o;
  o.ident = kSpellingsIdent;
  return compile_network(*net, o);
}

TEST(MilSpellings, FourSpellingsCompileAsThePlistAndRun) {
  test::TempDir dir;
  const test::MilBlob blobs[] = {{mil::BlobDataType::Fp16, test::fp16_data(kernel())},
                                 {mil::BlobDataType::Fp16, test::fp16_data(bias())}};
  const test::MilBlobFile file = test::write_milblob(blobs);
  fs::create_directories(dir.file("weights"));
  test::write_bytes(dir.file("weights/weight.bin"), file.bytes);
  const uint64_t w = file.offsets[0], b = file.offsets[1];
  test::write_text(dir.file("macos26.mil"), macos26(w, b));
  test::write_text(dir.file("coremltools8.mil"), coremltools8(w, b));
  test::write_text(dir.file("coreml8.mil"), coreml8(w, b));
  test::write_text(dir.file("compact.mil"), compact());
  test::write_text(dir.file("net.plist"), plist());
  test::write_bytes(dir.file("w.weights"), test::fp16_le_bytes(kernel()));
  test::write_bytes(dir.file("b.weights"), test::fp16_le_bytes(bias()));

  auto from_plist = compile_path(dir.file("net.plist"));
  ASSERT_TRUE(from_plist.ok()) << from_plist.error().str();
  // The units as the lowering names them (the plist above uses the same names).
  auto net = load_model(dir.file("macos26.mil"));
  ASSERT_TRUE(net.ok()) << net.error().str();
  std::vector<std::string> units;
  for (const auto& u : net->units) units.push_back(u.name + ":" + u.type);
  EXPECT_EQ(units, (std::vector<std::string>{"c@conv:Conv", "c:GOC", "y:Neuron"}));
  for (const char* spelling : {"macos26", "coremltools8", "coreml8", "compact"}) {
    auto built = compile_path(dir.file(std::string(spelling) + ".mil"));
    if (!built) {
      ADD_FAILURE() << spelling << ": " << built.error().str();
      continue;
    }
    EXPECT_TRUE(built->bytes == from_plist->bytes) << spelling << ": differs from the plist's program";
  }

  // What the program computes: relu(conv + bias) against a direct loop.
  auto program = parse_program(from_plist->bytes, "net.hwx");
  ASSERT_TRUE(program.ok()) << program.error().str();
  sim::Tensor x;
  x.nchw = {1, kCin, kH, kW};
  x.data = test::uniform_fp16(kCin * kH * kW, -1, 1, 5);
  auto y = test::run_one_input(*program, x);
  ASSERT_TRUE(y.ok()) << y.error().str();
  ASSERT_EQ(y->data.size(), size_t{kCout} * kH * kW);
  const std::vector<uint16_t> k = kernel(), bs = bias();
  // As tests/conv_reference.cpp allows: fp32 accumulation of the products
  // and the bias (R terms, each exact), one rounding to fp16, half an ulp.
  const double terms = kCin * 9 + 1;
  int bad = 0, positive = 0;
  for (uint32_t oc = 0; oc < kCout; ++oc)
    for (uint32_t oy = 0; oy < kH; ++oy)
      for (uint32_t ox = 0; ox < kW; ++ox) {
        double s = fp16_to_float(bs[oc]), mag = std::fabs(s);
        for (uint32_t ic = 0; ic < kCin; ++ic)
          for (int ky = 0; ky < 3; ++ky)
            for (int kx = 0; kx < 3; ++kx) {
              const int iy = int(oy) + ky - 1, ix = int(ox) + kx - 1;
              if (iy < 0 || ix < 0 || iy >= int(kH) || ix >= int(kW)) continue;
              const double p = double(fp16_to_float(k[((oc * kCin + ic) * 3 + ky) * 3 + kx])) *
                               fp16_to_float(x.data[(ic * kH + iy) * kW + ix]);
              s += p;
              mag += std::fabs(p);
            }
        const double want = std::max(s, 0.0);
        const double got = fp16_to_float(y->data[(oc * kH + oy) * kW + ox]);
        const double tol = std::ldexp(std::fabs(s), -11) + terms * std::ldexp(mag, -24) + std::ldexp(1.0, -25);
        positive += want > 0;
        if (std::fabs(got - want) > tol && bad++ < 5)
          ADD_FAILURE() << fmt::format("y[{}][{}][{}] = {}, reference {} (tolerance {})", oc, oy, ox, got, want, tol);
      }
  EXPECT_EQ(bad, 0);
  EXPECT_GT(positive, 50);  // the relu leaves enough to check
  EXPECT_LT(positive, int(kCout * kH * kW) - 50);
}

// "same" at stride 2 on an even size needs an odd padding: coremltools puts
// the smaller half first (top/left 0, bottom/right 1), "same_lower" the
// larger. Each compiles as the plist with those pads written out.
TEST(MilSpellings, SamePaddingSplitsAsCoremltools) {
  test::TempDir dir;
  std::vector<uint16_t> k(16 * 16 * 9);
  for (size_t i = 0; i < k.size(); ++i) k[i] = float_to_fp16(static_cast<float>(int(i * 29 % 33) - 16) / 16);
  const test::MilBlob blobs[] = {{mil::BlobDataType::Fp16, test::fp16_data(k)}};
  const test::MilBlobFile file = test::write_milblob(blobs);
  test::write_bytes(dir.file("weight.bin"), file.bytes);
  test::write_bytes(dir.file("w.weights"), test::fp16_le_bytes(k));
  for (const auto& [pad_type, first, second] : {std::tuple{"same", 0, 1}, std::tuple{"same_lower", 1, 0}}) {
    SCOPED_TRACE(pad_type);
    test::write_text(
        dir.file("model.mil"),
        fmt::format("program(1.3)\n{{\n  func main<ios18>(tensor<fp16, [1, 16, 8, 8]> x) {{\n"
                    "    tensor<fp16, [16, 16, 3, 3]> w = const()[val = tensor<fp16, [16, 16, 3, 3]>(BLOBFILE(path = "
                    "string(\"@model_path/weight.bin\"), offset = uint64({})))];\n"
                    "    tensor<fp16, [1, 16, 4, 4]> y = conv(x = x, weight = w, pad_type = string(\"{}\"), strides = "
                    "tensor<int32, [2]>([2, 2]));\n  }} -> (y);\n}}\n",
                    file.offsets[0], pad_type));
    Dict params = conv_params();
    params = with(params, "KernelWidth", integer(3));
    params = with(params, "KernelHeight", integer(3));
    params = with(params, "Step", array({integer(2), integer(2)}));
    params = with(params, "PadTop", integer(first));
    params = with(params, "PadLeft", integer(first));
    params = with(params, "PadBot", integer(second));
    params = with(params, "PadRight", integer(second));
    Dict conv_dict = conv("x", 16, params);
    conv_dict.emplace_back("NumGroups", integer(1));
    Net n;
    n.inputs = {{"x", input(16, 8, 8)}};
    n.units = {{"y", conv_dict}};
    n.outputs = {{"y@output", output("y")}};
    n.weights = {"w.weights"};
    test::write_text(dir.file("net.plist"), n.xml());
    auto from_mil = compile_path(dir.file("model.mil"));
    auto from_plist = compile_path(dir.file("net.plist"));
    ASSERT_TRUE(from_mil.ok()) << from_mil.error().str();
    ASSERT_TRUE(from_plist.ok()) << from_plist.error().str();
    EXPECT_TRUE(from_mil->bytes == from_plist->bytes) << "differs from the plist's pads";
  }
}

// ---- the bundled Core ML sample ---------------------------------------------------------

const std::string kAddModel = std::string(LIBANE_SOURCE_DIR) + "/tests/fixtures/coreml/add_model.mlmodelc";

TEST(MilBundle, AddModelRunsToTheExactProducts) {
  auto net = load_model(kAddModel);
  ASSERT_TRUE(net.ok()) << net.error().str();
  ASSERT_EQ(net->inputs.size(), 2u);
  EXPECT_EQ(net->inputs[0].name, "x");
  EXPECT_EQ(net->inputs[1].name, "y");
  ASSERT_EQ(net->outputs.size(), 1u);
  EXPECT_EQ(net->outputs[0].name, "var_3@output");
  CompileOptions o;
  o.ident = kSpellingsIdent;
  auto built = compile_network(*net, o);
  ASSERT_TRUE(built.ok()) << built.error().str();
  auto program = parse_program(built->bytes, "add_model.hwx");
  ASSERT_TRUE(program.ok()) << program.error().str();
  auto s = sim::Simulator::create(*program);
  ASSERT_TRUE(s.ok()) << s.error().str();
  // Products of every size: tiny, subnormal, near overflow and signed.
  std::vector<uint16_t> a = test::uniform_fp16(10, -8, 8, 1), b = test::uniform_fp16(10, -8, 8, 2);
  a[0] = float_to_fp16(0.001f);
  b[0] = float_to_fp16(0.01f);  // a subnormal product
  a[1] = float_to_fp16(250.0f);
  b[1] = float_to_fp16(-250.0f);
  for (const auto& [name, v] : {std::pair{"x", a}, std::pair{"y", b}}) {
    sim::Tensor t;
    t.nchw = {1, 1, 1, 10};
    t.data = v;
    auto st = s->set_input(name, t);
    ASSERT_TRUE(st.ok()) << st.error().str();
  }
  ASSERT_TRUE(s->run().ok());
  auto y = s->read_buffer(s->outputs().at(0).name);
  ASSERT_TRUE(y.ok()) << y.error().str();
  ASSERT_EQ(y->data.size(), 10u);
  for (size_t i = 0; i < 10; ++i) {
    // Two fp16 values multiply exactly in fp32; one rounding to fp16.
    const uint16_t want = float_to_fp16(fp16_to_float(a[i]) * fp16_to_float(b[i]));
    EXPECT_EQ(y->data[i], want) << fmt::format("{} * {}", fp16_to_float(a[i]), fp16_to_float(b[i]));
  }
}

TEST(MilBundle, HwxBuildCommandLine) {
  test::TempDir dir;
  std::string out, err;
  const std::string hwx = dir.file("add.hwx");
  ASSERT_EQ(test::run_command(std::string(HWX_BUILD_EXE) + " '" + kAddModel + "/' -o '" + hwx + "'", &out, &err), 0)
      << err;
  EXPECT_EQ(err, "");
  auto program = parse_program(test::read_or_die(hwx), hwx);
  ASSERT_TRUE(program.ok()) << program.error().str();
  EXPECT_EQ(out, fmt::format("{}: {} task{}, {} bytes\n", hwx, program->tasks.size(),
                             program->tasks.size() == 1 ? "" : "s", fs::file_size(hwx)));

  // An .mlpackage: exit 2, one line, nothing written.
  fs::create_directories(dir.file("M.mlpackage/Data"));
  test::write_text(dir.file("M.mlpackage/Manifest.json"), "{\"fileFormatVersion\": \"1.0.0\"}");
  EXPECT_EQ(test::run_command(std::string(HWX_BUILD_EXE) + " '" + dir.file("M.mlpackage") + "' -o '" +
                                  dir.file("m.hwx") + "'",
                              &out, &err),
            2);
  EXPECT_EQ(err, "hwx-build: " + dir.file("M.mlpackage") +
                     ": a Core ML package (protobuf) is not read; compile it to a bundle first (on a Mac: xcrun "
                     "coremlcompiler compile model.mlpackage OUT_DIR) and pass OUT_DIR/model.mlmodelc\n");
  EXPECT_EQ(out, "");
  EXPECT_FALSE(fs::exists(dir.file("m.hwx")));
}

}  // namespace
}  // namespace ane
