// Network -> Plan, part 1: the tensors, where each one lives (input or
// output buffer, or scratch memory), and the order units run in.
#include <fmt/format.h>

#include <algorithm>

#include "planner.h"

namespace ane::compiler {

Expected<Plan> Planner::run() {
  plan_.profile = opts_.profile;
  if (auto s = place_inputs(); !s) return s.error();
  auto order = schedule();
  for (const Layer* l : order) {
    if (fused_goc_.count(l->name)) continue;
    if (auto s = plan_unit(*l); !s) return s.error();
  }
  chain_through_l2();
  if (auto s = place_scratch(); !s) return s.error();
  place_constants();
  return std::move(plan_);
}

// macOS 26 keeps a table task's result in L2 when the very next task, a
// two-source planar-engine one, is its only reader and reads it as its
// second operand (records binary_real_div_*: the reciprocal's table task
// writes no tile DMA, the product reads it with Source2Type 0). v4.2.1 is
// left as it was: no plist sample of it shows such a pair.
void Planner::chain_through_l2() {
  if (!plan_.macos26()) return;
  for (size_t i = 0; i + 1 < plan_.tasks.size(); ++i) {
    const TaskPlan& a = plan_.tasks[i];
    const TaskPlan& b = plan_.tasks[i + 1];
    if (a.kind != TaskKind::Pass || a.nonlinear != 2 || a.cols || b.cols || !b.two_source_planar()) continue;
    if (b.src2 != a.dst || b.src == a.dst) continue;
    Tensor& t = plan_.tensors[a.dst];
    if (t.home != Tensor::Home::Scratch) continue;
    // Readers of its bytes, through views too (a channel reduction's rows).
    auto names = [&](int tensor) {
      return tensor >= 0 && (tensor == a.dst || plan_.tensors[tensor].view_of == a.dst);
    };
    const auto readers = std::count_if(plan_.tasks.begin(), plan_.tasks.end(), [&](const TaskPlan& r) {
      return names(r.src) || names(r.src2);
    });
    if (readers != 1 || !kept_fits(plan_, i + 1)) continue;
    t.home = Tensor::Home::L2;
    t.slot = -1;
    for (auto& ul : plan_.lowering)
      if (ul.unit == a.unit)
        ul.notes.push_back(fmt::format("the result stays in L2 for task {} ({}), as macOS 26 keeps a table task's "
                                       "result for the planar task after it (records binary_real_div_*)",
                                       i + 1, b.unit));
  }
}

// Strides: from the dictionary when given (checked), else the compiler's
// defaults: row = round_up(2W, 64), plane = round_up(row * H, 64).
Expected<Tensor> Planner::make_tensor(const std::string& name, uint32_t c, uint32_t h, uint32_t w,
                                      const TensorSpec* spec, const char* prefix) {
  Tensor t;
  t.name = name;
  t.c = c;
  t.h = h;
  t.w = w;
  const uint64_t row_min = uint64_t{w} * 2;
  t.row_stride = round_up(row_min, 64);
  if (spec && spec->row_stride) {
    const std::string key = std::string(prefix) + "RowStride";
    if (*spec->row_stride % 64 || *spec->row_stride < row_min)
      return fail(spec->at(key),
                  fmt::format("{} must be a multiple of 64 and at least 2 x width = {}", *spec->row_stride, row_min));
    t.row_stride = *spec->row_stride;
  }
  t.plane_stride = round_up(t.row_stride * h, 64);
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
      return fail(spec->at(key),
                  fmt::format("{} is smaller than channels x plane stride = {}", *spec->batch_stride, t.batch_stride));
    t.batch_stride = *spec->batch_stride;
  }
  return t;
}

// What every tensor dictionary must say for the known rules to apply.
Status Planner::check_spec(const TensorSpec& s, const char* prefix) {
  const std::string p = prefix;
  if (s.type != ElementType::Float16)
    return fail(s.at(p + "Type"),
                fmt::format("unsupported type {} (only Float16 tensors are known)", element_type_plist_name(s.type)));
  if (s.interleave != 1)
    return fail(s.at(p + "Interleave"), fmt::format("unsupported interleave {} (only 1 is known)", s.interleave));
  return Ok{};
}

Status Planner::place_inputs() {
  // Each input and output takes one entry of the program's 32-entry slot
  // table, from slot 4 on (0 - 3: the tasks, the kernel data, scratch).
  constexpr size_t kBufferSlots = 32 - kFirstBufferSlot;
  if (const size_t n = net_.inputs.size() + net_.outputs.size(); n > kBufferSlots) {
    const TensorSpec& s = net_.inputs.size() > kBufferSlots ? net_.inputs[kBufferSlots] : net_.outputs.back();
    return fail(s.at(""), fmt::format("the network has {} inputs and outputs: an HWX program binds at most {} "
                                      "(slots {} - 31 of its slot table)",
                                      n, kBufferSlots, kFirstBufferSlot));
  }
  for (size_t j = 0; j < net_.inputs.size(); ++j) {
    const TensorSpec& s = net_.inputs[j];
    if (auto st = check_spec(s, "Input"); !st) return st;
    if (s.batch != 1)
      return fail(s.at("BatchSize"),
                  fmt::format("unsupported batch {} (every Apple-compiled sample has N = 1)", s.batch));
    if (s.depth != 1)
      return fail(s.at("InputDepth"), fmt::format("unsupported depth {} (only D = 1 is known)", s.depth));
    auto t = make_tensor(s.name, s.channels, s.height, s.width, &s, "Input");
    if (!t) return t.error();
    t->home = Tensor::Home::Input;
    t->buffer = static_cast<int>(j);
    t->slot = plan_.macos26() ? macos26_slot(s.name) : kFirstBufferSlot + static_cast<int>(net_.outputs.size() + j);
    tensor_of_[s.name] = add_tensor(std::move(t).value());
  }
  return Ok{};
}

// v4.2.1 binds the outputs first, then the inputs. macOS 26 binds inputs
// and outputs together in name order (records: inputs x and z, output y
// take slots 4, 6 and 5).
int Planner::macos26_slot(const std::string& name) const {
  std::vector<std::string> names;
  for (const auto& i : net_.inputs) names.push_back(i.name);
  for (const auto& o : net_.outputs) names.push_back(o.name);
  std::sort(names.begin(), names.end());
  const auto at = std::find(names.begin(), names.end(), name) - names.begin();
  return kFirstBufferSlot + static_cast<int>(at);
}

int Planner::add_tensor(Tensor t) {
  plan_.tensors.push_back(std::move(t));
  return static_cast<int>(plan_.tensors.size() - 1);
}

// The tensor a unit's result lands in: its output buffer when an output
// names the unit, else scratch memory.
Expected<int> Planner::result_tensor(const Layer& l, uint32_t c, uint32_t h, uint32_t w) {
  const TensorSpec* out = nullptr;
  int k = -1;
  for (size_t i = 0; i < net_.outputs.size(); ++i)
    if (net_.outputs[i].bottom == l.name) {
      if (out)
        return fail(net_.outputs[i].at("Bottom"),
                    fmt::format("unit '{}' already feeds output '{}'; one buffer per unit result is supported", l.name,
                                out->name));
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
    t->slot = plan_.macos26() ? macos26_slot(out->name) : kFirstBufferSlot + k;
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
Status Planner::place_scratch() {
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
    if (plan_.tensors[i].home == Tensor::Home::Scratch && plan_.tensors[i].view_of < 0 &&
        std::find(order.begin(), order.end(), static_cast<int>(i)) == order.end())
      order.push_back(static_cast<int>(i));
  uint64_t off = 0;
  for (int i : order) {
    plan_.tensors[i].offset = off;
    off = round_up(off + plan_.tensors[i].bytes(), 64);
  }
  plan_.scratch_bytes = off;
  // A view names its tensor's bytes.
  for (auto& t : plan_.tensors)
    if (t.view_of >= 0) {
      t.offset = plan_.tensors[t.view_of].offset;
      t.slot = plan_.tensors[t.view_of].slot;
    }
  return Ok{};
}

// Units order, except that a unit waits for the units it reads (a stable
// topological order; the parser already rejected cycles).
std::vector<const Layer*> Planner::schedule() {
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
    if (conv.type != "Conv" || goc.type != "GOC" || goc.bottoms.size() != 1 || goc.bottoms[0] != conv.name) continue;
    if (!std::get<GocParams>(goc.params).bias || consumers(conv.name) != 1 || is_output(conv.name)) continue;
    fused_[conv.name] = &goc;
    fused_goc_.insert(goc.name);
  }
  // A ReLU that alone reads a Conv's result (after its GOC) becomes the Conv
  // task's NonlinearMode 1: macOS 26 compiles conv + relu into one task
  // (mil-hwx-compiler record conv_k1_c64_n64_s8_bias0_relu: MACCfg 0x111c00).
  for (const Layer* l : out) {
    if (l->type != "Conv") continue;
    const std::string tail = fused_.count(l->name) ? fused_.at(l->name)->name : l->name;
    if (consumers(tail) != 1 || is_output(tail)) continue;
    for (const Layer* r : out)
      if (r->type == "Neuron" && std::get<NeuronParams>(r->params).type == "ReLU" && r->bottoms.size() == 1 &&
          r->bottoms[0] == tail) {
        fused_relu_[l->name] = r;
        fused_goc_.insert(r->name);
      }
  }
  return out;
}

int Planner::consumers(const std::string& name) const {
  int n = 0;
  for (const auto& l : net_.units) n += static_cast<int>(std::count(l.bottoms.begin(), l.bottoms.end(), name));
  return n;
}

bool Planner::is_output(const std::string& name) const {
  return std::any_of(net_.outputs.begin(), net_.outputs.end(), [&](const auto& o) { return o.bottom == name; });
}

const Layer* Planner::unit(const std::string& name) const {
  for (const auto& l : net_.units)
    if (l.name == name) return &l;
  return nullptr;
}

Expected<Plan> plan_network(const Network& net, const CompileOptions& opts) { return Planner(net, opts).run(); }

}  // namespace ane::compiler
