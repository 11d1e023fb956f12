// anec descriptors: what the driver is told about an image (sizes, slot
// table, tensor shapes). Three spellings: a JSON manifest entry (eiln's
// kernels as transcribed in the corpus manifest, or libane's own with a
// "tensors" list), the C header eiln's anect writes (struct ane_model
// designated initializers), and the packed header newer anecc puts in front
// of the image (read by anec_reader.cpp).
#include <algorithm>
#include <cctype>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ane/anec.h"
#include "anec_c_header.h"

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
  return anec_from_c_header(text, entry, program_path, where);
}

}  // namespace

Expected<AnecDescriptor> parse_anec_descriptor(std::string_view text, const std::string& entry,
                                               const std::string& program_path) {
  return parse_named(text, entry, program_path, "descriptor");
}

Expected<AnecDescriptor> load_anec_descriptor(const std::string& path, const std::string& entry,
                                              const std::string& program_path) {
  auto bytes = read_file(path);
  if (!bytes) return make_error(path + ": " + bytes.error().str());
  return parse_named(std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()), entry,
                     program_path, path);
}

}  // namespace ane
