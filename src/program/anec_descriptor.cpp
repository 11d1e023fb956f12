// anec descriptors: what the driver is told about an image (sizes, slot
// table, tensor shapes). Three spellings: a JSON manifest entry (eiln's
// kernels as transcribed in the corpus manifest, or libane's own with a
// "tensors" list), the C header eiln's anect writes (struct ane_model
// designated initializers), and the packed header newer anecc puts in front
// of the image (read by anec_reader.cpp).
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ane/anec.h"

namespace ane {

namespace {

using Json = nlohmann::json;

std::string base_name(const std::string& path) { return std::filesystem::path(path).filename().string(); }
std::string stem(const std::string& path) { return std::filesystem::path(path).stem().string(); }

BufferDirection direction_of_type(const std::string& type) {
  if (type == "src") return BufferDirection::Input;
  if (type == "dst") return BufferDirection::Output;
  return BufferDirection::Unknown;
}

Expected<uint64_t> json_uint(const Json& j, const char* key, const std::string& where) {
  const Json& v = j.at(key);
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer() && v.get<int64_t>() >= 0) return static_cast<uint64_t>(v.get<int64_t>());
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    char* end = nullptr;
    errno = 0;
    const unsigned long long n = std::strtoull(s.c_str(), &end, 0);
    if (!s.empty() && end && *end == '\0' && errno == 0) return static_cast<uint64_t>(n);
  }
  return make_error(fmt::format("{}: \"{}\" is not a non-negative integer", where, key));
}

template <typename T>
Status optional_uint(const Json& j, const char* key, const std::string& where, std::optional<T>& out) {
  if (!j.contains(key)) return Ok{};
  auto v = json_uint(j, key, where);
  if (!v) return v.error();
  if (*v > std::numeric_limits<T>::max()) return make_error(fmt::format("{}: \"{}\" is too large", where, key));
  out = static_cast<T>(*v);
  return Ok{};
}

Expected<std::array<uint64_t, 4>> four(const Json& j, const char* key, const std::string& where) {
  const Json& v = j.at(key);
  if (!v.is_array() || v.size() != 4) return make_error(fmt::format("{}: \"{}\" must be a list of 4 integers", where, key));
  std::array<uint64_t, 4> out{};
  for (size_t i = 0; i < 4; ++i) {
    if (!v[i].is_number_unsigned()) return make_error(fmt::format("{}: \"{}\" must be a list of 4 integers", where, key));
    out[i] = v[i].get<uint64_t>();
  }
  return out;
}

Expected<AnecDescriptor> from_json_entry(const Json& e, const std::string& where) {
  if (!e.is_object()) return make_error(where + ": a descriptor entry must be a JSON object");
  AnecDescriptor d;
  d.source = where;
  try {
    if (e.contains("name") && e["name"].is_string()) d.name = e["name"].get<std::string>();
    std::optional<uint64_t> td_count, inputs, outputs;
    for (auto [key, out] : {std::pair{"size", &d.size}, {"tsk_size", &d.task_bytes}, {"krn_size", &d.kernel_bytes},
                            {"td_size", &d.td_size}, {"td_count", &td_count}, {"input_count", &inputs},
                            {"output_count", &outputs}})
      if (Status s = optional_uint(e, key, where, *out); !s) return s.error();
    for (auto [v, out] : {std::pair{td_count, &d.td_count}, {inputs, &d.input_count}, {outputs, &d.output_count}})
      if (v) {
        if (*v > 0xffffffffu) return make_error(fmt::format("{}: a count is too large", where));
        *out = static_cast<uint32_t>(*v);
      }
    if (e.contains("slots")) {
      const Json& slots = e["slots"];
      if (!slots.is_array()) return make_error(where + ": \"slots\" must be a list");
      for (const Json& s : slots) {
        AnecSlotInfo info;
        auto k = json_uint(s, "slot", where);
        if (!k) return k.error();
        if (*k >= 32) return make_error(fmt::format("{}: slot {} is outside 0..31", where, *k));
        info.slot = static_cast<int>(*k);
        info.type = s.at("type").get<std::string>();
        if (s.contains("bytes")) {
          auto b = json_uint(s, "bytes", where);
          if (!b) return b.error();
          info.bytes = *b;
        } else {
          auto t = json_uint(s, "tiles", where);
          if (!t) return t.error();
          if (*t > (uint64_t{1} << 40)) return make_error(fmt::format("{}: slot {} has too many tiles", where, *k));
          info.bytes = *t * kAnecTileBytes;
        }
        d.slots.push_back(info);
      }
    }
    if (e.contains("tensors")) {
      const Json& ts = e["tensors"];
      if (!ts.is_array()) return make_error(where + ": \"tensors\" must be a list");
      for (const Json& t : ts) {
        AnecTensor a;
        a.name = t.at("name").get<std::string>();
        auto k = json_uint(t, "slot", where);
        if (!k) return k.error();
        if (*k >= 32) return make_error(fmt::format("{}: tensor '{}' slot {} is outside 0..31", where, a.name, *k));
        a.slot = static_cast<int>(*k);
        if (t.contains("type")) a.direction = direction_of_type(t["type"].get<std::string>());
        if (t.contains("nchw")) {
          auto n = four(t, "nchw", where);
          if (!n) return n.error();
          a.nchw = *n;
        }
        if (t.contains("strides")) {
          auto s = four(t, "strides", where);
          if (!s) return s.error();
          a.strides = *s;
        }
        d.tensors.push_back(std::move(a));
      }
    }
  } catch (const Json::exception& ex) {
    return make_error(fmt::format("{}: {}", where, ex.what()));
  }
  return d;
}

// The entry of a manifest that describes `program_path` (or is named `entry`).
Expected<AnecDescriptor> from_manifest(const Json& m, const std::string& entry, const std::string& program_path,
                                       const std::string& where) {
  const Json& kernels = m["kernels"];
  if (!kernels.is_array()) return make_error(where + ": \"kernels\" must be a list");
  const std::string want_file = base_name(program_path), want_stem = stem(program_path);
  std::vector<std::string> names;
  for (const Json& k : kernels) {
    if (!k.is_object()) continue;
    const std::string name = k.contains("name") && k["name"].is_string() ? k["name"].get<std::string>() : "";
    const std::string file = k.contains("file") && k["file"].is_string() ? k["file"].get<std::string>() : "";
    names.push_back(name);
    const bool match = entry.empty() ? (!file.empty() && base_name(file) == want_file) || name == want_stem
                                     : name == entry;
    if (match) return from_json_entry(k, fmt::format("{} entry '{}'", where, name));
  }
  return make_error(fmt::format("{}: no entry {} (entries: {})", where,
                                entry.empty() ? "for " + want_file : "named '" + entry + "'",
                                names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "))));
}

// ---- the C header eiln's anect writes ------------------------------------------

std::string strip_comments(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "//") == 0) {
      while (i < text.size() && text[i] != '\n') ++i;
      out += '\n';
    } else if (text.compare(i, 2, "/*") == 0) {
      const size_t end = text.find("*/", i + 2);
      i = end == std::string_view::npos ? text.size() : end + 1;
      out += ' ';
    } else {
      out += text[i];
    }
  }
  return out;
}

Expected<uint64_t> c_number(const std::string& s, const std::string& where) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(s.c_str(), &end, 0);
  if (s.empty() || !end || *end != '\0' || errno != 0)
    return make_error(fmt::format("{}: '{}' is not an integer", where, s));
  return static_cast<uint64_t>(n);
}

std::string slot_type_of_tile_macro(const std::string& m) {
  std::string u = m;
  for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (u.find("CMD") != std::string::npos) return "cmd";
  if (u.find("ITM") != std::string::npos) return "itm";
  if (u.find("DST") != std::string::npos) return "dst";
  if (u.find("SRC") != std::string::npos) return "src";
  return "";
}

// One `struct ane_model x = { ... };` initializer body.
Expected<AnecDescriptor> from_c_initializer(const std::string& body, const std::string& where) {
  AnecDescriptor d;
  d.source = where;
  static const std::regex kString(R"re(\.(name|fname)\s*=\s*"([^"]*)")re");
  static const std::regex kScalar(R"re(\.(size|td_size|td_count|tsk_size|krn_size|input_count|output_count|src_count|dst_count)\s*=\s*([0-9a-fA-Fx]+))re");
  static const std::regex kTile(R"re(\.tiles\s*\[\s*([0-9]+)\s*\]\s*=\s*([0-9a-fA-Fx]+))re");
  static const std::regex kType(R"re(\.types\s*\[\s*([0-9]+)\s*\]\s*=\s*([A-Za-z_0-9]+))re");
  static const std::regex kNchw(R"re(\.nchw\s*\[\s*([0-9]+)\s*\]\s*=\s*\{([^}]*)\})re");
  for (std::sregex_iterator it(body.begin(), body.end(), kString), e; it != e; ++it)
    if ((*it)[1] == "name") d.name = (*it)[2];
  for (std::sregex_iterator it(body.begin(), body.end(), kScalar), e; it != e; ++it) {
    auto v = c_number((*it)[2], where);
    if (!v) return v.error();
    const std::string key = (*it)[1];
    if (key == "size") d.size = *v;
    if (key == "td_size") d.td_size = *v;
    if (key == "tsk_size") d.task_bytes = *v;
    if (key == "krn_size") d.kernel_bytes = *v;
    auto small = [&](std::optional<uint32_t>& out) -> Status {
      if (*v > 0xffffffffu) return make_error(fmt::format("{}: .{} is too large", where, key));
      out = static_cast<uint32_t>(*v);
      return Ok{};
    };
    Status s = Ok{};
    if (key == "td_count") s = small(d.td_count);
    if (key == "input_count" || key == "src_count") s = small(d.input_count);
    if (key == "output_count" || key == "dst_count") s = small(d.output_count);
    if (!s) return s.error();
  }
  std::map<int, uint64_t> tiles;
  std::map<int, std::string> types;
  for (std::sregex_iterator it(body.begin(), body.end(), kTile), e; it != e; ++it) {
    auto k = c_number((*it)[1], where), n = c_number((*it)[2], where);
    if (!k) return k.error();
    if (!n) return n.error();
    if (*k >= 32) return make_error(fmt::format("{}: .tiles[{}] is outside 0..31", where, *k));
    if (*n > (uint64_t{1} << 40)) return make_error(fmt::format("{}: .tiles[{}] is too large", where, *k));
    tiles[static_cast<int>(*k)] = *n;
  }
  for (std::sregex_iterator it(body.begin(), body.end(), kType), e; it != e; ++it) {
    auto k = c_number((*it)[1], where);
    if (!k) return k.error();
    if (*k >= 32) return make_error(fmt::format("{}: .types[{}] is outside 0..31", where, *k));
    types[static_cast<int>(*k)] = slot_type_of_tile_macro((*it)[2]);
  }
  // Without .types (newer headers), the convention: 0 cmd, 3 itm, 4.. dst then src.
  const uint32_t dsts = d.output_count.value_or(0);
  for (const auto& [k, n] : tiles) {
    std::string type = types.count(k) ? types[k] : "";
    if (type.empty())
      type = k == 0 ? "cmd" : k == 1 ? "krn" : k < 4 ? "itm" : static_cast<uint32_t>(k - 4) < dsts ? "dst" : "src";
    d.slots.push_back({k, type, n * kAnecTileBytes});
  }
  for (std::sregex_iterator it(body.begin(), body.end(), kNchw), e; it != e; ++it) {
    auto k = c_number((*it)[1], where);
    if (!k) return k.error();
    if (*k >= 32) return make_error(fmt::format("{}: .nchw[{}] is outside 0..31", where, *k));
    std::vector<uint64_t> v;
    std::string list = (*it)[2];
    size_t pos = 0;
    while (pos <= list.size()) {
      size_t comma = list.find(',', pos);
      if (comma == std::string::npos) comma = list.size();
      std::string item = list.substr(pos, comma - pos);
      item.erase(std::remove_if(item.begin(), item.end(), [](unsigned char c) { return std::isspace(c); }),
                 item.end());
      if (!item.empty()) {
        auto n = c_number(item, where);
        if (!n) return n.error();
        v.push_back(*n);
      }
      pos = comma + 1;
    }
    if (v.size() != 6) return make_error(fmt::format("{}: .nchw[{}] needs 6 values (N, C, H, W, plane, row)", where, *k));
    AnecTensor t;
    t.slot = static_cast<int>(*k);
    t.nchw = std::array<uint64_t, 4>{v[0], v[1], v[2], v[3]};
    t.strides = std::array<uint64_t, 4>{v[1] * v[4], v[4], v[5], 2};
    d.tensors.push_back(t);
  }
  return d;
}

Expected<AnecDescriptor> from_c_header(const std::string& text, const std::string& entry,
                                       const std::string& program_path, const std::string& where) {
  const std::string code = strip_comments(text);
  static const std::regex kModel(R"re(struct\s+(ane_model|anec)\s+([A-Za-z_0-9]+)\s*=\s*\{)re");
  std::vector<std::string> names;
  const std::string want_file = base_name(program_path), want_stem = stem(program_path);
  for (std::sregex_iterator it(code.begin(), code.end(), kModel), e; it != e; ++it) {
    // The body runs to the matching brace.
    size_t pos = static_cast<size_t>(it->position(0) + it->length(0));
    int depth = 1;
    size_t end = pos;
    while (end < code.size() && depth > 0) {
      if (code[end] == '{') ++depth;
      if (code[end] == '}') --depth;
      ++end;
    }
    if (depth != 0) return make_error(fmt::format("{}: initializer of '{}' is not closed", where, (*it)[2].str()));
    const std::string body = code.substr(pos, end - pos - 1);
    const std::string var = (*it)[2];
    auto d = from_c_initializer(body, fmt::format("{} ({})", where, var));
    if (!d) return d.error();
    static const std::regex kFname(R"re(\.fname\s*=\s*"([^"]*)")re");
    std::smatch fm;
    const std::string fname = std::regex_search(body, fm, kFname) ? fm[1].str() : "";
    names.push_back(d->name.empty() ? var : d->name);
    const bool match = entry.empty() ? d->name == want_stem || (!fname.empty() && base_name(fname) == want_file) ||
                                           var == "anec_" + want_stem || var == "ane_" + want_stem
                                     : d->name == entry || var == entry;
    if (match) return d;
  }
  if (names.empty()) return make_error(where + ": no 'struct ane_model' or 'struct anec' initializer");
  if (names.size() == 1 && entry.empty()) {
    // One model in the file: it is the descriptor, whatever its name.
    auto only = from_c_header(text, names[0], program_path, where);
    if (only) return only;
  }
  return make_error(fmt::format("{}: no model {} (models: {})", where,
                                entry.empty() ? "for " + want_file : "named '" + entry + "'", fmt::join(names, ", ")));
}

Expected<AnecDescriptor> parse_named(std::string_view text, const std::string& entry, const std::string& program_path,
                                    const std::string& where) {
  size_t first = 0;
  while (first < text.size() && std::isspace(static_cast<unsigned char>(text[first]))) ++first;
  if (first < text.size() && text[first] == '{') {
    Json j = Json::parse(text, nullptr, false);
    if (j.is_discarded()) return make_error(where + ": not valid JSON");
    if (j.contains("kernels")) return from_manifest(j, entry, program_path, where);
    return from_json_entry(j, where);
  }
  return from_c_header(std::string(text), entry, program_path, where);
}

}  // namespace

Expected<AnecDescriptor> parse_anec_descriptor(std::string_view text, const std::string& entry,
                                               const std::string& program_path) {
  return parse_named(text, entry, program_path, "descriptor");
}

Expected<AnecDescriptor> load_anec_descriptor(const std::string& path, const std::string& entry,
                                              const std::string& program_path) {
  auto bytes = read_file(path);
  if (!bytes) return bytes.error();
  return parse_named(std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()), entry,
                     program_path, path);
}

}  // namespace ane
