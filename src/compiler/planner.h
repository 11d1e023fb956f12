// Internal to the compiler: the planner that turns a Network into a Plan.
// plan.cpp: tensors, their placement and the schedule; plan_layers.cpp: one
// rule per layer type (plan_reduce.cpp: reductions). Every refusal names the
// plist line, unit and key.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kernels.h"
#include "plan.h"

namespace ane::compiler {

class Planner {
 public:
  Planner(const Network& net, const CompileOptions& opts) : net_(net), opts_(opts), weights_(net) {}

  Expected<Plan> run();

 private:
  Error fail(const SourceRef& ref, const std::string& what) const { return network_error(net_.path, ref, what); }

  // ---- tensors, placement, schedule (plan.cpp) ----
  // Strides: from the dictionary when given (checked), else the compiler's
  // defaults: row = round_up(2W, 64), plane = round_up(row * H, 64).
  Expected<Tensor> make_tensor(const std::string& name, uint32_t c, uint32_t h, uint32_t w, const TensorSpec* spec,
                               const char* prefix);
  // What every tensor dictionary must say for the known rules to apply.
  Status check_spec(const TensorSpec& s, const char* prefix);
  Status place_inputs();
  int add_tensor(Tensor t);
  int macos26_slot(const std::string& name) const;
  // The tensor a unit's result lands in: its output buffer when an output
  // names the unit, else scratch memory.
  Expected<int> result_tensor(const Layer& l, uint32_t c, uint32_t h, uint32_t w);
  // Intermediates share one scratch segment. A planar-engine second operand
  // must sit at offset 0: its base register is not known (only the first
  // source's TileDMASrc.BaseAddr is), so at most one such intermediate.
  Status place_scratch();
  void chain_through_l2();
  // Units order, except that a unit waits for the units it reads (a stable
  // topological order; the parser already rejected cycles).
  std::vector<const Layer*> schedule();
  int consumers(const std::string& name) const;
  bool is_output(const std::string& name) const;
  const Layer* unit(const std::string& name) const;

  // ---- one rule per layer type (plan_layers.cpp, plan_reduce.cpp) ----
  Status plan_unit(const Layer& l);
  Expected<int> single_source(const Layer& l);
  Status check_channels(const Layer& l, uint32_t c);
  uint32_t add_task(TaskPlan t, UnitLowering& ul);
  // add_task, or the task's width pieces when one L2 row of it would not fit
  // (plan_pieces.cpp); refused by name when its columns are not independent.
  Status add_task_in_pieces(TaskPlan t, UnitLowering& ul, const Layer& l);
  Status plan_conv(const Layer& l, const Layer* goc, UnitLowering& ul);
  Status plan_neuron(const Layer& l, UnitLowering& ul);
  void add_pass_notes(const Tensor& t, UnitLowering& ul);
  Status plan_concat(const Layer& l, UnitLowering& ul);
  Status plan_reshape(const Layer& l, UnitLowering& ul);
  Status plan_copy(const Layer& l, int src, const std::string& rule, UnitLowering& ul);
  Status plan_elementwise(const Layer& l, UnitLowering& ul);
  Status plan_scalar_elementwise(const Layer& l, const ElementWiseParams& p, UnitLowering& ul);
  Status plan_tensor_constant(const Layer& l, const ElementWiseParams& p, UnitLowering& ul);
  // Home::Constant tensors' offsets, moved past the kernel data (plan_constants.cpp).
  void place_constants();
  Status plan_reduction(const Layer& l, UnitLowering& ul);

  static constexpr uint16_t kFp16OneBits = 0x3c00;

  const Network& net_;
  const CompileOptions& opts_;
  WeightFiles weights_;
  Plan plan_;
  std::map<std::string, int> tensor_of_;       // unit or input name -> tensor index
  std::map<std::string, const Layer*> fused_;  // Conv name -> the GOC fused into it
  std::map<std::string, const Layer*> fused_relu_;  // Conv name -> the ReLU fused into it
  std::set<std::string> fused_goc_;            // fused GOCs and ReLUs: no task of their own
};

}  // namespace ane::compiler
