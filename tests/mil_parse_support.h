// Helpers shared by the MIL parser tests (mil_parse_test.cpp,
// mil_parse_values_test.cpp, mil_parse_refusals_test.cpp).
#pragma once

#include <bit>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "ane/mil.h"

namespace ane::mil_test {

using mil::DType;

inline Expected<mil::Program> parse(std::string_view text) { return mil::parse_program(text, "model.mil"); }

inline mil::Program parse_ok(std::string_view text) {
  auto p = parse(text);
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
  return p.ok() ? std::move(*p) : mil::Program{};
}

inline std::string parse_error(std::string_view text) {
  auto p = parse(text);
  EXPECT_FALSE(p.ok()) << text;
  return p.ok() ? "" : p.error().message;
}

// A program around a body: the function header is line 3, the body starts on line 4.
inline std::string wrap(const std::string& inputs, const std::string& body, const std::string& outputs) {
  return "program(1.3)\n{\n  func main<ios18>(" + inputs + ") {\n" + body + "  } -> (" + outputs + ");\n}\n";
}

inline const mil::Literal& literal_argument(const mil::Operation& op, std::string_view name) {
  static const mil::Literal kNone;
  const mil::Argument* a = op.argument(name);
  const auto* lit = a ? std::get_if<mil::Literal>(a) : nullptr;
  EXPECT_NE(lit, nullptr) << op.op << " " << name;
  return lit ? *lit : kNone;
}

inline std::string name_argument(const mil::Operation& op, std::string_view name) {
  const mil::Argument* a = op.argument(name);
  const auto* ref = a ? std::get_if<mil::NameRef>(a) : nullptr;
  EXPECT_NE(ref, nullptr) << op.op << " " << name;
  return ref ? ref->name : "";
}

inline const std::vector<double>& floats(const mil::Literal& l) { return std::get<std::vector<double>>(l.values); }
inline const std::vector<int64_t>& ints(const mil::Literal& l) { return std::get<std::vector<int64_t>>(l.values); }
inline const std::vector<std::string>& strings(const mil::Literal& l) { return std::get<std::vector<std::string>>(l.values); }
inline const mil::BlobRef& blob(const mil::Literal& l) { return std::get<mil::BlobRef>(l.values); }

// The `val` of a one-statement const program.
inline mil::Literal const_value(const std::string& type, const std::string& value) {
  auto p = parse_ok(wrap("fp16 x", "    " + type + " c = const()[val = " + value + "];\n", "c"));
  if (p.functions.empty() || p.functions[0].operations.empty()) return {};
  return p.functions[0].operations[0].attributes.at("val");
}

inline std::string const_error(const std::string& type, const std::string& value) {
  return parse_error(wrap("fp16 x", "    " + type + " c = const()[val = " + value + "];\n", "c"));
}

inline uint64_t bits(double v) { return std::bit_cast<uint64_t>(v); }


}  // namespace ane::mil_test
