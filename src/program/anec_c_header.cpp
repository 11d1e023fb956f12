// A small tokenizer and designated-initializer reader for anect's C header
// (anec_c_header.h). Linear in the input, no recursion on its length, so a
// hostile header cannot exhaust the stack.
#include "anec_c_header.h"

#include <cctype>
#include <filesystem>
#include <map>

#include <fmt/format.h>

namespace ane {

namespace {

struct Token {
  enum Kind { Ident, Number, String, Punct, End } kind = End;
  std::string text;
};

class Lexer {
 public:
  explicit Lexer(std::string_view s) : s_(s) {}
  Token next() {
    skip_space_and_comments();
    Token t;
    if (pos_ >= s_.size()) return t;
    const char c = s_[pos_];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const size_t b = pos_;
      while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
      return {Token::Ident, std::string(s_.substr(b, pos_ - b))};
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      const size_t b = pos_;
      while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])))) ++pos_;
      return {Token::Number, std::string(s_.substr(b, pos_ - b))};
    }
    if (c == '"') {
      const size_t b = ++pos_;
      while (pos_ < s_.size() && s_[pos_] != '"' && s_[pos_] != '\n') ++pos_;
      std::string text(s_.substr(b, pos_ - b));
      if (pos_ < s_.size() && s_[pos_] == '"') ++pos_;
      return {Token::String, text};
    }
    ++pos_;
    return {Token::Punct, std::string(1, c)};
  }

 private:
  void skip_space_and_comments() {
    while (pos_ < s_.size()) {
      if (std::isspace(static_cast<unsigned char>(s_[pos_]))) {
        ++pos_;
      } else if (s_.compare(pos_, 2, "//") == 0) {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else if (s_.compare(pos_, 2, "/*") == 0) {
        const size_t end = s_.find("*/", pos_ + 2);
        pos_ = end == std::string_view::npos ? s_.size() : end + 2;
      } else if (s_[pos_] == '#') {  // preprocessor lines
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else {
        return;
      }
    }
  }
  std::string_view s_;
  size_t pos_ = 0;
};

// One designator's value: a number, a string (maybe after a macro, as in
// `ANEC_PATH "unary/exp.bin"`), an identifier, or a list of numbers.
struct Value {
  std::string scalar;               // number or identifier
  std::string text;                 // string
  std::vector<std::string> list;    // { a, b, ... } of numbers
};

// `.key[index] = value` pairs of one initializer (nested `.anec = { ... }`
// flattened into the same map), keyed "key" or "key[index]".
using Designators = std::map<std::string, Value>;

struct Model {
  std::string variable;
  Designators d;
};

// Reads the initializer body after its opening brace, up to the matching
// close, with an explicit depth counter instead of recursion.
std::vector<Model> read_models(std::string_view text) {
  std::vector<Model> models;
  Lexer lx(text);
  std::vector<Token> window;
  Token t = lx.next();
  while (t.kind != Token::End) {
    // struct ane_model NAME = {
    if (t.kind == Token::Ident && t.text == "struct") {
      Token type = lx.next(), name = lx.next(), eq = lx.next(), open = lx.next();
      if (type.kind == Token::Ident && (type.text == "ane_model" || type.text == "anec") && name.kind == Token::Ident &&
          eq.text == "=" && open.text == "{") {
        Model m;
        m.variable = name.text;
        int depth = 1;
        Token u = lx.next();
        while (u.kind != Token::End && depth > 0) {
          if (u.text == "{") ++depth;
          if (u.text == "}") --depth;
          if (u.kind == Token::Punct && u.text == "." && depth >= 1) {
            Token key = lx.next();
            if (key.kind != Token::Ident) {
              u = key;
              continue;
            }
            std::string k = key.text;
            Token v = lx.next();
            if (v.text == "[") {
              Token idx = lx.next();
              Token close = lx.next();
              if (idx.kind == Token::Number && close.text == "]") k += "[" + idx.text + "]";
              v = lx.next();
            }
            if (v.text != "=") {
              u = v;
              continue;
            }
            Value val;
            Token w = lx.next();
            if (w.kind == Token::Ident) {
              Token after = lx.next();
              if (after.kind == Token::String) {  // MACRO "string"
                val.text = after.text;
                m.d[k] = val;
                u = lx.next();
                continue;
              }
              val.scalar = w.text;
              m.d[k] = val;
              u = after;
              continue;
            }
            if (w.kind == Token::String || w.kind == Token::Number) {
              (w.kind == Token::String ? val.text : val.scalar) = w.text;
              m.d[k] = val;
              u = lx.next();
              continue;
            }
            if (w.text == "{") {
              // A list of numbers, or a nested initializer (its designators
              // are read by this same loop).
              Token first = lx.next();
              if (first.text == ".") {
                ++depth;
                u = first;
                continue;
              }
              ++depth;
              Token x = first;
              while (x.kind != Token::End && x.text != "}") {
                if (x.kind == Token::Number) val.list.push_back(x.text);
                x = lx.next();
              }
              if (x.text == "}") --depth;
              m.d[k] = val;
              u = lx.next();
              continue;
            }
            u = w;
            continue;
          }
          u = lx.next();
        }
        models.push_back(std::move(m));
        t = lx.next();
        continue;
      }
      t = open;
      continue;
    }
    t = lx.next();
  }
  return models;
}

Expected<uint64_t> number(const std::string& s, const std::string& where, const std::string& key) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(s.c_str(), &end, 0);
  if (s.empty() || !end || *end != '\0' || errno != 0)
    return make_error(fmt::format("{}: .{} = '{}' is not an integer", where, key, s));
  return static_cast<uint64_t>(n);
}

std::string slot_type(const std::string& macro) {
  for (const char* t : {"CMD", "ITM", "DST", "SRC"})
    if (macro.find(t) != std::string::npos) {
      std::string out = t;
      for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return out;
    }
  return "";
}

// "tiles[12]" -> 12, or -1.
int index_of(const std::string& key, const std::string& array) {
  if (key.rfind(array + "[", 0) != 0 || key.back() != ']') return -1;
  const std::string n = key.substr(array.size() + 1, key.size() - array.size() - 2);
  if (n.empty() || n.size() > 3 || n.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoi(n);
}

Expected<AnecDescriptor> to_descriptor(const Model& m, const std::string& where) {
  AnecDescriptor d;
  d.source = where;
  if (auto it = m.d.find("name"); it != m.d.end()) d.name = it->second.text;
  auto get = [&](const char* key, auto& out) -> Status {
    auto it = m.d.find(key);
    if (it == m.d.end() || it->second.scalar.empty()) return Ok{};
    auto v = number(it->second.scalar, where, key);
    if (!v) return v.error();
    using T = typename std::remove_reference_t<decltype(out)>::value_type;
    if (*v > std::numeric_limits<T>::max()) return make_error(fmt::format("{}: .{} is too large", where, key));
    out = static_cast<T>(*v);
    return Ok{};
  };
  for (auto [key, out] : {std::pair{"size", &d.size}, {"tsk_size", &d.task_bytes}, {"krn_size", &d.kernel_bytes},
                          {"td_size", &d.td_size}})
    if (Status s = get(key, *out); !s) return s.error();
  for (auto [key, out] : {std::pair{"td_count", &d.td_count}, {"input_count", &d.input_count},
                          {"src_count", &d.input_count}, {"output_count", &d.output_count},
                          {"dst_count", &d.output_count}})
    if (Status s = get(key, *out); !s) return s.error();
  std::map<int, std::string> types;
  for (const auto& [key, v] : m.d) {
    const int k = index_of(key, "types");
    if (k < 0) continue;
    if (k >= 32) return make_error(fmt::format("{}: .{} is outside 0..31", where, key));
    types[k] = slot_type(v.scalar);
  }
  const uint32_t dsts = d.output_count.value_or(0);
  for (const auto& [key, v] : m.d) {
    const int k = index_of(key, "tiles");
    if (k < 0) continue;
    if (k >= 32) return make_error(fmt::format("{}: .{} is outside 0..31", where, key));
    auto n = number(v.scalar, where, key);
    if (!n) return n.error();
    if (*n > (uint64_t{1} << 40)) return make_error(fmt::format("{}: .{} is too large", where, key));
    std::string type = types.count(k) ? types[k] : "";
    if (type.empty())  // newer headers without .types: the driver's convention
      type = k == 0 ? "cmd" : k == 1 ? "krn" : k < 4 ? "itm" : static_cast<uint32_t>(k - 4) < dsts ? "dst" : "src";
    d.slots.push_back({k, type, *n * kAnecTileBytes});
  }
  for (const auto& [key, v] : m.d) {
    const int k = index_of(key, "nchw");
    if (k < 0) continue;
    if (k >= 32) return make_error(fmt::format("{}: .{} is outside 0..31", where, key));
    if (v.list.size() != 6)
      return make_error(fmt::format("{}: .{} needs 6 values (N, C, H, W, plane, row)", where, key));
    std::array<uint64_t, 6> n{};
    for (int i = 0; i < 6; ++i) {
      auto x = number(v.list[i], where, key);
      if (!x) return x.error();
      n[i] = *x;
    }
    AnecTensor t;
    t.slot = k;
    t.nchw = std::array<uint64_t, 4>{n[0], n[1], n[2], n[3]};
    uint64_t batch = 0;
    if (__builtin_mul_overflow(n[1], n[4], &batch)) return make_error(fmt::format("{}: .{} overflows", where, key));
    t.strides = std::array<uint64_t, 4>{batch, n[4], n[5], 2};
    d.tensors.push_back(t);
  }
  return d;
}

}  // namespace

Expected<AnecDescriptor> anec_from_c_header(std::string_view text, const std::string& entry,
                                            const std::string& program_path, const std::string& where) {
  const auto models = read_models(text);
  if (models.empty()) return make_error(where + ": no 'struct ane_model' or 'struct anec' initializer");
  const std::string file = std::filesystem::path(program_path).filename().string();
  const std::string stem = std::filesystem::path(program_path).stem().string();
  std::vector<std::string> names;
  for (const auto& m : models) {
    std::string name, fname;
    if (auto it = m.d.find("name"); it != m.d.end()) name = it->second.text;
    if (auto it = m.d.find("fname"); it != m.d.end()) fname = std::filesystem::path(it->second.text).filename().string();
    names.push_back(name.empty() ? m.variable : name);
    const bool match = entry.empty() ? name == stem || (!fname.empty() && fname == file) ||
                                           m.variable == "anec_" + stem || m.variable == "ane_" + stem ||
                                           models.size() == 1
                                     : name == entry || m.variable == entry;
    if (match) return to_descriptor(m, fmt::format("{} ({})", where, m.variable));
  }
  return make_error(fmt::format("{}: no model {} (models: {})", where,
                                entry.empty() ? "for " + file : "named '" + entry + "'", fmt::join(names, ", ")));
}

}  // namespace ane
