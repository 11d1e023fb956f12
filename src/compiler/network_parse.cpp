// Network plist -> typed Network. Checks structure only: keys, types, names
// and the graph. What the compiler can lower is decided in lowering.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>

#include "ane/network.h"
#include "dict_reader.h"

namespace ane {

const char* element_type_plist_name(ElementType t) {
  switch (t) {
    case ElementType::Float16: return "Float16";
    case ElementType::Float32: return "Float32";
    case ElementType::UInt8: return "UInt8";
    case ElementType::Int8: return "Int8";
  }
  return "?";
}

uint32_t element_type_bytes(ElementType t) {
  switch (t) {
    case ElementType::Float16: return 2;
    case ElementType::Float32: return 4;
    case ElementType::UInt8:
    case ElementType::Int8: return 1;
  }
  return 1;
}

namespace {

SourceRef ref_in(const std::vector<std::pair<std::string, uint32_t>>& lines, const SourceRef& owner,
                 const std::string& key) {
  SourceRef r = owner;
  r.key = key;
  for (const auto& [k, line] : lines)
    if (k == key) r.line = line;
  return r;
}

}  // namespace

SourceRef Layer::at(const std::string& key) const {
  if (key_arguments.empty()) return ref_in(key_lines, ref, key);
  SourceRef r = ref;
  r.key_label = "argument";
  for (const auto& [k, argument] : key_arguments) {
    const bool prefix = !k.empty() && k.back() == '*';
    if (prefix ? key.rfind(k.substr(0, k.size() - 1), 0) == 0 : key == k) {
      r.key = argument;
      break;
    }
  }
  return r;
}
SourceRef TensorSpec::at(const std::string& key) const { return ref_in(key_lines, ref, key); }

std::vector<std::string> Network::inputs_sorted() const {
  std::vector<std::string> names;
  for (const auto& i : inputs) names.push_back(i.name);
  std::sort(names.begin(), names.end());
  return names;
}

Error network_error(const std::string& path, const SourceRef& ref, const std::string& what) {
  std::string msg = path;
  if (ref.line) msg += fmt::format(":{}", ref.line);
  if (!ref.owner.empty()) msg += ": " + ref.owner;
  if (!ref.key.empty()) msg += fmt::format(": {} '{}'", ref.key_label, ref.key);
  return make_error(msg + ": " + what);
}

namespace {

using compiler::DictReader;
using plist::Value;
using Kind = plist::Value::Kind;

#define ANE_CHECK(expr)            \
  do {                             \
    auto _st = (expr);             \
    if (!_st) return _st.error();  \
  } while (0)

#define ANE_ASSIGN(var, expr)         \
  auto var##_r = (expr);              \
  if (!var##_r) return var##_r.error(); \
  auto var = std::move(var##_r).value()

class Parser {
 public:
  Parser(const std::string& path, const ParseOptions& opts) : path_(path), opts_(opts) {}

  Expected<Network> run(const Value& root) {
    Network net;
    net.path = path_;
    if (root.kind != Kind::Dict)
      return network_error(path_, {"", "", root.line}, fmt::format("top level is <{}>, expected <dict>",
                                                                  plist::kind_name(root.kind)));
    DictReader top(path_, root, SourceRef{"plist", "", root.line});
    ANE_ASSIGN(names, top.string_array("Networks", true));
    if (names.empty()) return top.error("Networks", "is empty: name the network dictionary");
    if (names.size() > 1)
      return top.error("Networks", fmt::format("lists {} networks; only one network per plist is supported",
                                               names.size()));
    net.name = names[0];
    ANE_ASSIGN(version, top.string("Version", false));
    net.version = version.value_or("");
    ANE_ASSIGN(netdict, top.typed(net.name, Kind::Dict, true));
    DictReader nd(path_, *netdict, SourceRef{fmt::format("network '{}'", net.name), "", netdict->line});

    ANE_ASSIGN(inputs, nd.string_array("Inputs", true));
    ANE_ASSIGN(outputs, nd.string_array("Outputs", true));
    ANE_ASSIGN(units, nd.string_array("Units", true));
    ANE_ASSIGN(weights, nd.string_array("Weights", false));
    if (inputs.empty()) return nd.error("Inputs", "is empty");
    if (outputs.empty()) return nd.error("Outputs", "is empty");
    if (units.empty()) return nd.error("Units", "is empty: the network has no layers");
    if (auto dup = first_duplicate(inputs, units, outputs))
      return nd.error("", fmt::format("name '{}' is used twice in Inputs, Units and Outputs", *dup));

    for (const auto& name : inputs) {
      ANE_ASSIGN(d, nd.typed(name, Kind::Dict, true));
      ANE_ASSIGN(t, parse_input(name, *d));
      net.inputs.push_back(std::move(t));
    }
    for (const auto& name : units) {
      ANE_ASSIGN(d, nd.typed(name, Kind::Dict, true));
      ANE_ASSIGN(l, parse_layer(name, *d));
      net.units.push_back(std::move(l));
    }
    for (const auto& name : outputs) {
      ANE_ASSIGN(d, nd.typed(name, Kind::Dict, true));
      ANE_ASSIGN(t, parse_output(name, *d));
      net.outputs.push_back(std::move(t));
    }
    net.weights = weights;
    const std::filesystem::path base = opts_.weights_dir.empty()
                                           ? std::filesystem::path(path_).parent_path()
                                           : std::filesystem::path(opts_.weights_dir);
    for (const auto& w : weights) {
      std::filesystem::path p(w);
      net.weight_paths.push_back(p.is_absolute() ? p.string() : (base / p).lexically_normal().string());
    }
    ANE_CHECK(check_graph(net));
    return net;
  }

 private:
  static std::optional<std::string> first_duplicate(const std::vector<std::string>& a,
                                                    const std::vector<std::string>& b,
                                                    const std::vector<std::string>& c) {
    std::set<std::string> seen;
    for (const auto* list : {&a, &b, &c})
      for (const auto& n : *list)
        if (!seen.insert(n).second) return n;
    return std::nullopt;
  }

  Expected<TensorSpec> parse_input(const std::string& name, const Value& d) {
    TensorSpec t;
    t.name = name;
    t.ref = SourceRef{fmt::format("input '{}'", name), "", d.line};
    DictReader r(path_, d, t.ref);
    r.collect_lines(t.key_lines);
    ANE_CHECK(r.u32("InputChannels", t.channels, true, 1, 0x1ffff));
    ANE_CHECK(r.u32("InputHeight", t.height, true, 1, 0x7fff));
    ANE_CHECK(r.u32("InputWidth", t.width, true, 1, 0x7fff));
    ANE_CHECK(r.u32("BatchSize", t.batch, false, 1, 0xffff));
    ANE_CHECK(r.u32("InputDepth", t.depth, false, 1, 0xffff));
    ANE_CHECK(read_layout(r, "Input", t));
    return t;
  }

  // <prefix>Type, Interleave and the four strides: the keys inputs and
  // outputs share, spelled InputRowStride / OutputRowStride and so on.
  static Status read_layout(const DictReader& r, const std::string& prefix, TensorSpec& t) {
    auto type = r.element_type(prefix + "Type", ElementType::Float16);
    if (!type) return type.error();
    t.type = *type;
    ANE_CHECK(r.u32(prefix + "Interleave", t.interleave, false, 1, 15));
    ANE_CHECK(r.u64(prefix + "RowStride", t.row_stride));
    ANE_CHECK(r.u64(prefix + "PlaneStride", t.plane_stride));
    ANE_CHECK(r.u64(prefix + "BatchStride", t.batch_stride));
    ANE_CHECK(r.u64(prefix + "DepthStride", t.depth_stride));
    return Ok{};
  }

  Expected<TensorSpec> parse_output(const std::string& name, const Value& d) {
    TensorSpec t;
    t.name = name;
    t.ref = SourceRef{fmt::format("output '{}'", name), "", d.line};
    DictReader r(path_, d, t.ref);
    r.collect_lines(t.key_lines);
    ANE_ASSIGN(bottom, r.string("Bottom", true));
    t.bottom = *bottom;
    ANE_CHECK(read_layout(r, "Output", t));
    return t;
  }

  Expected<Layer> parse_layer(const std::string& name, const Value& d) {
    Layer l;
    l.name = name;
    l.ref = SourceRef{fmt::format("unit '{}'", name), "", d.line};
    DictReader r(path_, d, l.ref);
    r.collect_lines(l.key_lines);
    ANE_ASSIGN(type, r.string("Type", true));
    l.type = *type;
    // Bottom: one name or an array of names.
    const Value* bottom = r.find("Bottom");
    if (!bottom) return r.error("Bottom", "missing (required)");
    if (bottom->kind == Kind::String) {
      l.bottoms.push_back(bottom->text);
    } else {
      ANE_ASSIGN(list, r.string_array("Bottom", true));
      if (list.empty()) return r.error("Bottom", "is an empty array");
      l.bottoms = std::move(list);
    }
    ANE_ASSIGN(oc, r.integer("OutputChannels", false, 1, 0x1ffff));
    if (oc) l.output_channels = static_cast<uint32_t>(*oc);
    ANE_ASSIGN(otype, r.element_type("OutputType", ElementType::Float16));
    l.output_type = otype;

    const bool needs_params = l.type == "Conv" || l.type == "GOC" || l.type == "Neuron" || l.type == "Reshape" ||
                              l.type == "ScaledElementWise" || l.type == "ElementWise" || l.type == "Reduction";
    ANE_ASSIGN(params, r.typed("Params", Kind::Dict, needs_params));
    static const Value kEmpty = [] {
      Value v;
      v.kind = Kind::Dict;
      return v;
    }();
    DictReader p(path_, params ? *params : kEmpty, l.ref, "Params.");
    p.collect_lines(l.key_lines);

    if (l.type == "Conv") {
      ConvParams c;
      ANE_CHECK(p.u32("KernelWidth", c.kernel_width, true, 1, 31));
      ANE_CHECK(p.u32("KernelHeight", c.kernel_height, true, 1, 31));
      ANE_CHECK(p.u32("KernelDepth", c.kernel_depth, false, 1, 31));
      ANE_CHECK(p.u32("PadTop", c.pad_top, false));
      ANE_CHECK(p.u32("PadBot", c.pad_bottom, false));
      ANE_CHECK(p.u32("PadLeft", c.pad_left, false));
      ANE_CHECK(p.u32("PadRight", c.pad_right, false));
      ANE_CHECK(p.u32("KernelIndex", c.kernel.index, false, 0, 0xffff));
      std::optional<uint64_t> off;
      ANE_CHECK(p.u64("KernelOffset", off));
      c.kernel.offset = off.value_or(0);
      ANE_ASSIGN(kt, p.typed("KernelType", Kind::String, true));
      (void)kt;
      ANE_ASSIGN(ktype, p.element_type("KernelType", ElementType::Float16));
      c.kernel.type = ktype;
      ANE_ASSIGN(mode, p.string("KernelMode", false));
      if (mode) c.kernel_mode = *mode;
      ANE_ASSIGN(reuse, p.boolean("KernelGroupReuse"));
      c.kernel_group_reuse = reuse;
      ANE_ASSIGN(step, p.typed("Step", Kind::Array, false));
      if (step) {
        if (step->array.size() != 2 || step->array[0].kind != Kind::Integer || step->array[1].kind != Kind::Integer)
          return p.error("Step", "expected an array of two integers [x, y]");
        if (step->array[0].integer < 1 || step->array[0].integer > 31 || step->array[1].integer < 1 ||
            step->array[1].integer > 31)
          return p.error("Step", "steps must be between 1 and 31");
        c.step_x = static_cast<uint32_t>(step->array[0].integer);
        c.step_y = static_cast<uint32_t>(step->array[1].integer);
      }
      ANE_ASSIGN(groups, r.integer("NumGroups", false, 1, 0x1fff));
      if (groups) c.num_groups = static_cast<uint32_t>(*groups);
      ANE_ASSIGN(pmode, p.string("PaddingMode", false));
      if (pmode) c.padding_mode = *pmode;
      ANE_CHECK(p.u32("KernelDilationX", c.dilation_x, false, 1, 31));
      ANE_CHECK(p.u32("KernelDilationY", c.dilation_y, false, 1, 31));
      ANE_CHECK(check_params_type(p, "Conv"));
      l.params = c;
    } else if (l.type == "GOC") {
      GocParams g;
      ANE_ASSIGN(group, p.typed("BiasScaleGroupData", Kind::Dict, false));
      if (group) {
        DictReader gr(path_, *group, l.ref, "Params.BiasScaleGroupData.");
        gr.collect_lines(l.key_lines);
        WeightRef w;
        ANE_CHECK(gr.u32("BiasIndex", w.index, true, 0, 0xffff));
        std::optional<uint64_t> off;
        ANE_CHECK(gr.u64("BiasOffset", off));
        w.offset = off.value_or(0);
        ANE_CHECK(gr.u32("BiasCount", g.bias_count, true, 1, 0x1ffff));
        ANE_ASSIGN(bt, gr.typed("BiasType", Kind::String, true));
        (void)bt;
        ANE_ASSIGN(btype, gr.element_type("BiasType", ElementType::Float16));
        w.type = btype;
        if (gr.find("ScaleIndex") || gr.find("ScaleCount"))
          return gr.error("ScaleIndex", "per-channel scale is not supported (only BiasIndex/BiasCount are known)");
        g.bias = w;
      }
      ANE_ASSIGN(bs, p.integer("BiasScalar", false, 0, 0xffff));
      ANE_ASSIGN(ss, p.integer("ScaleScalar", false, 0, 0xffff));
      g.bias_scalar = bs;
      g.scale_scalar = ss;
      if (!group && !bs && !ss)
        return p.error("BiasScaleGroupData", "missing: a GOC needs BiasScaleGroupData or BiasScalar/ScaleScalar");
      l.params = g;
    } else if (l.type == "Neuron") {
      NeuronParams n;
      ANE_ASSIGN(t, p.string("Type", true));
      n.type = *t;
      // Real-valued parameters (libane's keys: no Apple plist shows them).
      for (auto [key, out] : {std::pair{"Alpha", &n.alpha}, std::pair{"Min", &n.min}, std::pair{"Max", &n.max}}) {
        const plist::Value* a = p.find(key);
        if (!a) continue;
        if (a->kind != Kind::Real && a->kind != Kind::Integer)
          return p.error(key, fmt::format("expected <real>, found <{}>", plist::kind_name(a->kind)));
        const double v = a->kind == Kind::Real ? a->real : static_cast<double>(a->integer);
        if (!std::isfinite(v) || std::fabs(v) > 65504)
          return p.error(key, fmt::format("{} is not a finite fp16 value", v));
        *out = v;
      }
      l.params = n;
    } else if (l.type == "Concat") {
      ConcatParams c;
      ANE_ASSIGN(dim, p.string("Dimension", false));
      if (dim) c.dimension = *dim;
      l.params = c;
    } else if (l.type == "Reshape") {
      ReshapeParams s;
      ANE_CHECK(p.u32("ReshapedBatch", s.batch, false, 1, 0xffff));
      ANE_CHECK(p.u32("ReshapedChannel", s.channels, true, 1, 0x1ffff));
      ANE_CHECK(p.u32("ReshapedDepth", s.depth, false, 1, 0xffff));
      ANE_CHECK(p.u32("ReshapedHeight", s.height, true, 1, 0x7fff));
      ANE_CHECK(p.u32("ReshapedWidth", s.width, true, 1, 0x7fff));
      l.params = s;
    } else if (l.type == "ScaledElementWise" || l.type == "ElementWise") {
      ElementWiseParams e;
      ANE_ASSIGN(t, p.string("Type", true));
      e.op = *t;
      ANE_ASSIGN(scale, p.integer("Scale", false, 0, 0xffff));
      if (scale) {
        e.scale = static_cast<uint16_t>(*scale);
        e.has_scale = true;
      }
      l.params = e;
    } else if (l.type == "Reduction") {
      ReductionParams r;
      ANE_ASSIGN(t, p.string("Type", true));
      r.op = *t;
      const Value* dim = p.find("Dimension");
      if (!dim) return p.error("Dimension", "missing (required for a Reduction)");
      if (dim->kind == Kind::String) {
        r.dimensions.push_back(dim->text);
      } else {
        ANE_ASSIGN(list, p.string_array("Dimension", true));
        if (list.empty()) return p.error("Dimension", "is an empty array");
        r.dimensions = std::move(list);
      }
      l.params = r;
    } else {
      l.params = OtherParams{};
    }
    return l;
  }

  // Params.Type, when present for a Conv, must agree with the unit's Type.
  Status check_params_type(const DictReader& p, const std::string& type) {
    auto t = p.string("Type", false);
    if (!t) return t.error();
    if (*t && **t != type) return p.error("Type", fmt::format("'{}' disagrees with the unit Type '{}'", **t, type));
    return Ok{};
  }

  Status check_graph(const Network& net) {
    std::map<std::string, const Layer*> units;
    for (const auto& l : net.units) units[l.name] = &l;
    std::set<std::string> inputs;
    for (const auto& i : net.inputs) inputs.insert(i.name);
    for (const auto& l : net.units)
      for (const auto& b : l.bottoms)
        if (!units.count(b) && !inputs.count(b))
          return network_error(path_, l.at("Bottom"),
                               fmt::format("'{}' is neither an input nor a unit of network '{}'", b, net.name));
    for (const auto& o : net.outputs) {
      if (inputs.count(o.bottom))
        return network_error(path_, o.at("Bottom"),
                             fmt::format("'{}' is an input: an output must be produced by a unit", o.bottom));
      if (!units.count(o.bottom))
        return network_error(path_, o.at("Bottom"), fmt::format("'{}' is not a unit of network '{}'", o.bottom, net.name));
    }
    // Cycles: depth-first search over Bottom edges (iterative; the graph is
    // as deep as the network is long).
    std::map<std::string, int> state;  // 0 new, 1 on stack, 2 done
    for (const auto& start : net.units) {
      if (state[start.name]) continue;
      std::vector<std::pair<const Layer*, size_t>> stack{{&start, 0}};
      state[start.name] = 1;
      while (!stack.empty()) {
        auto& [layer, next] = stack.back();
        if (next == layer->bottoms.size()) {
          state[layer->name] = 2;
          stack.pop_back();
          continue;
        }
        const std::string& b = layer->bottoms[next++];
        auto it = units.find(b);
        if (it == units.end()) continue;
        if (state[b] == 1) {
          std::string cycle = b;
          for (auto s = stack.rbegin(); s != stack.rend(); ++s) {
            cycle = s->first->name + " <- " + cycle;
            if (s->first->name == b) break;
          }
          return network_error(path_, layer->at("Bottom"), fmt::format("cycle between units: {}", cycle));
        }
        if (state[b] == 0) {
          state[b] = 1;
          stack.emplace_back(it->second, 0);
        }
      }
    }
    return Ok{};
  }

  const std::string& path_;
  const ParseOptions& opts_;
};

}  // namespace

Expected<Network> parse_network(const plist::Value& root, const std::string& path, const ParseOptions& opts) {
  return Parser(path, opts).run(root);
}

Expected<Network> load_network(const std::string& path, const ParseOptions& opts) {
  auto bytes = read_file(path);
  if (!bytes) return make_error(path + ": " + bytes.error().message);
  auto root = plist::parse(*bytes);
  if (!root) {
    const std::string& m = root.error().message;
    // "line N: what" -> "path:N: what"
    if (m.rfind("line ", 0) == 0) {
      const size_t colon = m.find(':');
      return make_error(fmt::format("{}:{}", path, m.substr(5, colon - 5)) + m.substr(colon));
    }
    return make_error(path + ": " + m);
  }
  return parse_network(*root, path, opts);
}

}  // namespace ane
