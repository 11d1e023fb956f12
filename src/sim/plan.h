// What one task does, decided from its register image before any memory is
// touched: the supported-envelope check (section 11.1) and the task class
// (section 5). The units below execute a TaskPlan.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ane/error.h"
#include "ane/registers.h"
#include "ane/sim.h"

namespace ane::sim::detail {

enum class Engine { NePass, NeConv, Pe };

// One tensor DMA: an fp16 [C][H][W] tensor at slot + base, W innermost.
struct TensorDma {
  const char* unit = "";      // "TileDMASrc", "TileDMASrc2", "TileDMADst"
  const FieldInfo* slot_field = nullptr;  // Header field that selects the slot
  int slot = -1;
  uint64_t base = 0, row = 0, plane = 0;  // bytes
  uint32_t c = 0, h = 0, w = 0;

  uint64_t elements() const { return uint64_t{c} * h * w; }
  // One past the last byte touched (base + (C-1)*plane + (H-1)*row + 2W).
  uint64_t end() const { return base + (uint64_t{c} - 1) * plane + (uint64_t{h} - 1) * row + 2 * uint64_t{w}; }
};

struct TaskPlan {
  Engine engine = Engine::NePass;
  std::string op;  // trace name: "pass", "relu", "sigmoid", "conv", "add", ...
  TensorDma src, src2, dst;
  uint32_t cin = 0, cout = 0;
  // Neural engine.
  uint32_t nonlinear = 0;  // 0 none, 1 ReLU, 2 table lookup
  bool bias = false;
  uint16_t post_scale = kFp16OneBits;
  uint32_t ocg = 0;
  int kernel_slot = -1;
  // Planar engine: 0 add, 1 mul, 2 max, 3 min.
  uint32_t pe_op = 0;
  std::vector<std::string> notes;   // assumptions used
  std::vector<std::string> traced;  // fields with no known effect

  static constexpr uint16_t kFp16OneBits = 0x3c00;
};

// Validates the image against the supported envelope and classifies it.
// Errors: "unsupported: <Field>=<value> in task N".
Expected<TaskPlan> plan_task(const RegisterImage& regs, const Options& opts, uint32_t task);

}  // namespace ane::sim::detail
