// The MIL -> Network lowering's state, shared by its files: mil_network.cpp
// (the graph and the element-wise ops) and mil_conv.cpp (convolutions and
// their weights).
#pragma once

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>

#include "ane/mil_network.h"
#include "mil_surface.h"

namespace ane::mil_lowering {

using mil::Literal;
using mil::Operation;

class Lowering {
 public:
  Lowering(const mil::Program& p, const MilOptions& o) : program_(p), opts_(o) {}

  Expected<Network> run() {
    if (program_.functions.size() != 1)
      return make_error(fmt::format("{}: the program has {} functions: only one (main) is supported", program_.path,
                                    program_.functions.size()));
    const mil::Function& f = program_.functions[0];
    if (f.name != "main")
      return make_error(fmt::format("{}:{}: function '{}': the program's one function must be main", program_.path,
                                    f.line, f.name));
    net_.path = program_.path;
    // No Apple file compiled from MIL shows its network name; "net", as the
    // plists name theirs, so that a MIL program and its plist give the same bytes.
    net_.name = "net";
    net_.version = program_.version;
    for (const auto& v : f.inputs)
      if (auto s = add_input(v); !s) return s.error();
    for (const auto& op : f.operations)
      if (auto s = lower(op); !s) return s.error();
    if (f.outputs.empty()) return make_error(fmt::format("{}:{}: main returns nothing", program_.path, f.line));
    for (const auto& name : f.outputs)
      if (auto s = add_output(f, name); !s) return s.error();
    return std::move(net_);
  }

 private:
  std::string where(uint32_t line) const { return fmt::format("{}:{}", program_.path, line); }

  Error fail(const Operation& op, std::string_view argument, const std::string& what) const {
    std::string m = fmt::format("{}: op '{}'", where(op.line), op.op);
    if (!argument.empty()) m += fmt::format(": argument '{}'", argument);
    return make_error(m + ": " + what);
  }

  Status add_input(const mil::Value& v) {
    if (v.type.dtype != mil::DType::Fp16)
      return make_error(fmt::format("{}: input '{}': {}: only fp16 inputs are supported (the ANE's tensors are fp16)",
                                    where(v.line), v.name, mil::type_text(v.type)));
    auto s = mil_surface(v.type);
    if (!s) return make_error(fmt::format("{}: input '{}': {}", where(v.line), v.name, s.error().message));
    TensorSpec t;
    t.name = v.name;
    t.ref = SourceRef{fmt::format("input '{}'", v.name), "", v.line};
    t.batch = s->n;
    t.channels = s->c;
    t.height = s->h;
    t.width = s->w;
    net_.inputs.push_back(std::move(t));
    values_[v.name] = {v.name, v.type, *s};
    return Ok{};
  }

  Status add_output(const mil::Function& f, const std::string& name) {
    auto it = values_.find(name);
    if (it == values_.end() || it->second.unit.empty())
      return make_error(fmt::format("{}: output '{}' is {}: an output must be computed by an op", where(f.line), name,
                                    consts_.count(name) ? "a constant" : "an input"));
    if (std::any_of(net_.inputs.begin(), net_.inputs.end(), [&](const TensorSpec& t) { return t.name == name; }))
      return make_error(fmt::format("{}: output '{}' is an input: an output must be computed by an op",
                                    where(f.line), name));
    TensorSpec t;
    t.name = it->second.unit + "@output";
    t.ref = SourceRef{fmt::format("output '{}'", name), "", f.line};
    t.bottom = it->second.unit;
    net_.outputs.push_back(std::move(t));
    return Ok{};
  }

  Status lower(const Operation& op);
  Status lower_conv(const Operation& op);
  Status lower_neuron(const Operation& op, const std::string& type);
  Status lower_elementwise(const Operation& op, const std::string& type);
  Status lower_real_div(const Operation& op);
  // The argument as an fp16 scalar constant (a const of one value: rank 0,
  // [1] or [1,1,1,1], written in the text or in a weight blob; fp16, or an
  // fp32 value fp16 holds exactly); nullopt where it names a tensor.
  Expected<std::optional<uint16_t>> scalar_constant(const Operation& op, std::string_view argument);
  Status lower_scalar_elementwise(const Operation& op, const std::string& type, uint16_t c, const char* constant_arg);
  // The argument's constant when it is a tensor of more than one value, else nullptr.
  const Literal* tensor_constant(const Operation& op, std::string_view argument) const;
  // x op c for a tensor constant c of one value per channel of x (docs/mil.md,
  // "Tensor constants"); `constant_arg` names c, the other argument x.
  Status lower_tensor_constant_elementwise(const Operation& op, const std::string& type, const Literal& c,
                                           const char* constant_arg);
  Status lower_concat(const Operation& op);
  Status lower_reshape(const Operation& op);
  Status lower_reduction(const Operation& op, const std::string& type);

  // ---- arguments ----

  struct TensorValue {
    std::string unit;  // the unit (or input) that holds it
    mil::Type type;
    Surface surface;
  };

  // x and y of a binary op: computed tensors of one shape (no broadcasting).
  Expected<std::pair<TensorValue, TensorValue>> same_shape_operands(const Operation& op) const;

  // A computed tensor (an input or an op's result), by argument name.
  Expected<TensorValue> tensor(const Operation& op, std::string_view argument) const {
    const mil::Argument* a = op.argument(argument);
    if (!a) return fail(op, argument, "missing (required)");
    const auto* ref = std::get_if<mil::NameRef>(a);
    if (!ref) return fail(op, argument, "expected a tensor name");
    return tensor_named(op, argument, ref->name);
  }

  Expected<TensorValue> tensor_named(const Operation& op, std::string_view argument, const std::string& name) const {
    if (consts_.count(name))
      return fail(op, argument,
                  fmt::format("'{}' is a constant: tensor constants as operands are not supported here (hwx-build "
                              "reads them as convolution weights and biases, and as the second operand of add, "
                              "sub, mul, maximum and minimum)",
                              name));
    auto it = values_.find(name);
    if (it == values_.end()) return fail(op, argument, fmt::format("'{}' is not defined", name));
    return it->second;
  }

  // The argument's value when it is a constant (written in place or a const
  // op's), else nullptr (absent, or computed).
  const Literal* literal(const Operation& op, std::string_view argument) const {
    const mil::Argument* a = op.argument(argument);
    if (!a) return nullptr;
    if (const auto* lit = std::get_if<Literal>(a)) return lit;
    const auto* ref = std::get_if<mil::NameRef>(a);
    auto it = ref ? consts_.find(ref->name) : consts_.end();
    return it == consts_.end() ? nullptr : it->second;
  }

  // A constant, by argument name: written in place or the value of a const op.
  Expected<const Literal*> constant(const Operation& op, std::string_view argument, bool required) const {
    const mil::Argument* a = op.argument(argument);
    if (!a) {
      if (required) return fail(op, argument, "missing (required)");
      return static_cast<const Literal*>(nullptr);
    }
    if (const auto* lit = std::get_if<Literal>(a)) return lit;
    const auto* ref = std::get_if<mil::NameRef>(a);
    if (!ref) return fail(op, argument, "expected a constant");
    auto it = consts_.find(ref->name);
    if (it == consts_.end())
      return fail(op, argument, fmt::format("'{}' is computed: this argument must be a constant", ref->name));
    return it->second;
  }

  Expected<std::vector<int64_t>> ints(const Operation& op, std::string_view argument, std::vector<int64_t> fallback,
                                      bool required = false) const {
    auto c = constant(op, argument, required);
    if (!c) return c.error();
    if (!*c) return fallback;
    const auto* v = std::get_if<std::vector<int64_t>>(&(*c)->values);
    if (!v || (*c)->type.dtype == mil::DType::Bool)
      return fail(op, argument, fmt::format("expected integers, found {}", mil::type_text((*c)->type)));
    return *v;
  }

  Expected<std::string> text(const Operation& op, std::string_view argument, std::string fallback) const {
    auto c = constant(op, argument, false);
    if (!c) return c.error();
    if (!*c) return fallback;
    const auto* v = std::get_if<std::vector<std::string>>(&(*c)->values);
    if (!v || v->size() != 1) return fail(op, argument, "expected a string");
    return v->front();
  }

  Expected<std::optional<bool>> flag(const Operation& op, std::string_view argument) const {
    auto c = constant(op, argument, false);
    if (!c) return c.error();
    if (!*c) return std::optional<bool>{};
    const auto* v = std::get_if<std::vector<int64_t>>(&(*c)->values);
    if (!v || v->size() != 1 || (*c)->type.dtype != mil::DType::Bool) return fail(op, argument, "expected a bool");
    return std::optional<bool>{v->front() != 0};
  }

  Expected<std::optional<double>> real(const Operation& op, std::string_view argument) const {
    auto c = constant(op, argument, false);
    if (!c) return c.error();
    if (!*c) return std::optional<double>{};
    const auto* v = std::get_if<std::vector<double>>(&(*c)->values);
    if (!v || v->size() != 1) return fail(op, argument, "expected a floating-point scalar");
    return std::optional<double>{v->front()};
  }

  // A weight tensor: its values in a blob file (checked) or in the text.
  Expected<WeightRef> weight(const Operation& op, std::string_view argument, const Literal& c);
  Expected<uint32_t> weight_file(const Operation& op, std::string_view argument, const std::string& blob_path);

  // Registers a unit for op's result, checking the result type's surface.
  // Registers a unit for op's result. The declared result type must be the
  // MIL shape the op makes, and its surface the one the unit makes.
  Status add_unit(const Operation& op, Layer layer, const Surface& made, const std::vector<int64_t>& shape) {
    if (op.result_type.shape != shape) {
      mil::Type want = op.result_type;
      want.shape = shape;
      return fail(op, "", fmt::format("result '{}' is declared {}, but the op makes {}", op.result,
                                      mil::type_text(op.result_type), mil::type_text(want)));
    }
    auto s = mil_surface(op.result_type);
    if (!s) return fail(op, "", fmt::format("result '{}': {}", op.result, s.error().message));
    if (*s != made)
      return fail(op, "",
                  fmt::format("result '{}' ({}) is laid out as {}, but the op makes {}", op.result,
                              mil::type_text(op.result_type), surface_text(*s), surface_text(made)));
    if (op.result_type.dtype != mil::DType::Fp16)
      return fail(op, "", fmt::format("result '{}' is {}: only fp16 results are supported", op.result,
                                      mil::type_text(op.result_type)));
    if (auto st = claim_unit_name(op, layer.name); !st) return st;
    values_[op.result] = {layer.name, op.result_type, *s};
    net_.units.push_back(std::move(layer));
    return Ok{};
  }

  // Unit names are MIL names, plus "<y>@conv" for a conv's bias split and
  // "<y>@reciprocal" for real_div's first step; MIL
  // names may hold '@', so a clash is possible and refused.
  Status claim_unit_name(const Operation& op, const std::string& name) {
    if (!unit_names_.insert(name).second)
      return fail(op, "", fmt::format("the unit name '{}' is taken (hwx-build names a conv's bias step "
                                      "'<result>@conv' and real_div's reciprocal '<result>@reciprocal'): "
                                      "rename the value",
                                      name));
    return Ok{};
  }

  Layer unit(const Operation& op, const std::string& name, const std::string& type,
             std::vector<std::pair<std::string, std::string>> arguments) const {
    Layer l;
    l.name = name;
    l.type = type;
    l.ref = SourceRef{fmt::format("op '{}'", op.op), "", op.line};
    l.key_arguments = std::move(arguments);
    return l;
  }

  // A MIL axis of a value of `rank` as a surface axis (0 N, 1 C, 2 H, 3 W).
  Expected<int> surface_axis(const Operation& op, std::string_view argument, int64_t axis, size_t rank) const {
    const int64_t r = static_cast<int64_t>(rank);
    if (axis < -r || axis >= r) return fail(op, argument, fmt::format("axis {} is out of range for rank {}", axis, r));
    if (axis < 0) axis += r;
    const int64_t s = axis + 4 - r;
    if (s < 0) return fail(op, argument, fmt::format("axis {} is one of the leading 1s of a rank-{} tensor", axis, r));
    return static_cast<int>(s);
  }

  const mil::Program& program_;
  const MilOptions& opts_;
  Network net_;
  std::map<std::string, const Literal*> consts_;
  std::map<std::string, TensorValue> values_;
  std::map<std::string, uint32_t> weight_index_;  // resolved path -> Network::weights index
  std::set<std::string> unit_names_;
};

}  // namespace ane::mil_lowering
