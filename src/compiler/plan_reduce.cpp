// Network -> Plan: the Reduction layer (docs/compiler.md, the reduction rows
// of the layer table), from the mil-hwx-compiler reduction records.
#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "planner.h"

namespace ane::compiler {

// A reduction over each channel's H x W plane (Height and Width, or the one
// axis longer than 1) is one planar-engine task, TaskType 5 (records
// reduce_probe_{sum,mean}_ax2_3 / _ax3: PoolMode 0 sums, 2 takes the
// maximum; a mean sums and scales by 1/N in FinalScale). Over the width
// alone each row is a group; over channels, a neural-engine channel maximum,
// the channels of 1x1 planes as rows, or a copy of one channel. Apple's
// transposing forms (channels of larger planes, the height alone) are
// refused by name.
Status Planner::plan_reduction(const Layer& l, UnitLowering& ul) {
  const auto& p = std::get<ReductionParams>(l.params);
  auto src = single_source(l);
  if (!src) return src.error();
  Tensor in = plan_.tensors[*src];
  bool h = false, w = false, c = false;
  for (const auto& d : p.dimensions) {
    if (d == "Height") h = true;
    else if (d == "Width") w = true;
    else if (d == "Channel") c = true;
    else
      return fail(l.at("Params.Dimension"), fmt::format("unsupported: a reduction over '{}'", d));
  }
  if (c && !h && !w && in.c == 1) {
    // Over one channel every reduction is the value itself: a compiler copy
    // (records reduce_probe_{mean,sum}_ax1_1x1x1x*: one neural-engine copy, DebugLogEvents 0x68).
    return plan_copy(l, *src, fmt::format("{} over one channel: the value itself, one neural-engine copy task", p.op),
                     ul);
  }
  if (c && !h && !w && p.op == "Max") {
    // The maximum over channels: one neural-engine task from C channels into
    // one, MACCfg.OpMode 3 with every channel unicast (records
    // reduce_probe_max_ax1_* and reduce_max_axes_1, 1x1 to 16x16 planes).
    if (auto ch = check_channels(l, in.c); !ch) return ch;
    auto dst = result_tensor(l, 1, in.h, in.w);
    if (!dst) return dst.error();
    TaskPlan t;
    t.kind = TaskKind::Pass;
    t.unit = l.name;
    t.src = *src;
    t.dst = *dst;
    t.channel_max = true;
    ul.rule = fmt::format("Max over {} channels: one neural-engine task into one channel (MACCfg.OpMode 3)", in.c);
    add_pass_notes(plan_.tensors[*dst], ul);
    add_task(std::move(t), ul);
    return Ok{};
  }
  if (c) {
    // Channels of one-value planes are read as the rows of one plane, the
    // channel stride the row stride, and reduced as that plane (records
    // reduce_probe_*_ax1_1xCx1x1: one reduction task, Hin = C, Cin = 1).
    if (p.op == "Min")
      return fail(l.at("Params.Type"), "unsupported: a channel minimum (no record shows Apple's form)");
    if (in.h != 1 || in.w != 1)
      return fail(l.at("Params.Dimension"),
                  fmt::format("unsupported: a reduction over 'Channel' of {}x{} planes (hwx-build reduces H x W "
                              "planes, and channels of 1x1 planes; Apple compiles the others to other task forms, "
                              "which hwx-run runs)",
                              in.h, in.w));
    Tensor rows = in;
    rows.name = in.name + "@rows";
    rows.c = 1;
    rows.h = in.c;
    // The plane stride stays the channels', the depth the whole tensor (records: 64 bytes and C x 64).
    rows.row_stride = in.plane_stride;
    rows.depth_stride = uint64_t{in.c} * in.plane_stride;
    rows.view_of = *src;
    in = rows;
    src = add_tensor(std::move(rows));
    h = true;
  }
  if (!c && in.h == 1 && in.w >= 128 && in.w % 128 == 0 && plan_.macos26()) {
    // macOS 26 reads a long row as 4 rows of W/4 (records
    // reduce_probe_*_ax3_1xCx1x128: 4 x 32, _1x1x1x512: 4 x 128; a row of
    // 64 stays one row). The result is the same sum or maximum.
    Tensor rows = in;
    rows.name = in.name + "@fold";
    rows.h = 4;
    rows.w = in.w / 4;
    rows.row_stride = uint64_t{rows.w} * 2;
    rows.view_of = *src;
    in = rows;
    src = add_tensor(std::move(rows));
    h = w = true;
    ul.notes.push_back(fmt::format("the row of {} values is read as 4 rows of {} (macOS 26 records)", in.w * 4, in.w));
  }
  // Over the width alone of a taller plane: each row is a group of a
  // one-row reduction (records reduce_probe_*_ax3_1xCxHxW: NumGroups H, the
  // group strides the rows', the row strides the whole tensors').
  // A tensor's first row seen alone, its row stride the whole tensor's: the
  // group stride is then the tensor's own row stride (lower.cpp).
  auto one_row_view = [&](int of) {
    Tensor row = plan_.tensors[of];
    row.name += "@row";
    row.h = 1;
    row.row_stride = uint64_t{row.c} * row.plane_stride;
    row.view_of = of;
    return add_tensor(std::move(row));
  };
  uint32_t row_groups = 0;
  if (w && !h && in.h > 1) {
    row_groups = in.h;
    src = one_row_view(*src);
    in = plan_.tensors[*src];
  }
  // The engine reduces whole planes: both axes, or the only one longer than 1.
  if (!((h && w) || (w && in.h == 1) || (h && in.w == 1)))
    return fail(l.at("Params.Dimension"),
                fmt::format("unsupported: a reduction over Height alone of a {}x{} plane (known: the whole H x W "
                            "plane, or the width alone; Apple transposes through L2 in three tasks, which hwx-run "
                            "runs)",
                            in.h, in.w));
  TaskPlan t;
  t.kind = TaskKind::PlanarReduce;
  t.unit = l.name;
  t.src = *src;
  const uint64_t n = uint64_t{in.h} * in.w;
  if (p.op == "Sum") {
  } else if (p.op == "Avg") {
    const float inv = 1.0f / static_cast<float>(n);
    __builtin_memcpy(&t.final_scale, &inv, sizeof inv);
  } else if (p.op == "Max") {
    t.reduce_max = true;
  } else {
    return fail(l.at("Params.Type"), fmt::format("unsupported reduction type '{}' (known: Sum, Avg, Max)", p.op));
  }
  if (auto c = check_channels(l, in.c); !c) return c;
  if (p.channels_along_width && row_groups)
    return fail(l.at("Params.Dimension"), "unsupported: a width reduction of a taller plane laid out as one row");
  auto dst = p.channels_along_width ? result_tensor(l, 1, 1, in.c) : result_tensor(l, in.c, std::max(row_groups, 1u), 1);
  if (!dst) return dst.error();
  t.dst = *dst;
  t.out_channels_w = p.channels_along_width;
  if (row_groups) {
    t.dst = one_row_view(*dst);
    t.row_groups = row_groups;
  }
  const std::string scale = p.op == "Avg" ? fmt::format(", FinalScale 1/{}", n) : "";
  ul.rule = row_groups ? fmt::format("{} over each row of {}: one planar-engine reduction task, the {} rows its "
                                     "groups (TaskType 5, NumGroups {}{})",
                                     p.op, in.w, row_groups, row_groups, scale)
                      : fmt::format("{} over each {}x{} plane: one planar-engine reduction task (TaskType 5{})", p.op,
                                    in.h, in.w, scale);
  ul.notes.push_back("reduction task registers follow macOS 26 records (v4.2.1 has no reduction sample)");
  if (c)
    ul.notes.push_back(fmt::format("the {} channels of 1x1 planes are read as the rows of one plane (records "
                                   "reduce_probe_*_ax1_1xCx1x1)",
                                   in.h));
  add_task(std::move(t), ul);
  return Ok{};
}

}  // namespace ane::compiler
