// hwx-build's input forms, told apart by content: a network plist, MIL text,
// an .mlmodelc bundle (a directory with model.mil), an .mlpackage (refused).
#include <algorithm>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ane/mil_network.h"

namespace ane {
namespace {

namespace fs = std::filesystem;

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// The names of metadata.json's inputSchema or outputSchema, in order
// (nullopt: the file has no such list).
Expected<std::optional<std::vector<std::string>>> schema_names(const nlohmann::json& meta, const char* key,
                                                               const std::string& path) {
  const nlohmann::json* root = &meta;
  if (meta.is_array()) {
    if (meta.empty()) return std::optional<std::vector<std::string>>{};
    root = &meta[0];
  }
  if (!root->is_object() || !root->contains(key)) return std::optional<std::vector<std::string>>{};
  const auto& list = (*root)[key];
  if (!list.is_array()) return make_error(fmt::format("{}: '{}' is not an array", path, key));
  std::vector<std::string> names;
  for (const auto& e : list) {
    if (!e.is_object() || !e.contains("name") || !e["name"].is_string())
      return make_error(fmt::format("{}: an entry of '{}' has no string 'name'", path, key));
    names.push_back(e["name"].get<std::string>());
  }
  return std::optional<std::vector<std::string>>{std::move(names)};
}

// Orders `specs` as metadata.json names them; the two must name the same set.
Status order_as(std::vector<TensorSpec>& specs, const std::vector<std::string>& names, const char* what,
                const std::string& meta_path, bool outputs) {
  auto mil_name = [&](const TensorSpec& t) {
    return outputs ? t.name.substr(0, t.name.size() - std::string("@output").size()) : t.name;
  };
  std::vector<TensorSpec> ordered;
  for (const auto& n : names) {
    auto it = std::find_if(specs.begin(), specs.end(), [&](const TensorSpec& t) { return mil_name(t) == n; });
    if (it == specs.end())
      return make_error(fmt::format("{}: {} '{}' is not one of model.mil's main {}", meta_path, what, n, what + std::string("s")));
    ordered.push_back(*it);
  }
  if (ordered.size() != specs.size())
    return make_error(fmt::format("{}: names {} {}{} where model.mil's main has {}", meta_path, ordered.size(), what,
                                  ordered.size() == 1 ? "" : "s", specs.size()));
  specs = std::move(ordered);
  return Ok{};
}

Expected<Network> load_bundle(const std::string& dir, const ModelOptions& opts) {
  const std::string mil_path = (fs::path(dir) / "model.mil").string();
  auto program = mil::load_program(mil_path);
  if (!program) return program.error();
  auto net = network_of_mil(*program, MilOptions{opts.weights});
  if (!net) return net.error();
  const std::string meta_path = (fs::path(dir) / "metadata.json").string();
  std::error_code ec;
  if (!fs::is_regular_file(meta_path, ec)) return net;
  auto bytes = read_file(meta_path);
  if (!bytes) return make_error(meta_path + ": " + bytes.error().message);
  auto meta = nlohmann::json::parse(bytes->begin(), bytes->end(), nullptr, /*allow_exceptions=*/false);
  if (meta.is_discarded()) return make_error(meta_path + ": not valid JSON");
  auto ins = schema_names(meta, "inputSchema", meta_path);
  if (!ins) return ins.error();
  auto outs = schema_names(meta, "outputSchema", meta_path);
  if (!outs) return outs.error();
  if (*ins)
    if (auto s = order_as(net->inputs, **ins, "input", meta_path, false); !s) return s.error();
  if (*outs)
    if (auto s = order_as(net->outputs, **outs, "output", meta_path, true); !s) return s.error();
  return net;
}

}  // namespace

const char* model_kind_name(ModelKind k) {
  switch (k) {
    case ModelKind::Plist: return "network plist";
    case ModelKind::Mil: return "MIL text";
    case ModelKind::MlModelC: return "compiled Core ML bundle (.mlmodelc)";
    case ModelKind::MlPackage: return "Core ML package (.mlpackage)";
    case ModelKind::Unknown: return "unknown";
  }
  return "unknown";
}

Expected<ModelKind> detect_model_kind(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    if (fs::is_regular_file(fs::path(path) / "model.mil", ec)) return ModelKind::MlModelC;
    if (fs::exists(fs::path(path) / "Manifest.json", ec)) return ModelKind::MlPackage;
    return ModelKind::Unknown;
  }
  if (!fs::exists(path, ec)) return make_error(path + ": cannot open: No such file or directory");  // as read_file says
  if (!fs::is_regular_file(path, ec)) return make_error(path + ": not a regular file or a directory");
  std::ifstream in(path, std::ios::binary);
  std::string head(512, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  if (starts_with(head, "bplist00")) return ModelKind::Plist;
  std::string_view s = head;
  if (starts_with(s, "\xEF\xBB\xBF")) s.remove_prefix(3);
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r' || s.front() == '\n'))
    s.remove_prefix(1);
  if (starts_with(s, "<?xml") || starts_with(s, "<!DOCTYPE plist") || starts_with(s, "<plist")) return ModelKind::Plist;
  if (starts_with(s, "program")) return ModelKind::Mil;
  return ModelKind::Unknown;
}

CompilerProfile default_compiler_profile(ModelKind kind) {
  return kind == ModelKind::Plist ? CompilerProfile::V421 : CompilerProfile::Macos26;
}

std::string default_output_name(const std::string& model_path) {
  fs::path in(model_path);
  if (!in.has_filename()) in = in.parent_path();  // "Model.mlmodelc/"
  return in.stem().string() + ".hwx";
}

Expected<Network> load_model(const std::string& path, const ModelOptions& opts, ModelKind* kind_out) {
  auto kind = detect_model_kind(path);
  if (!kind) return kind.error();
  if (kind_out) *kind_out = *kind;
  switch (*kind) {
    case ModelKind::Plist: return load_network(path, ParseOptions{opts.weights});
    case ModelKind::Mil: {
      auto program = mil::load_program(path);
      if (!program) return program.error();
      return network_of_mil(*program, MilOptions{opts.weights});
    }
    case ModelKind::MlModelC: return load_bundle(path, opts);
    case ModelKind::MlPackage:
      return make_error(path +
                        ": a Core ML package (protobuf) is not read; compile it to a bundle first (on a Mac: "
                        "xcrun coremlcompiler compile model.mlpackage OUT_DIR) and pass OUT_DIR/model.mlmodelc");
    case ModelKind::Unknown: break;
  }
  return make_error(path +
                    ": not a model hwx-build reads (expected an XML network plist, MIL text starting with "
                    "'program', or an .mlmodelc directory holding model.mil)");
}

}  // namespace ane
