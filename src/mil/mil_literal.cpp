// MIL types and literals: `tensor<fp16, [1, 3]>`, `int32(-1)`,
// `tensor<int32, [2, 2]>([[1, 2], [3, 4]])`, `fp32(0x1.8p-3)`,
// `tensor<fp16, [64]>(BLOBFILE(path = string("..."), offset = uint64(64)))`
// and the loose `dict<K, V>({{k, v}, ...})` of program attributes.
//
// Values are checked against the type as they are read: the count equals
// the shape's element count, integers fit the element type, floats are
// written for float types. The element count is checked against
// kMaxLiteralElements before any value is stored.
#include <cfloat>
#include <cmath>
#include <limits>
#include <type_traits>
#include <variant>

#include <fmt/format.h>

#include "mil_parser.h"

namespace ane::mil::detail {

namespace {

enum class Kind { Float, Integer, Bool, String };

Kind kind_of(DType t) {
  switch (t) {
    case DType::Fp16:
    case DType::Fp32:
    case DType::Fp64: return Kind::Float;
    case DType::Bool: return Kind::Bool;
    case DType::String: return Kind::String;
    default: return Kind::Integer;
  }
}

struct IntRange {
  int64_t lo, hi;
};

// uint64 values are kept as int64 (Literal's storage), so they stop at
// INT64_MAX; no printer writes a larger one outside BLOBFILE offsets, which
// are read separately as uint64.
IntRange int_range(DType t) {
  switch (t) {
    case DType::Int8: return {INT8_MIN, INT8_MAX};
    case DType::UInt8: return {0, UINT8_MAX};
    case DType::Int16: return {INT16_MIN, INT16_MAX};
    case DType::UInt16: return {0, UINT16_MAX};
    case DType::Int32: return {INT32_MIN, INT32_MAX};
    case DType::UInt32: return {0, UINT32_MAX};
    default: return {INT64_MIN, INT64_MAX};
  }
}

// The largest finite magnitude of a float type.
double float_max(DType t) {
  if (t == DType::Fp16) return 65504.0;
  if (t == DType::Fp32) return FLT_MAX;
  return DBL_MAX;
}

size_t value_count(const Literal& lit) {
  return std::visit(
      [](const auto& v) -> size_t {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, BlobRef>) return 0;
        else return v.size();
      },
      lit.values);
}

void clear_values(Literal* lit) {
  switch (kind_of(lit->type.dtype)) {
    case Kind::Float: lit->values = std::vector<double>{}; break;
    case Kind::Integer:
    case Kind::Bool: lit->values = std::vector<int64_t>{}; break;
    case Kind::String: lit->values = std::vector<std::string>{}; break;
  }
}

// A float value: a number spelling, or the words inf / nan. "" when fine,
// else what is wrong.
std::string float_value(const Token& t, DType dt, double* out) {
  const char* name = dtype_name(dt);
  if (t.kind == Tok::Ident && (t.text == "inf" || t.text == "nan")) {
    *out = t.text == "inf" ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
    return "";
  }
  if (t.kind != Tok::Number) return fmt::format("expected a number for {}, found {}", name, describe(t));
  const NumberStatus st = parse_double(t.text, out);
  if (st == NumberStatus::Invalid) return fmt::format("{} is not a valid {} value", describe(t), name);
  if (st == NumberStatus::OutOfRange || (std::isfinite(*out) && std::fabs(*out) > float_max(dt)))
    return fmt::format("value {} is out of range for {}", t.text, name);
  return "";
}

std::string int_value(const Token& t, DType dt, int64_t* out) {
  const char* name = dtype_name(dt);
  if (t.kind != Tok::Number) return fmt::format("expected an integer for {}, found {}", name, describe(t));
  const NumberStatus st = parse_int64(t.text, out);
  if (st == NumberStatus::Invalid) return fmt::format("{} is not a valid {} value", describe(t), name);
  const IntRange r = int_range(dt);
  if (st == NumberStatus::OutOfRange || *out < r.lo || *out > r.hi)
    return fmt::format("value {} is out of range for {}", t.text, name);
  return "";
}

}  // namespace

// A type name followed by '(' (`int32(1)`) or '<' (`tensor<...>`).
bool Parser::at_literal() const { return at(Tok::Ident) && (at(Tok::LParen, 1) || at(Tok::LAngle, 1)); }

// `fp16` or `tensor<fp16, [dims]>`. Other type constructors are refused by name.
Status Parser::type(Type* out) {
  const Token& t = peek();
  Nest nest(depth_);
  if (nest.too_deep()) return too_deep(t);
  auto name = ident("a type");
  if (!name) return name.error();
  const std::string_view word = (*name)->text;
  if (word == "tensor") {
    MIL_TRY(expect(Tok::LAngle));
    const Token& e = peek();
    auto element = ident("an element type");
    if (!element) return element.error();
    const auto dt = dtype_of_name(e.text);
    if (!dt) return fail(e, fmt::format("unknown element type '{}'", e.text));
    MIL_TRY(expect(Tok::Comma));
    MIL_TRY(expect(Tok::LBracket));
    MIL_TRY(dimensions(out));
    MIL_TRY(expect(Tok::RAngle));
    out->dtype = *dt;
    out->is_tensor = true;
    return Ok{};
  }
  if (word == "state" || word == "list" || word == "tuple" || word == "dict")
    return fail(t, fmt::format("{}<...> types are not supported", word));
  const auto dt = dtype_of_name(word);
  if (!dt) return fail(t, fmt::format("unknown element type '{}'", word));
  out->dtype = *dt;
  out->is_tensor = false;
  out->shape.clear();
  return Ok{};
}

// `d, d, ...]` after the '[': known, non-negative sizes only.
Status Parser::dimensions(Type* out) {
  out->shape.clear();
  if (accept(Tok::RBracket)) return Ok{};
  for (bool more = true; more;) {
    const Token& d = next();
    if (d.kind == Tok::Ident)
      return fail(d, fmt::format("dimension '{}' is symbolic: symbolic dimensions are not supported", d.text));
    if (d.kind == Tok::Question) return fail(d, "dimension '?' is unknown: unknown dimensions are not supported");
    if (d.kind != Tok::Number) return fail(d, fmt::format("expected a dimension, found {}", describe(d)));
    int64_t v = 0;
    const NumberStatus st = parse_int64(d.text, &v);
    if (st == NumberStatus::Invalid) return fail(d, fmt::format("invalid dimension {}", describe(d)));
    if (st == NumberStatus::OutOfRange || v > kMaxDimension)
      return fail(d, fmt::format("dimension {} is larger than 2^40", d.text));
    if (v < 0) return fail(d, fmt::format("dimension {} is negative", d.text));
    if (out->shape.size() == kMaxRank)
      return fail(d, fmt::format("a tensor type has more than {} dimensions", kMaxRank));
    out->shape.push_back(v);
    MIL_TRY(comma_or(Tok::RBracket, &more));
  }
  return Ok{};
}

// `Type(body)` or `dict<K, V>({...})`.
Status Parser::literal(Literal* out) {
  const Token& start = peek();
  Nest nest(depth_);
  if (nest.too_deep()) return too_deep(start);
  out->line = start.line;
  if (at_word("dict") && at(Tok::LAngle, 1)) return dict_literal(out);
  MIL_TRY(type(&out->type));
  MIL_TRY(expect(Tok::LParen));
  MIL_TRY(literal_body(out, start));
  return expect(Tok::RParen);
}

// BLOBFILE(...), a list `[v, ...]` (nested for rank > 1 or flat), or one
// bare value: scalars, and tensors of one element (`tensor<int32, [1]>(1)`,
// as coremlc writes them).
Status Parser::literal_body(Literal* out, const Token& start) {
  const Type& t = out->type;
  if (at_word("BLOBFILE") && at(Tok::LParen, 1)) {
    if (!t.is_tensor) return fail(peek(), fmt::format("BLOBFILE needs a tensor type, not {}", type_text(t)));
    BlobRef ref;
    MIL_TRY(blobfile(&ref));
    out->values = std::move(ref);
    return Ok{};
  }
  const uint64_t count = t.element_count();
  if (count > kMaxLiteralElements)
    return fail(start, fmt::format("literal of {} elements ({}): literals over {} elements are not supported", count,
                                   type_text(t), kMaxLiteralElements));
  clear_values(out);
  if (at(Tok::LBracket)) {
    if (!t.is_tensor) return fail(peek(), fmt::format("a scalar {} literal takes one value, not a list", type_text(t)));
    MIL_TRY(list(out, 0, count));
  } else {
    MIL_TRY(element(out, count));
  }
  const size_t n = value_count(*out);
  if (n != count)
    return fail(start,
                fmt::format("{} literal has {} value{}, expected {}", type_text(t), n, n == 1 ? "" : "s", count));
  return Ok{};
}

// `[v, ...]` at nesting `level`. A flat list at level 0 only has to hold
// `count` values; a nested one must follow the shape, one level per
// dimension (`[[1, 2], [3, 4]]` for [2, 2]).
Status Parser::list(Literal* out, size_t level, uint64_t count) {
  const Token& open = peek();
  Nest nest(depth_);
  if (nest.too_deep()) return too_deep(open);
  const Type& t = out->type;
  const size_t rank = t.shape.size();
  if (level > 0 && level >= rank)
    return fail(open, fmt::format("list nested deeper than the rank {} of {}", rank, type_text(t)));
  MIL_TRY(expect(Tok::LBracket));
  const bool nested = at(Tok::LBracket);
  uint64_t length = 0;
  if (accept(Tok::RBracket)) {
    // empty: checked below like any other
  } else {
    for (bool more = true; more; ++length) {
      if (at(Tok::LBracket) != nested) return fail(peek(), "a list mixes values and nested lists");
      MIL_TRY(nested ? list(out, level + 1, count) : element(out, count));
      MIL_TRY(comma_or(Tok::RBracket, &more));
    }
  }
  if (level == 0 && !nested) return Ok{};
  if (!nested && level + 1 != rank)
    return fail(open, fmt::format("list nested {} deep, but {} has rank {}", level + 1, type_text(t), rank));
  if (length != static_cast<uint64_t>(t.shape[level]))
    return fail(open, fmt::format("list at depth {} has {} entries, but dimension {} of {} is {}", level + 1, length,
                                  level, type_text(t), t.shape[level]));
  return Ok{};
}

// One value, bare (`1`) or spelled with its element type (`fp16(1)`).
Status Parser::element(Literal* out, uint64_t count) {
  if (value_count(*out) >= count)
    return fail(peek(), fmt::format("{} literal has more than {} value{}", type_text(out->type), count,
                                    count == 1 ? "" : "s"));
  if (at_word(dtype_name(out->type.dtype)) && at(Tok::LParen, 1)) {
    next();
    next();
    MIL_TRY(element_value(out));
    return expect(Tok::RParen);
  }
  return element_value(out);
}

Status Parser::element_value(Literal* out) {
  const Token& t = next();
  const DType dt = out->type.dtype;
  switch (kind_of(dt)) {
    case Kind::Float: {
      double v = 0;
      if (std::string e = float_value(t, dt, &v); !e.empty()) return fail(t, e);
      std::get<std::vector<double>>(out->values).push_back(v);
      return Ok{};
    }
    case Kind::Integer: {
      int64_t v = 0;
      if (std::string e = int_value(t, dt, &v); !e.empty()) return fail(t, e);
      std::get<std::vector<int64_t>>(out->values).push_back(v);
      return Ok{};
    }
    case Kind::Bool:
      if (t.kind != Tok::Ident || (t.text != "true" && t.text != "false"))
        return fail(t, fmt::format("expected true or false, found {}", describe(t)));
      std::get<std::vector<int64_t>>(out->values).push_back(t.text == "true" ? 1 : 0);
      return Ok{};
    case Kind::String:
      if (t.kind != Tok::String) return fail(t, fmt::format("expected a string, found {}", describe(t)));
      std::get<std::vector<std::string>>(out->values).push_back(string_value(t));
      return Ok{};
  }
  return Ok{};
}

// `dict<K, V>({{k, v}, ...})`, kept loosely: a string tensor of shape
// [entries, 2] holding key, value, key, value... Strings are stored
// unescaped, numbers and words as written. Only program attributes
// (buildInfo) use dicts; nothing reads them beyond display.
Status Parser::dict_literal(Literal* out) {
  next();  // dict
  MIL_TRY(expect(Tok::LAngle));
  Type key, value;
  MIL_TRY(type(&key));
  MIL_TRY(expect(Tok::Comma));
  MIL_TRY(type(&value));
  MIL_TRY(expect(Tok::RAngle));
  MIL_TRY(expect(Tok::LParen));
  MIL_TRY(expect(Tok::LBrace));
  std::vector<std::string> entries;
  if (!accept(Tok::RBrace)) {
    for (bool more = true; more;) {
      MIL_TRY(dict_entry(&entries));
      MIL_TRY(comma_or(Tok::RBrace, &more));
    }
  }
  MIL_TRY(expect(Tok::RParen));
  out->type = Type{DType::String, true, {static_cast<int64_t>(entries.size() / 2), 2}};
  out->values = std::move(entries);
  return Ok{};
}

// `{k, v}`: each a string, a number or a word.
Status Parser::dict_entry(std::vector<std::string>* out) {
  MIL_TRY(expect(Tok::LBrace));
  for (int i = 0; i < 2; ++i) {
    const Token& t = next();
    if (t.kind == Tok::String) out->push_back(string_value(t));
    else if (t.kind == Tok::Number || t.kind == Tok::Ident) out->emplace_back(t.text);
    else return fail(t, fmt::format("expected a dict key or value, found {}", describe(t)));
    if (i == 0) MIL_TRY(expect(Tok::Comma));
  }
  return expect(Tok::RBrace);
}

// `BLOBFILE(path = string("..."), offset = uint64(N))`, fields in any order,
// each exactly once.
Status Parser::blobfile(BlobRef* out) {
  const Token& start = next();  // BLOBFILE
  next();                       // (
  bool have_path = false, have_offset = false;
  for (bool more = true; more;) {
    auto key = ident("a BLOBFILE field (path or offset)");
    if (!key) return key.error();
    const std::string_view k = (*key)->text;
    bool* have = k == "path" ? &have_path : k == "offset" ? &have_offset : nullptr;
    if (!have) return fail(**key, fmt::format("unknown BLOBFILE field '{}'", k));
    if (*have) return fail(**key, fmt::format("BLOBFILE field '{}' is given twice", k));
    *have = true;
    MIL_TRY(expect(Tok::Equals));
    if (k == "offset") {
      MIL_TRY(blob_offset(&out->offset));
    } else {
      const Token& at_path = peek();
      Literal path;
      MIL_TRY(literal(&path));
      const auto* s = std::get_if<std::vector<std::string>>(&path.values);
      if (path.type.dtype != DType::String || !s || s->size() != 1)
        return fail(at_path, "BLOBFILE path must be a string");
      out->path = (*s)[0];
    }
    MIL_TRY(comma_or(Tok::RParen, &more));
  }
  if (!have_path || !have_offset) return fail(start, "BLOBFILE needs both a path and an offset");
  return Ok{};
}

// `uint64(N)`, or `tensor<uint64, []>(N)` as coremltools 8 prints it for
// iOS 16 / 17 programs: read as uint64 (Literal's int64 storage would halve
// the range).
Status Parser::blob_offset(uint64_t* out) {
  if (at_word("uint64") && at(Tok::LParen, 1)) {
    next();
  } else if (at_word("tensor") && at(Tok::LAngle, 1)) {
    const Token& t = peek();
    next();
    next();
    if (!at_word("uint64")) return fail(t, "a BLOBFILE offset tensor must be tensor<uint64, []>");
    next();
    MIL_TRY(expect(Tok::Comma));
    MIL_TRY(expect(Tok::LBracket));
    MIL_TRY(expect(Tok::RBracket));
    MIL_TRY(expect(Tok::RAngle));
  } else {
    return fail(peek(), fmt::format("expected uint64(...) for the BLOBFILE offset, found {}", describe(peek())));
  }
  MIL_TRY(expect(Tok::LParen));
  const Token& n = next();
  if (n.kind != Tok::Number || parse_uint64(n.text, out) != NumberStatus::Ok)
    return fail(n, fmt::format("invalid BLOBFILE offset {}", describe(n)));
  return expect(Tok::RParen);
}

}  // namespace ane::mil::detail
