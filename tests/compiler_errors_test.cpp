// Every way a network plist can be wrong gets one line naming the file, the
// plist line, the unit and the key, and hwx-build exits with status 2.
#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>

#include "ane/compiler.h"
#include "plist_builder.h"
#include "support.h"

namespace ane {
namespace {

using namespace test::pl;

Net base() {
  Net n;
  n.inputs = {{"image", input(3, 1)}};
  n.units = {{"conv", conv("image", 3)}};
  n.outputs = {{"probs@output", output("conv")}};
  n.weights = {"w.weights"};
  return n;
}

// Compiles `xml` (with an 18-byte weight file) and returns the error text,
// or "" when it compiled.
std::string error_of(const std::string& xml, const Bytes& weights = Bytes(18, 0), CompileOptions opts = {}) {
  test::TempDir dir;
  test::write_text(dir.file("net.plist"), xml);
  test::write_bytes(dir.file("w.weights"), weights);
  auto net = load_network(dir.file("net.plist"));
  std::string msg;
  if (!net) {
    msg = net.error().str();
  } else {
    auto p = compile_network(*net, opts);
    if (p) return "";
    msg = p.error().str();
  }
  // Report relative to the plist so expectations do not depend on the temp path.
  const std::string prefix = dir.file("net.plist");
  if (msg.rfind(prefix, 0) == 0) msg = "net.plist" + msg.substr(prefix.size());
  return msg;
}

std::string error_of(const Net& n, const Bytes& weights = Bytes(18, 0)) { return error_of(n.xml(), weights); }

// "net.plist:N" where N is the line of the first `needle` in the text (plus
// `below` lines): the expected location, found by searching the text itself.
std::string at(const std::string& xml, const std::string& needle, int below = 0) {
  const size_t pos = xml.find(needle);
  EXPECT_NE(pos, std::string::npos) << needle;
  return "net.plist:" + std::to_string(std::count(xml.begin(), xml.begin() + pos, '\n') + 1 + below);
}

TEST(CompilerErrors, BaseNetworkCompiles) { EXPECT_EQ(error_of(base()), ""); }

TEST(CompilerErrors, MissingKeys) {
  Net n = base();
  n.units[0].second = with(n.units[0].second, "OutputChannels", "");
  EXPECT_EQ(error_of(n), at(n.xml(), "<key>conv</key>", 1) + ": unit 'conv': key 'OutputChannels': missing (required for a Conv)");
  n = base();
  n.inputs[0].second = with(n.inputs[0].second, "InputWidth", "");
  EXPECT_EQ(error_of(n), at(n.xml(), "<key>image</key>", 1) + ": input 'image': key 'InputWidth': missing (required)");
  n = base();
  n.outputs[0].second = with(n.outputs[0].second, "Bottom", "");
  EXPECT_EQ(error_of(n),
            at(n.xml(), "<key>probs@output</key>", 1) + ": output 'probs@output': key 'Bottom': missing (required)");
  n = base();
  n.units[0].second = with(n.units[0].second, "Params", dict(with(conv_params(), "KernelType", "")));
  EXPECT_NE(error_of(n).find("unit 'conv': key 'Params.KernelType': missing (required)"), std::string::npos);
  EXPECT_EQ(error_of(document(dict({{"Version", str("1")}}))), "net.plist:4: plist: key 'Networks': missing (required)");
}

TEST(CompilerErrors, WrongTypes) {
  Net n = base();
  n.units[0].second = with(n.units[0].second, "OutputChannels", str("three"));
  EXPECT_EQ(error_of(n), at(n.xml(), "<key>OutputChannels</key>") +
                             ": unit 'conv': key 'OutputChannels': expected <integer>, found <string>");
  n = base();
  n.inputs[0].second = with(n.inputs[0].second, "InputChannels", integer(-3));
  EXPECT_NE(error_of(n).find("input 'image': key 'InputChannels': -3 is out of range"), std::string::npos);
  n = base();
  n.units[0].second = with(n.units[0].second, "Params", dict(with(conv_params(), "Step", integer(1))));
  EXPECT_NE(error_of(n).find("key 'Params.Step': expected <array>, found <integer>"), std::string::npos);
  EXPECT_NE(error_of(document(array({}))).find("top level is <array>, expected <dict>"), std::string::npos);
}

// Spellings of older writers: integral <real> for integers, 0/1 for booleans.
TEST(CompilerErrors, LenientNumberSpellings) {
  Net n = base();
  n.units[0].second = with(n.units[0].second, "OutputChannels", "<real>3.0</real>");
  n.units[0].second = with(n.units[0].second, "Params", dict(with(conv_params(), "KernelGroupReuse", integer(0))));
  EXPECT_EQ(error_of(n), "");
  n.units[0].second = with(n.units[0].second, "OutputChannels", "<real>3.5</real>");
  EXPECT_NE(error_of(n).find("key 'OutputChannels': expected an integer, found <real> 3.5"), std::string::npos);
  n = base();
  n.units[0].second = with(n.units[0].second, "Params", dict(with(conv_params(), "KernelGroupReuse", integer(2))));
  EXPECT_NE(error_of(n).find("key 'Params.KernelGroupReuse': expected <true/> or <false/>, found <integer>"),
            std::string::npos);
}

TEST(CompilerErrors, UnknownBottomAndCycles) {
  Net n = base();
  n.units[0].second = with(n.units[0].second, "Bottom", str("imag"));
  EXPECT_EQ(error_of(n), at(n.xml(), "<string>imag</string>", -1) +
                             ": unit 'conv': key 'Bottom': 'imag' is neither an input nor a unit of network 'net'");
  n = base();
  n.units = {{"a", unit("b", "Neuron", {{"Type", str("ReLU")}})}, {"b", unit("a", "Neuron", {{"Type", str("ReLU")}})}};
  n.outputs = {{"b@output", output("b")}};
  EXPECT_NE(error_of(n).find("key 'Bottom': cycle between units: "), std::string::npos) << error_of(n);
  n = base();
  n.outputs[0].second = with(n.outputs[0].second, "Bottom", str("image"));
  EXPECT_NE(error_of(n).find("output 'probs@output': key 'Bottom': 'image' is an input"), std::string::npos);
  n = base();
  n.units.push_back({"image", unit("conv", "Neuron", {{"Type", str("ReLU")}})});
  EXPECT_NE(error_of(n).find("name 'image' is used twice"), std::string::npos);
}

TEST(CompilerErrors, WeightFiles) {
  // 3 x 3 fp16 weights need 18 bytes: 17 is one short.
  EXPECT_EQ(error_of(base(), Bytes(17, 0)),
            at(base().xml(), "<key>KernelOffset</key>") +
                ": unit 'conv': key 'Params.KernelOffset': kernel needs 0x12 bytes (9 Float16 values) at "
                "offset 0x0, past the end of 'w.weights' (0x11 bytes)");
  Net n = base();
  n.units[0].second = with(n.units[0].second, "Params", dict(conv_params(0, 2)));
  EXPECT_NE(error_of(n).find("at offset 0x2, past the end of 'w.weights' (0x12 bytes)"), std::string::npos);
  n = base();
  n.weights = {"missing.weights"};
  EXPECT_NE(error_of(n).find("key 'Params.KernelIndex': weight file 'missing.weights' (resolved to '"),
            std::string::npos);
  EXPECT_NE(error_of(n).find("missing.weights'): cannot open: No such file or directory"), std::string::npos)
      << error_of(n);
  n = base();
  n.weights = {"."};  // a directory (a device or FIFO likewise) is never read
  EXPECT_NE(error_of(n).find("weight file '.' ('"), std::string::npos) << error_of(n);
  EXPECT_NE(error_of(n).find("') is not a regular file"), std::string::npos);
  n = base();
  n.units[0].second = with(n.units[0].second, "Params", dict(conv_params(1)));
  EXPECT_NE(error_of(n).find("kernel 1 names weight file 1, but Weights lists 1"), std::string::npos);
  // Float32 weights beyond the fp16 range are refused, not turned into Inf.
  n = base();
  n.units[0].second = with(n.units[0].second, "Params", dict(conv_params(0, 0, "Float32")));
  Bytes big(36, 0);
  big[2] = 0xc0, big[3] = 0x7f;  // weight 0 = 0x7fc00000 is NaN: allowed through; weight 1 huge:
  big[6] = 0x7f, big[7] = 0x7f;  // 0x7f7f0000 ~ 3.4e38
  EXPECT_NE(error_of(n, big).find("kernel value 1 (3.3"), std::string::npos) << error_of(n, big);
}

TEST(CompilerErrors, UnsupportedParameters) {
  struct Case {
    std::string key, value, expect;
  };
  const Case cases[] = {
      {"KernelWidth", integer(3), "key 'Params.KernelWidth': unsupported kernel 3x1 (known: 1x1 and 3x3, and 1x9 at stride 1)"},
      {"PadTop", integer(1), "key 'Params.PadTop': unsupported padding 1"},
      {"Step", array({integer(2), integer(1)}), "key 'Params.Step': unsupported step [2, 1]"},
      {"KernelType", str("UInt8"), "key 'Params.KernelType': unsupported kernel type UInt8"},
      {"KernelMode", str("Sparse"), "key 'Params.KernelMode': unsupported kernel mode 'Sparse'"},
      {"KernelGroupReuse", boolean(true), "key 'Params.KernelGroupReuse': unsupported: true"},
      {"KernelType", str("Float8"), "key 'Params.KernelType': unknown element type 'Float8'"},
  };
  for (const auto& c : cases) {
    Net n = base();
    n.units[0].second = with(n.units[0].second, "Params", dict(with(conv_params(), c.key, c.value)));
    EXPECT_NE(error_of(n).find("unit 'conv': " + c.expect), std::string::npos) << c.key << ": " << error_of(n);
  }
  Net n = base();
  n.inputs[0].second = with(n.inputs[0].second, "InputType", str("UInt8"));
  EXPECT_NE(error_of(n).find("input 'image': key 'InputType': unsupported type UInt8"), std::string::npos);
  n = base();
  // A tall tensor whose L2 tile does not fit the L2 address fields.
  n.inputs[0].second = input(512, 64, 1024);
  n.units = {{"x", unit("image", "Neuron", {{"Type", str("ReLU")}})}};
  n.outputs = {{"x@output", output("x")}};
  EXPECT_NE(error_of(n).find("unit 'x': task 0: L2.ResultBase.Addr = 0x400000 does not fit its 17-bit field"),
            std::string::npos)
      << error_of(n);
  n = base();
  n.inputs[0].second = with(n.inputs[0].second, "BatchSize", integer(512));
  EXPECT_NE(error_of(n).find("key 'BatchSize': unsupported batch 512"), std::string::npos);
  n = base();
  n.inputs[0].second = with(n.inputs[0].second, "InputRowStride", integer(100));
  EXPECT_NE(error_of(n).find("key 'InputRowStride': 100 must be a multiple of 64"), std::string::npos);
  n = base();
  n.units = {{"x", unit("image", "Neuron", {{"Type", str("Elu")}})}};
  n.outputs = {{"x@output", output("x")}};
  EXPECT_NE(error_of(n).find("unit 'x': key 'Params.Type': unsupported neuron type 'Elu' (known: Abs, ReLU, Clip, Exp, "
                             "Exp2, Frac, GELU, Int, Inv, LeakyReLU, Log2, ReLU6, Rsqrt, SiLU, Sigmoid, Sign, Sqrt, Tanh)"),
            std::string::npos)
      << error_of(n);
  n.units = {{"x", unit("image", "Neuron", {{"Type", str("Tanh")}, {"Alpha", integer(2)}})}};
  EXPECT_NE(error_of(n).find("unit 'x': key 'Params.Alpha': Alpha applies to LeakyReLU only, not to 'Tanh'"),
            std::string::npos)
      << error_of(n);
  n.units = {{"x", unit("image", "Neuron", {{"Type", str("Clip")}, {"Min", integer(2)}, {"Max", integer(1)}})}};
  EXPECT_NE(error_of(n).find("unit 'x': key 'Params.Min': Clip needs Min < Max, got 2 and 1"), std::string::npos)
      << error_of(n);
  n.units = {{"x", unit("image", "Neuron", {{"Type", str("Clip")}, {"Max", str("six")}})}};
  EXPECT_NE(error_of(n).find("unit 'x': key 'Params.Max': expected <real>, found <string>"), std::string::npos)
      << error_of(n);
  n.units = {{"x", unit("image", "Broadcast", {})}};
  EXPECT_NE(error_of(n).find("unit 'x': key 'Type': unsupported layer type 'Broadcast'"), std::string::npos);
  n.units = {{"x", unit("image", "GOC", {{"BiasScalar", integer(16354)}, {"ScaleScalar", integer(20544)}})}};
  EXPECT_NE(error_of(n).find("unit 'x': key 'Params.BiasScalar': unsupported: the scalar GOC form"), std::string::npos);
  n.units = {{"x", unit("image", "Reshape", {{"ReshapedChannel", integer(1)}, {"ReshapedHeight", integer(3)},
                                             {"ReshapedWidth", integer(1)}})}};
  EXPECT_NE(error_of(n).find("unit 'x': key 'Params.ReshapedChannel': unsupported reshape"), std::string::npos);
  n = base();
  n.units[0].second = with(n.units[0].second, "OutputChannels", integer(24));
  EXPECT_NE(error_of(n).find("key 'OutputChannels': unsupported: 24 output channels"), std::string::npos) << error_of(n);
  n.inputs.push_back({"other", input(5, 1)});
  n.units = {{"x", unit2("image", "other", "ScaledElementWise", {{"Type", str("Add")}})}};
  n.outputs = {{"x@output", output("x")}};
  EXPECT_NE(error_of(n).find("unsupported: operands of different shapes"), std::string::npos);
  n.inputs[1].second = input(3, 1);
  n.units = {{"x", unit2("image", "other", "ScaledElementWise", {{"Type", str("Pow")}})}};
  EXPECT_NE(error_of(n).find("unsupported element-wise operation 'Pow' (known: Add, Max, Min, Mul, Sub)"),
            std::string::npos)
      << error_of(n);
}

TEST(CompilerErrors, XmlProblemsNameTheLine) {
  EXPECT_EQ(error_of("<plist>\n<dict>\n<key>a</key>\n</dict>\n</plist>\n"), "net.plist:3: key 'a' has no value");
  EXPECT_EQ(error_of("<plist><dict><key>a</key><integer>1x</integer></dict></plist>"),
            "net.plist:1: <integer> '1x' is not a decimal 64-bit integer");
  EXPECT_NE(error_of("<plist>\n<dict>\n<key>a</key>\n<string>x</dict>\n").find("net.plist:4: not well-formed XML"),
            std::string::npos);
  EXPECT_EQ(error_of("bplist00\x01\x02"), "net.plist: binary property list (bplist): convert it to XML first, e.g. "
                                          "'plutil -convert xml1 FILE' (macOS) or 'plistutil -i FILE -o FILE.xml -f xml'");
  std::string deep = "<plist>";
  for (int i = 0; i < 200; ++i) deep += "<array>";
  for (int i = 0; i < 200; ++i) deep += "</array>";
  EXPECT_NE(error_of(deep + "</plist>").find("nested deeper than 64 levels"), std::string::npos);
}

TEST(CompilerErrors, CommandLineGivesOneLineAndStatus2) {
  test::TempDir dir;
  Net n = base();
  n.units[0].second = with(n.units[0].second, "Params", dict(with(conv_params(), "KernelHeight", integer(3))));
  test::write_text(dir.file("net.plist"), n.xml());
  test::write_bytes(dir.file("w.weights"), Bytes(18, 0));
  std::string out, err;
  const std::string cmd = std::string(HWX_BUILD_EXE) + " '" + dir.file("net.plist") + "' -o '" + dir.file("o.hwx") + "'";
  EXPECT_EQ(test::run_command(cmd, &out, &err), 2);
  const std::string line = at(n.xml(), "<key>KernelHeight</key>").substr(std::string("net.plist").size());
  EXPECT_EQ(err, "hwx-build: " + dir.file("net.plist") + line +
                     ": unit 'conv': key 'Params.KernelHeight': unsupported kernel 1x3 (known: 1x1 and 3x3, and 1x9 at stride 1)\n");
  EXPECT_FALSE(std::filesystem::exists(dir.file("o.hwx")));
  EXPECT_EQ(test::run_command(std::string(HWX_BUILD_EXE) + " '" + dir.file("none.plist") + "'", &out, &err), 2);
  EXPECT_EQ(err, "hwx-build: " + dir.file("none.plist") + ": cannot open: No such file or directory\n");
  EXPECT_EQ(test::run_command(std::string(HWX_BUILD_EXE) + " --no-such-flag x", &out, &err), 2);
}

}  // namespace
}  // namespace ane
