// Internal to the compiler: the network resolved into tensors in memory and a
// list of planned tasks, before register images are filled.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ane/bytes.h"
#include "ane/compiler.h"
#include "ane/network.h"
#include "ane/task.h"

namespace ane::compiler {

// Slots of the base-address table (hwx-format.md section 3.5).
constexpr int kTextSlot = 0;
constexpr int kConstSlot = 1;
constexpr int kScratchSlot = 3;  // libane: intermediates (later compilers use slot 3 the same way)
constexpr int kFirstBufferSlot = 4;
constexpr uint32_t kTaskStride = 0x300;  // v4.2.1 places task i at __text + i * 0x300
// macOS 26 places each task at the next 0x100 boundary after the one before
// (records: a task of 504 bytes, then the next at 0x200 - binary_*_constant_blob;
// of 628 bytes, the next at 0x300 - binary_real_div_*).
constexpr uint32_t kMacos26TaskAlign = 0x100;

// A tensor as it sits in memory (fp16, N = D = 1).
struct Tensor {
  std::string name;
  uint32_t c = 0, h = 0, w = 0;
  uint64_t row_stride = 0, plane_stride = 0;
  uint64_t batch_stride = 0;  // N stride of the buffer descriptor
  // L2: kept in L2 from the task that makes it to the next one, which reads
  // it from there (Planner::chain_through_l2); no memory, no slot.
  // Constant: data of the program in __const (slot kConstSlot), read by tile
  // DMA (a tensor constant's section, plan_constants.cpp).
  enum class Home { Input, Output, Scratch, L2, Constant } home = Home::Scratch;
  int buffer = -1;      // index into Network::inputs / outputs
  int view_of = -1;     // another tensor's bytes seen in other dims (no memory of its own)
  uint64_t depth_stride = 0;  // a view's tile-DMA depth (0: C x plane stride)
  int slot = -1;        // base-address slot
  uint64_t offset = 0;  // inside the slot (scratch tensors)

  uint64_t bytes() const { return batch_stride; }  // N = 1
  uint64_t l2_channel_stride() const { return (uint64_t{w} * 2 + 15) / 16 * 16; }
};

// PlanarAffine: one source, y = Scale x + Bias on the planar engine.
enum class TaskKind { Conv, Pass, PlanarAdd, PlanarMul, PlanarMax, PlanarMin, PlanarAffine, PlanarReduce };

struct TaskPlan {
  TaskKind kind = TaskKind::Pass;
  std::string unit;         // the unit that owns the task (Concat: the concat)
  int src = -1, src2 = -1;  // tensor indices
  int dst = -1;
  uint32_t dst_channel_offset = 0;  // Concat pieces
  bool compiler_copy = false;       // Concat / Reshape copy (DebugLogEvents 0x68)
  bool concat_last_piece = false;   // L2 alias bits cleared
  // A tensor constant (plan_constants.cpp): the copy of its section into L2
  // (Pass), read in strips as a tall tensor's; and the planar task reading it
  // there as channels along W (Broadcast.Src2ChannelsW), Add computing
  // (a + b) * c with c the section's next row (TaskType 4).
  bool constant_copy = false;
  bool constant_operand = false;
  // A width piece (plan_pieces.cpp): the task covers columns [col, col + cols)
  // of its source and result; cols 0 is the whole width.
  uint32_t col = 0, cols = 0;
  int kernel_owner = -1;  // a piece after the first reads the first piece's kernel data

  // NE
  uint32_t nonlinear = 0;       // 0 none, 1 ReLU, 2 lookup table
  uint16_t post_scale = 0x3c00; // NE.PostScale (fp16): the input scale before a table
  std::optional<uint16_t> acc_bias;  // NE.AccBias (fp16) added first, MACCfg.OpMode 0 (MIL epsilons)
  bool clears_debug_event_13 = false;  // Header[4].DebugLogEvents bit 13 (ane/neuron_tables.h)
  // Conv: Cin/Cout of all groups; the window; the grouping
  uint32_t cin = 0, cout = 0;
  bool bias = false;
  uint32_t kw = 1, kh = 1, stride = 1, pad_top = 0, pad_left = 0;
  uint32_t groups = 1;     // independent groups (NumGroups); 1 when depthwise
  bool depthwise = false;  // Cin = Cout = groups: UnicastEn
  bool sparse = false;     // stride 2: the zero-skipping kernel form
  uint32_t group_cin() const { return depthwise ? cin : cin / groups; }
  uint32_t group_cout() const { return depthwise ? cout : cout / groups; }
  // Kernel data of this task (conv lanes, or the sigmoid table in lane 0)
  Bytes kernel;  // empty in a piece with a kernel_owner
  std::vector<uint64_t> lane_offsets, lane_sizes;  // inside `kernel`
  bool kernel_is_table = false;
  uint32_t ocg_size = 0;
  // PE
  uint16_t scale = 0x3c00;
  uint16_t pe_bias = 0;              // PE.BiasScale.Bias (fp16): PlanarAffine
  uint16_t pre_scale = 0x3c00;       // PE.PreScale on the first source (Sub: -1)
  bool subtract_second = false;      // PE.Cfg.SecSrc 3: a - b (macOS 26's sub)
  bool absolute = false;             // PE.Cfg.Cond: |y| (PlanarAffine: abs)
  bool channel_max = false;          // Pass: the maximum over the input channels into one (MACCfg.OpMode 3)
  bool reduce_max = false;           // PlanarReduce: max (else sum)
  uint32_t row_groups = 0;           // PlanarReduce over the width alone: each of H rows a group (NumGroups H)
  bool out_channels_w = false;       // PlanarReduce: the C results written along W of one row (Broadcast.OutChannelsW)
  uint32_t final_scale = 0x3f800000; // PlanarReduce: fp32 1/N for a mean

  bool reads_kernel() const { return !kernel.empty() || kernel_owner >= 0; }
  // An element-wise planar-engine task of two sources (not the one-source affine).
  bool two_source_planar() const {
    return kind == TaskKind::PlanarAdd || kind == TaskKind::PlanarMul || kind == TaskKind::PlanarMax ||
           kind == TaskKind::PlanarMin;
  }
};

// L2 row strides count 16-byte units in a 17-bit field (L2.SourceRowStride,
// L2.ConvResultRowStride): the widest row one task can hold.
constexpr uint64_t kL2RowBytesMax = uint64_t{0x1ffff} * 16;

struct Plan {
  CompilerProfile profile = CompilerProfile::V421;
  bool macos26() const { return profile == CompilerProfile::Macos26; }
  std::vector<Tensor> tensors;
  std::vector<TaskPlan> tasks;
  uint64_t scratch_bytes = 0;
  std::vector<UnitLowering> lowering;
  // Tile-DMA data in __const after the kernel data (64-byte aligned): the
  // sections of tensor constants. Home::Constant tensors' offsets count from
  // the start of __const once the planner is done.
  Bytes constants;
};

// Resolves shapes, placement and the task list (plan.cpp).
Expected<Plan> plan_network(const Network& net, const CompileOptions& opts);

// Each task's kernel data offset inside __const: the tasks' own kernels back
// to back; a piece with a kernel_owner gets its owner's (container.cpp).
std::vector<uint64_t> kernel_bases(const Plan& plan);

// The widest L2 row (source, second source or result) the task's registers
// would hold, in bytes (lower.cpp, from the same rules that write them).
uint64_t widest_l2_row(const Plan& plan, const TaskPlan& task);

// Whether the second operand of task `reader` (a planar task) can be kept
// in L2: the neural engine's strips and the planar engine's agree (rows of at
// most 64 values on taller tensors) and everything fits L2's address fields
// (lower_l2.cpp).
bool kept_fits(const Plan& plan, size_t reader);

// The streams a task is written in (container.cpp): v4.2.1's layout, every
// block whole; macOS 26 writes the kernel-DMA block of a task that reads no
// kernel data as two streams, leaving out its 32 lane words 0x1F848 -
// 0x1F8C4 (every record: element-wise, relu, reductions; tables and
// convolutions keep the whole block).
std::vector<RegisterStream> task_stream_layout(const Plan& plan, const TaskPlan& task);
// Words of a task written in `layout`: the header and each stream's.
uint32_t task_words(const std::vector<RegisterStream>& layout);
// Each task's offset in __text, by the profile's placement (container.cpp).
std::vector<uint64_t> task_offsets(const Plan& plan);

// Register images of one task (lower_*.cpp). `kbase` is the task's offset of
// kernel data inside __const, `next_at` the next task's offset in __text
// (task_offsets; 0 for the last task).
Expected<RegisterImage> lower_task(const Network& net, const Plan& plan, size_t index, uint64_t kbase,
                                   uint64_t next_at);

// The HWX container around the encoded tasks (container.cpp).
Expected<HwxFile> assemble_container(const Network& net, const Plan& plan, const std::vector<RegisterImage>& images,
                                     const std::string& ident);


}  // namespace ane::compiler
