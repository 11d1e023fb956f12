// The MIL text parser: each printer's spelling reads into the expected
// tree, values are checked against their types, and every refusal names
// what it refuses with the line it is on. The sample programs are written
// here in each spelling; where the spelling was seen is named above each.
#include <bit>
#include <cfloat>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include <gtest/gtest.h>

#include "ane/mil.h"

namespace ane {
namespace {

using mil::DType;

Expected<mil::Program> parse(std::string_view text) { return mil::parse_program(text, "model.mil"); }

mil::Program parse_ok(std::string_view text) {
  auto p = parse(text);
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
  return p.ok() ? std::move(*p) : mil::Program{};
}

std::string parse_error(std::string_view text) {
  auto p = parse(text);
  EXPECT_FALSE(p.ok()) << text;
  return p.ok() ? "" : p.error().message;
}

// A program around a body: the function header is line 3, the body starts on line 4.
std::string wrap(const std::string& inputs, const std::string& body, const std::string& outputs) {
  return "program(1.3)\n{\n  func main<ios18>(" + inputs + ") {\n" + body + "  } -> (" + outputs + ");\n}\n";
}

const mil::Literal& literal_argument(const mil::Operation& op, std::string_view name) {
  static const mil::Literal kNone;
  const mil::Argument* a = op.argument(name);
  const auto* lit = a ? std::get_if<mil::Literal>(a) : nullptr;
  EXPECT_NE(lit, nullptr) << op.op << " " << name;
  return lit ? *lit : kNone;
}

std::string name_argument(const mil::Operation& op, std::string_view name) {
  const mil::Argument* a = op.argument(name);
  const auto* ref = a ? std::get_if<mil::NameRef>(a) : nullptr;
  EXPECT_NE(ref, nullptr) << op.op << " " << name;
  return ref ? ref->name : "";
}

const std::vector<double>& floats(const mil::Literal& l) { return std::get<std::vector<double>>(l.values); }
const std::vector<int64_t>& ints(const mil::Literal& l) { return std::get<std::vector<int64_t>>(l.values); }
const std::vector<std::string>& strings(const mil::Literal& l) { return std::get<std::vector<std::string>>(l.values); }
const mil::BlobRef& blob(const mil::Literal& l) { return std::get<mil::BlobRef>(l.values); }

// The `val` of a one-statement const program.
mil::Literal const_value(const std::string& type, const std::string& value) {
  auto p = parse_ok(wrap("fp16 x", "    " + type + " c = const()[val = " + value + "];\n", "c"));
  if (p.functions.empty() || p.functions[0].operations.empty()) return {};
  return p.functions[0].operations[0].attributes.at("val");
}

std::string const_error(const std::string& type, const std::string& value) {
  return parse_error(wrap("fp16 x", "    " + type + " c = const()[val = " + value + "];\n", "c"));
}

uint64_t bits(double v) { return std::bit_cast<uint64_t>(v); }

// ---- the spellings ------------------------------------------------------------

// Spelling 1: macOS 26 (coremlc 3500+) records, `program(1.3)`, an empty
// buildInfo dict, `string("...")` names, plain scalar types (`int32 gp`),
// typed literals written in place as arguments (`keep_dims = bool(true)`).
// Seen in joshuaswarren/mil-hwx-compiler tests/fixtures/attention.mil and
// research/chain_mil/c_softmax.mil (and research/oracles/h13/*.json "mil").
constexpr std::string_view kMacos26 = R"(program(1.3)
[buildInfo = dict<string, string>({})]
{
  func main<ios18>(tensor<fp16, [1, 32, 8, 8]> x) {
    string pt = const()[name = string("pt"), val = string("valid")];
    tensor<int32, [2]> st = const()[name = string("st"), val = tensor<int32, [2]>([1, 1])];
    tensor<int32, [4]> pd = const()[name = string("pd"), val = tensor<int32, [4]>([0, 0, 0, 0])];
    tensor<int32, [2]> dl = const()[name = string("dl"), val = tensor<int32, [2]>([1, 1])];
    int32 gp = const()[name = string("gp"), val = int32(32)];
    tensor<fp16, [32, 1, 3, 3]> w = const()[name = string("w"), val = tensor<fp16, [32, 1, 3, 3]>(BLOBFILE(path = string("@model_path/weights.bin"), offset = uint64(64)))];
    tensor<fp16, [1, 32, 8, 8]> c = conv(dilations = dl, groups = gp, pad = pd, pad_type = pt, strides = st, weight = w, x = x)[name = string("c")];
    fp16 s = const()[name = string("s"), val = fp16(0.125)];
    tensor<fp16, [1, 32, 8, 8]> y = mul(x = c, y = s)[name = string("scaled")];
    tensor<int32, [1]> ax = const()[name = string("ax"), val = tensor<int32, [1]>([3])];
    tensor<fp16, [1, 32, 8, 1]> m = reduce_max(x = y, axes = ax, keep_dims = bool(true))[name = string("m")];
  } -> (y, m);
}
)";

TEST(MilParse, Macos26Spelling) {
  const mil::Program p = parse_ok(kMacos26);
  EXPECT_EQ(p.path, "model.mil");
  EXPECT_EQ(p.version, "1.3");
  ASSERT_EQ(p.attributes.count("buildInfo"), 1u);
  const mil::Literal& info = p.attributes.at("buildInfo");
  EXPECT_EQ(info.line, 2u);
  EXPECT_EQ(info.type.shape, (std::vector<int64_t>{0, 2}));
  EXPECT_TRUE(strings(info).empty());

  ASSERT_EQ(p.functions.size(), 1u);
  const mil::Function& f = p.functions[0];
  EXPECT_EQ(f.name, "main");
  EXPECT_EQ(f.opset, "ios18");
  EXPECT_EQ(f.line, 4u);
  ASSERT_EQ(f.inputs.size(), 1u);
  EXPECT_EQ(f.inputs[0].name, "x");
  EXPECT_EQ(f.inputs[0].line, 4u);
  EXPECT_EQ(mil::type_text(f.inputs[0].type), "tensor<fp16, [1, 32, 8, 8]>");
  EXPECT_EQ(f.outputs, (std::vector<std::string>{"y", "m"}));
  ASSERT_EQ(f.operations.size(), 11u);

  const mil::Operation& pt = f.operations[0];
  EXPECT_EQ(pt.op, "const");
  EXPECT_EQ(pt.result, "pt");
  EXPECT_EQ(pt.line, 5u);
  EXPECT_EQ(mil::type_text(pt.result_type), "string");
  EXPECT_TRUE(pt.arguments.empty());
  EXPECT_EQ(strings(pt.attributes.at("name")), (std::vector<std::string>{"pt"}));
  EXPECT_EQ(strings(pt.attributes.at("val")), (std::vector<std::string>{"valid"}));

  EXPECT_EQ(ints(f.operations[2].attributes.at("val")), (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_EQ(ints(f.operations[4].attributes.at("val")), (std::vector<int64_t>{32}));
  EXPECT_FALSE(f.operations[4].result_type.is_tensor);

  const mil::Literal& w = f.operations[5].attributes.at("val");
  EXPECT_EQ(w.line, 10u);
  EXPECT_EQ(mil::type_text(w.type), "tensor<fp16, [32, 1, 3, 3]>");
  EXPECT_EQ(blob(w).path, "@model_path/weights.bin");
  EXPECT_EQ(blob(w).offset, 64u);

  const mil::Operation& conv = f.operations[6];
  EXPECT_EQ(conv.op, "conv");
  EXPECT_EQ(conv.line, 11u);
  std::vector<std::string> order;
  for (const auto& [name, arg] : conv.arguments) order.push_back(name);
  EXPECT_EQ(order, (std::vector<std::string>{"dilations", "groups", "pad", "pad_type", "strides", "weight", "x"}));
  EXPECT_EQ(name_argument(conv, "weight"), "w");
  EXPECT_EQ(name_argument(conv, "x"), "x");
  EXPECT_EQ(conv.argument("bias"), nullptr);
  EXPECT_EQ(strings(conv.attributes.at("name")), (std::vector<std::string>{"c"}));

  EXPECT_EQ(floats(f.operations[7].attributes.at("val")), (std::vector<double>{0.125}));
  const mil::Operation& m = f.operations[10];
  EXPECT_EQ(m.op, "reduce_max");
  const mil::Literal& keep = literal_argument(m, "keep_dims");
  EXPECT_EQ(mil::type_text(keep.type), "bool");
  EXPECT_EQ(ints(keep), (std::vector<int64_t>{1}));
  EXPECT_EQ(keep.line, 15u);
  EXPECT_EQ(p.function("main"), &p.functions[0]);
  EXPECT_EQ(p.function("other"), nullptr);
}

// Spelling 2: coremltools 8 through coremlc 3402, `program(1.0)`, a buildInfo
// dict of `tensor<string, []>` keys and values, names as
// `tensor<string, []>("...")`, deep indentation. Seen in apple/coremltools
// coremltools/modelrunner/ModelRunner/add_model.mlmodelc/model.mil; hex float
// constants in this spelling in ivan-digital/qwen3-asr-swift
// scripts/fix_kokoro_cpu.py (a patch of a compiled model.mil).
constexpr std::string_view kCoremltools8 = R"(program(1.0)
[buildInfo = dict<tensor<string, []>, tensor<string, []>>({{"coremlc-component-MIL", "3402.3.2"}, {"coremlc-version", "3402.4.1"}, {"coremltools-version", "8.1"}})]
{
    func main<ios16>(tensor<fp16, [1, 10]> a, tensor<fp16, [1, 10]> b) {
            tensor<fp16, []> k = const()[name = tensor<string, []>("k_to_fp16"), val = tensor<fp16, []>(0x1.8p+1)];
            tensor<fp16, [1, 10]> var_5 = mul(x = a, y = b)[name = tensor<string, []>("op_5_cast_fp16")];
            tensor<fp16, [1, 10]> var_7 = add(x = var_5, y = k)[name = tensor<string, []>("op_7_cast_fp16")];
        } -> (var_7);
}
)";

TEST(MilParse, Coremltools8Spelling) {
  const mil::Program p = parse_ok(kCoremltools8);
  EXPECT_EQ(p.version, "1.0");
  const mil::Literal& info = p.attributes.at("buildInfo");
  EXPECT_EQ(info.type.shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(strings(info), (std::vector<std::string>{"coremlc-component-MIL", "3402.3.2", "coremlc-version", "3402.4.1",
                                                     "coremltools-version", "8.1"}));
  ASSERT_EQ(p.functions.size(), 1u);
  const mil::Function& f = p.functions[0];
  EXPECT_EQ(f.opset, "ios16");
  ASSERT_EQ(f.inputs.size(), 2u);
  EXPECT_EQ(f.inputs[1].name, "b");
  ASSERT_EQ(f.operations.size(), 3u);
  const mil::Literal& k = f.operations[0].attributes.at("val");
  EXPECT_EQ(mil::type_text(k.type), "tensor<fp16, []>");
  EXPECT_TRUE(k.type.is_tensor);
  EXPECT_EQ(floats(k), (std::vector<double>{3.0}));
  const mil::Literal& name = f.operations[1].attributes.at("name");
  EXPECT_EQ(mil::type_text(name.type), "tensor<string, []>");
  EXPECT_EQ(strings(name), (std::vector<std::string>{"op_5_cast_fp16"}));
  EXPECT_EQ(f.operations[2].line, 7u);
  EXPECT_EQ(name_argument(f.operations[2], "y"), "k");
  EXPECT_EQ(f.outputs, (std::vector<std::string>{"var_7"}));
}

// Spelling 3: coremlc for the CoreML8 opset, `program(1)` with no attribute
// list, `func main<CoreML8>`, rank-0 tensors for scalars, one-element
// vectors written bare (`tensor<int32, [1]>(-1)`), several outputs. Seen in
// joshuaswarren/mlx-omarchy receipts/2026-09-13-fp16-output-peel/model.mil;
// `tensor<fp16, []>(-inf)` in this spelling in the same repository's
// overlay/tests/omarchy/coreml/test_select_runtime.py.
constexpr std::string_view kCoreML8 = R"(program(1)
{
  func main<CoreML8>(tensor<fp32, [1, 4, 16]> feats, tensor<int32, [1, 4]> mask) {
    tensor<int32, [1]> axes = const()[name = tensor<string, []>("axes"), val = tensor<int32, [1]>(-1)];
    tensor<bool, []> keep = const()[name = tensor<string, []>("keep"), val = tensor<bool, []>(false)];
    tensor<int32, [1]> len = reduce_sum(axes = axes, keep_dims = keep, x = mask)[name = tensor<string, []>("len")];
    tensor<string, []> to16 = const()[name = tensor<string, []>("to16"), val = tensor<string, []>("fp16")];
    tensor<fp16, [1, 4, 16]> f16 = cast(dtype = to16, x = feats)[name = tensor<string, []>("cast_3")];
    tensor<fp16, []> ninf = const()[name = tensor<string, []>("ninf"), val = tensor<fp16, []>(-inf)];
    tensor<bool, [4]> em = const()[name = tensor<string, []>("em"), val = tensor<bool, [4]>([true, true, true, false])];
    tensor<fp32, []> pi = const()[name = tensor<string, []>("pi"), val = tensor<fp32, []>(0x1.921fb6p+1)];
  } -> (f16, len);
}
)";

TEST(MilParse, CoreML8Spelling) {
  const mil::Program p = parse_ok(kCoreML8);
  EXPECT_EQ(p.version, "1");
  EXPECT_TRUE(p.attributes.empty());
  ASSERT_EQ(p.functions.size(), 1u);
  const mil::Function& f = p.functions[0];
  EXPECT_EQ(f.opset, "CoreML8");
  EXPECT_EQ(f.line, 3u);
  ASSERT_EQ(f.operations.size(), 8u);
  const mil::Literal& axes = f.operations[0].attributes.at("val");
  EXPECT_EQ(mil::type_text(axes.type), "tensor<int32, [1]>");
  EXPECT_EQ(ints(axes), (std::vector<int64_t>{-1}));
  EXPECT_EQ(ints(f.operations[1].attributes.at("val")), (std::vector<int64_t>{0}));
  EXPECT_EQ(name_argument(f.operations[2], "x"), "mask");
  EXPECT_EQ(strings(f.operations[3].attributes.at("val")), (std::vector<std::string>{"fp16"}));
  const std::vector<double>& ninf = floats(f.operations[5].attributes.at("val"));
  ASSERT_EQ(ninf.size(), 1u);
  EXPECT_TRUE(std::isinf(ninf[0]) && ninf[0] < 0);
  EXPECT_EQ(ints(f.operations[6].attributes.at("val")), (std::vector<int64_t>{1, 1, 1, 0}));
  const std::vector<double>& pi = floats(f.operations[7].attributes.at("val"));
  ASSERT_EQ(pi.size(), 1u);
  EXPECT_EQ(bits(pi[0]), bits(0x1.921fb6p+1));  // bit-exact, not merely close
  EXPECT_EQ(f.operations[7].line, 11u);
  EXPECT_EQ(f.outputs, (std::vector<std::string>{"f16", "len"}));
}

// Spelling 4: hand-written for the private ANE compiler, compact: no spaces
// around '=' or in shapes (`[1,16,1,8]`), statements without an attribute
// list, `%f`-printed decimals, tuple arguments `values=(a,b)`. Seen in
// maderix/ANE training/stories_mil.h.
constexpr std::string_view kCompact = R"(program(1.3)
[buildInfo = dict<string, string>({{"coremlc-component-MIL", "3510.2.1"}, {"coremltools-version", "9.0"}})]
{
    func main<ios18>(tensor<fp16, [1,16,1,8]> x, tensor<fp16, [1,16,1,1]> g) {
        tensor<fp16, [1,16,1,8]> sq = mul(x=x,y=x);
        fp16 half = const()[name=string("half"), val=fp16(-0.500000)];
        tensor<fp16, [1,16,1,8]> h = mul(x=sq,y=half);
        int32 ax = const()[name=string("ax"), val=int32(1)];
        bool il = const()[name=string("il"), val=bool(false)];
        tensor<fp16, [1,48,1,8]> out = concat(axis=ax,interleave=il,values=(h,sq,x));
    } -> (out);
}
)";

TEST(MilParse, CompactSpelling) {
  const mil::Program p = parse_ok(kCompact);
  EXPECT_EQ(strings(p.attributes.at("buildInfo")),
            (std::vector<std::string>{"coremlc-component-MIL", "3510.2.1", "coremltools-version", "9.0"}));
  ASSERT_EQ(p.functions.size(), 1u);
  const mil::Function& f = p.functions[0];
  EXPECT_EQ(f.inputs[1].type.shape, (std::vector<int64_t>{1, 16, 1, 1}));
  ASSERT_EQ(f.operations.size(), 6u);
  EXPECT_TRUE(f.operations[0].attributes.empty());
  EXPECT_EQ(floats(f.operations[1].attributes.at("val")), (std::vector<double>{-0.5}));
  const mil::Operation& cat = f.operations[5];
  EXPECT_EQ(cat.op, "concat");
  EXPECT_EQ(cat.line, 10u);
  const mil::Argument* values = cat.argument("values");
  ASSERT_NE(values, nullptr);
  ASSERT_TRUE(std::holds_alternative<mil::NameTuple>(*values));
  EXPECT_EQ(std::get<mil::NameTuple>(*values).names, (std::vector<std::string>{"h", "sq", "x"}));
  EXPECT_EQ(mil::type_text(cat.result_type), "tensor<fp16, [1, 48, 1, 8]>");
}

TEST(MilParse, SeveralFunctions) {
  const mil::Program p = parse_ok(
      "program(1.3)\n{\n"
      "  func main<ios18>(fp16 x) {\n    fp16 y = relu(x = x);\n  } -> (y);\n"
      "  func other(fp16 x, fp16 y) {\n  } -> (y, x);\n}\n");
  ASSERT_EQ(p.functions.size(), 2u);
  const mil::Function* other = p.function("other");
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->opset, "");
  EXPECT_EQ(other->line, 6u);
  EXPECT_TRUE(other->operations.empty());
  EXPECT_EQ(other->outputs, (std::vector<std::string>{"y", "x"}));
  // Names are per function: `y` in main does not clash with other's input y.
  EXPECT_EQ(parse_error("program(1.3)\n{\n  func f(fp16 x) {\n  } -> (x);\n  func f(fp16 x) {\n  } -> (x);\n}\n"),
            "model.mil:5: function 'f' is defined twice");
}

// ---- literals -------------------------------------------------------------------

TEST(MilParse, ScalarsOfEveryType) {
  EXPECT_EQ(ints(const_value("int8", "int8(-128)")), (std::vector<int64_t>{-128}));
  EXPECT_EQ(ints(const_value("uint8", "uint8(255)")), (std::vector<int64_t>{255}));
  EXPECT_EQ(ints(const_value("int16", "int16(-32768)")), (std::vector<int64_t>{-32768}));
  EXPECT_EQ(ints(const_value("uint16", "uint16(65535)")), (std::vector<int64_t>{65535}));
  EXPECT_EQ(ints(const_value("int32", "int32(-2147483648)")), (std::vector<int64_t>{INT32_MIN}));
  EXPECT_EQ(ints(const_value("uint32", "uint32(4294967295)")), (std::vector<int64_t>{4294967295}));
  EXPECT_EQ(ints(const_value("int64", "int64(-9223372036854775808)")), (std::vector<int64_t>{INT64_MIN}));
  EXPECT_EQ(ints(const_value("uint64", "uint64(9223372036854775807)")), (std::vector<int64_t>{INT64_MAX}));
  EXPECT_EQ(ints(const_value("int32", "int32(+7)")), (std::vector<int64_t>{7}));
  EXPECT_EQ(ints(const_value("bool", "bool(true)")), (std::vector<int64_t>{1}));
  EXPECT_EQ(floats(const_value("fp64", "fp64(0.1)")), (std::vector<double>{0.1}));
  EXPECT_EQ(floats(const_value("fp32", "fp32(2)")), (std::vector<double>{2.0}));
  EXPECT_EQ(floats(const_value("fp32", "fp32(1e-3)")), (std::vector<double>{1e-3}));
  EXPECT_EQ(strings(const_value("string", R"(string("a\"b\\c\nd\te"))")),
            (std::vector<std::string>{"a\"b\\c\nd\te"}));
  EXPECT_EQ(const_value("int8", "int8(1)").type.dtype, DType::Int8);
}

TEST(MilParse, HexFloatsAreExact) {
  EXPECT_EQ(bits(floats(const_value("fp32", "fp32(0x1.8p-3)"))[0]), bits(0.1875));
  EXPECT_EQ(bits(floats(const_value("fp32", "fp32(-0x1p+0)"))[0]), bits(-1.0));
  EXPECT_EQ(bits(floats(const_value("fp32", "fp32(0x1.8p+1)"))[0]), bits(3.0));
  // An fp16 subnormal, as coremlc prints them.
  EXPECT_EQ(bits(floats(const_value("fp16", "fp16(0x1.5p-17)"))[0]), bits(std::ldexp(21.0, -21)));
  EXPECT_EQ(bits(floats(const_value("fp16", "fp16(-0x0p+0)"))[0]), bits(-0.0));
  EXPECT_EQ(bits(floats(const_value("fp64", "fp64(-0x1.fffffffffffffp+1023)"))[0]), bits(-DBL_MAX));
  EXPECT_TRUE(std::isinf(floats(const_value("fp32", "fp32(inf)"))[0]));
  EXPECT_TRUE(std::isnan(floats(const_value("fp32", "fp32(nan)"))[0]));
  EXPECT_EQ(floats(const_value("tensor<fp16, [2]>", "tensor<fp16, [2]>([0x1p-14, -inf])")),
            (std::vector<double>{std::ldexp(1.0, -14), -std::numeric_limits<double>::infinity()}));
}

TEST(MilParse, ValuesAreCheckedAgainstTheirType) {
  const std::string at = "model.mil:4: op 'const': attribute 'val': ";
  EXPECT_EQ(const_error("int8", "int8(128)"), at + "value 128 is out of range for int8");
  EXPECT_EQ(const_error("uint8", "uint8(-1)"), at + "value -1 is out of range for uint8");
  EXPECT_EQ(const_error("uint32", "uint32(4294967296)"), at + "value 4294967296 is out of range for uint32");
  EXPECT_EQ(const_error("int64", "int64(9223372036854775808)"),
            at + "value 9223372036854775808 is out of range for int64");
  EXPECT_EQ(const_error("int32", "int32(1.5)"), at + "'1.5' is not a valid int32 value");
  EXPECT_EQ(const_error("int32", "int32(0x10)"), at + "'0x10' is not a valid int32 value");
  EXPECT_EQ(const_error("fp16", "fp16(70000)"), at + "value 70000 is out of range for fp16");
  EXPECT_EQ(const_error("fp32", "fp32(1e400)"), at + "value 1e400 is out of range for fp32");
  EXPECT_EQ(const_error("fp32", "fp32(0x)"), at + "'0x' is not a valid fp32 value");
  EXPECT_EQ(const_error("fp32", "fp32(1.5.2)"), at + "'1.5.2' is not a valid fp32 value");
  EXPECT_EQ(const_error("fp32", "fp32(true)"), at + "expected a number for fp32, found 'true'");
  EXPECT_EQ(const_error("bool", "bool(1)"), at + "expected true or false, found '1'");
  EXPECT_EQ(const_error("string", "string(1)"), at + "expected a string, found '1'");
  EXPECT_EQ(const_error("int16", "int16(x)"), at + "expected an integer for int16, found 'x'");
  EXPECT_EQ(const_error("int32", "int32([1])"), at + "a scalar int32 literal takes one value, not a list");
  EXPECT_EQ(const_error("int32", R"(int32(BLOBFILE(path = string("w"), offset = uint64(0))))"),
            at + "BLOBFILE needs a tensor type, not int32");
}

TEST(MilParse, TensorLiteralsFollowTheShape) {
  EXPECT_EQ(ints(const_value("tensor<int32, [2, 3]>", "tensor<int32, [2, 3]>([[1, 2, 3], [4, 5, 6]])")),
            (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(ints(const_value("tensor<int32, [2, 2]>", "tensor<int32, [2, 2]>([1, 2, 3, 4])")),
            (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(ints(const_value("tensor<int32, [2, 1, 2]>", "tensor<int32, [2, 1, 2]>([[[1, 2]], [[3, 4]]])")),
            (std::vector<int64_t>{1, 2, 3, 4}));
  // Elements spelled with their type, as some hand-written programs do.
  EXPECT_EQ(floats(const_value("tensor<fp16, [2]>", "tensor<fp16, [2]>([fp16(1), fp16(-1)])")),
            (std::vector<double>{1.0, -1.0}));
  EXPECT_TRUE(ints(const_value("tensor<int32, [0]>", "tensor<int32, [0]>([])")).empty());
  EXPECT_EQ(strings(const_value("tensor<string, [2]>", R"(tensor<string, [2]>(["a", "b"]))")),
            (std::vector<std::string>{"a", "b"}));

  const std::string at = "model.mil:4: op 'const': attribute 'val': ";
  EXPECT_EQ(const_error("tensor<int32, [4]>", "tensor<int32, [4]>([1, 2, 3])"),
            at + "tensor<int32, [4]> literal has 3 values, expected 4");
  EXPECT_EQ(const_error("tensor<int32, [2]>", "tensor<int32, [2]>([1, 2, 3])"),
            at + "tensor<int32, [2]> literal has more than 2 values");
  EXPECT_EQ(const_error("tensor<int32, [2]>", "tensor<int32, [2]>(1)"),
            at + "tensor<int32, [2]> literal has 1 value, expected 2");
  EXPECT_EQ(const_error("tensor<int32, [2, 2]>", "tensor<int32, [2, 2]>([[1, 2], [3]])"),
            at + "list at depth 2 has 1 entries, but dimension 1 of tensor<int32, [2, 2]> is 2");
  EXPECT_EQ(const_error("tensor<int32, [2]>", "tensor<int32, [2]>([[1, 2]])"),
            at + "list nested deeper than the rank 1 of tensor<int32, [2]>");
  EXPECT_EQ(const_error("tensor<int32, [2, 2]>", "tensor<int32, [2, 2]>([[1, 2], 3])"),
            at + "a list mixes values and nested lists");
  EXPECT_EQ(const_error("tensor<int32, [1, 2, 2]>", "tensor<int32, [1, 2, 2]>([[1, 2, 3, 4]])"),
            at + "list nested 2 deep, but tensor<int32, [1, 2, 2]> has rank 3");
}

TEST(MilParse, Blobfiles) {
  const mil::Literal w = const_value(
      "tensor<fp16, [4096, 4096]>",
      R"(tensor<fp16, [4096, 4096]>(BLOBFILE(offset = uint64(18446744073709551615), path = string("@model_path/weights/weight.bin"))))");
  EXPECT_EQ(blob(w).path, "@model_path/weights/weight.bin");
  EXPECT_EQ(blob(w).offset, UINT64_MAX);  // read as uint64, all of it
  // A weight far over the in-place limit is fine: its values are not in the text.
  const mil::Literal big = const_value("tensor<int8, [65536, 65536]>",
                                       R"(tensor<int8, [65536, 65536]>(BLOBFILE(path = string("w"), offset = uint64(64))))");
  EXPECT_EQ(blob(big).offset, 64u);

  const std::string at = "model.mil:4: op 'const': attribute 'val': ";
  EXPECT_EQ(const_error("tensor<fp16, [2]>", R"(tensor<fp16, [2]>(BLOBFILE(path = string("w"))))"),
            at + "BLOBFILE needs both a path and an offset");
  EXPECT_EQ(const_error("tensor<fp16, [2]>", R"(tensor<fp16, [2]>(BLOBFILE(path = int32(1), offset = uint64(0))))"),
            at + "BLOBFILE path must be a string");
  EXPECT_EQ(const_error("tensor<fp16, [2]>", R"(tensor<fp16, [2]>(BLOBFILE(path = string("w"), offset = int32(0))))"),
            at + "expected uint64(...) for the BLOBFILE offset, found 'int32'");
  EXPECT_EQ(const_error("tensor<fp16, [2]>", R"(tensor<fp16, [2]>(BLOBFILE(path = string("w"), offset = uint64(-1))))"),
            at + "invalid BLOBFILE offset '-1'");
  EXPECT_EQ(const_error("tensor<fp16, [2]>",
                        R"(tensor<fp16, [2]>(BLOBFILE(path = string("w"), path = string("v"), offset = uint64(0))))"),
            at + "BLOBFILE field 'path' is given twice");
  EXPECT_EQ(const_error("tensor<fp16, [2]>", R"(tensor<fp16, [2]>(BLOBFILE(file = string("w"))))"),
            at + "unknown BLOBFILE field 'file'");
}

// ---- refusals by name -----------------------------------------------------------

constexpr std::string_view kSplitBody =
    "    int32 ax = const()[name = string(\"ax\"), val = int32(1)];\n"
    "    int32 n = const()[name = string(\"n\"), val = int32(2)];\n";

TEST(MilParse, RefusesSeveralResults) {
  // The bare form, and the parenthesised form coremlc prints (seen in
  // joshuaswarren/mlx-omarchy receipts/2026-09-13-fp16-output-peel/model.mil).
  const std::string bare = wrap("tensor<fp16, [1, 4]> x",
                                std::string(kSplitBody) +
                                    "    tensor<fp16, [1, 2]> a, tensor<fp16, [1, 2]> b = split(axis = ax, "
                                    "num_splits = n, x = x)[name = string(\"s\")];\n",
                                "a");
  auto e = parse(bare);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().message,
            "model.mil:6: statement defines 2 results (split): several results per statement are not supported");
  EXPECT_EQ(e.error().offset, bare.find("tensor<fp16, [1, 2]> a"));
  const std::string tuple = wrap("tensor<fp16, [1, 6]> x",
                                 std::string(kSplitBody) +
                                     "    (tensor<fp16, [1, 2]> a, tensor<fp16, [1, 2]> b, tensor<fp16, [1, 2]> c) = "
                                     "split(axis = ax, num_splits = n, x = x);\n",
                                 "a");
  EXPECT_EQ(parse_error(tuple),
            "model.mil:6: statement defines 3 results (split): several results per statement are not supported");
  EXPECT_EQ(parse_error(wrap("fp16 x", "    (fp16 a) = identity(x = x);\n", "a")),
            "model.mil:4: statement's result is a tuple (identity): tuple results are not supported");
}

TEST(MilParse, RefusesControlFlow) {
  EXPECT_EQ(parse_error(wrap("bool p, fp16 x",
                             "    fp16 y = cond(pred = p)[name = string(\"c\")] {\n      fp16 z = relu(x = x);\n"
                             "    } -> (z);\n",
                             "y")),
            "model.mil:4: op 'cond' has nested blocks: control flow is not supported");
  EXPECT_EQ(parse_error(wrap("fp16 x", "    fp16 y = while_loop(loop_vars = (x));\n", "y")),
            "model.mil:4: op 'while_loop' has nested blocks: control flow is not supported");
  // An op not known as control flow is refused by the block itself.
  EXPECT_EQ(parse_error(wrap("fp16 x", "    fp16 y = my_loop(x = x) {\n    };\n", "y")),
            "model.mil:4: op 'my_loop' has nested blocks: control flow is not supported");
  EXPECT_EQ(parse_error(wrap("fp16 x", "    fp16 y = my_loop(body = {\n    });\n", "y")),
            "model.mil:4: op 'my_loop': argument 'body': nested blocks: control flow is not supported");
}

TEST(MilParse, RefusesTypesItCannotRepresent) {
  EXPECT_EQ(parse_error(wrap("state<tensor<fp16, [1, 1, 4, 64]>> k", "", "k")),
            "model.mil:3: state<...> types are not supported");
  EXPECT_EQ(parse_error(wrap("tensor<fp32, [1, is0, 8]> x", "", "x")),
            "model.mil:3: dimension 'is0' is symbolic: symbolic dimensions are not supported");
  EXPECT_EQ(parse_error(wrap("tensor<fp32, [?, 3]> x", "", "x")),
            "model.mil:3: dimension '?' is unknown: unknown dimensions are not supported");
  EXPECT_EQ(parse_error(wrap("fp16 x", "    list<tensor<fp16, [1]>, 2> l = make_list(x = x);\n", "x")),
            "model.mil:4: list<...> types are not supported");
  EXPECT_EQ(parse_error(wrap("tensor<bf16, [2]> x", "", "x")), "model.mil:3: unknown element type 'bf16'");
  EXPECT_EQ(parse_error(wrap("uint4 x", "", "x")), "model.mil:3: unknown element type 'uint4'");
  EXPECT_EQ(parse_error(wrap("tensor<fp16, [2, -1]> x", "", "x")), "model.mil:3: dimension -1 is negative");
  EXPECT_EQ(parse_error(wrap("tensor<fp16, [2199023255553]> x", "", "x")),
            "model.mil:3: dimension 2199023255553 is larger than 2^40");
  EXPECT_EQ(parse_error(wrap("tensor<fp16, [1" + std::string(40, ',') + "]> x", "", "x")),
            "model.mil:3: expected a dimension, found ','");
  std::string rank33 = "tensor<fp16, [1";
  for (int i = 0; i < 32; ++i) rank33 += ", 1";
  EXPECT_EQ(parse_error(wrap(rank33 + "]> x", "", "x")), "model.mil:3: a tensor type has more than 32 dimensions");
}

TEST(MilParse, RefusesBadNames) {
  EXPECT_EQ(parse_error(wrap("fp16 x", "    fp16 x = relu(x = x);\n", "x")),
            "model.mil:4: name 'x' is defined twice (first on line 3)");
  const std::string undefined = wrap("fp16 x", "    fp16 y = mul(x = x, y = w);\n    fp16 w = relu(x = x);\n", "y");
  auto e = parse(undefined);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().message,
            "model.mil:4: op 'mul': argument 'y': 'w' is not defined (an argument must name an input or an earlier "
            "result)");
  EXPECT_EQ(e.error().offset, undefined.find("w);"));
  EXPECT_EQ(parse_error(wrap("fp16 x", "    fp16 y = relu(x = y);\n", "y")),
            "model.mil:4: op 'relu': argument 'x': 'y' is not defined (an argument must name an input or an earlier "
            "result)");
  EXPECT_EQ(parse_error(wrap("fp16 x", "    fp16 y = concat(values = (x, q));\n", "y")),
            "model.mil:4: op 'concat': argument 'values': 'q' is not defined (an argument must name an input or an "
            "earlier result)");
  EXPECT_EQ(parse_error(wrap("fp16 x", "    fp16 y = relu(x = x);\n", "y, z")),
            "model.mil:5: function 'main': output 'z' is not defined (an output must name an input or a result)");
  EXPECT_EQ(parse_error(wrap("fp16 x", "    fp16 y = add(x = x, x = x);\n", "y")),
            "model.mil:4: op 'add': argument 'x' is given twice");
  EXPECT_EQ(parse_error(wrap("fp16 x", "    fp16 y = relu(x = x)[name = string(\"a\"), name = string(\"b\")];\n", "y")),
            "model.mil:4: op 'relu': attribute 'name' is given twice");
  EXPECT_EQ(parse_error(wrap("fp16 x", "    fp16 y = concat(values = (int32(1), x));\n", "y")),
            "model.mil:4: op 'concat': argument 'values': a tuple of literals is not supported: a tuple names inputs "
            "or earlier results");
  EXPECT_EQ(parse_error(wrap("fp16 x", "    fp16 y = concat(values = ());\n", "y")),
            "model.mil:4: op 'concat': argument 'values': an empty tuple is not supported");
  EXPECT_EQ(parse_error(wrap("fp16 x", "", "")), "model.mil:4: function 'main' has no outputs");
}

TEST(MilParse, RefusesMalformedText) {
  const std::string good = wrap("fp16 x", "    fp16 y = relu(x = x);\n", "y");
  ASSERT_TRUE(parse(good).ok());
  auto e = parse(good + "func");
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().message, "model.mil:7: text after the program's closing brace");
  EXPECT_EQ(e.error().offset, good.size());
  EXPECT_EQ(parse_error(wrap("fp16 x", "    string s = const()[val = string(\"abc)];\n", "s")),
            "model.mil:4: unterminated string");
  EXPECT_EQ(parse_error("program(1.3)\n{\n  func main(fp16 x) {\n    string s = const()[val = string(\"ab"),
            "model.mil:4: unterminated string");
  EXPECT_EQ(parse_error(wrap("fp16 x", "    string s = const()[val = string(\"a\\qb\")];\n", "s")),
            "model.mil:4: unknown escape '\\q' in string");
  EXPECT_EQ(parse_error(wrap("fp16 x", "    fp16 y = relu(x = x); # note\n", "y")),
            "model.mil:4: unexpected character '#'");
  EXPECT_EQ(parse_error(wrap("fp16 x", "    fp16 y = relu(x = x)\n", "y")),
            "model.mil:5: expected ';', found '}'");
  EXPECT_EQ(parse_error(std::string("program(1.3)\n{\n\x01")), "model.mil:3: unexpected character '\\x01'");
  EXPECT_EQ(parse_error("program(1.3)\n{\n}\n"), "model.mil:3: program has no functions");
  EXPECT_EQ(parse_error("program(x)\n"), "model.mil:1: expected a program version like 1.3, found 'x'");
  EXPECT_EQ(parse_error(""), "model.mil:1: expected 'program', found end of text");
  EXPECT_EQ(parse_error(wrap("fp16 x", "    fp32 c = const()[val = fp32(" + std::string(300, '1') + ")];\n", "c")),
            "model.mil:4: number is longer than 256 characters");
}

TEST(MilParse, RefusesHugeAndDeepLiterals) {
  EXPECT_EQ(const_error("tensor<fp32, [100000, 100000]>", "tensor<fp32, [100000, 100000]>([1])"),
            "model.mil:4: op 'const': attribute 'val': literal of 10000000000 elements (tensor<fp32, [100000, 100000]>): "
            "literals over 67108864 elements are not supported");
  // Deep brackets end at the type's rank, long before the stack could.
  const std::string deep = std::string(100000, '[') + "1" + std::string(100000, ']');
  EXPECT_EQ(const_error("tensor<int32, [1, 1]>", "tensor<int32, [1, 1]>(" + deep + ")"),
            "model.mil:4: op 'const': attribute 'val': list nested deeper than the rank 2 of tensor<int32, [1, 1]>");
  std::string shape32 = "1";
  for (int i = 1; i < 32; ++i) shape32 += ", 1";
  const std::string type32 = "tensor<int32, [" + shape32 + "]>";
  EXPECT_EQ(ints(const_value(type32, type32 + "(" + std::string(32, '[') + "7" + std::string(32, ']') + ")")),
            (std::vector<int64_t>{7}));
  EXPECT_EQ(const_error(type32, type32 + "(" + deep + ")"),
            "model.mil:4: op 'const': attribute 'val': list nested deeper than the rank 32 of " + type32);
  // Deep parentheses and dict types fail at once, without recursing.
  const std::string parens = wrap("fp16 x", "    fp16 y = concat(values = " + std::string(100000, '(') + "x);\n", "y");
  EXPECT_EQ(parse_error(parens), "model.mil:4: op 'concat': argument 'values': expected a name in the tuple, found '('");
  std::string dicts = "program(1.3)\n[a = ";
  for (int i = 0; i < 100; ++i) dicts += "dict<";
  EXPECT_EQ(parse_error(dicts), "model.mil:2: attribute 'a': dict<...> types are not supported");
}

// ---- robustness -----------------------------------------------------------------

// Every error is one line "model.mil:<line>: ..." at an offset inside the text.
void expect_well_formed_error(const Expected<mil::Program>& p, size_t text_size) {
  if (p.ok()) return;
  const std::string& m = p.error().message;
  EXPECT_EQ(m.rfind("model.mil:", 0), 0u) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  EXPECT_LE(p.error().offset, text_size) << m;
}

TEST(MilParse, EveryTruncationIsAnErrorOrTheWholeProgram) {
  for (const std::string_view text : {kMacos26, kCoremltools8, kCoreML8, kCompact}) {
    const size_t closing = text.rfind('}');
    size_t accepted = 0;
    for (size_t n = 0; n < text.size(); ++n) {
      const auto p = parse(text.substr(0, n));
      expect_well_formed_error(p, n);
      if (p.ok()) {
        EXPECT_GT(n, closing) << "a truncated program parsed: " << text.substr(0, n);
        ++accepted;
      }
    }
    EXPECT_EQ(accepted, text.size() - closing - 1);  // only the prefixes missing trailing whitespace
  }
}

TEST(MilParse, MutatedBytesNeverCrash) {
  const std::string_view replacements = "()[]{}<>,=;\"-+.0x?\\ \n\xff";
  for (const std::string_view base : {kMacos26, kCoremltools8, kCoreML8, kCompact}) {
    std::string text(base);
    for (size_t i = 0; i < text.size(); ++i) {
      const char saved = text[i];
      for (char c : replacements) {
        text[i] = c;
        expect_well_formed_error(parse(text), text.size());
      }
      text[i] = '\0';
      expect_well_formed_error(parse(text), text.size());
      text[i] = saved;
    }
  }
}

TEST(MilParse, LoadProgramReadsAFile) {
  const std::string path = (std::filesystem::path(testing::TempDir()) / "mil_parse_test_model.mil").string();
  {
    std::ofstream out(path, std::ios::binary);
    out << kCoremltools8;
  }
  auto p = mil::load_program(path);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->path, path);
  EXPECT_EQ(p->functions.at(0).operations.size(), 3u);
  std::filesystem::remove(path);
  auto missing = mil::load_program(path);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message.rfind(path + ": ", 0), 0u) << missing.error().message;
}

// ---- types ----------------------------------------------------------------------

TEST(MilParse, TypesAndNames) {
  for (int i = 0; i <= static_cast<int>(DType::String); ++i) {
    const auto t = static_cast<DType>(i);
    EXPECT_EQ(mil::dtype_of_name(mil::dtype_name(t)), t) << mil::dtype_name(t);
  }
  EXPECT_STREQ(mil::dtype_name(DType::UInt16), "uint16");
  EXPECT_EQ(mil::dtype_of_name("bf16"), std::nullopt);
  EXPECT_EQ(mil::dtype_of_name("tensor"), std::nullopt);

  mil::Type t{DType::Fp16, true, {1, 3, 8, 8}};
  EXPECT_EQ(t.element_count(), 192u);
  EXPECT_EQ(mil::type_text(t), "tensor<fp16, [1, 3, 8, 8]>");
  t.shape = {};
  EXPECT_EQ(t.element_count(), 1u);
  EXPECT_EQ(mil::type_text(t), "tensor<fp16, []>");
  t.shape = {4, 0, 7};
  EXPECT_EQ(t.element_count(), 0u);
  t.shape = {int64_t{1} << 40, int64_t{1} << 40};
  EXPECT_EQ(t.element_count(), UINT64_MAX);  // saturates, never wraps
  t.shape = {int64_t{1} << 31, int64_t{1} << 31, 4};
  EXPECT_EQ(t.element_count(), UINT64_MAX);
  t.shape = {int64_t{1} << 31, int64_t{1} << 31, 3};
  EXPECT_EQ(t.element_count(), uint64_t{3} << 62);
  t.shape = {2, -1};
  EXPECT_EQ(t.element_count(), UINT64_MAX);
  EXPECT_EQ(mil::type_text(mil::Type{DType::Bool, false, {}}), "bool");
}

}  // namespace
}  // namespace ane
