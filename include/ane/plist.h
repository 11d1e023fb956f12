// Property lists (Apple's XML plist format) as a small value tree. Every value
// remembers the line it came from so that problems found later (a missing
// key, a wrong type) can name the place in the file.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ane/bytes.h"
#include "ane/error.h"

namespace ane::plist {

struct Value {
  enum class Kind { String, Integer, Real, Bool, Date, Data, Array, Dict };

  Kind kind = Kind::String;
  uint32_t line = 0;  // 1-based line of the element in the source
  std::string text;   // String, Date
  int64_t integer = 0;
  double real = 0;
  bool boolean = false;
  Bytes data;                                          // Data (base64-decoded)
  std::vector<Value> array;                            // Array
  struct Entry;                                        // key and value (defined below)
  std::vector<Entry> dict;                             // Dict, in file order
  std::vector<uint32_t> key_lines;                     // line of each dict key

  // Dict lookup (first match); nullptr when absent or not a dict.
  const Value* find(std::string_view key) const;
  // Line of a dict key, or the dict's own line when absent.
  uint32_t line_of(std::string_view key) const;
};

struct Value::Entry {
  std::string first;  // the key
  Value second;
};

// Kind names as in the XML ("string", "integer", "dict", ...).
const char* kind_name(Value::Kind k);

// Parses an XML property list. Errors say "line N: problem". A binary plist
// (bplist00) is reported as such, with the command that converts it.
Expected<Value> parse(std::span<const uint8_t> bytes);

// Nesting deeper than this is refused (the parser never recurses further).
constexpr int kMaxDepth = 64;

}  // namespace ane::plist
