// Network -> Plan, part 2: one rule per layer type. Each checks that the
// unit lies inside what Apple-compiled files pin down (docs/compiler.md),
// creates the unit's result tensor and appends its task(s).
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "ane/fp16.h"
#include "ane/neuron_tables.h"
#include "planner.h"

namespace ane::compiler {

Status Planner::plan_unit(const Layer& l) {
  UnitLowering ul{l.name, l.type, "", {}, {}};
  Status st = Ok{};
  if (l.type == "Conv") {
    const Layer* goc = fused_.count(l.name) ? fused_.at(l.name) : nullptr;
    st = plan_conv(l, goc, ul);
  } else if (l.type == "GOC") {
    st = fail(l.at("Bottom"),
              "unsupported: a GOC is only known fused into the Conv it directly follows (with BiasScaleGroupData, "
              "and that Conv feeding nothing else)");
    const auto& g = std::get<GocParams>(l.params);
    if (!g.bias)
      st = fail(l.at(g.bias_scalar ? "Params.BiasScalar" : "Params.ScaleScalar"),
                "unsupported: the scalar GOC form has no Apple-compiled sample");
  } else if (l.type == "Neuron") {
    st = plan_neuron(l, ul);
  } else if (l.type == "Concat") {
    st = plan_concat(l, ul);
  } else if (l.type == "Reshape") {
    st = plan_reshape(l, ul);
  } else if (l.type == "ScaledElementWise" || l.type == "ElementWise") {
    st = plan_elementwise(l, ul);
  } else if (l.type == "Reduction") {
    st = plan_reduction(l, ul);
  } else {
    // Apple's vocabulary has these, but no Apple-compiled file shows their lowering.
    const bool apple_type = l.type == "Broadcast" || l.type == "InputView";
    st = fail(l.at("Type"), fmt::format("unsupported layer type '{}'{} (supported: Conv, GOC fused into a Conv, "
                                        "Neuron, Concat, Reshape, ScaledElementWise, ElementWise, Reduction)",
                                        l.type, apple_type ? ": no Apple-compiled file shows its lowering" : ""));
  }
  if (!st) return st;
  plan_.lowering.push_back(std::move(ul));
  // A GOC fused into this Conv has no task of its own; --explain still lists it.
  if (l.type == "Conv" && fused_.count(l.name)) {
    const Layer* goc = fused_.at(l.name);
    plan_.lowering.push_back(
        {goc->name, goc->type, fmt::format("fused into Conv '{}' (bias in its kernel lanes)", l.name), {}, {}});
  }
  if (l.type == "Conv" && fused_relu_.count(l.name)) {
    const Layer* relu = fused_relu_.at(l.name);
    plan_.lowering.push_back({relu->name, relu->type,
                              fmt::format("fused into Conv '{}' (NE.MACCfg.NonlinearMode 1)", l.name),
                              {},
                              {"conv + relu in one task follows macOS 26 (a mil-hwx-compiler record); v4.2.1 has no "
                               "sample of the pair"}});
  }
  return Ok{};
}

Expected<int> Planner::single_source(const Layer& l) {
  if (l.bottoms.size() != 1)
    return fail(l.at("Bottom"), fmt::format("{} reads one tensor, Bottom names {}", l.type, l.bottoms.size()));
  auto it = tensor_of_.find(l.bottoms[0]);
  if (it == tensor_of_.end())  // a fused Conv's own result is not materialised
    return fail(l.at("Bottom"), fmt::format("'{}' has no tensor of its own", l.bottoms[0]));
  return it->second;
}

Status Planner::check_channels(const Layer& l, uint32_t c) {
  if (l.output_channels && *l.output_channels != c)
    return fail(l.at("OutputChannels"),
                fmt::format("{} disagrees with the {} channels this {} produces", *l.output_channels, c, l.type));
  return Ok{};
}

uint32_t Planner::add_task(TaskPlan t, UnitLowering& ul) {
  plan_.tasks.push_back(std::move(t));
  const auto index = static_cast<uint32_t>(plan_.tasks.size() - 1);
  ul.tasks.push_back(index);
  return index;
}

Status Planner::plan_conv(const Layer& l, const Layer* goc, UnitLowering& ul) {
  const auto& p = std::get<ConvParams>(l.params);
  auto src = single_source(l);
  if (!src) return src.error();
  // The window Apple-compiled records show: 1x1 or 3x3 kernels, a 1x9
  // column at stride 1, stride 1 or 2, leading padding below the kernel
  // size (docs/compiler.md).
  if (!known_conv_window(p.kernel_width, p.kernel_height, 1))
    return fail(l.at(p.kernel_width != 1 ? "Params.KernelWidth" : "Params.KernelHeight"),
                fmt::format("unsupported kernel {}x{} (known: {})", p.kernel_width, p.kernel_height,
                            kKnownConvWindows));
  if (p.kernel_depth != 1)
    return fail(l.at("Params.KernelDepth"), fmt::format("unsupported kernel depth {}", p.kernel_depth));
  if (p.step_x != p.step_y || p.step_x > 2)
    return fail(l.at("Params.Step"),
                fmt::format("unsupported step [{}, {}] (known: [1, 1] and [2, 2])", p.step_x, p.step_y));
  if (p.dilation_x != 1 || p.dilation_y != 1)
    return fail(l.at(p.dilation_x != 1 ? "Params.KernelDilationX" : "Params.KernelDilationY"),
                "unsupported dilation (only 1 is known)");
  if (p.padding_mode != "Zero")
    return fail(l.at("Params.PaddingMode"),
                fmt::format("unsupported padding mode '{}' (only Zero is known)", p.padding_mode));
  const uint32_t kw = p.kernel_width, kh = p.kernel_height, s = p.step_x;
  for (auto [key, v, k] : {std::tuple{"Params.PadTop", p.pad_top, kh}, {"Params.PadLeft", p.pad_left, kw}})
    if (v >= k)
      return fail(l.at(key), fmt::format("unsupported padding {} before a {}x{} kernel (the register holds less "
                                         "than the kernel size)",
                                         v, kw, kh));
  if (p.kernel_mode != "Dense")
    return fail(l.at("Params.KernelMode"), fmt::format("unsupported kernel mode '{}' (only Dense)", p.kernel_mode));
  if (p.kernel_group_reuse) return fail(l.at("Params.KernelGroupReuse"), "unsupported: true (only false is known)");
  if (p.kernel.type != ElementType::Float16 && p.kernel.type != ElementType::Float32)
    return fail(l.at("Params.KernelType"), fmt::format("unsupported kernel type {} (Float16 and Float32 are known)",
                                                       element_type_plist_name(p.kernel.type)));
  if (!l.output_channels) return fail(l.at("OutputChannels"), "missing (required for a Conv)");
  const Tensor in = plan_.tensors[*src];
  const uint32_t cin = in.c, cout = *l.output_channels;
  // Output size: floor((in + pads - k) / s) + 1. The task holds only the
  // leading pads; the trailing ones it implies must stay below the kernel.
  const int64_t span_h = int64_t{in.h} + p.pad_top + p.pad_bottom - kh, span_w = int64_t{in.w} + p.pad_left + p.pad_right - kw;
  if (span_h < 0 || span_w < 0)
    return fail(l.at(span_h < 0 ? "Params.KernelHeight" : "Params.KernelWidth"),
                fmt::format("a {}x{} kernel does not fit the {}x{} input and its padding", kw, kh, in.w, in.h));
  const uint32_t hout = static_cast<uint32_t>(span_h / s + 1), wout = static_cast<uint32_t>(span_w / s + 1);
  for (auto [key, implied, k] : {std::tuple{"Params.PadBot", (int64_t{hout} - 1) * s + kh - in.h - p.pad_top, kh},
                                 {"Params.PadRight", (int64_t{wout} - 1) * s + kw - in.w - p.pad_left, kw}})
    if (implied >= int64_t{k})
      return fail(l.at(key), fmt::format("unsupported: {} rows of padding after the input (known: less than the "
                                         "kernel size)",
                                         implied));
  const uint32_t groups = p.num_groups;
  if (cin % groups != 0 || cout % groups != 0)
    return fail(l.at("NumGroups"),
                fmt::format("{} groups do not divide {} input and {} output channels", groups, cin, cout));
  const bool depthwise = groups > 1 && groups == cin && groups == cout;

  TaskPlan t;
  t.kind = TaskKind::Conv;
  t.unit = l.name;
  t.src = *src;
  t.cin = cin;
  t.cout = cout;
  t.kw = kw;
  t.kh = kh;
  t.stride = s;
  t.pad_top = p.pad_top;
  t.pad_left = p.pad_left;
  t.depthwise = depthwise;
  t.groups = depthwise ? 1 : groups;
  t.sparse = s == 2;  // every stride-2 record uses the zero-skipping kernel form
  ConvKernelShape shape;
  shape.groups = t.groups;
  shape.cin = t.group_cin();
  shape.cout = t.group_cout();
  shape.kh = kh;
  shape.kw = kw;
  shape.depthwise = depthwise;
  shape.sparse = t.sparse;
  shape.small_source = wout <= 8 && hout <= 8;  // as lower.cpp writes Common.Cfg.SmallSourceMode
  shape.bias = goc != nullptr;
  shape.ocg = compiler_conv_ocg(shape.cout, depthwise, hout, wout);
  if (groups > 1 && !depthwise && shape.cout != (16u << shape.ocg))
    return fail(l.at("NumGroups"),
                fmt::format("unsupported: {} output channels per group (grouped records hold 16 x 2^n per group, "
                            "n <= {})",
                            shape.cout, std::max(in.h, in.w) <= 8 ? 5 : 4));
  // Shapes whose kernel layout is not known are refused before any weight is read.
  if (Status known = check_conv_kernel(shape); !known)
    return fail(l.at(t.sparse ? "Params.Step" : "OutputChannels"), known.error().message);
  const uint64_t weight_count = uint64_t{cout} * (cin / groups) * kh * kw;
  auto weights =
      weights_.read(l.at("Params.KernelIndex"), l.at("Params.KernelOffset"), p.kernel, weight_count, "kernel");
  if (!weights) return weights.error();
  std::vector<uint16_t> bias;
  if (goc) {
    const auto& g = std::get<GocParams>(goc->params);
    if (g.bias_count != cout)
      return fail(goc->at("Params.BiasScaleGroupData.BiasCount"),
                  fmt::format("{} biases for the {} output channels of '{}'", g.bias_count, cout, l.name));
    if (g.bias->type != ElementType::Float16 && g.bias->type != ElementType::Float32)
      return fail(goc->at("Params.BiasScaleGroupData.BiasType"),
                  fmt::format("unsupported bias type {}", element_type_plist_name(g.bias->type)));
    if (g.bias_scalar || g.scale_scalar)
      return fail(goc->at(g.bias_scalar ? "Params.BiasScalar" : "Params.ScaleScalar"),
                  "unsupported: scalar bias/scale together with BiasScaleGroupData");
    auto b = weights_.read(goc->at("Params.BiasScaleGroupData.BiasIndex"),
                           goc->at("Params.BiasScaleGroupData.BiasOffset"), *g.bias, cout, "bias");
    if (!b) return b.error();
    bias = std::move(b).value();
    if (auto c = check_channels(*goc, cout); !c) return c;
    t.bias = true;
  }
  shape.bias = t.bias;
  auto layout = layout_conv_kernel(shape, *weights, bias);
  if (!layout) return fail(l.at(t.sparse ? "Params.Step" : "OutputChannels"), layout.error().message);
  t.kernel = std::move(layout->bytes);
  t.lane_offsets = std::move(layout->lane_offsets);
  t.lane_sizes = std::move(layout->lane_sizes);
  t.ocg_size = layout->ocg_size;

  const Layer* relu = fused_relu_.count(l.name) ? fused_relu_.at(l.name) : nullptr;
  if (relu) t.nonlinear = 1;
  const Layer& result_unit = relu ? *relu : goc ? *goc : l;
  auto dst = result_tensor(result_unit, cout, hout, wout);
  if (!dst) return dst.error();
  if (goc || relu) tensor_of_[l.name] = *dst;  // nothing else reads the fused Conv
  if (goc && relu) tensor_of_[goc->name] = *dst;
  t.dst = *dst;

  ul.rule = fmt::format("{}x{} convolution on the neural engine{}{}{}, {} -> {} channels, {} kernel lane{} of {:#x} "
                        "bytes",
                        kw, kh, s > 1 ? fmt::format(", stride {}", s) : "",
                        p.pad_top || p.pad_left ? fmt::format(", leading padding {},{}", p.pad_top, p.pad_left) : "",
                        depthwise ? ", depthwise" : groups > 1 ? fmt::format(", {} groups", groups) : "", cin, cout,
                        t.lane_sizes.size(), t.lane_sizes.size() == 1 ? "" : "s", t.lane_sizes[0]);
  if (t.sparse) ul.notes.push_back("stride 2: the kernel in the zero-skipping form (NE.KernelCfg.SparseFmt)");
  if (goc) {
    ul.rule += fmt::format(", with the per-channel bias of GOC '{}' fused in", goc->name);
  }
  if (cout >= 4 && cout <= 15)
    ul.notes.push_back("ENE = 1 + ceil(log2(lanes)) for 4..15 output channels is inferred (no sample)");
  if (p.kernel.type == ElementType::Float32) ul.notes.push_back("Float32 weights rounded to fp16, nearest-even");
  return add_task_in_pieces(std::move(t), ul, l);
}

Status Planner::plan_neuron(const Layer& l, UnitLowering& ul) {
  const auto& p = std::get<NeuronParams>(l.params);
  auto src = single_source(l);
  if (!src) return src.error();
  TaskPlan t;
  t.kind = TaskKind::Pass;
  t.unit = l.name;
  t.src = *src;
  if (p.alpha && p.type != "LeakyReLU")
    return fail(l.at("Params.Alpha"), fmt::format("Alpha applies to LeakyReLU only, not to '{}'", p.type));
  if ((p.min || p.max) && p.type != "Clip")
    return fail(l.at(p.min ? "Params.Min" : "Params.Max"),
                fmt::format("Min and Max apply to Clip only, not to '{}'", p.type));
  NeuronArgs args;
  if (p.alpha) args.alpha = *p.alpha;
  if (p.min) args.min = *p.min;
  if (p.max) args.max = *p.max;
  if (!(args.min < args.max))
    return fail(l.at("Params.Min"), fmt::format("Clip needs Min < Max, got {} and {}", args.min, args.max));
  if (p.input_bias) {
    // Apple's rsqrt(x, epsilon) record: AccBias = fp16(epsilon), MACCfg.OpMode
    // 0; eiln's inv kernel: the same with Core ML's inverse epsilon 1e-4.
    if (p.type != "Rsqrt" && p.type != "Inv")
      return fail(l.at("Params.Type"), fmt::format("an input epsilon applies to Rsqrt and Inv only, not to '{}'", p.type));
    const uint16_t bits = float_to_fp16(static_cast<float>(*p.input_bias));
    if (!std::isfinite(*p.input_bias) || fp16_is_inf(bits) || *p.input_bias < 0)
      return fail(l.at("Params.Type"), fmt::format("epsilon {} is not a non-negative finite fp16 value", *p.input_bias));
    t.acc_bias = bits;
  }
  if (p.type == "Abs") {
    // |x|: a one-source planar-engine task, y = |1.0 x + 0| with PE.Cfg.Cond
    // (records unary_abs_c64, _c512; eiln's abs kernel).
    t.kind = TaskKind::PlanarAffine;
    t.absolute = true;
    const Tensor in = plan_.tensors[*src];
    if (auto c = check_channels(l, in.c); !c) return c;
    auto dst = result_tensor(l, in.c, in.h, in.w);
    if (!dst) return dst.error();
    t.dst = *dst;
    ul.rule = "Abs: the planar engine's one-source task y = |x| (PE.Cfg.Cond)";
    return add_task_in_pieces(std::move(t), ul, l);
  }
  if (p.type == "ReLU") {
    t.nonlinear = 1;
    ul.rule = "ReLU: neural-engine pass-through with NonlinearMode 1";
  } else if (auto table = neuron_table(p.type, args)) {
    t.nonlinear = 2;
    t.post_scale = table->post_scale;
    t.clears_debug_event_13 = table->clears_debug_event_13;
    for (uint16_t s : table->slots) {
      t.kernel.push_back(static_cast<uint8_t>(s));
      t.kernel.push_back(static_cast<uint8_t>(s >> 8));
    }
    t.lane_offsets = {0};
    t.lane_sizes = {t.kernel.size()};
    if (plan_.macos26()) {
      // macOS 26 (records unary_*): the lane of every engine the task uses
      // reads the table (16 from 16 channels, 1 for one: unary_sqrt_c1), and
      // the section holds as many of its sizes (the table, then zeros).
      const uint32_t lanes = std::bit_ceil(std::min(plan_.tensors[*src].c, 16u));
      t.lane_offsets.assign(lanes, 0);
      t.lane_sizes.assign(lanes, t.kernel.size());
      t.kernel.resize(lanes * t.kernel.size(), 0);
    }
    t.kernel_is_table = true;
    ul.rule = fmt::format("{}: neural-engine pass-through with NonlinearMode 2, {} in kernel lane 0: {}", p.type,
                          table->generated ? "a lookup table generated from the function" : "Apple's lookup table",
                          table->rule);
    if (table->post_scale != 0x3c00)
      ul.rule += fmt::format("; PostScale {:#06x} scales the input first", table->post_scale);
    if (t.acc_bias) ul.rule += fmt::format("; AccBias {:#06x} (the epsilon) is added first", *t.acc_bias);
    ul.notes.push_back(table->evidence.rfind("none", 0) == 0
                           ? fmt::format("{} table: {}", p.type, table->evidence)
                           : fmt::format("{} table: byte-equal to Apple's ({})", p.type, table->evidence));
  } else {
    std::string known = "Abs, ReLU";
    for (const auto& k : neuron_table_types()) known += ", " + k;
    return fail(l.at("Params.Type"), fmt::format("unsupported neuron type '{}' (known: {})", p.type, known));
  }
  const Tensor in = plan_.tensors[*src];
  if (auto c = check_channels(l, in.c); !c) return c;
  auto dst = result_tensor(l, in.c, in.h, in.w);
  if (!dst) return dst.error();
  t.dst = *dst;
  add_pass_notes(plan_.tensors[*dst], ul);
  return add_task_in_pieces(std::move(t), ul, l);
}

void Planner::add_pass_notes(const Tensor& t, UnitLowering& ul) {
  if (t.h > 1)
    ul.notes.push_back(fmt::format("{} rows: L2 holds a 128-byte strip of each row for all {} rows (eiln's kernels "
                                   "at 2560x1600; the strip width at other shapes is inferred)",
                                   t.h, t.h));
  if (t.w > 16 && t.w < 77)
    ul.notes.push_back(
        fmt::format("Common.Cfg.ShMin = 0 for width {} follows the 'width <= 16' rule; samples "
                    "only pin widths 1, 16 and 77",
                    t.w));
}

Status Planner::plan_concat(const Layer& l, UnitLowering& ul) {
  const auto& p = std::get<ConcatParams>(l.params);
  if (p.dimension != "Channel")
    return fail(l.at("Params.Dimension"), fmt::format("unsupported dimension '{}' (only Channel)", p.dimension));
  std::vector<int> srcs;
  uint32_t c = 0;
  for (const auto& b : l.bottoms) {
    auto it = tensor_of_.find(b);
    if (it == tensor_of_.end()) return fail(l.at("Bottom"), fmt::format("'{}' has no tensor of its own", b));
    const Tensor& s = plan_.tensors[it->second];
    const Tensor& first = plan_.tensors[srcs.empty() ? it->second : srcs[0]];
    if (s.w != first.w || s.h != first.h)
      return fail(l.at("Bottom"), fmt::format("'{}' is {}x{} but '{}' is {}x{}: channel concat needs equal H and W", b,
                                              s.h, s.w, l.bottoms[0], first.h, first.w));
    srcs.push_back(it->second);
    c += s.c;
  }
  if (c > 0x1ffff) return fail(l.at("Bottom"), fmt::format("{} channels exceed the 17-bit channel fields", c));
  if (auto st = check_channels(l, c); !st) return st;
  const Tensor& first = plan_.tensors[srcs[0]];
  auto dst = result_tensor(l, c, first.h, first.w);
  if (!dst) return dst.error();
  uint32_t offset = 0;
  for (size_t i = 0; i < srcs.size(); ++i) {
    TaskPlan t;
    t.kind = TaskKind::Pass;
    t.unit = l.name;
    t.src = srcs[i];
    t.dst = *dst;
    t.dst_channel_offset = offset;
    t.compiler_copy = true;
    t.concat_last_piece = i + 1 == srcs.size();
    offset += plan_.tensors[srcs[i]].c;
    add_task(std::move(t), ul);
  }
  ul.rule = fmt::format("channel concat: one neural-engine copy task per Bottom ({}), each at its channel offset",
                        srcs.size());
  add_pass_notes(plan_.tensors[*dst], ul);
  return Ok{};
}

Status Planner::plan_reshape(const Layer& l, UnitLowering& ul) {
  const auto& p = std::get<ReshapeParams>(l.params);
  auto src = single_source(l);
  if (!src) return src.error();
  const Tensor in = plan_.tensors[*src];
  if (p.batch != 1 || p.depth != 1 || p.channels != in.c || p.height != in.h || p.width != in.w)
    return fail(l.at("Params.ReshapedChannel"),
                fmt::format("unsupported reshape of {}x{}x{} (C x H x W) to {}x{}x{} (batch {}, depth {}): only a "
                            "reshape that keeps the shape is known",
                            in.c, in.h, in.w, p.channels, p.height, p.width, p.batch, p.depth));
  return plan_copy(l, *src, "reshape that keeps the shape: one neural-engine copy task", ul);
}

// One neural-engine copy of tensor `src` into the unit's result (Reshape;
// a reduction over one channel): DebugLogEvents 0x68, a compiler copy.
Status Planner::plan_copy(const Layer& l, int src, const std::string& rule, UnitLowering& ul) {
  const Tensor in = plan_.tensors[src];
  if (auto c = check_channels(l, in.c); !c) return c;
  auto dst = result_tensor(l, in.c, in.h, in.w);
  if (!dst) return dst.error();
  TaskPlan t;
  t.kind = TaskKind::Pass;
  t.unit = l.name;
  t.src = src;
  t.dst = *dst;
  t.compiler_copy = true;
  ul.rule = rule;
  add_pass_notes(plan_.tensors[*dst], ul);
  add_task(std::move(t), ul);
  return Ok{};
}

// x op c for an fp16 scalar c (MIL's element-wise ops with a constant). Add,
// Sub and Mul: one planar-engine task, y = Scale x + Bias (records
// binary_{add,sub,mul}_c*_constant_scalar, macOS 26: PE.Cfg 0, Bias c or -c,
// Scale 1; Scale c, Bias 0). Max and Min: a Clip table task.
Status Planner::plan_scalar_elementwise(const Layer& l, const ElementWiseParams& p, UnitLowering& ul) {
  if (p.op == "Div") return plan_tensor_constant(l, p, ul);  // Apple's form: its reciprocal once per channel
  const uint16_t c = *p.constant;
  TaskPlan t;
  t.unit = l.name;
  t.kind = TaskKind::PlanarAffine;
  if (p.op == "Add") {
    t.pe_bias = c;
  } else if (p.op == "Sub") {
    t.pe_bias = static_cast<uint16_t>(c ^ 0x8000);  // -c, exact
  } else if (p.op == "Mul") {
    t.scale = c;
  } else if (p.op == "Max" || p.op == "Min") {
    // max(x, c) = clip(x, c, inf), min(x, c) = clip(x, -inf, c): one table
    // task (records binary_{maximum,minimum}_c*_constant_scalar).
    constexpr double kInf = std::numeric_limits<double>::infinity();
    Layer clip = l;
    NeuronParams n;
    n.type = "Clip";
    n.min = p.op == "Max" ? fp16_to_float(c) : -kInf;
    n.max = p.op == "Max" ? kInf : fp16_to_float(c);
    clip.params = n;
    return plan_neuron(clip, ul);
  } else {
    return fail(l.at("Params.Type"),
                fmt::format("unsupported element-wise operation '{}' with a scalar (known: Add, Max, Min, Mul, Sub)",
                            p.op));
  }
  if (l.bottoms.size() != 1)
    return fail(l.at("Bottom"), fmt::format("{} with a scalar needs one input, Bottom names {}", p.op, l.bottoms.size()));
  auto it = tensor_of_.find(l.bottoms[0]);
  if (it == tensor_of_.end()) return fail(l.at("Bottom"), fmt::format("'{}' has no tensor of its own", l.bottoms[0]));
  t.src = it->second;
  const Tensor& a = plan_.tensors[t.src];
  if (auto ch = check_channels(l, a.c); !ch) return ch;
  auto dst = result_tensor(l, a.c, a.h, a.w);
  if (!dst) return dst.error();
  t.dst = *dst;
  ul.rule = fmt::format("{} of '{}' and the scalar {} on the planar engine: y = {} x + {}", p.op, l.bottoms[0],
                        fp16_to_float(c), fp16_to_float(t.scale), fp16_to_float(t.pe_bias));
  return add_task_in_pieces(std::move(t), ul, l);
}

Status Planner::plan_elementwise(const Layer& l, UnitLowering& ul) {
  const auto& p = std::get<ElementWiseParams>(l.params);
  if (p.constant) return plan_scalar_elementwise(l, p, ul);
  if (p.constant_tensor) return plan_tensor_constant(l, p, ul);
  TaskPlan t;
  t.unit = l.name;
  bool swap = false;  // Sub reads its second Bottom first
  if (p.op == "Add") {
    t.kind = TaskKind::PlanarAdd;
  } else if (p.op == "Mul") {
    t.kind = TaskKind::PlanarMul;
    ul.notes.push_back("Mul = PE.Cfg.OpMode 1 is taken from later compilers' multiply programs");
  } else if (p.op == "Max" || p.op == "Min") {
    t.kind = p.op == "Max" ? TaskKind::PlanarMax : TaskKind::PlanarMin;
    ul.notes.push_back(p.op == "Max" ? "Max = PE.Cfg.OpMode 2 as eiln's max kernel"
                                     : "Min = PE.Cfg.OpMode 3 as mil-hwx-compiler's minimum records");
  } else if (p.op == "Sub" && plan_.macos26()) {
    // a - b in one step: PE.Cfg.SecSrc 3 subtracts the second source
    // (mil-hwx-compiler's sub records, macOS 26).
    t.kind = TaskKind::PlanarAdd;
    t.subtract_second = true;
    ul.notes.push_back("Sub = first Bottom - second Bottom: PE.Cfg.SecSrc 3, as the macOS 26 sub records");
  } else if (p.op == "Sub") {
    // a - b as eiln's sub kernel computes it: b read first, scaled by
    // PreScale -1, plus a (the second source).
    t.kind = TaskKind::PlanarAdd;
    t.pre_scale = 0xbc00;
    swap = true;
    ul.notes.push_back("Sub = (-1 x second Bottom) + first Bottom: PE.PreScale -1 on the first source, as eiln's sub");
  } else {
    return fail(l.at("Params.Type"),
                fmt::format("unsupported element-wise operation '{}' (known: Add, Max, Min, Mul, Sub)", p.op));
  }
  if (l.bottoms.size() != 2)
    return fail(l.at("Bottom"), fmt::format("{} needs exactly two inputs, Bottom names {}", l.type, l.bottoms.size()));
  int srcs[2];
  for (int i = 0; i < 2; ++i) {
    auto it = tensor_of_.find(l.bottoms[i]);
    if (it == tensor_of_.end()) return fail(l.at("Bottom"), fmt::format("'{}' has no tensor of its own", l.bottoms[i]));
    srcs[i] = it->second;
  }
  const Tensor& a = plan_.tensors[srcs[0]];
  const Tensor& b = plan_.tensors[srcs[1]];
  if (a.c != b.c || a.h != b.h || a.w != b.w)
    return fail(l.at("Bottom"),
                fmt::format("unsupported: operands of different shapes ({}x{}x{} and {}x{}x{}, C x H x W); "
                            "broadcasting is not known",
                            a.c, a.h, a.w, b.c, b.h, b.w));
  t.src = srcs[swap ? 1 : 0];
  t.src2 = srcs[swap ? 0 : 1];
  t.scale = p.scale;
  if (p.has_scale && p.scale != kFp16OneBits)
    ul.notes.push_back(
        "Scale goes to PE.BiasScale.Scale (bits 16-31 of 0x8804); which PE word carries it is "
        "inferred");
  if (auto c = check_channels(l, a.c); !c) return c;
  auto dst = result_tensor(l, a.c, a.h, a.w);
  if (!dst) return dst.error();
  t.dst = *dst;
  ul.rule = fmt::format("element-wise {} on the planar engine (first source '{}', second '{}')", p.op,
                        l.bottoms[swap ? 1 : 0], l.bottoms[swap ? 0 : 1]);
  if (l.type == "ElementWise")
    ul.notes.push_back("ElementWise is lowered like ScaledElementWise with Scale 1.0 (no sample of its own)");
  // `a` may have moved: result_tensor() adds a tensor.
  if (const uint32_t rows = plan_.tensors[t.dst].h; rows > 1)
    ul.notes.push_back(fmt::format("{} rows: planar-engine blocks of up to 512 x 32 pixels, L2 strips per block "
                                   "(eiln's kernels at 2560x1600; other shapes are inferred)",
                                   rows));
  return add_task_in_pieces(std::move(t), ul, l);
}

}  // namespace ane::compiler
