// Kernel data: reading weights out of the plist's weight files and laying
// them out in kernel-DMA lanes (plist-to-hwx.md section 7).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ane/bytes.h"
#include "ane/conv_kernel.h"
#include "ane/error.h"
#include "ane/network.h"

namespace ane::compiler {

// The network's weight files, each read once.
class WeightFiles {
 public:
  explicit WeightFiles(const Network& net) : net_(net) {}

  // `count` values of w.type at w.offset of Weights[w.index], as fp16 bits.
  // Errors name the key (index_ref / offset_ref) and the file.
  Expected<std::vector<uint16_t>> read(const SourceRef& index_ref, const SourceRef& offset_ref, const WeightRef& w,
                                       uint64_t count, const char* what);

 private:
  const Network& net_;
  std::map<uint32_t, Bytes> files_;
};

struct KernelLayout {
  Bytes bytes;
  std::vector<uint64_t> lane_offsets, lane_sizes;
  uint32_t ocg_size = 0;  // log2(output channels per lane)
  std::vector<std::string> notes;
};

// The kernel section of one convolution task, laid out by ane/conv_kernel.h:
// weights [outputs][reduction] and bias (empty or one per output), fp16 bits.
Expected<KernelLayout> layout_conv_kernel(const ConvKernelShape& shape, const std::vector<uint16_t>& weights,
                                          const std::vector<uint16_t>& bias);

}  // namespace ane::compiler
