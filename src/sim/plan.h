// What one task does, decided from its register image before any memory is
// touched: which units run (neural engine, planar engine, a reduction), where
// each operand comes from (tile DMA or a result an earlier task left in L2)
// and where the result goes. The units below execute a TaskPlan; hwx-dump
// prints its summary. Anything outside what the evidence supports is
// refused with "unsupported: <Field>=<value> in task N".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ane/conv_kernel.h"
#include "ane/error.h"
#include "ane/registers.h"
#include "ane/sim.h"

namespace ane::sim::detail {

// A logical tensor: groups x channels x rows x columns, dense in that order.
struct Dims {
  uint32_t g = 1, c = 1, h = 1, w = 1;
  uint64_t elements() const { return uint64_t{g} * c * h * w; }
  bool operator==(const Dims&) const = default;
};

// One tile DMA: an fp16 [G][C][H][W] tensor at slot + base, W innermost.
struct TensorDma {
  const char* unit = "";                  // "TileDMASrc", "TileDMASrc2", "TileDMADst"
  const FieldInfo* slot_field = nullptr;  // Header field that selects the slot
  int slot = -1;
  uint64_t base = 0, row = 0, plane = 0, group = 0;  // bytes
  Dims dims;
  // Channels 2 bytes apart and W at the plane stride (Common.Cfg.ChannelsInner,
  // Broadcast.OutChannelsW): the transposed results of Apple's reductions.
  bool channels_inner = false;

  uint64_t elements() const { return dims.elements(); }
  // Byte offset of element (g, c, h, w) from base.
  uint64_t offset(uint64_t g, uint64_t c, uint64_t h, uint64_t w) const {
    return channels_inner ? g * group + h * row + w * plane + 2 * c : g * group + c * plane + h * row + 2 * w;
  }
  // One past the last byte touched.
  uint64_t end() const {
    return base + offset(dims.g - 1, dims.c - 1, dims.h - 1, dims.w - 1) + 2;
  }
};

// Where an engine input comes from.
struct Operand {
  enum class From { None, Dma, L2 } from = From::None;
  TensorDma dma;          // From::Dma
  uint64_t l2 = 0;        // From::L2: byte address of the earlier result
  uint64_t l2_channel = 0, l2_row = 0, l2_group = 0;  // From::L2: its channel, row, group strides (bytes)
  Dims dims;              // the tensor the engine sees
  // SourceType 1: read through tile DMA and also left in L2 at `l2` (with
  // the l2_* strides) for later tasks (Apple's input-channel tiling).
  bool retain_l2 = false;
  // An L2 result with extent 1 along these axes, repeated to fill `dims`
  // (broadcast_g: one group's tensor for every group).
  bool broadcast_w = false, broadcast_h = false, broadcast_c = false, broadcast_g = false;
  bool broadcasts() const { return broadcast_w || broadcast_h || broadcast_c || broadcast_g; }
  // From::L2: a result laid with its channels along W (OutChannelsW), read
  // as one value per channel (Broadcast.Src1ChannelsW / Src2ChannelsW).
  bool channels_w = false;
  // The dims of the values the operand actually holds.
  Dims stored() const {
    return {broadcast_g ? 1 : dims.g, broadcast_c ? 1 : dims.c, broadcast_h ? 1 : dims.h, broadcast_w ? 1 : dims.w};
  }
};

// Where the result goes.
struct Destination {
  enum class To { Dma, L2 } to = To::Dma;
  TensorDma dma;
  uint64_t l2 = 0;
  uint64_t l2_channel = 0, l2_row = 0, l2_group = 0;  // To::L2: the result's strides (bytes)
  bool channels_inner = false;  // To::L2: channels 2 bytes apart, W at the channel stride
  Dims dims;
};

enum class Engine { Ne, Pe, PeReduce };

// A convolution's window: kernel, stride and leading padding (the trailing
// padding follows from the output size), and how channels are grouped.
struct ConvGeometry {
  uint32_t kh = 1, kw = 1, sy = 1, sx = 1, py = 0, px = 0;
  uint32_t groups = 1;     // NumGroups: independent Cin -> Cout convolutions
  bool depthwise = false;  // UnicastEn: output channel c reads input channel c only
  bool sparse = false;     // KernelCfg.SparseFmt: the zero-skipping kernel form
  bool small_source = false;  // Common.Cfg.SmallSourceMode: 4 channel slots per position (sparse)
  uint32_t mask_group_slots = 8;  // the zero-skipping form's mask grouping (by generation)
  // A plain matrix product per pixel: no window to gather.
  bool pointwise() const { return kh == 1 && kw == 1 && sy == 1 && sx == 1; }
};

struct NePlan {
  // ChannelMax: OpMode 3 without a kernel, output channel c is the maximum
  // of input channels c*N .. c*N+N-1, N = GroupConvCfg.UnicastCin.
  // ChannelSum: the accumulator of a pass into one output channel sums every
  // input channel.
  enum class Mac { Pass, AccumulatePass, Conv, ChannelMax, ChannelProduct, ChannelSum } mac = Mac::Pass;
  // Each output channel combines UnicastCin input channels (max, product or sum).
  bool over_channel_groups() const {
    return mac == Mac::ChannelMax || mac == Mac::ChannelProduct || mac == Mac::ChannelSum;
  }
  uint32_t unicast_cin = 1;
  uint32_t cin = 0, cout = 0, ocg = 0;  // Common.Cin/Cout: per group
  bool bias = false;              // BiasMode: lane oc starts with the bias (conv)
  uint16_t acc_bias = 0;          // fp16 added to the accumulator (AccumulatePass)
  uint16_t post_scale = 0x3c00;
  uint32_t nonlinear = 0;         // 0 none, 1 ReLU, 2 lookup table (lane 0)
  // A convolution with a table activation: each lane opens with the 128-byte
  // table, its weights after it (H14+; rule U15).
  bool table_in_lanes = false;
  int kernel_slot = -1;
  ConvGeometry conv;
  // Convolution sizes: independent groups (depthwise: one per channel), the
  // channels in and out of each, the weights per output, all outputs.
  uint32_t conv_groups() const { return conv.depthwise ? cout : conv.groups; }
  uint32_t group_cin() const { return conv.depthwise ? 1 : cin; }
  uint32_t group_cout() const { return conv.depthwise ? 1 : cout; }
  uint64_t reduction() const { return uint64_t{group_cin()} * conv.kh * conv.kw; }
  uint64_t outputs() const { return uint64_t{conv_groups()} * group_cout(); }
};

struct PePlan {
  uint32_t op = 0;                // 0 add, 1 mul, 2 max, 3 min
  uint32_t second = 0;            // SecSrc: 0 none, 2 b, 3 -b
  bool abs = false;               // Cond: |result|
  uint16_t pre_scale = 0x3c00, scale = 0x3c00, bias = 0;  // fp16
  uint32_t final_scale = 0x3f800000;                      // fp32
  // Reductions over W.
  enum class Reduce { Sum, Max } reduce = Reduce::Sum;
  bool reciprocal = false;
  // layer_norm's variance: the sum of squares (OpMode 4) of a, or of a - b
  // (TaskType 6), then 1 / sqrt(FinalScale sum + epsilon) (RSqrt; epsilon fp16).
  bool square = false, rsqrt = false;
  uint16_t epsilon = 0;
  // TaskType 4, layer_norm's last step: (a - b) * c, c the second source's
  // next row (TaskPlan::c).
  bool times_c = false;
};

struct TaskPlan {
  Engine engine = Engine::Ne;
  std::string op;       // trace name: "pass", "relu", "table", "conv", "add", "reduce-max", ...
  Operand a, b;         // b: the second operand (PE), else From::None
  Operand c;            // TaskType 4: the multiplier, one row past b in L2
  Destination out;
  NePlan ne;
  PePlan pe;
  std::vector<std::string> notes;   // assumptions used
  std::vector<std::string> traced;  // fields with no known effect
};

// Validates the image against what the evidence supports and plans it.
Expected<TaskPlan> plan_task(const RegisterImage& regs, const Options& opts, uint32_t task);

// Parts of plan_task (plan_ne.cpp, plan_pe.cpp).
class Checker;
Status plan_ne(const Checker& c, const Options& opts, TaskPlan& p);
ConvKernelShape conv_kernel_shape(const NePlan& ne);
// "3x3 stride 2 pad 1,1 depthwise": the window in a trace or summary.
std::string conv_name(const ConvGeometry& g);
// A convolution's window and groups; the tensors it reads and writes.
Status plan_conv_window(const Checker& c, TaskPlan& p, Dims& in, Dims& out);
Status plan_pe(const Checker& c, TaskPlan& p);
Status plan_pe_reduce(const Checker& c, TaskPlan& p);

// The register checks shared by the planners.
class Checker {
 public:
  Checker(const RegisterImage& r, uint32_t task) : r_(r), task_(task) {}

  uint32_t get(const FieldInfo* f) const { return r_.get(*f); }
  uint32_t word(const FieldInfo* f) const { return r_.word(f->address); }
  const RegisterImage& regs() const { return r_; }
  uint32_t task() const { return task_; }

  // Field must hold `want`.
  Status eq(const FieldInfo* f, uint32_t want) const;
  // Field must hold `want`, reported together with the field that requires it.
  Status eq_with(const FieldInfo* f, uint32_t want, const FieldInfo* because) const;
  // The whole register of `f` must equal `want` outside `ignore`; names the
  // first field that differs, or the register when only unnamed bits do.
  Status word_eq(const FieldInfo* f, uint32_t want, uint32_t ignore = 0) const;
  Error fail(const FieldInfo* f) const { return unsupported_field(f, get(f)); }
  Error fail_with(const FieldInfo* f, const FieldInfo* g) const;

 private:
  Error unsupported_field(const FieldInfo* f, uint32_t v) const;
  const RegisterImage& r_;
  uint32_t task_;
};

#define ANE_TRY(expr)                                   \
  do {                                                  \
    if (Status s_ = (expr); !s_) return s_.error();     \
  } while (0)

inline bool fp16_finite(uint16_t h) { return (h & 0x7c00u) != 0x7c00u; }

}  // namespace ane::sim::detail
