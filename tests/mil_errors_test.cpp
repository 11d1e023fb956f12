// hwx-build's MIL front end refuses what it cannot compile in one line that
// names the file and line, and the op and argument where there is one:
// every refusal of the lowering (mil_network.cpp, mil_conv.cpp), of the
// weight files it reads, and of load_model, checked by exact text. Also what
// load_model accepts: the input kinds by content, --weights (MilOptions), a
// bundle's metadata.json order, and weights written in the MIL text.
#include <filesystem>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ane/compiler.h"
#include "ane/fp16.h"
#include "ane/mil.h"
#include "ane/mil_network.h"
#include "milblob_writer.h"
#include "support.h"

namespace ane {
namespace {

namespace fs = std::filesystem;

const std::string kErrorsIdent = "libane mil errors test";

// A program around a body: `func` is line 3, the body starts on line 4.
std::string wrap(const std::string& inputs, const std::string& body, const std::string& outputs) {
  return "program(1.3)\n{\n  func main<ios18>(" + inputs + ") {\n" + body + "  } -> (" + outputs + ");\n}\n";
}

const std::string kX = "tensor<fp16, [1, 8, 4, 4]> x";

// weights/weight.bin of every test: an fp16 [8, 8, 3, 3] kernel, an fp16
// [8] bias and four fp32 values, at the offsets it reports.
struct Weights {
  test::MilBlobFile file;
  uint64_t kernel = 0, bias = 0, fp32 = 0;
  Weights() {
    std::vector<uint16_t> k(576), b(8);
    for (size_t i = 0; i < k.size(); ++i) k[i] = float_to_fp16(static_cast<float>(int(i % 9) - 4) / 16.0f);
    for (size_t i = 0; i < b.size(); ++i) b[i] = float_to_fp16(static_cast<float>(i) / 8.0f);
    const float f[4] = {1, 2, 3, 4};
    const test::MilBlob blobs[] = {{mil::BlobDataType::Fp16, test::fp16_data(k)},
                                   {mil::BlobDataType::Fp16, test::fp16_data(b)},
                                   {mil::BlobDataType::Fp32, test::fp32_data(f)}};
    file = test::write_milblob(blobs);
    kernel = file.offsets[0];
    bias = file.offsets[1];
    fp32 = file.offsets[2];
  }
};
const Weights& weights() {
  static const Weights w;
  return w;
}

std::string blobfile(const std::string& type, uint64_t offset,
                     const std::string& path = "@model_path/weights/weight.bin") {
  return fmt::format("{}(BLOBFILE(path = string(\"{}\"), offset = uint64({})))", type, path, offset);
}

// A conv of x with the file's kernel: line 4 the weight, line 5 the conv.
struct Conv {
  std::string input = kX;
  std::string weight_type = "tensor<fp16, [8, 8, 3, 3]>";
  uint64_t offset = weights().kernel;
  std::string arguments = "pad_type = string(\"same\")";
  std::string result_type = "tensor<fp16, [1, 8, 4, 4]>";
  std::string text() const {
    return wrap(input,
                "    " + weight_type + " w = const()[name = string(\"w\"), val = " + blobfile(weight_type, offset) +
                    "];\n    " + result_type + " c = conv(x = x, weight = w, " + arguments + ")[name = string(\"c\")];\n",
                "c");
  }
};

// DIR/model.mil holding `text`, with weights/weight.bin next to it unless told.
struct Model {
  test::TempDir dir;
  explicit Model(const std::string& text, bool with_weights = true) {
    test::write_text(mil(), text);
    if (with_weights) {
      fs::create_directories(dir.file("weights"));
      test::write_bytes(dir.file("weights/weight.bin"), weights().file.bytes);
    }
  }
  std::string mil() const { return dir.file("model.mil"); }
  // load_model's refusal ("" when it loads).
  std::string error() const {
    auto n = load_model(mil());
    return n ? "" : n.error().str();
  }
  // load_model, then compile_network: the first refusal.
  std::string compile_error() const {
    auto n = load_model(mil());
    if (!n) return n.error().str();
    CompileOptions o;
    o.ident = kErrorsIdent;
    auto c = compile_network(*n, o);
    return c ? "" : c.error().str();
  }
};

// ---- ops outside the vocabulary -------------------------------------------------

TEST(MilErrors, OpsOutsideTheVocabulary) {
  const std::string y = "    tensor<fp16, [1, 8, 4, 4]> y = ";
  Model matmul(wrap(kX, y + "matmul(x = x, y = x);\n", "y"));
  EXPECT_EQ(matmul.error(), matmul.mil() + ":4: op 'matmul': not supported: matmul is not in hwx-build's vocabulary");
  Model softmax(wrap(kX, y + "softmax(x = x, axis = int32(1));\n", "y"));
  EXPECT_EQ(softmax.error(), softmax.mil() + ":4: op 'softmax': not supported: softmax is several tasks in Apple's "
                                             "output; not in hwx-build's vocabulary");
  Model unknown(wrap(kX, "    fp16 k = const()[val = fp16(1)];\n" + y + "frobnicate(x = x, k = k);\n", "y"));
  EXPECT_EQ(unknown.error(),
            unknown.mil() + ":5: op 'frobnicate': not supported (docs/mil.md lists the ops hwx-build lowers)");
  Model lut(wrap(kX,
                 "    tensor<fp16, [8, 8, 3, 3]> w = constexpr_lut_to_dense()[shape = tensor<uint32, [4]>([8, 8, 3, "
                 "3])];\n" +
                     y + "conv(x = x, weight = w, pad_type = string(\"same\"));\n",
                 "y"));
  EXPECT_EQ(lut.error(), lut.mil() + ":4: op 'constexpr_lut_to_dense': compressed weights (constexpr_*) are not "
                                     "supported: decompress them to fp16 first");
}

// ---- element-wise operands ------------------------------------------------------

TEST(MilErrors, ElementWiseOperands) {
  Model constant(wrap("tensor<fp16, [1, 2, 1, 2]> x",
                      "    tensor<fp16, [1, 2, 1, 2]> s = const()[name = string(\"s\"), val = tensor<fp16, [1, 2, 1, "
                      "2]>([1, 2, 3, 4])];\n"
                      "    tensor<fp16, [1, 2, 1, 2]> y = mul(x = x, y = s)[name = string(\"y\")];\n",
                      "y"));
  EXPECT_EQ(constant.error(), constant.mil() + ":5: op 'mul': argument 'y': a tensor constant tensor<fp16, [1, 2, 1, "
                                               "2]> on tensor<fp16, [1, 2, 1, 2]> is not supported: it must hold one "
                                               "value per channel of x (surface [1,2,1,1], the same rank), this one's "
                                               "surface is [1,2,1,2]");
  // Per channel over a larger plane: add, sub and mul; not maximum or minimum.
  Model max_plane(wrap("tensor<fp16, [1, 2, 1, 2]> x",
                       "    tensor<fp16, [1, 2, 1, 1]> s = const()[name = string(\"s\"), val = tensor<fp16, [1, 2, 1, "
                       "1]>(BLOBFILE(path = string(\"@model_path/w.bin\"), offset = uint64(64)))];\n"
                       "    tensor<fp16, [1, 2, 1, 2]> y = maximum(x = x, y = s)[name = string(\"y\")];\n",
                       "y"));
  const uint16_t two[2] = {0x3c00, 0x4000};
  const test::MilBlob blob{mil::BlobDataType::Fp16, test::fp16_data(two), 0};
  test::write_bytes(max_plane.dir.file("w.bin"), test::write_milblob(std::span(&blob, 1)).bytes);
  EXPECT_EQ(max_plane.compile_error(), max_plane.mil() + ":5: op 'maximum': argument 'y': unsupported: Max of a per-channel "
                                                 "tensor constant over 1x2 planes (no record shows Apple's form; the "
                                                 "simulator reads such a broadcast only in the (x + b) * c task of "
                                                 "add, sub and mul)");
  // One value per channel, but written in the text: Apple refuses it.
  const std::string c2 = "tensor<fp16, [1, 2, 1, 1]> x";
  const std::string s2 = "    tensor<fp16, [1, 2, 1, 1]> s = const()[name = string(\"s\"), val = tensor<fp16, [1, 2, 1, "
                         "1]>([1, 2])];\n";
  Model inline_constant(wrap(c2, s2 + "    tensor<fp16, [1, 2, 1, 1]> y = add(x = x, y = s);\n", "y"));
  EXPECT_EQ(inline_constant.error(),
            inline_constant.mil() + ":5: op 'add': argument 'y': a tensor constant written in the text is not "
                                    "supported as an operand: Apple's compiler refuses it for H13 (records "
                                    "binary_*_constant_inline); store it in a weight blob (BLOBFILE)");
  Model constant_minus(wrap(c2, s2 + "    tensor<fp16, [1, 2, 1, 1]> y = sub(x = s, y = x);\n", "y"));
  EXPECT_EQ(constant_minus.error(), constant_minus.mil() + ":5: op 'sub': argument 'x': a tensor constant as x of "
                                                           "sub (c - x) is not supported (the records subtract it "
                                                           "from x)");
  Model two_constants(wrap(c2, s2 + "    tensor<fp16, [1, 2, 1, 1]> y = add(x = s, y = s);\n", "y"));
  EXPECT_EQ(two_constants.error(),
            two_constants.mil() + ":5: op 'add': argument 'x': both operands are constants: nothing to compute");
  Model other_shape(wrap(c2, "    tensor<fp16, [1, 1, 1, 2]> s = const()[name = string(\"s\"), val = tensor<fp16, "
                             "[1, 1, 1, 2]>([1, 2])];\n    tensor<fp16, [1, 2, 1, 1]> y = add(x = x, y = s);\n",
                         "y"));
  EXPECT_EQ(other_shape.error(), other_shape.mil() + ":5: op 'add': argument 'y': a tensor constant tensor<fp16, [1, "
                                                     "1, 1, 2]> on tensor<fp16, [1, 2, 1, 1]> is not supported: it "
                                                     "must hold one value per channel of x (surface [1,2,1,1], the "
                                                     "same rank), this one's surface is [1,1,1,2]");
  Model broadcast(wrap(kX + ", tensor<fp16, [1, 8, 1, 1]> z", "    tensor<fp16, [1, 8, 4, 4]> y = add(x = x, y = z);\n",
                       "y"));
  EXPECT_EQ(broadcast.error(), broadcast.mil() + ":4: op 'add': argument 'y': y is tensor<fp16, [1, 8, 1, 1]> and "
                                                 "x is tensor<fp16, [1, 8, 4, 4]>: broadcasting is not supported");
  Model fp32(wrap("tensor<fp32, [1, 8, 4, 4]> x", "    tensor<fp32, [1, 8, 4, 4]> y = relu(x = x);\n", "y"));
  EXPECT_EQ(fp32.error(), fp32.mil() + ":3: input 'x': tensor<fp32, [1, 8, 4, 4]>: only fp16 inputs are supported "
                                       "(the ANE's tensors are fp16)");
  // The same element-wise op on equal shapes loads.
  Model ok(wrap(kX + ", tensor<fp16, [1, 8, 4, 4]> z", "    tensor<fp16, [1, 8, 4, 4]> y = add(x = x, y = z);\n", "y"));
  EXPECT_EQ(ok.error(), "");
  // Scalar constants: c - x, two constants, a value fp16 does not hold, a non-float scalar.
  auto scalar = [&](const std::string& c_type, const std::string& c_value, const std::string& expr) {
    return std::make_unique<Model>(wrap(kX, "    " + c_type + " c = const()[name = string(\"c\"), val = " + c_value +
                                                "];\n    tensor<fp16, [1, 8, 4, 4]> y = " + expr + ";\n",
                                        "y"));
  };
  auto m = scalar("fp16", "fp16(0x1p-1)", "sub(x = c, y = x)");
  EXPECT_EQ(m->error(), m->mil() + ":5: op 'sub': argument 'x': a scalar constant as x of sub (c - x) is not supported");
  m = scalar("fp16", "fp16(0x1p-1)", "add(x = c, y = c)");
  EXPECT_EQ(m->error(), m->mil() + ":5: op 'add': argument 'x': both operands are constants: nothing to compute");
  m = scalar("fp32", "fp32(0x1.000002p+0)", "mul(x = x, y = c)");
  EXPECT_EQ(m->error(), m->mil() + ":5: op 'mul': argument 'y': 1.0000001192092896 is not a finite fp16 value (the "
                                   "planar engine's scalars are fp16)");
  m = scalar("int32", "int32(2)", "mul(x = x, y = c)");
  EXPECT_EQ(m->error(), m->mil() + ":5: op 'mul': argument 'y': expected an fp16 scalar, found int32");
  m = scalar("fp32", "fp32(0x1p-1)", "maximum(x = c, y = x)");
  EXPECT_EQ(m->error(), "");
}

// ---- conv ----------------------------------------------------------------------

TEST(MilErrors, ConvArguments) {
  Conv rank3;
  rank3.input = "tensor<fp16, [1, 8, 16]> x";
  Model m1(rank3.text());
  EXPECT_EQ(m1.error(), m1.mil() + ":5: op 'conv': argument 'x': tensor<fp16, [1, 8, 16]>: only 2-D convolutions "
                                   "(rank-4 input) are supported");
  Conv groups;
  groups.arguments += ", groups = int32(2)";
  Model m2(groups.text());
  EXPECT_EQ(m2.error(), m2.mil() + ":5: op 'conv': argument 'weight': tensor<fp16, [8, 8, 3, 3]> does not fit 8 "
                                   "input channels in 2 groups");
  Conv pad;
  pad.arguments = "pad_type = string(\"reflect\")";
  Model m3(pad.text());
  EXPECT_EQ(m3.error(), m3.mil() + ":5: op 'conv': argument 'pad_type': 'reflect' is not a MIL padding type (valid, "
                                   "same, same_lower, custom)");
  // Dilations are lowered, and refused by the compiler, which names the MIL argument.
  Conv dilated;
  dilated.arguments += ", dilations = tensor<int32, [2]>([2, 2])";
  Model m4(dilated.text());
  EXPECT_EQ(m4.error(), "");
  EXPECT_EQ(m4.compile_error(), m4.mil() + ":5: op 'conv': argument 'dilations': unsupported dilation (only 1 "
                                             "is known)");
  // The result type must be what the op makes: 3x3 valid on 4x4 makes 2x2.
  Conv result;
  result.arguments = "pad_type = string(\"valid\")";
  Model m5(result.text());
  EXPECT_EQ(m5.error(), m5.mil() + ":5: op 'conv': result 'c' is declared tensor<fp16, [1, 8, 4, 4]>, but the op "
                                   "makes tensor<fp16, [1, 8, 2, 2]>");
  result.result_type = "tensor<fp16, [1, 8, 2, 2]>";
  EXPECT_EQ(Model(result.text()).compile_error(), "");
  // The plain conv compiles: the refusals above are each argument's.
  EXPECT_EQ(Model(Conv{}.text()).compile_error(), "");
}

// ---- weight files -------------------------------------------------------------------

TEST(MilErrors, WeightFiles) {
  const std::string at = ":5: op 'conv': argument 'weight': ";
  Model missing(Conv{}.text(), /*with_weights=*/false);
  EXPECT_EQ(missing.error(), missing.mil() + at + "weight file '@model_path/weights/weight.bin' ('" +
                                 missing.dir.file("weights/weight.bin") + "'): cannot open: No such file or directory");
  // A wrong sentinel: the kernel's record with its first word changed.
  Model sentinel(Conv{}.text());
  Bytes bad = weights().file.bytes;
  put_u32(bad, weights().kernel, 0x12345678);
  test::write_bytes(sentinel.dir.file("weights/weight.bin"), bad);
  EXPECT_EQ(sentinel.error(), sentinel.mil() + at + fmt::format("'@model_path/weights/weight.bin': offset {:#x}: blob "
                                                                "sentinel 0x12345678, expected 0xdeadbeef",
                                                                weights().kernel));
  // The fp16 kernel read from the fp32 blob's record.
  Conv fp32;
  fp32.offset = weights().fp32;
  Model type(fp32.text());
  EXPECT_EQ(type.error(), type.mil() + at + fmt::format("'@model_path/weights/weight.bin': offset {:#x}: blob holds "
                                                        "fp32 data, the MIL type is fp16",
                                                        weights().fp32));
  // The kernel read from the bias's record: 16 bytes where 1152 are needed.
  Conv small;
  small.offset = weights().bias;
  Model size(small.text());
  EXPECT_EQ(size.error(), size.mil() + at + fmt::format("'@model_path/weights/weight.bin': offset {:#x}: blob of 0x10 "
                                                        "bytes, the MIL type needs 0x480",
                                                        weights().bias));
  // A header of the wrong version, named with the path the MIL gives.
  Model version(Conv{}.text());
  Bytes v1 = weights().file.bytes;
  put_u32(v1, 4, 1);
  test::write_bytes(version.dir.file("weights/weight.bin"), v1);
  EXPECT_EQ(version.error(), version.mil() + at + "weight file '@model_path/weights/weight.bin': offset 0x0: "
                                                  "MILBlob version 1, expected 2");
}

// ---- concat and reductions -------------------------------------------------------------

TEST(MilErrors, ConcatAndReduce) {
  const std::string cat = "    tensor<fp16, [1, 8, 8, 4]> y = concat(axis = int32(2), interleave = bool(false), "
                          "values = (x, x));\n";
  Model axis(wrap(kX, cat, "y"));
  EXPECT_EQ(axis.error(), axis.mil() + ":4: op 'concat': argument 'axis': only concatenation along channels is "
                                       "supported");
  Model inter(wrap(kX,
                   "    tensor<fp16, [1, 16, 4, 4]> y = concat(axis = int32(1), interleave = bool(true), values = (x, "
                   "x));\n",
                   "y"));
  EXPECT_EQ(inter.error(), inter.mil() + ":4: op 'concat': argument 'interleave': interleaved concatenation is not "
                                         "supported");
  Model channels(wrap(kX,
                      "    tensor<fp16, [1, 16, 4, 4]> y = concat(axis = int32(-3), interleave = bool(false), values "
                      "= (x, x));\n",
                      "y"));
  EXPECT_EQ(channels.error(), "");

  // keep_dims false: [1, 8, 4, 4] summed over W is [1, 8, 4], whose surface
  // [1,1,8,4] moves every value where the reduction leaves [1,8,4,1].
  Model keep(wrap(kX,
                  "    tensor<fp16, [1, 8, 4]> y = reduce_sum(x = x, axes = tensor<int32, [1]>([3]), keep_dims = "
                  "bool(false));\n",
                  "y"));
  EXPECT_EQ(keep.error(), keep.mil() + ":4: op 'reduce_sum': argument 'keep_dims': false lays the result out as "
                                       "[1,1,8,4] where the reduction makes [1,8,4,1]: not supported");
  // Summed over H and W it is [1, 8]: one row of the 8 sums, which the engine
  // writes along W (Common.Broadcast.OutChannelsW; records *_ax2_3_*_flat).
  Model row(wrap(kX,
                 "    tensor<fp16, [1, 8]> y = reduce_sum(x = x, axes = tensor<int32, [2]>([2, 3]), keep_dims = "
                 "bool(false));\n",
                 "y"));
  EXPECT_EQ(row.error(), "");
  // Where dropping the axis moves nothing (the leading N), keep_dims false is accepted.
  Model same(wrap(kX,
                  "    tensor<fp16, [8, 4, 4]> y = reduce_max(x = x, axes = tensor<int32, [1]>([0]), keep_dims = "
                  "bool(false));\n",
                  "y"));
  EXPECT_EQ(same.error(), "");
  // The declared type is MIL's, exactly: axes 0 and 3 dropped leave [8, 4].
  Model wrong(wrap(kX,
                   "    tensor<fp16, [8, 4, 1]> y = reduce_max(x = x, axes = tensor<int32, [2]>([0, 3]), keep_dims = "
                   "bool(false));\n",
                   "y"));
  EXPECT_EQ(wrong.error(), wrong.mil() + ":4: op 'reduce_max': result 'y' is declared tensor<fp16, [8, 4, 1]>, but "
                                         "the op makes tensor<fp16, [8, 4]>");
  Model kept(wrap(kX,
                  "    tensor<fp16, [1, 8, 1, 1]> y = reduce_sum(x = x, axes = tensor<int32, [2]>([2, 3]), keep_dims = "
                  "bool(true));\n",
                  "y"));
  EXPECT_EQ(kept.error(), "");
}

// ---- the program's shape ------------------------------------------------------------------

// The slot table binds at most 28 inputs and outputs (slots 4 - 31): 27
// inputs and an output compile, 28 and an output are refused (a fuzzed
// program with 28 wrote past the table).
TEST(MilErrors, InputsAndOutputsFitTheSlotTable) {
  auto program = [](int inputs) {
    std::string sig = "tensor<fp16, [1, 8, 1, 1]> x";
    for (int i = 1; i < inputs; ++i) sig += fmt::format(", tensor<fp16, [1, 8, 1, 1]> i{}", i);
    return wrap(sig, "    tensor<fp16, [1, 8, 1, 1]> y = relu(x = x)[name = string(\"y\")];\n", "y");
  };
  Model fits(program(27));
  EXPECT_EQ(fits.compile_error(), "");
  Model over(program(28));
  EXPECT_EQ(over.compile_error(), over.mil() + ":3: output 'y': the network has 29 inputs and outputs: an HWX "
                                               "program binds at most 28 (slots 4 - 31 of its slot table)");
}

TEST(MilErrors, FunctionsAndOutputs) {
  const std::string relu = "    tensor<fp16, [1, 8, 4, 4]> y = relu(x = x);\n";
  Model two("program(1.3)\n{\n  func main<ios18>(" + kX + ") {\n" + relu + "  } -> (y);\n  func other<ios18>(" + kX +
            ") {\n" + relu + "  } -> (y);\n}\n");
  EXPECT_EQ(two.error(), two.mil() + ": the program has 2 functions: only one (main) is supported");
  Model named("program(1.3)\n{\n  func predict<ios18>(" + kX + ") {\n" + relu + "  } -> (y);\n}\n");
  EXPECT_EQ(named.error(), named.mil() + ":3: function 'predict': the program's one function must be main");
  Model input(wrap(kX, relu, "y, x"));
  EXPECT_EQ(input.error(), input.mil() + ":3: output 'x' is an input: an output must be computed by an op");
  Model constant(wrap(kX, "    tensor<fp16, [2]> k = const()[val = tensor<fp16, [2]>([1, 2])];\n" + relu, "y, k"));
  EXPECT_EQ(constant.error(), constant.mil() + ":3: output 'k' is a constant: an output must be computed by an op");
}

// ---- input kinds ------------------------------------------------------------------------------

TEST(MilErrors, DetectModelKind) {
  test::TempDir dir;
  auto kind = [&](const std::string& name, const std::string& text) {
    test::write_text(dir.file(name), text);
    auto k = detect_model_kind(dir.file(name));
    EXPECT_TRUE(k.ok()) << name;
    return k ? *k : ModelKind::Unknown;
  };
  EXPECT_EQ(kind("a", "<?xml version=\"1.0\"?>\n<plist/>"), ModelKind::Plist);
  EXPECT_EQ(kind("b", "\xEF\xBB\xBF \r\n\t<?xml version=\"1.0\"?>\n<plist/>"), ModelKind::Plist);
  EXPECT_EQ(kind("c", "\n  <!DOCTYPE plist PUBLIC>"), ModelKind::Plist);
  EXPECT_EQ(kind("d", "<plist version=\"1.0\"></plist>"), ModelKind::Plist);
  EXPECT_EQ(kind("e", std::string("bplist00\xd1\x01\x02", 11)), ModelKind::Plist);
  EXPECT_EQ(kind("f.plist", "\xEF\xBB\xBF\n program(1.3)\n{\n}\n"), ModelKind::Mil);  // content, not name
  EXPECT_EQ(kind("g.mil", "hello"), ModelKind::Unknown);
  EXPECT_EQ(kind("h", ""), ModelKind::Unknown);
  fs::create_directories(dir.file("A.mlmodelc"));
  test::write_text(dir.file("A.mlmodelc/model.mil"), "program(1.3)\n");
  fs::create_directories(dir.file("B.mlpackage"));
  test::write_text(dir.file("B.mlpackage/Manifest.json"), "{}");
  fs::create_directories(dir.file("C"));
  EXPECT_EQ(*detect_model_kind(dir.file("A.mlmodelc")), ModelKind::MlModelC);
  EXPECT_EQ(*detect_model_kind(dir.file("B.mlpackage")), ModelKind::MlPackage);
  EXPECT_EQ(*detect_model_kind(dir.file("C")), ModelKind::Unknown);
  auto none = detect_model_kind(dir.file("none"));
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().str(), dir.file("none") + ": cannot open: No such file or directory");

  // load_model's refusals of the kinds it does not read.
  auto package = load_model(dir.file("B.mlpackage"));
  ASSERT_FALSE(package.ok());
  EXPECT_EQ(package.error().str(), dir.file("B.mlpackage") +
                                       ": a Core ML package (protobuf) is not read; compile it to a bundle first (on "
                                       "a Mac: xcrun coremlcompiler compile model.mlpackage OUT_DIR) and pass "
                                       "OUT_DIR/model.mlmodelc");
  const std::string not_a_model = ": not a model hwx-build reads (expected an XML network plist, MIL text starting "
                                  "with 'program', or an .mlmodelc directory holding model.mil)";
  for (const std::string& p : {dir.file("g.mil"), dir.file("C")}) {
    auto n = load_model(p);
    ASSERT_FALSE(n.ok()) << p;
    EXPECT_EQ(n.error().str(), p + not_a_model);
  }
}

// ---- bundles: metadata.json -----------------------------------------------------------------------

// A bundle of two inputs and two outputs in `dir`, with `meta` as its metadata.json.
const std::string& two_by_two(const test::TempDir& dir, const std::string& meta) {
  test::write_text(dir.file("model.mil"), wrap("tensor<fp16, [1, 8, 4, 4]> a, tensor<fp16, [1, 8, 4, 4]> b",
                                               "    tensor<fp16, [1, 8, 4, 4]> p = add(x = a, y = b);\n"
                                               "    tensor<fp16, [1, 8, 4, 4]> q = relu(x = a);\n",
                                               "p, q"));
  if (!meta.empty()) test::write_text(dir.file("metadata.json"), meta);
  return dir.path;
}

TEST(MilErrors, BundleMetadata) {
  test::TempDir plain;
  auto n0 = load_model(two_by_two(plain, ""));
  ASSERT_TRUE(n0.ok()) << n0.error().str();
  ASSERT_EQ(n0->inputs.size(), 2u);
  EXPECT_EQ(n0->inputs[0].name, "a");
  EXPECT_EQ(n0->outputs.at(0).name, "p@output");
  EXPECT_EQ(n0->outputs.at(1).name, "q@output");

  // Reordered by metadata.json (Core ML's order of the features): accepted.
  test::TempDir reordered;
  auto n1 = load_model(two_by_two(
      reordered, R"([{"inputSchema": [{"name": "b"}, {"name": "a"}], "outputSchema": [{"name": "q"}, {"name": "p"}]}])"));
  ASSERT_TRUE(n1.ok()) << n1.error().str();
  ASSERT_EQ(n1->inputs.size(), 2u);
  EXPECT_EQ(n1->inputs[0].name, "b");
  EXPECT_EQ(n1->inputs[1].name, "a");
  ASSERT_EQ(n1->outputs.size(), 2u);
  EXPECT_EQ(n1->outputs[0].name, "q@output");
  EXPECT_EQ(n1->outputs[1].name, "p@output");
  CompileOptions o;
  o.ident = kErrorsIdent;
  EXPECT_TRUE(compile_network(*n1, o).ok());

  test::TempDir missing;
  auto n2 = load_model(two_by_two(missing, R"({"inputSchema": [{"name": "a"}, {"name": "zz"}]})"));
  ASSERT_FALSE(n2.ok());
  EXPECT_EQ(n2.error().str(), missing.file("metadata.json: input 'zz' is not one of model.mil's main inputs"));
  test::TempDir fewer;
  auto n3 = load_model(two_by_two(fewer, R"({"outputSchema": [{"name": "q"}]})"));
  ASSERT_FALSE(n3.ok());
  EXPECT_EQ(n3.error().str(), fewer.file("metadata.json: names 1 output where model.mil's main has 2"));
}

// ---- --weights -------------------------------------------------------------------------------------

TEST(MilErrors, WeightsOption) {
  // A directory stands for @model_path: the MIL's own directory has no weights.
  Model m(Conv{}.text(), /*with_weights=*/false);
  test::TempDir elsewhere;
  fs::create_directories(elsewhere.file("weights"));
  test::write_bytes(elsewhere.file("weights/weight.bin"), weights().file.bytes);
  auto program = mil::load_program(m.mil());
  ASSERT_TRUE(program.ok()) << program.error().str();
  EXPECT_FALSE(network_of_mil(*program).ok());
  auto from_dir = network_of_mil(*program, MilOptions{elsewhere.path});
  ASSERT_TRUE(from_dir.ok()) << from_dir.error().str();
  EXPECT_EQ(from_dir->weights, std::vector<std::string>{"@model_path/weights/weight.bin"});
  EXPECT_EQ(from_dir->weight_paths, std::vector<std::string>{elsewhere.file("weights/weight.bin")});

  // A regular file serves every BLOBFILE, whatever its path says: here a
  // kernel and a bias named in two different files, one of them absolute.
  const std::string both = wrap(
      kX,
      "    tensor<fp16, [8, 8, 3, 3]> w = const()[val = " +
          blobfile("tensor<fp16, [8, 8, 3, 3]>", weights().kernel, "@model_path/one.bin") +
          "];\n    tensor<fp16, [8]> b = const()[val = " +
          blobfile("tensor<fp16, [8]>", weights().bias, "/nowhere/two.bin") +
          "];\n    tensor<fp16, [1, 8, 4, 4]> c = conv(x = x, weight = w, bias = b, pad_type = string(\"same\"));\n",
      "c");
  auto p2 = mil::parse_program(both, m.dir.file("both.mil"));
  ASSERT_TRUE(p2.ok()) << p2.error().str();
  const std::string file = elsewhere.file("weights/weight.bin");
  auto from_file = network_of_mil(*p2, MilOptions{file});
  ASSERT_TRUE(from_file.ok()) << from_file.error().str();
  EXPECT_EQ(from_file->weight_paths, std::vector<std::string>{file});  // read once
  auto no_file = network_of_mil(*p2, MilOptions{m.dir.path});
  ASSERT_FALSE(no_file.ok());
  EXPECT_EQ(no_file.error().str(), m.dir.file("both.mil") + ":6: op 'conv': argument 'weight': weight file "
                                   "'@model_path/one.bin' ('" + m.dir.file("one.bin") +
                                   "'): cannot open: No such file or directory");
  // The two spellings of one network compile to the same bytes.
  CompileOptions o;
  o.ident = kErrorsIdent;
  EXPECT_TRUE(compile_network(*from_dir, o).ok());
  EXPECT_TRUE(compile_network(*from_file, o).ok());
}

// ---- weights written in the text ------------------------------------------------------------------

TEST(MilErrors, InlineWeightsCompileAsTheirBlob) {
  std::vector<uint16_t> k(8 * 8 * 3 * 3), b(8);
  std::string kv, bv;
  for (size_t i = 0; i < k.size(); ++i) {
    k[i] = float_to_fp16(static_cast<float>(int(i * 37 % 129) - 64) / 64.0f);
    kv += fmt::format("{}{}", i ? ", " : "", fp16_to_float(k[i]));
  }
  for (size_t i = 0; i < b.size(); ++i) {
    b[i] = float_to_fp16(static_cast<float>(int(i) - 3) * 0.3f);  // not exact in decimal: the text rounds
    bv += fmt::format("{}{}", i ? ", " : "", fp16_to_float(b[i]));
  }
  const test::MilBlob blobs[] = {{mil::BlobDataType::Fp16, test::fp16_data(k)},
                                 {mil::BlobDataType::Fp16, test::fp16_data(b)}};
  const test::MilBlobFile file = test::write_milblob(blobs);
  auto program = [&](const std::string& wval, const std::string& bval) {
    return wrap(kX,
                "    tensor<fp16, [8, 8, 3, 3]> w = const()[val = " + wval + "];\n    tensor<fp16, [8]> b = const()[val = " +
                    bval +
                    "];\n    tensor<fp16, [1, 8, 4, 4]> c = conv(x = x, weight = w, bias = b, pad_type = "
                    "string(\"same\"));\n",
                "c");
  };
  test::TempDir dir;
  test::write_bytes(dir.file("weight.bin"), file.bytes);
  test::write_text(dir.file("blob.mil"), program(blobfile("tensor<fp16, [8, 8, 3, 3]>", file.offsets[0],
                                                          "@model_path/weight.bin"),
                                                 blobfile("tensor<fp16, [8]>", file.offsets[1], "@model_path/weight.bin")));
  test::write_text(dir.file("inline.mil"),
                   program("tensor<fp16, [8, 8, 3, 3]>([" + kv + "])", "tensor<fp16, [8]>([" + bv + "])"));
  CompileOptions o;
  o.ident = kErrorsIdent;
  auto a = load_model(dir.file("blob.mil"));
  auto c = load_model(dir.file("inline.mil"));
  ASSERT_TRUE(a.ok()) << a.error().str();
  ASSERT_TRUE(c.ok()) << c.error().str();
  auto built_a = compile_network(*a, o), built_c = compile_network(*c, o);
  ASSERT_TRUE(built_a.ok()) << built_a.error().str();
  ASSERT_TRUE(built_c.ok()) << built_c.error().str();
  EXPECT_TRUE(built_a->bytes == built_c->bytes) << "inline weights compile differently";
  // One value changed in the text changes the program.
  const std::string changed = "tensor<fp16, [8]>([" + bv.substr(0, bv.rfind(',')) + ", 5])";
  test::write_text(dir.file("changed.mil"), program("tensor<fp16, [8, 8, 3, 3]>([" + kv + "])", changed));
  auto d = load_model(dir.file("changed.mil"));
  ASSERT_TRUE(d.ok()) << d.error().str();
  auto built_d = compile_network(*d, o);
  ASSERT_TRUE(built_d.ok());
  EXPECT_FALSE(built_a->bytes == built_d->bytes);
  // A value beyond fp16's range is refused by the parser (the literal is typed fp16).
  auto big = mil::parse_program(program("tensor<fp16, [8, 8, 3, 3]>([" + kv + "])", "tensor<fp16, [8]>([1, 2, 3, 4, 5, 6, 7, 70000])"), "m.mil");
  EXPECT_FALSE(big.ok());
}

}  // namespace
}  // namespace ane
