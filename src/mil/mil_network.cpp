// MIL main function -> Network: one unit per operation (a conv with a bias
// becomes a Conv and a GOC), constants resolved where they are read. The
// planner then decides what compiles, naming the MIL argument through each
// unit's key_arguments. Rules and evidence: docs/mil.md.
#include <algorithm>
#include <bit>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "ane/bytes.h"
#include "ane/fp16.h"
#include "mil_lowering.h"

namespace ane::mil_lowering {
namespace {

// MIL activation -> plist Neuron type: only functions whose MIL definition is
// the table's function exactly.
const std::map<std::string, std::string, std::less<>>& neuron_ops() {
  static const std::map<std::string, std::string, std::less<>> m = {
      {"relu", "ReLU"},   {"sigmoid", "Sigmoid"}, {"tanh", "Tanh"}, {"exp", "Exp"},
      {"exp2", "Exp2"},   {"sqrt", "Sqrt"},       {"sign", "Sign"}, {"relu6", "ReLU6"},
      {"clip", "Clip"},   {"leaky_relu", "LeakyReLU"}, {"gelu", "GELU"},
      {"rsqrt", "Rsqrt"}, {"inverse", "Inv"},     {"silu", "SiLU"}, {"abs", "Abs"},
  };
  return m;
}

// Ops that exist in MIL but have no faithful plist form here, with the reason.
const std::map<std::string, std::string, std::less<>>& refused_ops() {
  static const std::map<std::string, std::string, std::less<>> m = {
      {"log", "natural log: Apple's compiler refuses it for H13 too (records unary_log_c64, _c512: "
              "callback_status=1, no program)"},
      {"matmul", "matmul is not in hwx-build's vocabulary"},
      {"linear", "linear is not in hwx-build's vocabulary"},
      {"softmax", "softmax is several tasks in Apple's output; not in hwx-build's vocabulary"},
      {"layer_norm", "layer_norm is several tasks in Apple's output; not in hwx-build's vocabulary"},
  };
  return m;
}

const std::map<std::string, std::string, std::less<>>& elementwise_ops() {
  static const std::map<std::string, std::string, std::less<>> m = {
      {"add", "Add"}, {"sub", "Sub"}, {"mul", "Mul"}, {"maximum", "Max"}, {"minimum", "Min"}};
  return m;
}

const std::map<std::string, std::string, std::less<>>& reduction_ops() {
  static const std::map<std::string, std::string, std::less<>> m = {
      {"reduce_sum", "Sum"}, {"reduce_mean", "Avg"}, {"reduce_max", "Max"}, {"reduce_min", "Min"}};
  return m;
}

}  // namespace

Status Lowering::lower(const Operation& op) {
  if (op.op == "const") {
    auto it = op.attributes.find("val");
    if (it == op.attributes.end()) return fail(op, "val", "a const needs a val attribute");
    consts_[op.result] = &it->second;
    return Ok{};
  }
  if (op.op == "conv") return lower_conv(op);
  if (auto n = neuron_ops().find(op.op); n != neuron_ops().end()) return lower_neuron(op, n->second);
  if (auto e = elementwise_ops().find(op.op); e != elementwise_ops().end()) return lower_elementwise(op, e->second);
  if (auto r = reduction_ops().find(op.op); r != reduction_ops().end()) return lower_reduction(op, r->second);
  if (op.op == "real_div") return lower_real_div(op);
  if (op.op == "concat") return lower_concat(op);
  if (op.op == "reshape") return lower_reshape(op);
  if (auto r = refused_ops().find(op.op); r != refused_ops().end()) return fail(op, "", "not supported: " + r->second);
  if (op.op.rfind("constexpr_", 0) == 0)
    return fail(op, "", "compressed weights (constexpr_*) are not supported: decompress them to fp16 first");
  return fail(op, "", "not supported (docs/mil.md lists the ops hwx-build lowers)");
}

Status Lowering::lower_neuron(const Operation& op, const std::string& type) {
  auto x = tensor(op, "x");
  if (!x) return x.error();
  Layer l = unit(op, op.result, "Neuron",
                 {{"Bottom", "x"}, {"Params.Alpha", "alpha"}, {"Params.Min", "alpha"}, {"Params.Max", "beta"},
                  {"Params.Type", op.op == "rsqrt" || op.op == "inverse" ? "epsilon" : ""}});
  l.bottoms = {x->unit};
  NeuronParams n;
  n.type = type;
  if (op.op == "clip") {
    auto lo = real(op, "alpha"), hi = real(op, "beta");
    if (!lo) return lo.error();
    if (!hi) return hi.error();
    if (!*lo || !*hi) return fail(op, !*lo ? "alpha" : "beta", "missing (required)");
    n.min = **lo;
    n.max = **hi;
  } else if (op.op == "leaky_relu") {
    auto a = real(op, "alpha");
    if (!a) return a.error();
    n.alpha = a->value_or(0.01);  // MIL's default
  } else if (op.op == "gelu") {
    // The GELU table is byte-equal to Apple's for mode EXACT (record unary_gelu_*).
    auto mode = text(op, "mode", "EXACT");
    if (!mode) return mode.error();
    if (*mode != "EXACT")
      return fail(op, "mode", fmt::format("'{}' is not supported: Apple's GELU table is the EXACT mode's", *mode));
  } else if (op.op == "rsqrt" || op.op == "inverse") {
    // x + epsilon, then the table (record unary_rsqrt_*: AccBias = fp16(epsilon)).
    auto eps = real(op, "epsilon");
    if (!eps) return eps.error();
    n.input_bias = eps->value_or(op.op == "rsqrt" ? 1e-12 : 1e-4);  // MIL's defaults
  }
  l.params = n;
  return add_unit(op, std::move(l), x->surface, x->type.shape);
}

Expected<std::optional<uint16_t>> Lowering::scalar_constant(const Operation& op, std::string_view argument) {
  if (!op.argument(argument)) return fail(op, argument, "missing (required)");
  const Literal* lit = literal(op, argument);
  // A scalar, or a tensor of one value ([1], [1,1,1,1]: it broadcasts as one).
  if (!lit || (!lit->type.shape.empty() && lit->type.element_count() != 1))
    return std::optional<uint16_t>{};  // a tensor: the caller reads it
  if (lit->type.dtype != mil::DType::Fp16 && lit->type.dtype != mil::DType::Fp32)
    return fail(op, argument, fmt::format("expected an fp16 scalar, found {}", mil::type_text(lit->type)));
  double value = 0;
  if (std::holds_alternative<mil::BlobRef>(lit->values)) {
    // In a weight blob: its one value, as fp16 or fp32.
    auto w = weight(op, argument, *lit);
    if (!w) return w.error();
    const ByteView file(net_.weight_contents[w->index]);  // weight() checked the record's bounds
    if (w->type == ElementType::Float16) {
      auto bits = file.u16(w->offset);
      if (!bits) return fail(op, argument, bits.error().message);
      value = fp16_to_float(*bits);
    } else {
      auto bits = file.u32(w->offset);
      if (!bits) return fail(op, argument, bits.error().message);
      value = std::bit_cast<float>(*bits);
    }
  } else {
    const auto* v = std::get_if<std::vector<double>>(&lit->values);
    if (!v || v->size() != 1)
      return fail(op, argument, fmt::format("expected an fp16 scalar, found {}", mil::type_text(lit->type)));
    value = v->front();
  }
  const uint16_t h = double_to_fp16(value);
  if (!(fp16_to_float(h) == value) || std::isinf(value))
    return fail(op, argument, fmt::format("{} is not a finite fp16 value (the planar engine's scalars are fp16)",
                                          value));
  return std::optional<uint16_t>{h};
}

Expected<std::pair<Lowering::TensorValue, Lowering::TensorValue>> Lowering::same_shape_operands(
    const Operation& op) const {
  auto a = tensor(op, "x");
  if (!a) return a.error();
  auto b = tensor(op, "y");
  if (!b) return b.error();
  if (a->type.shape != b->type.shape)
    return fail(op, "y",
                fmt::format("y is {} and x is {}: broadcasting is not supported", mil::type_text(b->type),
                            mil::type_text(a->type)));
  return std::pair{*a, *b};
}

const Literal* Lowering::tensor_constant(const Operation& op, std::string_view argument) const {
  const Literal* lit = literal(op, argument);
  return lit && !lit->type.shape.empty() && lit->type.element_count() != 1 ? lit : nullptr;
}

// Apple's form (records binary_{add,sub,mul,maximum,minimum}_c*_constant_blob,
// H13): the neural engine copies the constant section into L2, the planar
// engine reads it there as channels along W. The records hold one value per
// channel of a [1,C,1,1] operand, from a weight blob; Apple refuses the same
// constant written inline (records binary_*_constant_inline: callback_status 1).
Status Lowering::lower_tensor_constant_elementwise(const Operation& op, const std::string& type, const Literal& c,
                                                   const char* constant_arg) {
  const bool constant_is_x = std::string_view(constant_arg) == "x";
  const char* tensor_arg = constant_is_x ? "y" : "x";
  if (literal(op, tensor_arg)) return fail(op, "x", "both operands are constants: nothing to compute");
  if (constant_is_x && type == "Sub")
    return fail(op, "x", "a tensor constant as x of sub (c - x) is not supported (the records subtract it from x)");
  auto t = tensor(op, tensor_arg);
  if (!t) return t.error();
  // One value per channel: the constant's surface [1,C,1,1], x's [1,C,H,W]
  // (the same shape, or broadcast along H and W).
  auto cs = mil_surface(c.type);
  if (!cs) return fail(op, constant_arg, cs.error().message);
  const Surface per_channel{1, t->surface.c, 1, 1};
  const bool broadcast = c.type.shape != t->type.shape;
  if (*cs != per_channel || t->surface.n != 1 ||
      (broadcast && c.type.shape.size() != t->type.shape.size()))
    return fail(op, constant_arg,
                fmt::format("a tensor constant {} on {} is not supported: it must hold one value per channel of "
                            "{} (surface [1,{},1,1], the same rank), this one's surface is {}",
                            mil::type_text(c.type), mil::type_text(t->type), tensor_arg, t->surface.c,
                            surface_text(*cs)));
  if (!std::holds_alternative<mil::BlobRef>(c.values))
    return fail(op, constant_arg,
                "a tensor constant written in the text is not supported as an operand: Apple's compiler refuses "
                "it for H13 (records binary_*_constant_inline); store it in a weight blob (BLOBFILE)");
  auto w = weight(op, constant_arg, c);
  if (!w) return w.error();
  Layer l = unit(op, op.result, "ElementWise", {{"Bottom", tensor_arg}, {"Params.Type", constant_arg}});
  l.bottoms = {t->unit};
  ElementWiseParams e;
  e.op = type;
  e.constant_tensor = *w;
  l.params = e;
  return add_unit(op, std::move(l), t->surface, t->type.shape);
}

// One ElementWise unit of the other argument and the fp16 scalar c, which
// `constant_arg` names.
Status Lowering::lower_scalar_elementwise(const Operation& op, const std::string& type, uint16_t c,
                                          const char* constant_arg) {
  const char* tensor_arg = std::string_view(constant_arg) == "x" ? "y" : "x";
  auto t = tensor(op, tensor_arg);
  if (!t) return t.error();
  // The constant's argument also answers for Clip's range (maximum, minimum).
  Layer l = unit(op, op.result, "ElementWise",
                 {{"Bottom", tensor_arg}, {"Params.Type", constant_arg}, {"Params.Min", constant_arg},
                  {"Params.Max", constant_arg}});
  l.bottoms = {t->unit};
  ElementWiseParams e;
  e.op = type;
  e.constant = c;
  l.params = e;
  return add_unit(op, std::move(l), t->surface, t->type.shape);
}

Status Lowering::lower_elementwise(const Operation& op, const std::string& type) {
  // A tensor constant of more than one value on either side; scalars below.
  if (const Literal* c = tensor_constant(op, "y")) return lower_tensor_constant_elementwise(op, type, *c, "y");
  if (const Literal* c = tensor_constant(op, "x")) return lower_tensor_constant_elementwise(op, type, *c, "x");
  // A scalar constant: y, or x of a commutative op (all but Sub).
  auto cy = scalar_constant(op, "y");
  if (!cy) return cy.error();
  auto cx = scalar_constant(op, "x");
  if (!cx) return cx.error();
  if (*cx && *cy) return fail(op, "x", "both operands are constants: nothing to compute");
  if (*cx && type == "Sub") return fail(op, "x", "a scalar constant as x of sub (c - x) is not supported");
  if (*cx) return lower_scalar_elementwise(op, type, **cx, "x");
  if (*cy) return lower_scalar_elementwise(op, type, **cy, "y");
  auto ab = same_shape_operands(op);
  if (!ab) return ab.error();
  const auto& [a, b] = *ab;
  Layer l = unit(op, op.result, "ElementWise", {{"Bottom", "x"}});
  l.bottoms = {a.unit, b.unit};
  ElementWiseParams e;
  e.op = type;
  l.params = e;
  return add_unit(op, std::move(l), a.surface, a.type.shape);
}

// real_div(x, y) = x * (1 / y), as Apple compiles it (records
// binary_real_div_*): the reciprocal table on y (no epsilon: MACCfg.OpMode
// 4), its result kept in L2 (Planner::chain_through_l2, macOS 26), then the
// planar engine's product with x. Two units: "<result>@reciprocal", "<result>".
// A scalar divisor is one unit, ElementWise "Div" with the constant: x times
// its reciprocal as a tensor constant (record
// binary_real_div_c64_constant_scalar: Apple writes the two tasks of mul by a
// blob constant, 1/z once per channel, even for a scalar z). A divisor of
// several values is refused, as Apple's compiler refuses it.
Status Lowering::lower_real_div(const Operation& op) {
  if (literal(op, "x")) {
    if (literal(op, "y")) return fail(op, "x", "both operands are constants: nothing to compute");
    return fail(op, "x", "a constant dividend (c / y) is not supported (no record shows Apple's form)");
  }
  if (tensor_constant(op, "y"))
    return fail(op, "y",
                "a divisor of several values (a tensor constant) is not supported: Apple's compiler refuses it for "
                "H13 (records binary_real_div_c64_constant_blob: callback_status 22, and _inline: 1); a scalar "
                "divisor compiles");
  auto z = scalar_constant(op, "y");
  if (!z) return z.error();
  if (*z) return lower_scalar_elementwise(op, "Div", **z, "y");
  auto ab = same_shape_operands(op);
  if (!ab) return ab.error();
  const auto& [a, b] = *ab;
  const std::string reciprocal = op.result + "@reciprocal";
  Layer r = unit(op, reciprocal, "Neuron", {{"Bottom", "y"}, {"Params.Type", ""}});
  r.bottoms = {b.unit};
  NeuronParams n;
  n.type = "Inv";
  r.params = n;
  if (auto st = claim_unit_name(op, reciprocal); !st) return st;
  net_.units.push_back(std::move(r));
  Layer l = unit(op, op.result, "ElementWise", {{"Bottom", "x"}});
  l.bottoms = {a.unit, reciprocal};
  ElementWiseParams e;
  e.op = "Mul";
  l.params = e;
  return add_unit(op, std::move(l), a.surface, a.type.shape);
}

Status Lowering::lower_concat(const Operation& op) {
  const mil::Argument* a = op.argument("values");
  if (!a) return fail(op, "values", "missing (required)");
  const auto* tuple = std::get_if<mil::NameTuple>(a);
  if (!tuple || tuple->names.empty()) return fail(op, "values", "expected a tuple of tensor names");
  auto inter = flag(op, "interleave");
  if (!inter) return inter.error();
  if (inter->value_or(false)) return fail(op, "interleave", "interleaved concatenation is not supported");
  Layer l = unit(op, op.result, "Concat", {{"Bottom", "values"}, {"Params.Dimension", "axis"}});
  Surface made{};
  std::optional<int> axis;
  std::vector<int64_t> shape;
  size_t mil_axis = 0;
  for (const auto& name : tuple->names) {
    auto v = tensor_named(op, "values", name);
    if (!v) return v.error();
    if (!axis) {
      auto ax = ints(op, "axis", {}, true);
      if (!ax) return ax.error();
      if (ax->size() != 1) return fail(op, "axis", "expected one integer");
      auto s = surface_axis(op, "axis", ax->front(), v->type.shape.size());
      if (!s) return s.error();
      if (*s != 1) return fail(op, "axis", "only concatenation along channels is supported");
      axis = *s;
      made = v->surface;
      made.c = 0;
      shape = v->type.shape;
      mil_axis = static_cast<size_t>(*s) + shape.size() - 4;  // rank >= 4 - s here
      shape[mil_axis] = 0;
    }
    if (v->type.shape.size() != shape.size())
      return fail(op, "values", fmt::format("'{}' is {}: the operands' ranks differ", name, mil::type_text(v->type)));
    shape[mil_axis] += v->type.shape[mil_axis];
    if (v->surface.n != made.n || v->surface.h != made.h || v->surface.w != made.w)
      return fail(op, "values", fmt::format("'{}' is {}: the operands differ outside the concatenated axis", name,
                                            mil::type_text(v->type)));
    made.c += v->surface.c;
    l.bottoms.push_back(v->unit);
  }
  l.params = ConcatParams{};
  return add_unit(op, std::move(l), made, shape);
}

Status Lowering::lower_reshape(const Operation& op) {
  auto x = tensor(op, "x");
  if (!x) return x.error();
  auto shape = ints(op, "shape", {}, true);
  if (!shape) return shape.error();
  // One -1 takes what the others leave (MIL's rule); 0 and other negatives are refused.
  int64_t known = 1;
  int inferred = -1;
  for (size_t i = 0; i < shape->size(); ++i) {
    const int64_t d = (*shape)[i];
    if (d == -1 && inferred < 0) {
      inferred = static_cast<int>(i);
    } else if (d < 1 || d > 0x7fffffff) {
      return fail(op, "shape", fmt::format("dimension {} is not supported (positive sizes and one -1 are)", d));
    } else {
      known *= d;
    }
    if (known > (int64_t{1} << 40)) return fail(op, "shape", "the shape is too large");
  }
  const auto count = static_cast<int64_t>(x->type.element_count());
  if (inferred >= 0) {
    if (count % known != 0) return fail(op, "shape", fmt::format("{} elements do not divide by {}", count, known));
    (*shape)[static_cast<size_t>(inferred)] = count / known;
  } else if (known != count) {
    return fail(op, "shape", fmt::format("{} elements where x has {}", known, count));
  }
  mil::Type to = op.result_type;
  to.shape = *shape;
  auto s = mil_surface(to);
  if (!s) return fail(op, "shape", s.error().message);
  Layer l = unit(op, op.result, "Reshape", {{"Bottom", "x"}, {"Params.Reshaped*", "shape"}});
  l.bottoms = {x->unit};
  ReshapeParams r;
  r.batch = s->n;
  r.channels = s->c;
  r.height = s->h;
  r.width = s->w;
  l.params = r;
  return add_unit(op, std::move(l), *s, *shape);
}

Status Lowering::lower_reduction(const Operation& op, const std::string& type) {
  auto x = tensor(op, "x");
  if (!x) return x.error();
  auto axes = ints(op, "axes", {}, false);
  if (!axes) return axes.error();
  auto keep = flag(op, "keep_dims");
  if (!keep) return keep.error();
  if (axes->empty()) return fail(op, "axes", "a reduction over every axis is not supported");
  Surface made = x->surface;
  ReductionParams r;
  r.op = type;
  static const char* kNames[] = {"Batch", "Channel", "Height", "Width"};
  const size_t rank = x->type.shape.size();
  std::vector<bool> reduced(rank, false);
  for (int64_t a : *axes) {
    auto s = surface_axis(op, "axes", a, rank);
    if (!s) return s.error();
    const size_t i = static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(rank) : a);
    if (reduced[i]) return fail(op, "axes", fmt::format("axis {} is named twice", a));
    reduced[i] = true;
    r.dimensions.push_back(kNames[*s]);
    (*s == 0 ? made.n : *s == 1 ? made.c : *s == 2 ? made.h : made.w) = 1;
  }
  std::vector<int64_t> shape;  // MIL's result: reduced axes 1, or gone
  for (size_t i = 0; i < rank; ++i) {
    if (!reduced[i]) {
      shape.push_back(x->type.shape[i]);
    } else if (keep->value_or(false)) {  // MIL's default is false
      shape.push_back(1);
    }
  }
  // keep_dims false moves the kept axes (MIL's rank drops): the surface of
  // the declared result then has to be the same as with them kept.
  Layer l = unit(op, op.result, "Reduction", {{"Bottom", "x"}, {"Params.Dimension", "axes"}, {"Params.Type", ""}});
  l.bottoms = {x->unit};
  l.params = r;
  if (!keep->value_or(false) && op.result_type.shape == shape) {
    auto declared = mil_surface(op.result_type);
    // C values of 1x1 planes as one row: the engine writes its channels
    // along W (records reduce_probe_*_ax2_3_1x64x8x8_flat).
    const Surface row{made.n, 1, 1, made.c};
    if (declared && *declared == row && made.h == 1 && made.w == 1 && made.c > 1) {
      std::get<ReductionParams>(l.params).channels_along_width = true;
      made = row;
    } else if (declared && *declared != made) {
      return fail(op, "keep_dims",
                  fmt::format("false lays the result out as {} where the reduction makes {}: not supported",
                              surface_text(*declared), surface_text(made)));
    }
  }
  return add_unit(op, std::move(l), made, shape);
}

}  // namespace ane::mil_lowering

namespace ane {

Expected<Network> network_of_mil(const mil::Program& program, const MilOptions& opts) {
  return mil_lowering::Lowering(program, opts).run();
}

}  // namespace ane
