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
#include "mil_parse_support.h"

namespace ane {
namespace {

using namespace mil_test;

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
