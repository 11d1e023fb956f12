// The plain parts of the MIL syntax tree: element type names, printed
// types and lookups. The parser lives in mil_parse.cpp / mil_literal.cpp.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ane/mil.h"

namespace ane::mil {

namespace {

struct DTypeName {
  DType type;
  const char* name;
};

// The spellings Core ML's printers use for element types.
constexpr DTypeName kDTypeNames[] = {
    {DType::Fp16, "fp16"},     {DType::Fp32, "fp32"},     {DType::Fp64, "fp64"},   {DType::Int8, "int8"},
    {DType::UInt8, "uint8"},   {DType::Int16, "int16"},   {DType::UInt16, "uint16"}, {DType::Int32, "int32"},
    {DType::UInt32, "uint32"}, {DType::Int64, "int64"},   {DType::UInt64, "uint64"}, {DType::Bool, "bool"},
    {DType::String, "string"},
};

}  // namespace

const char* dtype_name(DType t) {
  for (const auto& d : kDTypeNames)
    if (d.type == t) return d.name;
  return "?";
}

std::optional<DType> dtype_of_name(std::string_view name) {
  for (const auto& d : kDTypeNames)
    if (name == d.name) return d.type;
  return std::nullopt;
}

// The product of the dimensions (1 for a scalar). Saturates at UINT64_MAX
// when the product does not fit in 64 bits or a dimension is negative (a
// hand-built Type; the parser never makes one), so a caller comparing it with
// a limit never sees a wrapped-around small count.
uint64_t Type::element_count() const {
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return UINT64_MAX;
    const auto u = static_cast<uint64_t>(d);
    if (u != 0 && n > UINT64_MAX / u) return UINT64_MAX;
    n *= u;
  }
  return n;
}

std::string type_text(const Type& t) {
  if (!t.is_tensor) return dtype_name(t.dtype);
  return fmt::format("tensor<{}, [{}]>", dtype_name(t.dtype), fmt::join(t.shape, ", "));
}

const Argument* Operation::argument(std::string_view name) const {
  for (const auto& [n, a] : arguments)
    if (n == name) return &a;
  return nullptr;
}

const Function* Program::function(std::string_view name) const {
  for (const auto& f : functions)
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace ane::mil
