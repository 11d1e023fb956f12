// The MIL text parser's refusals: each names what it refuses with the line it
// is on (several results, control flow, types it cannot represent, bad names,
// malformed text, huge and deep literals).
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

}  // namespace
}  // namespace ane
