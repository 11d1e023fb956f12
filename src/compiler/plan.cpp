// Network -> Plan: shapes, where every tensor lives, and the task list.
// Every refusal names the plist line, unit and key (network_error).
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "kernels.h"
#include "plan.h"

namespace ane::compiler {

namespace {

uint64_t roundup(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

class Planner {
 public:
  Planner(const Network& net, const CompileOptions& opts) : net_(net), opts_(opts), weights_(net) {}

  Expected<Plan> run() {
    if (auto s = place_inputs(); !s) return s.error();
    auto order = schedule();
    for (size_t i = 0; i < order.size(); ++i) {
      const Layer& l = *order[i];
      if (fused_goc_.count(l.name)) continue;
      const Layer* next = i + 1 < order.size() ? order[i + 1] : nullptr;
      if (auto s = plan_unit(l, next); !s) return s.error();
    }
    if (auto s = place_scratch(); !s) return s.error();
    return std::move(plan_);
  }

 private:
  Error fail(const SourceRef& ref, const std::string& what) const { return network_error(net_.path, ref, what); }

  // ---- tensors ----------------------------------------------------------------------------
  // Strides: from the dictionary when given (checked), else the compiler's
  // defaults: row = roundup(2W, 64), plane = roundup(row * H, 64).
  Expected<Tensor> make_tensor(const std::string& name, uint32_t c, uint32_t h, uint32_t w, const TensorSpec* spec,
                               const char* prefix) {
    Tensor t;
    t.name = name;
    t.c = c;
    t.h = h;
    t.w = w;
    const uint64_t row_min = uint64_t{w} * 2;
    t.row_stride = roundup(row_min, 64);
    if (spec && spec->row_stride) {
      const std::string key = std::string(prefix) + "RowStride";
      if (*spec->row_stride % 64 || *spec->row_stride < row_min)
        return fail(spec->at(key), fmt::format("{} must be a multiple of 64 and at least 2 x width = {}",
                                               *spec->row_stride, row_min));
      t.row_stride = *spec->row_stride;
    }
    t.plane_stride = roundup(t.row_stride * h, 64);
    if (spec && spec->plane_stride) {
      const std::string key = std::string(prefix) + "PlaneStride";
      if (*spec->plane_stride % 64 || *spec->plane_stride < t.row_stride * h)
        return fail(spec->at(key), fmt::format("{} must be a multiple of 64 and at least row stride x height = {}",
                                               *spec->plane_stride, t.row_stride * h));
      t.plane_stride = *spec->plane_stride;
    }
    t.batch_stride = t.plane_stride * c;
    if (spec && spec->batch_stride) {
      const std::string key = std::string(prefix) + "BatchStride";
      if (*spec->batch_stride < t.batch_stride)
        return fail(spec->at(key), fmt::format("{} is smaller than channels x plane stride = {}", *spec->batch_stride,
                                               t.batch_stride));
      t.batch_stride = *spec->batch_stride;
    }
    return t;
  }

  // What every tensor dictionary must say for the known rules to apply.
  Status check_spec(const TensorSpec& s, const char* prefix) {
    const std::string p = prefix;
    if (s.type != ElementType::Float16)
      return fail(s.at(p + "Type"), fmt::format("unsupported type {} (only Float16 tensors are known)",
                                                 element_type_plist_name(s.type)));
    if (s.interleave != 1)
      return fail(s.at(p + "Interleave"), fmt::format("unsupported interleave {} (only 1 is known)", s.interleave));
    return Ok{};
  }

  Status place_inputs() {
    for (size_t j = 0; j < net_.inputs.size(); ++j) {
      const TensorSpec& s = net_.inputs[j];
      if (auto st = check_spec(s, "Input"); !st) return st;
      if (s.batch != 1)
        return fail(s.at("BatchSize"), fmt::format("unsupported batch {} (every Apple-compiled sample has N = 1)",
                                                   s.batch));
      if (s.depth != 1)
        return fail(s.at("InputDepth"), fmt::format("unsupported depth {} (only D = 1 is known)", s.depth));
      if (s.height != 1)
        return fail(s.at("InputHeight"),
                    fmt::format("unsupported height {} (every Apple-compiled sample has H = 1; the L2 layout "
                                "of taller tensors is not known)",
                                s.height));
      auto t = make_tensor(s.name, s.channels, s.height, s.width, &s, "Input");
      if (!t) return t.error();
      t->home = Tensor::Home::Input;
      t->buffer = static_cast<int>(j);
      t->slot = kFirstBufferSlot + static_cast<int>(net_.outputs.size() + j);
      tensor_of_[s.name] = add_tensor(std::move(t).value());
    }
    return Ok{};
  }

  int add_tensor(Tensor t) {
    plan_.tensors.push_back(std::move(t));
    return static_cast<int>(plan_.tensors.size() - 1);
  }

  // The tensor a unit's result lands in: its output buffer when an output
  // names the unit, else scratch memory.
  Expected<int> result_tensor(const Layer& l, uint32_t c, uint32_t h, uint32_t w) {
    const TensorSpec* out = nullptr;
    int k = -1;
    for (size_t i = 0; i < net_.outputs.size(); ++i)
      if (net_.outputs[i].bottom == l.name) {
        if (out)
          return fail(net_.outputs[i].at("Bottom"),
                      fmt::format("unit '{}' already feeds output '{}'; one buffer per unit result is supported",
                                  l.name, out->name));
        out = &net_.outputs[i];
        k = static_cast<int>(i);
      }
    if (l.output_type != ElementType::Float16)
      return fail(l.at("OutputType"), fmt::format("unsupported type {} (only Float16 tensors are known)",
                                                  element_type_plist_name(l.output_type)));
    if (out)
      if (auto st = check_spec(*out, "Output"); !st) return st.error();
    auto t = make_tensor(out ? out->name : l.name, c, h, w, out, "Output");
    if (!t) return t.error();
    if (out) {
      t->home = Tensor::Home::Output;
      t->buffer = k;
      t->slot = kFirstBufferSlot + k;
    } else {
      t->home = Tensor::Home::Scratch;
      t->slot = kScratchSlot;
    }
    const int idx = add_tensor(std::move(t).value());
    tensor_of_[l.name] = idx;
    return idx;
  }

  // Intermediates share one scratch segment. A planar-engine second operand
  // must sit at offset 0: its base register is not known (only the first
  // source's TileDMASrc.BaseAddr is), so at most one such intermediate.
  Status place_scratch() {
    std::vector<int> order;
    for (const auto& t : plan_.tasks)
      if (t.src2 >= 0 && plan_.tensors[t.src2].home == Tensor::Home::Scratch &&
          std::find(order.begin(), order.end(), t.src2) == order.end())
        order.push_back(t.src2);
    if (order.size() > 1) {
      const TaskPlan* second = nullptr;
      for (const auto& t : plan_.tasks)
        if (t.src2 == order[1]) second = &t;
      const Layer* l = unit(second->unit);
      return fail(l->at("Bottom"),
                  fmt::format("unsupported: intermediates '{}' and '{}' are both second planar-engine operands; "
                              "only one can sit at scratch offset 0 (the second-source base register is unknown)",
                              plan_.tensors[order[0]].name, plan_.tensors[order[1]].name));
    }
    for (size_t i = 0; i < plan_.tensors.size(); ++i)
      if (plan_.tensors[i].home == Tensor::Home::Scratch &&
          std::find(order.begin(), order.end(), static_cast<int>(i)) == order.end())
        order.push_back(static_cast<int>(i));
    uint64_t off = 0;
    for (int i : order) {
      plan_.tensors[i].offset = off;
      off = roundup(off + plan_.tensors[i].bytes(), 64);
    }
    plan_.scratch_bytes = off;
    return Ok{};
  }

  // ---- schedule ---------------------------------------------------------------------------
  // Units order, except that a unit waits for the units it reads (a stable
  // topological order; the parser already rejected cycles).
  std::vector<const Layer*> schedule() {
    std::vector<const Layer*> out;
    std::set<std::string> done;
    for (const auto& i : net_.inputs) done.insert(i.name);
    std::vector<const Layer*> pending;
    for (const auto& l : net_.units) pending.push_back(&l);
    while (!pending.empty()) {
      for (auto it = pending.begin(); it != pending.end(); ++it) {
        const Layer* l = *it;
        if (std::all_of(l->bottoms.begin(), l->bottoms.end(), [&](const std::string& b) { return done.count(b); })) {
          out.push_back(l);
          done.insert(l->name);
          pending.erase(it);
          break;
        }
      }
    }
    // A GOC with per-channel bias right after the Conv it reads is fused.
    for (size_t i = 0; i + 1 < out.size(); ++i) {
      const Layer& conv = *out[i];
      const Layer& goc = *out[i + 1];
      if (conv.type != "Conv" || goc.type != "GOC" || goc.bottoms.size() != 1 || goc.bottoms[0] != conv.name)
        continue;
      if (!std::get<GocParams>(goc.params).bias || consumers(conv.name) != 1 || is_output(conv.name)) continue;
      fused_[conv.name] = &goc;
      fused_goc_.insert(goc.name);
    }
    return out;
  }

  int consumers(const std::string& name) const {
    int n = 0;
    for (const auto& l : net_.units)
      n += static_cast<int>(std::count(l.bottoms.begin(), l.bottoms.end(), name));
    return n;
  }
  bool is_output(const std::string& name) const {
    return std::any_of(net_.outputs.begin(), net_.outputs.end(), [&](const auto& o) { return o.bottom == name; });
  }
  const Layer* unit(const std::string& name) const {
    for (const auto& l : net_.units)
      if (l.name == name) return &l;
    return nullptr;
  }

  // ---- units ------------------------------------------------------------------------------
  Status plan_unit(const Layer& l, const Layer* next) {
    UnitLowering ul{l.name, l.type, "", {}, {}};
    Status st = Ok{};
    if (l.type == "Conv") {
      const Layer* goc = fused_.count(l.name) ? fused_.at(l.name) : nullptr;
      (void)next;
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
    } else {
      st = fail(l.at("Type"), fmt::format("unsupported layer type '{}' (supported: Conv, GOC fused into a Conv, "
                                          "Neuron, Concat, Reshape, ScaledElementWise, ElementWise)",
                                          l.type));
    }
    if (!st) return st;
    plan_.lowering.push_back(std::move(ul));
    return Ok{};
  }

  Expected<int> single_source(const Layer& l) {
    if (l.bottoms.size() != 1)
      return fail(l.at("Bottom"), fmt::format("{} reads one tensor, Bottom names {}", l.type, l.bottoms.size()));
    auto it = tensor_of_.find(l.bottoms[0]);
    if (it == tensor_of_.end())  // a fused Conv's own result is not materialised
      return fail(l.at("Bottom"), fmt::format("'{}' has no tensor of its own", l.bottoms[0]));
    return it->second;
  }

  Status check_channels(const Layer& l, uint32_t c) {
    if (l.output_channels && *l.output_channels != c)
      return fail(l.at("OutputChannels"),
                  fmt::format("{} disagrees with the {} channels this {} produces", *l.output_channels, c, l.type));
    return Ok{};
  }

  uint32_t add_task(TaskPlan t, UnitLowering& ul) {
    plan_.tasks.push_back(std::move(t));
    const auto index = static_cast<uint32_t>(plan_.tasks.size() - 1);
    ul.tasks.push_back(index);
    return index;
  }

  Status plan_conv(const Layer& l, const Layer* goc, UnitLowering& ul) {
    const auto& p = std::get<ConvParams>(l.params);
    auto src = single_source(l);
    if (!src) return src.error();
    if (p.kernel_width != 1 || p.kernel_height != 1)
      return fail(l.at(p.kernel_width != 1 ? "Params.KernelWidth" : "Params.KernelHeight"),
                  fmt::format("unsupported kernel {}x{} (only 1x1 kernels are known)", p.kernel_width,
                              p.kernel_height));
    if (p.kernel_depth != 1)
      return fail(l.at("Params.KernelDepth"), fmt::format("unsupported kernel depth {}", p.kernel_depth));
    if (p.step_x != 1 || p.step_y != 1)
      return fail(l.at("Params.Step"), fmt::format("unsupported step [{}, {}] (only stride 1 is known)", p.step_x,
                                                   p.step_y));
    for (auto [key, v] : {std::pair{"Params.PadTop", p.pad_top}, {"Params.PadBot", p.pad_bottom},
                          {"Params.PadLeft", p.pad_left}, {"Params.PadRight", p.pad_right}})
      if (v != 0) return fail(l.at(key), fmt::format("unsupported padding {} (only unpadded convolutions are known)", v));
    if (p.kernel_mode != "Dense")
      return fail(l.at("Params.KernelMode"), fmt::format("unsupported kernel mode '{}' (only Dense)", p.kernel_mode));
    if (p.kernel_group_reuse)
      return fail(l.at("Params.KernelGroupReuse"), "unsupported: true (only false is known)");
    if (p.kernel.type != ElementType::Float16 && p.kernel.type != ElementType::Float32)
      return fail(l.at("Params.KernelType"), fmt::format("unsupported kernel type {} (Float16 and Float32 are known)",
                                                         element_type_plist_name(p.kernel.type)));
    if (!l.output_channels) return fail(l.at("OutputChannels"), "missing (required for a Conv)");
    const Tensor in = plan_.tensors[*src];
    const uint32_t cin = in.c, cout = *l.output_channels;
    if (cout > 16 && (cout % 16 != 0 || (cout / 16 & (cout / 16 - 1)) != 0 || cout / 16 > 128))
      return fail(l.at("OutputChannels"),
                  fmt::format("unsupported: {} output channels (known: up to 16, or 16 x a power of two up to 2048)",
                              cout));

    TaskPlan t;
    t.kind = TaskKind::Conv;
    t.unit = l.name;
    t.src = *src;
    t.cin = cin;
    t.cout = cout;
    auto weights = weights_.read(l.at("Params.KernelIndex"), l.at("Params.KernelOffset"), p.kernel,
                                 uint64_t{cout} * cin, "kernel");
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
      if (cout > 16)
        return fail(goc->at("Params.BiasScaleGroupData"),
                    fmt::format("unsupported: bias with {} output channels (the bias layout of multi-channel kernel "
                                "lanes is not known)",
                                cout));
      auto b = weights_.read(goc->at("Params.BiasScaleGroupData.BiasIndex"),
                             goc->at("Params.BiasScaleGroupData.BiasOffset"), *g.bias, cout, "bias");
      if (!b) return b.error();
      bias = std::move(b).value();
      if (auto c = check_channels(*goc, cout); !c) return c;
      t.bias = true;
    }
    auto layout = layout_conv_kernel(*weights, bias, cin, cout, opts_.assume_ocg_layout);
    if (!layout)
      return fail(l.at("OutputChannels"), layout.error().message);
    t.kernel = std::move(layout->bytes);
    t.lane_offsets = std::move(layout->lane_offsets);
    t.lane_sizes = std::move(layout->lane_sizes);
    t.ocg_size = layout->ocg_size;

    const Layer& result_unit = goc ? *goc : l;
    auto dst = result_tensor(result_unit, cout, in.h, in.w);
    if (!dst) return dst.error();
    if (goc) tensor_of_[l.name] = *dst;  // nothing else reads the fused Conv
    t.dst = *dst;

    ul.rule = fmt::format("1x1 convolution on the neural engine, {} -> {} channels, {} kernel lane{} of {:#x} bytes",
                          cin, cout, t.lane_sizes.size(), t.lane_sizes.size() == 1 ? "" : "s", t.lane_sizes[0]);
    if (goc) {
      ul.rule += fmt::format(", with the per-channel bias of GOC '{}' fused in", goc->name);
      UnitLowering fused{goc->name, goc->type, fmt::format("fused into Conv '{}' (bias in its kernel lanes)", l.name),
                         {}, {}};
      pending_fused_ = std::move(fused);
    }
    for (auto& n : layout->notes) ul.notes.push_back(std::move(n));
    if (cout >= 4 && cout <= 15)
      ul.notes.push_back("ENE = 1 + ceil(log2(lanes)) for 4..15 output channels is inferred (no sample)");
    if (p.kernel.type == ElementType::Float32) ul.notes.push_back("Float32 weights rounded to fp16, nearest-even");
    add_task(std::move(t), ul);
    if (pending_fused_) {
      plan_.lowering.push_back(std::move(ul));
      ul = std::move(*pending_fused_);
      pending_fused_.reset();
    }
    return Ok{};
  }

  Status plan_neuron(const Layer& l, UnitLowering& ul) {
    const auto& p = std::get<NeuronParams>(l.params);
    auto src = single_source(l);
    if (!src) return src.error();
    TaskPlan t;
    t.kind = TaskKind::Pass;
    t.unit = l.name;
    t.src = *src;
    if (p.type == "ReLU") {
      t.nonlinear = 1;
      ul.rule = "ReLU: neural-engine pass-through with NonlinearMode 1";
    } else if (p.type == "Sigmoid") {
      t.nonlinear = 2;
      const auto table = sigmoid_table();
      t.kernel.assign(table.begin(), table.end());
      t.lane_offsets = {0};
      t.lane_sizes = {table.size()};
      t.kernel_is_table = true;
      ul.rule = "Sigmoid: neural-engine pass-through with NonlinearMode 2 and Apple's lookup table in kernel lane 0";
    } else {
      return fail(l.at("Params.Type"), fmt::format("unsupported neuron type '{}' (known: ReLU, Sigmoid)", p.type));
    }
    const Tensor in = plan_.tensors[*src];
    if (auto c = check_channels(l, in.c); !c) return c;
    auto dst = result_tensor(l, in.c, in.h, in.w);
    if (!dst) return dst.error();
    t.dst = *dst;
    add_pass_notes(plan_.tensors[*dst], ul);
    add_task(std::move(t), ul);
    return Ok{};
  }

  void add_pass_notes(const Tensor& t, UnitLowering& ul) {
    if (t.w > 16 && t.w < 77)
      ul.notes.push_back(fmt::format("Common.Cfg.ShMin = 0 for width {} follows the 'width <= 16' rule; samples "
                                     "only pin widths 1, 16 and 77",
                                     t.w));
  }

  Status plan_concat(const Layer& l, UnitLowering& ul) {
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
        return fail(l.at("Bottom"), fmt::format("'{}' is {}x{} but '{}' is {}x{}: channel concat needs equal H and W",
                                                b, s.h, s.w, l.bottoms[0], first.h, first.w));
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

  Status plan_reshape(const Layer& l, UnitLowering& ul) {
    const auto& p = std::get<ReshapeParams>(l.params);
    auto src = single_source(l);
    if (!src) return src.error();
    const Tensor in = plan_.tensors[*src];
    if (p.batch != 1 || p.depth != 1 || p.channels != in.c || p.height != in.h || p.width != in.w)
      return fail(l.at("Params.ReshapedChannel"),
                  fmt::format("unsupported reshape of {}x{}x{} (C x H x W) to {}x{}x{} (batch {}, depth {}): only a "
                              "reshape that keeps the shape is known",
                              in.c, in.h, in.w, p.channels, p.height, p.width, p.batch, p.depth));
    if (auto c = check_channels(l, in.c); !c) return c;
    auto dst = result_tensor(l, in.c, in.h, in.w);
    if (!dst) return dst.error();
    TaskPlan t;
    t.kind = TaskKind::Pass;
    t.unit = l.name;
    t.src = *src;
    t.dst = *dst;
    t.compiler_copy = true;
    ul.rule = "reshape that keeps the shape: one neural-engine copy task";
    add_pass_notes(plan_.tensors[*dst], ul);
    add_task(std::move(t), ul);
    return Ok{};
  }

  Status plan_elementwise(const Layer& l, UnitLowering& ul) {
    const auto& p = std::get<ElementWiseParams>(l.params);
    TaskPlan t;
    t.unit = l.name;
    if (p.op == "Add") {
      t.kind = TaskKind::PlanarAdd;
    } else if (p.op == "Mul") {
      t.kind = TaskKind::PlanarMul;
      ul.notes.push_back("Mul = PE.Cfg.OpMode 1 is taken from later compilers' multiply programs");
    } else {
      return fail(l.at("Params.Type"),
                  fmt::format("unsupported element-wise operation '{}' (known: Add, Mul)", p.op));
    }
    if (l.bottoms.size() != 2)
      return fail(l.at("Bottom"), fmt::format("{} needs exactly two inputs, Bottom names {}", l.type,
                                              l.bottoms.size()));
    int srcs[2];
    for (int i = 0; i < 2; ++i) {
      auto it = tensor_of_.find(l.bottoms[i]);
      if (it == tensor_of_.end())
        return fail(l.at("Bottom"), fmt::format("'{}' has no tensor of its own", l.bottoms[i]));
      srcs[i] = it->second;
    }
    const Tensor& a = plan_.tensors[srcs[0]];
    const Tensor& b = plan_.tensors[srcs[1]];
    if (a.c != b.c || a.h != b.h || a.w != b.w)
      return fail(l.at("Bottom"),
                  fmt::format("unsupported: operands of different shapes ({}x{}x{} and {}x{}x{}, C x H x W); "
                              "broadcasting is not known",
                              a.c, a.h, a.w, b.c, b.h, b.w));
    t.src = srcs[0];
    t.src2 = srcs[1];
    t.scale = p.scale;
    if (p.has_scale && p.scale != kFp16OneBits)
      ul.notes.push_back("Scale goes to PE.BiasScale.Scale (bits 16-31 of 0x8804); which PE word carries it is "
                         "inferred");
    if (auto c = check_channels(l, a.c); !c) return c;
    auto dst = result_tensor(l, a.c, a.h, a.w);
    if (!dst) return dst.error();
    t.dst = *dst;
    ul.rule = fmt::format("element-wise {} on the planar engine (first source '{}', second '{}')", p.op,
                          l.bottoms[0], l.bottoms[1]);
    if (l.type == "ElementWise")
      ul.notes.push_back("ElementWise is lowered like ScaledElementWise with Scale 1.0 (no sample of its own)");
    add_task(std::move(t), ul);
    return Ok{};
  }

  static constexpr uint16_t kFp16OneBits = 0x3c00;

  const Network& net_;
  const CompileOptions& opts_;
  WeightFiles weights_;
  Plan plan_;
  std::map<std::string, int> tensor_of_;
  std::map<std::string, const Layer*> fused_;
  std::set<std::string> fused_goc_;
  std::optional<UnitLowering> pending_fused_;
};

}  // namespace

Expected<Plan> plan_network(const Network& net, const CompileOptions& opts) { return Planner(net, opts).run(); }

}  // namespace ane::compiler
