// L2 as the chained tasks use it: a task whose result stays in L2
// (L2.ResultCfg.ResultType 0 or 3, no TileDMADst) leaves a tensor at
// ResultBase; a later task reads it through SourceBase / Source2Base
// (SourceType 0 or 3). The simulator keeps each such result whole, as fp16,
// keyed by its L2 byte address: the hardware streams it through L2 tile by
// tile (TileCfg), which changes where bytes sit but not which values meet
// which (docs/simulator.md, "L2").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ane/error.h"
#include "buffer.h"
#include "plan.h"

namespace ane::sim::detail {

struct L2Result {
  Dims dims;
  Buf<uint16_t> data;  // fp16, dense [g][c][h][w]; every writer fills it whole
  uint32_t task = 0;           // the task that left it
  uint64_t channel_stride = 0, row_stride = 0;  // where its channels and rows sit in L2 (bytes)
  uint64_t group_stride = 0;
  bool channels_inner = false;  // channels 2 bytes apart, W at the channel stride
  // Its elements' L2 byte addresses, relative to where it was left.
  uint64_t offset(const Dims& d, uint64_t g, uint64_t c, uint64_t h, uint64_t w) const {
    (void)d;
    return channels_inner ? g * group_stride + h * row_stride + w * channel_stride + 2 * c
                          : g * group_stride + h * row_stride + c * channel_stride + 2 * w;
  }
};

// What an operand reads: a whole result, or a run of its channels (an
// address inside the result's first row, as tiled convolutions read one
// group's channels of an earlier copy).
struct L2View {
  const L2Result* result = nullptr;
  uint32_t first_channel = 0;
  bool slice = false;
  // Read plainly from this value on (a row of a one-channel result read as
  // channels along W: a tensor constant's copy, one row per operand).
  uint64_t first_value = 0;
  // By address: element i of the operand is result->data[index[i]] (a result
  // re-read with other strides, e.g. transposed).
  std::vector<uint32_t> index;
  // By address across several results (pow's last task reads the channels
  // of two, interleaved): the operand's fp16 values, in its order.
  std::vector<uint16_t> gathered;
};

class L2Store {
 public:
  void put(uint64_t address, L2Result r) { results_[address] = std::move(r); }
  // The result at `address` as the operand's dims see it: the same values in
  // the same order (another grouping of the same count), or one value per
  // row repeated along W when the operand broadcasts. `what` names the
  // operand in errors: "task 3: the first source reads L2 at 0x0, where ...".
  Expected<L2View> get(uint64_t address, const Operand& op, const char* what, uint32_t task) const;
  // The operand gathered through L2 byte addresses: each element the reader's
  // strides name must be one a result's own strides wrote.
  Expected<L2View> by_address(uint64_t address, const Operand& op, const char* what, uint32_t task) const;
  uint64_t bytes() const;
  void clear() { results_.clear(); }

 private:
  // by_address over every result: each element the reader's strides name
  // must be one some earlier result wrote.
  Expected<L2View> across_results(uint64_t address, const Operand& op, const char* what, uint32_t task) const;

  // A row of a one-channel result of several rows, read as channels along W.
  std::optional<L2View> row_of_one_channel(uint64_t address, const Operand& op) const;

  std::map<uint64_t, L2Result> results_;
};

}  // namespace ane::sim::detail
