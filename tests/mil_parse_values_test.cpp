// The MIL text parser's literals: every scalar type, exact hex floats,
// values checked against their declared types, tensor literals against their
// shapes, and BLOBFILE references.
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

}  // namespace
}  // namespace ane
