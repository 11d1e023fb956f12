// Internal to the compiler: typed reads of one plist dictionary that name
// the owner, key and line of anything missing or mistyped.
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ane/network.h"
#include "ane/plist.h"

namespace ane::compiler {

using plist::Value;
using Kind = plist::Value::Kind;

// Reads typed values out of one dictionary, naming owner and key on failure.
class DictReader {
 public:
  DictReader(const std::string& path, const Value& dict, SourceRef owner, std::string prefix = "")
      : path_(path), dict_(dict), owner_(std::move(owner)), prefix_(std::move(prefix)) {}

  SourceRef ref(const std::string& key) const {
    SourceRef r = owner_;
    r.key = prefix_ + key;
    r.line = dict_.line_of(key);
    return r;
  }
  Error error(const std::string& key, const std::string& what) const { return network_error(path_, ref(key), what); }

  const Value* find(const std::string& key) const { return dict_.find(key); }

  Expected<const Value*> typed(const std::string& key, Kind kind, bool required) const {
    const Value* v = dict_.find(key);
    if (!v) {
      if (required) return network_error(path_, ref(key), "missing (required)");
      return static_cast<const Value*>(nullptr);
    }
    if (v->kind != kind)
      return error(key, fmt::format("expected <{}>, found <{}>", plist::kind_name(kind), plist::kind_name(v->kind)));
    return v;
  }

  Expected<std::optional<std::string>> string(const std::string& key, bool required) const {
    auto v = typed(key, Kind::String, required);
    if (!v) return v.error();
    if (!*v) return std::optional<std::string>{};
    return std::optional<std::string>{(*v)->text};
  }

  // Integers; older writers sometimes spell them <real>: accepted when integral.
  Expected<std::optional<int64_t>> integer(const std::string& key, bool required, int64_t lo, int64_t hi) const {
    const Value* raw = dict_.find(key);
    if (raw && raw->kind == Kind::Real) {
      if (raw->real != std::floor(raw->real) || !(raw->real >= -9.0e18 && raw->real <= 9.0e18))
        return error(key, fmt::format("expected an integer, found <real> {}", raw->real));
      const auto x = static_cast<int64_t>(raw->real);
      if (x < lo || x > hi) return error(key, fmt::format("{} is out of range [{}, {}]", x, lo, hi));
      return std::optional<int64_t>{x};
    }
    auto v = typed(key, Kind::Integer, required);
    if (!v) return v.error();
    if (!*v) return std::optional<int64_t>{};
    const int64_t x = (*v)->integer;
    if (x < lo || x > hi) return error(key, fmt::format("{} is out of range [{}, {}]", x, lo, hi));
    return std::optional<int64_t>{x};
  }

  // Integer into a u32 field (keeps the default when absent).
  Status u32(const std::string& key, uint32_t& out, bool required, int64_t lo = 0,
             int64_t hi = 0x7fffffff) const {
    auto v = integer(key, required, lo, hi);
    if (!v) return v.error();
    if (*v) out = static_cast<uint32_t>(**v);
    return Ok{};
  }
  Status u64(const std::string& key, std::optional<uint64_t>& out, int64_t lo = 0,
             int64_t hi = int64_t{1} << 40) const {
    auto v = integer(key, false, lo, hi);
    if (!v) return v.error();
    if (*v) out = static_cast<uint64_t>(**v);
    return Ok{};
  }

  // Booleans: <true/>, <false/>, or the integers 0 and 1.
  Expected<bool> boolean(const std::string& key) const {
    const Value* v = dict_.find(key);
    if (!v) return false;
    if (v->kind == Kind::Bool) return v->boolean;
    if (v->kind == Kind::Integer && (v->integer == 0 || v->integer == 1)) return v->integer == 1;
    return error(key, fmt::format("expected <true/> or <false/>, found <{}>", plist::kind_name(v->kind)));
  }

  Expected<std::vector<std::string>> string_array(const std::string& key, bool required) const {
    auto v = typed(key, Kind::Array, required);
    if (!v) return v.error();
    std::vector<std::string> out;
    if (!*v) return out;
    for (size_t i = 0; i < (*v)->array.size(); ++i) {
      const Value& e = (*v)->array[i];
      if (e.kind != Kind::String)
        return error(key, fmt::format("element {} is <{}>, expected <string>", i, plist::kind_name(e.kind)));
      out.push_back(e.text);
    }
    return out;
  }

  Expected<ElementType> element_type(const std::string& key, ElementType fallback) const {
    auto s = string(key, false);
    if (!s) return s.error();
    if (!*s) return fallback;
    for (ElementType t : {ElementType::Float16, ElementType::Float32, ElementType::UInt8, ElementType::Int8})
      if (**s == element_type_plist_name(t)) return t;
    return error(key, fmt::format("unknown element type '{}' (known: Float16, Float32, UInt8, Int8)", **s));
  }

  // Records "prefix+key" -> line for every key of the dictionary.
  void collect_lines(std::vector<std::pair<std::string, uint32_t>>& out) const {
    for (size_t i = 0; i < dict_.dict.size(); ++i)
      out.emplace_back(prefix_ + dict_.dict[i].first, i < dict_.key_lines.size() ? dict_.key_lines[i] : dict_.line);
  }

 private:
  const std::string& path_;
  const Value& dict_;
  SourceRef owner_;
  std::string prefix_;
};

}  // namespace ane::compiler
