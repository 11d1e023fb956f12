// The L2 result store (l2.h).
#include "l2.h"

#include <array>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace ane::sim::detail {

namespace {

// Channels [k, k + dims.c) of `r` when `address` is channel k of its first
// row in the same layout (equal strides), the rows and columns whole.
bool channel_slice(uint64_t base, const L2Result& r, uint64_t address, const Operand& op, uint32_t& k) {
  if (address < base || r.channel_stride == 0 || op.broadcasts()) return false;
  if (op.l2_channel != r.channel_stride || op.l2_row != r.row_stride) return false;
  const uint64_t off = address - base;
  if (off % r.channel_stride || (r.row_stride && off >= r.row_stride)) return false;
  const uint64_t first = off / r.channel_stride;
  const Dims& d = op.dims;
  if (r.dims.g != 1 || d.g != 1 || d.h != r.dims.h || d.w != r.dims.w || first + d.c > r.dims.c) return false;
  k = static_cast<uint32_t>(first);
  return true;
}

// The address tables cost ~40 bytes per value: bounded (Apple's transposing
// reductions re-read results of at most a few hundred thousand values).
constexpr uint64_t kMaxValues = uint64_t{1} << 22;

// Calls fn(address, index) for each element of `r` left at `base`, in its
// dense order.
template <typename Fn>
void for_each_written(uint64_t base, const L2Result& r, Fn fn) {
  const Dims& rd = r.dims;
  uint64_t i = 0;
  for (uint64_t g = 0; g < rd.g; ++g)
    for (uint64_t c = 0; c < rd.c; ++c)
      for (uint64_t h = 0; h < rd.h; ++h)
        for (uint64_t w = 0; w < rd.w; ++w) fn(base + r.offset(rd, g, c, h, w), i++);
}

// Calls fn(address) for each element the operand reads from `address` with
// its own strides, in its order, while fn returns true.
template <typename Fn>
bool for_each_read(uint64_t address, const Operand& op, Fn fn) {
  const Dims& d = op.dims;
  // A broadcast axis repeats its one stored element: its stride is 0.
  const uint64_t channel = op.broadcast_c ? 0 : op.l2_channel, row = op.broadcast_h ? 0 : op.l2_row,
                 column = op.broadcast_w ? 0 : 2, group = op.broadcast_g ? 0 : op.l2_group;
  for (uint64_t g = 0; g < d.g; ++g)
    for (uint64_t c = 0; c < d.c; ++c)
      for (uint64_t h = 0; h < d.h; ++h)
        for (uint64_t w = 0; w < d.w; ++w)
          if (!fn(address + g * group + h * row + c * channel + w * column)) return false;
  return true;
}

// A layout as (extent, stride) pairs, innermost first: axes of extent 1
// dropped, an axis merged into the inner one before it where it continues it.
std::vector<std::pair<uint64_t, uint64_t>> layout(const Dims& d, std::array<uint64_t, 4> strides) {
  const std::array<uint64_t, 4> extents{d.g, d.c, d.h, d.w};
  std::vector<std::pair<uint64_t, uint64_t>> inner_first;
  for (int k = 3; k >= 0; --k) {
    if (extents[k] == 1) continue;
    if (!inner_first.empty() && strides[k] == inner_first.back().first * inner_first.back().second)
      inner_first.back().first *= extents[k];
    else
      inner_first.push_back({extents[k], strides[k]});
  }
  return inner_first;
}

// Whether the operand, reading at the result's own address, meets the
// result's values in their dense order: the plain reading then gives what
// the addresses would, without a table of them (eiln's softmax reads its
// 2,560 row maxima, one per group, as one channel of 2,560 rows).
bool reads_in_order(const L2Result& r, const Operand& op) {
  if (r.channels_inner) return false;
  return layout(op.stored(), {op.l2_group, op.l2_channel, op.l2_row, 2}) ==
         layout(r.dims, {r.group_stride, r.channel_stride, r.row_stride, 2});
}

}  // namespace

// Strides known on both sides (a result with its channel and row strides,
// a reader with its own), and a layout the plain reading would get wrong.
bool needs_addresses(const L2Result& r, const Operand& op) {
  if (r.channel_stride == 0) return false;
  // A one-channel reader leaves its channel stride unwritten; it still reads
  // a result laid channels innermost by its rows (chain_pair_mm_add: x plus
  // the projection's [256, 64] result, read back as 64 rows of 256).
  if (op.l2_channel == 0 && !(r.channels_inner && op.dims.c == 1)) return false;
  // A broadcast operand read plainly repeats the result's values in their
  // order; by address only where it groups them otherwise (softmax's row
  // maxima: one result per group of rows, read back as [C, H] and repeated
  // along W).
  if (op.broadcasts()) return r.dims.g > 1 && op.stored().g != r.dims.g && op.dims.g == 1;
  if (r.channels_inner) return true;
  return op.l2_channel != r.channel_stride || (op.dims.h > 1 && op.l2_row != r.row_stride) ||
         (op.dims.g > 1 && op.l2_group != r.group_stride);
}

Expected<L2View> L2Store::by_address(uint64_t address, const Operand& op, const char* what, uint32_t task) const {
  // The result whose bytes start at or before the address, nearest first.
  auto it = results_.upper_bound(address);
  if (it == results_.begin())
    return make_error(fmt::format("task {}: the {} reads L2 at {:#x}, where no earlier task left a result", task,
                                  what, address));
  --it;
  const uint64_t base = it->first;
  const L2Result& r = it->second;
  if (r.data.size() > kMaxValues || op.dims.elements() > kMaxValues)
    return make_error(fmt::format("unsupported: the {} re-reads a {}-value L2 result with other strides in task {} "
                                  "(at most {} values)",
                                  what, r.data.size(), task, kMaxValues));
  std::unordered_map<uint64_t, uint32_t> at;
  at.reserve(r.data.size());
  for_each_written(base, r, [&](uint64_t a, uint64_t i) { at.emplace(a, static_cast<uint32_t>(i)); });
  L2View v{&r, 0, false, {}, {}, {}};
  v.index.reserve(op.dims.elements());
  const bool whole = for_each_read(address, op, [&](uint64_t a) {
    const auto hit = at.find(a);
    if (hit == at.end()) return false;
    v.index.push_back(hit->second);
    return true;
  });
  if (!whole) return across_results(address, op, what, task);
  return v;
}

Expected<L2View> L2Store::across_results(uint64_t address, const Operand& op, const char* what,
                                         uint32_t task) const {
  uint64_t total = 0;
  for (const auto& [base, r] : results_) total += r.data.size();
  if (total > kMaxValues || op.dims.elements() > kMaxValues)
    return make_error(fmt::format("unsupported: the {} gathers from {} L2 values across results in task {} (at "
                                  "most {} values)",
                                  what, total, task, kMaxValues));
  std::unordered_map<uint64_t, uint16_t> at;
  at.reserve(total);
  for (const auto& entry : results_) {  // (clang does not capture structured bindings)
    const L2Result& r = entry.second;
    for_each_written(entry.first, r, [&](uint64_t a, uint64_t i) { at[a] = r.data[i]; });
  }
  L2View v{&results_.begin()->second, 0, false, {}, {}, {}};
  v.gathered.reserve(op.dims.elements());
  uint64_t missing = 0;
  const bool whole = for_each_read(address, op, [&](uint64_t a) {
    const auto hit = at.find(a);
    if (hit == at.end()) {
      missing = a;
      return false;
    }
    v.gathered.push_back(hit->second);
    return true;
  });
  if (!whole)
    return make_error(fmt::format("task {}: the {} reads L2 byte {:#x}, which no earlier task wrote", task, what, missing));
  return v;
}

std::optional<L2View> L2Store::row_of_one_channel(uint64_t address, const Operand& op) const {
  // A tensor constant's copy: one channel of several rows, each the W
  // values of one operand (b, then c one Source2RowStride on); a row read as
  // channels along W is those values in order. A result of one row is the
  // case get() takes itself.
  auto it = results_.upper_bound(address);
  if (it == results_.begin()) return std::nullopt;
  --it;
  const uint64_t base = it->first;
  const L2Result& r = it->second;
  const Dims& d = r.dims;
  if (d.g != 1 || d.c != 1 || d.h < 2 || r.channels_inner || r.row_stride == 0) return std::nullopt;
  if ((address - base) % r.row_stride != 0 || d.w != op.stored().elements()) return std::nullopt;
  const uint64_t h = (address - base) / r.row_stride;
  if (h >= d.h) return std::nullopt;
  L2View v{&r, 0, false, {}, {}, {}};
  v.first_value = h * d.w;
  return v;
}

Expected<L2View> L2Store::get(uint64_t address, const Operand& op, const char* what, uint32_t task) const {
  if (op.channels_w) {
    // The values of a result laid with its channels along W, one per
    // channel in channel order: a reduction's with OutChannelsW, or a single
    // row of one channel, whose W values lie so (layer_norm over C of
    // [1,C,1,1] normalizes x as one row in place, and its last task reads
    // the row back as C channels).
    const auto it = results_.find(address);
    const auto one_row = [](const Dims& d) { return d.g == 1 && d.c == 1 && d.h == 1; };
    if (auto row = row_of_one_channel(address, op)) return *row;
    if (it == results_.end() || !(it->second.channels_inner || one_row(it->second.dims)) ||
        it->second.dims.elements() != op.stored().elements())
      return make_error(fmt::format("unsupported: the {} reads L2 at {:#x} as channels laid along W (Broadcast "
                                    "ChannelsW), where no earlier result of as many values was laid so, in task {}",
                                    what, address, task));
    return L2View{&it->second, 0, false, {}, {}, {}};
  }
  if (auto near = results_.upper_bound(address); near != results_.begin()) {
    --near;
    if (needs_addresses(near->second, op) && !(near->first == address && reads_in_order(near->second, op)))
      return by_address(address, op, what, task);
  }
  const auto it = results_.find(address);
  if (it == results_.end()) {
    for (const auto& [base, r] : results_) {
      uint32_t k = 0;
      if (channel_slice(base, r, address, op, k)) return L2View{&r, k, true, {}, {}, {}};
    }
    return make_error(fmt::format("task {}: the {} reads L2 at {:#x}, where no earlier task left a result", task,
                                  what, address));
  }
  const L2Result& r = it->second;
  const uint64_t want = op.stored().elements(), have = r.dims.elements();
  uint32_t k = 0;
  if (want < have && channel_slice(address, r, address, op, k)) return L2View{&r, 0, true, {}, {}, {}};
  if (want != have)
    return make_error(fmt::format("task {}: the {} reads {} values{} from L2 at {:#x}, where task {} left {}", task,
                                  what, want, op.broadcasts() ? " (before broadcasting)" : "", address, r.task, have));
  return L2View{&r, 0, false, {}, {}, {}};
}

uint64_t L2Store::bytes() const {
  uint64_t n = 0;
  for (const auto& [a, r] : results_) n += r.data.size() * sizeof(uint16_t);
  return n;
}

}  // namespace ane::sim::detail
