// Network -> Plan, part 3: tasks too wide for one L2 row, split by width.
//
// On one-row tensors L2 holds all channels of a row side by side, and the row
// strides count 16-byte units in 17-bit fields (kL2RowBytesMax, 2 MiB). A
// 512-channel row of 8192 positions needs 8 MiB. No Apple-compiled sample is
// that wide, so the split is libane's own rule (docs/compiler.md, "Width
// pieces"): the task becomes the fewest pieces of equal width (the last one
// narrower) whose rows fit, each a whole task on columns [col, col + cols) of
// the same tensors. Pieces start on a 64-byte DMA address (a multiple of 32
// columns) and stay wider than 8 columns, so that OCGSize and SmallSourceMode,
// hence the kernel layout, are the whole task's: later pieces read the first
// piece's kernel data instead of a copy. Only tasks whose columns are
// independent are split: 1x1 stride-1 convolutions and neural-engine
// pass-throughs (a wider window would need overlapping pieces, and the planar
// engine's second source has no base register of its own).
#include <fmt/format.h>

#include "planner.h"

namespace ane::compiler {

namespace {

uint32_t ceil_div(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

constexpr uint32_t kPieceAlign = 32;      // columns: 64 bytes of fp16
constexpr uint32_t kPieceMinColumns = 9;  // above the 8x8 rules (compiler_conv_ocg, SmallSourceMode)

}  // namespace

Status Planner::add_task_in_pieces(TaskPlan t, UnitLowering& ul, const Layer& l) {
  const uint64_t widest = widest_l2_row(plan_, t);
  if (widest <= kL2RowBytesMax) {
    add_task(std::move(t), ul);
    return Ok{};
  }
  const Tensor& src = plan_.tensors[t.src];
  const Tensor& dst = plan_.tensors[t.dst];
  const bool columns_independent =
      (t.kind == TaskKind::Pass || (t.kind == TaskKind::Conv && t.kw == 1 && t.kh == 1 && t.stride == 1)) &&
      src.w == dst.w && src.h == dst.h && t.dst_channel_offset == 0 && !t.compiler_copy;
  auto too_wide = [&](const std::string& why) {
    return fail(l.at("Bottom"), fmt::format("unsupported: one row of '{}' ({} x {} channels) needs {:#x} bytes of L2, "
                                            "more than the row-stride fields hold ({:#x}); {}",
                                            l.name, src.w, src.c, widest, kL2RowBytesMax, why));
  };
  if (!columns_independent)
    return too_wide("only 1x1 stride-1 convolutions and neural-engine pass-throughs are split by width");
  const uint32_t width = dst.w;
  TaskPlan rest = t;  // the later pieces (and the probe of each split): no kernel bytes of their own
  rest.kernel.clear();
  for (uint32_t n = 2; n <= ceil_div(width, kPieceAlign); ++n) {
    const uint32_t cols = ceil_div(ceil_div(width, n), kPieceAlign) * kPieceAlign;
    if (uint64_t{cols} * (n - 1) >= width) continue;
    const uint32_t last = width - cols * (n - 1);
    if (cols < kPieceMinColumns || last < kPieceMinColumns) continue;
    TaskPlan probe = rest;
    probe.cols = cols;
    if (widest_l2_row(plan_, probe) > kL2RowBytesMax) continue;

    ul.notes.push_back(fmt::format("split by width into {} tasks of {} columns (the last {}): one row of all {} "
                                   "columns needs {:#x} bytes of L2, the row-stride fields hold {:#x}; the pieces "
                                   "share the first one's kernel data (libane's rule, no Apple-compiled sample)",
                                   n, cols, last, width, widest, kL2RowBytesMax));
    t.cols = cols;
    const auto first = static_cast<int>(add_task(std::move(t), ul));
    for (uint32_t k = 1; k < n; ++k) {
      TaskPlan piece = rest;
      piece.col = k * cols;
      piece.cols = k + 1 < n ? cols : last;
      if (plan_.tasks[static_cast<size_t>(first)].reads_kernel()) piece.kernel_owner = first;
      add_task(std::move(piece), ul);
    }
    return Ok{};
  }
  return too_wide("no split into 32-column pieces fits either");
}

}  // namespace ane::compiler
