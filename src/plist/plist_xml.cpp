// XML property lists through pugixml. The converter walks the DOM with an
// explicit depth limit, so hostile nesting cannot exhaust the stack.
#include <algorithm>
#include <charconv>
#include <cstring>

#include <fmt/format.h>
#include <pugixml.hpp>

#include "ane/plist.h"

namespace ane::plist {

const char* kind_name(Value::Kind k) {
  switch (k) {
    case Value::Kind::String: return "string";
    case Value::Kind::Integer: return "integer";
    case Value::Kind::Real: return "real";
    case Value::Kind::Bool: return "bool";
    case Value::Kind::Date: return "date";
    case Value::Kind::Data: return "data";
    case Value::Kind::Array: return "array";
    case Value::Kind::Dict: return "dict";
  }
  return "?";
}

const Value* Value::find(std::string_view key) const {
  if (kind != Kind::Dict) return nullptr;
  for (const auto& [k, v] : dict)
    if (k == key) return &v;
  return nullptr;
}

uint32_t Value::line_of(std::string_view key) const {
  for (size_t i = 0; i < dict.size() && i < key_lines.size(); ++i)
    if (dict[i].first == key) return key_lines[i];
  return line;
}

namespace {

// Maps byte offsets of the source to 1-based line numbers.
class LineIndex {
 public:
  explicit LineIndex(std::span<const uint8_t> bytes) {
    for (size_t i = 0; i < bytes.size(); ++i)
      if (bytes[i] == '\n') newlines_.push_back(i);
  }
  uint32_t line(ptrdiff_t offset) const {
    if (offset < 0) return 0;
    auto it = std::lower_bound(newlines_.begin(), newlines_.end(), static_cast<size_t>(offset));
    return static_cast<uint32_t>(it - newlines_.begin()) + 1;
  }

 private:
  std::vector<size_t> newlines_;
};

Expected<Bytes> decode_base64(std::string_view s) {
  Bytes out;
  uint32_t acc = 0;
  int bits = 0, pad = 0;
  for (char c : s) {
    int v;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    else if (c >= '0' && c <= '9') v = c - '0' + 52;
    else if (c == '+') v = 62;
    else if (c == '/') v = 63;
    else if (c == '=') { ++pad; continue; }
    else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    else return make_error(fmt::format("invalid base64 character '{}'", c));
    if (pad) return make_error("base64 data continues after '=' padding");
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<uint8_t>(acc >> bits));
    }
  }
  return out;
}

class Converter {
 public:
  explicit Converter(const LineIndex& lines) : lines_(lines) {}

  Expected<Value> convert(const pugi::xml_node& node, int depth) {
    Value v;
    v.line = lines_.line(node.offset_debug());
    auto fail = [&](const std::string& what) {
      return make_error(fmt::format("line {}: {}", v.line, what));
    };
    if (depth > kMaxDepth) return fail(fmt::format("values nested deeper than {} levels", kMaxDepth));
    const std::string_view name = node.name();
    if (name == "dict") {
      v.kind = Value::Kind::Dict;
      for (pugi::xml_node k = first_element(node); k; k = next_element(k)) {
        if (std::string_view(k.name()) != "key")
          return make_error(fmt::format("line {}: expected <key> in <dict>, found <{}>", line(k), k.name()));
        if (has_element_child(k)) return make_error(fmt::format("line {}: <key> holds markup", line(k)));
        pugi::xml_node val = next_element(k);
        if (!val)
          return make_error(fmt::format("line {}: key '{}' has no value", line(k), k.child_value()));
        auto child = convert(val, depth + 1);
        if (!child) return child.error();
        v.key_lines.push_back(line(k));
        v.dict.push_back({k.child_value(), std::move(child).value()});
        k = val;
      }
      if (auto s = stray_text(node); !s) return s.error();
    } else if (name == "array") {
      v.kind = Value::Kind::Array;
      for (pugi::xml_node e = first_element(node); e; e = next_element(e)) {
        auto child = convert(e, depth + 1);
        if (!child) return child.error();
        v.array.push_back(std::move(child).value());
      }
      if (auto s = stray_text(node); !s) return s.error();
    } else if (name == "string" || name == "date") {
      v.kind = name == "string" ? Value::Kind::String : Value::Kind::Date;
      if (has_element_child(node)) return fail(fmt::format("<{}> holds markup", name));
      v.text = node.child_value();
    } else if (name == "integer") {
      v.kind = Value::Kind::Integer;
      std::string_view t = trim(node.child_value());
      const char* b = t.data();
      const char* e = t.data() + t.size();
      if (!t.empty() && *b == '+') ++b;
      auto [p, ec] = std::from_chars(b, e, v.integer);
      if (t.empty() || ec != std::errc() || p != e)
        return fail(fmt::format("<integer> '{}' is not a decimal 64-bit integer", t));
    } else if (name == "real") {
      v.kind = Value::Kind::Real;
      std::string t(trim(node.child_value()));
      char* end = nullptr;
      v.real = std::strtod(t.c_str(), &end);
      if (t.empty() || end != t.c_str() + t.size()) return fail(fmt::format("<real> '{}' is not a number", t));
    } else if (name == "true" || name == "false") {
      v.kind = Value::Kind::Bool;
      v.boolean = name == "true";
    } else if (name == "data") {
      v.kind = Value::Kind::Data;
      auto d = decode_base64(node.child_value());
      if (!d) return fail("<data>: " + d.error().message);
      v.data = std::move(d).value();
    } else {
      return fail(fmt::format("unknown plist element <{}>", name));
    }
    return v;
  }

 private:
  uint32_t line(const pugi::xml_node& n) const { return lines_.line(n.offset_debug()); }

  static pugi::xml_node first_element(const pugi::xml_node& n) {
    for (pugi::xml_node c = n.first_child(); c; c = c.next_sibling())
      if (c.type() == pugi::node_element) return c;
    return {};
  }
  static pugi::xml_node next_element(const pugi::xml_node& n) {
    for (pugi::xml_node c = n.next_sibling(); c; c = c.next_sibling())
      if (c.type() == pugi::node_element) return c;
    return {};
  }
  static bool has_element_child(const pugi::xml_node& n) { return bool(first_element(n)); }
  static std::string_view trim(std::string_view s) {
    while (!s.empty() && std::strchr(" \t\r\n", s.front())) s.remove_prefix(1);
    while (!s.empty() && std::strchr(" \t\r\n", s.back())) s.remove_suffix(1);
    return s;
  }
  Status stray_text(const pugi::xml_node& n) const {
    for (pugi::xml_node c = n.first_child(); c; c = c.next_sibling())
      if ((c.type() == pugi::node_pcdata || c.type() == pugi::node_cdata) && !trim(c.value()).empty())
        return make_error(fmt::format("line {}: text '{}' inside <{}>", line(c), trim(c.value()).substr(0, 40),
                                      n.name()));
    return Ok{};
  }

  const LineIndex& lines_;
};

}  // namespace

Expected<Value> parse(std::span<const uint8_t> bytes) {
  static constexpr char kBinaryMagic[] = "bplist";
  if (bytes.size() >= 6 && std::memcmp(bytes.data(), kBinaryMagic, 6) == 0)
    return make_error(0, "binary property list (bplist): convert it to XML first, e.g. "
                         "'plutil -convert xml1 FILE' (macOS) or 'plistutil -i FILE -o FILE.xml -f xml'");
  const LineIndex lines(bytes);
  pugi::xml_document doc;
  const auto result = doc.load_buffer(bytes.data(), bytes.size(), pugi::parse_default, pugi::encoding_auto);
  if (!result)
    return make_error(fmt::format("line {}: not well-formed XML: {}", lines.line(result.offset),
                                  result.description()));
  pugi::xml_node root = doc.document_element();
  if (std::string_view(root.name()) != "plist")
    return make_error(fmt::format("line {}: root element is <{}>, expected <plist>", lines.line(root.offset_debug()),
                                  root.name()));
  pugi::xml_node top;
  for (pugi::xml_node c = root.first_child(); c; c = c.next_sibling()) {
    if (c.type() != pugi::node_element) continue;
    if (top)
      return make_error(fmt::format("line {}: <plist> holds more than one value", lines.line(c.offset_debug())));
    top = c;
  }
  if (!top) return make_error(fmt::format("line {}: <plist> is empty", lines.line(root.offset_debug())));
  return Converter(lines).convert(top, 0);
}

}  // namespace ane::plist
