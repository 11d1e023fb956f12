#include "kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "ane/fp16.h"
#include "plan.h"

namespace ane::compiler {

Expected<std::vector<uint16_t>> WeightFiles::read(const SourceRef& index_ref, const SourceRef& offset_ref,
                                                  const WeightRef& w, uint64_t count, const char* what) {
  if (w.index >= net_.weight_paths.size())
    return network_error(net_.path, index_ref,
                         fmt::format("{} {} names weight file {}, but Weights lists {}", what, w.index, w.index,
                                     net_.weight_paths.size()));
  auto it = files_.find(w.index);
  const bool in_memory = w.index < net_.weight_contents.size() && !net_.weight_contents[w.index].empty();
  if (!in_memory && it == files_.end()) {
    // Only regular files: a plist naming /dev/zero or a FIFO must not hang the build.
    std::error_code ec;
    if (std::filesystem::exists(net_.weight_paths[w.index], ec) &&
        !std::filesystem::is_regular_file(net_.weight_paths[w.index], ec))
      return network_error(net_.path, index_ref,
                           fmt::format("weight file '{}' ('{}') is not a regular file", net_.weights[w.index],
                                       net_.weight_paths[w.index]));
    auto bytes = read_file(net_.weight_paths[w.index]);
    if (!bytes) {
      const std::string& written = net_.weights[w.index];
      const std::string& resolved = net_.weight_paths[w.index];
      return network_error(net_.path, index_ref,
                           fmt::format("weight file '{}'{}: {}", written,
                                       written == resolved ? "" : fmt::format(" (resolved to '{}')", resolved),
                                       bytes.error().message));
    }
    it = files_.emplace(w.index, std::move(bytes).value()).first;
  }
  const Bytes& file = in_memory ? net_.weight_contents[w.index] : it->second;
  const uint64_t esize = element_type_bytes(w.type);
  if (count > (uint64_t{1} << 40) / esize)
    return network_error(net_.path, offset_ref, fmt::format("{} of {} values is too large", what, count));
  const uint64_t need = count * esize;
  if (w.offset > file.size() || need > file.size() - w.offset)
    return network_error(net_.path, offset_ref,
                         fmt::format("{} needs {:#x} bytes ({} {} values) at offset {:#x}, past the end of '{}' "
                                     "({:#x} bytes)",
                                     what, need, count, element_type_plist_name(w.type), w.offset,
                                     net_.weights[w.index], file.size()));
  std::vector<uint16_t> out(count);
  const uint8_t* p = file.data() + w.offset;
  for (uint64_t i = 0; i < count; ++i) {
    if (w.type == ElementType::Float16) {
      out[i] = static_cast<uint16_t>(p[2 * i] | p[2 * i + 1] << 8);
    } else {  // Float32 (the caller refused other types)
      uint32_t bits = uint32_t{p[4 * i]} | uint32_t{p[4 * i + 1]} << 8 | uint32_t{p[4 * i + 2]} << 16 |
                      uint32_t{p[4 * i + 3]} << 24;
      float f;
      std::memcpy(&f, &bits, sizeof f);
      out[i] = float_to_fp16(f);
      if (std::isfinite(f) && fp16_is_inf(out[i]))
        return network_error(net_.path, offset_ref,
                             fmt::format("{} value {} ({}) is beyond the fp16 range (65504)", what, i, f));
    }
  }
  return out;
}

Expected<KernelLayout> layout_conv_kernel(const ConvKernelShape& shape, const std::vector<uint16_t>& weights,
                                          const std::vector<uint16_t>& bias) {
  auto packed = pack_conv_kernel(shape, {weights, bias});
  if (!packed) return packed.error();
  KernelLayout k;
  k.bytes = std::move(packed->bytes);
  for (int i = 0; i < kKernelLanes; ++i) {
    if (!packed->lane_size[i]) continue;
    k.lane_offsets.push_back(packed->lane_offset[i]);
    k.lane_sizes.push_back(packed->lane_size[i]);
  }
  k.ocg_size = shape.ocg;
  return k;
}

}  // namespace ane::compiler
