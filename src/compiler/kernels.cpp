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
  if (it == files_.end()) {
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
  const Bytes& file = it->second;
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

// Cout <= 16: lane o holds output channel o, [bias][weights] padded to a
// 64-byte row. Cout > 16: 16 lanes of (Cout/16) rows each. Which channels a
// lane holds, and in what order, is not known: with all weights equal it
// cannot matter and the rows are written in channel order; otherwise the
// simulator's assumption A2 (input-major inside the lane) is used on request.
Expected<KernelLayout> layout_conv_kernel(const std::vector<uint16_t>& weights, const std::vector<uint16_t>& bias,
                                          uint32_t cin, uint32_t cout, bool assume_ocg_layout) {
  KernelLayout k;
  const uint32_t has_bias = bias.empty() ? 0 : 1;
  const uint32_t lanes = std::min<uint32_t>(cout, 16);
  const uint32_t per = cout > 16 ? cout / 16 : 1;
  while ((1u << k.ocg_size) < per) ++k.ocg_size;
  const uint64_t row = roundup((uint64_t{has_bias} + cin) * 2, 64);
  const uint64_t chunk = per * row;
  k.bytes.assign(lanes * chunk, 0);
  auto put = [&](uint64_t off, uint16_t v) {
    k.bytes[off] = static_cast<uint8_t>(v);
    k.bytes[off + 1] = static_cast<uint8_t>(v >> 8);
  };
  const bool uniform = std::all_of(weights.begin(), weights.end(), [&](uint16_t v) { return v == weights[0]; });
  const bool input_major = per > 1 && !uniform;
  if (input_major && !assume_ocg_layout)
    return make_error(fmt::format(
        "unsupported: {} output channels ({} per kernel lane) with weights that are not all equal: the order of "
        "output channels inside a lane is not known (use --assume-ocg-layout for the simulator's assumption A2)",
        cout, per));
  for (uint32_t g = 0; g < lanes; ++g) {
    k.lane_offsets.push_back(g * chunk);
    k.lane_sizes.push_back(chunk);
    for (uint32_t local = 0; local < per; ++local) {
      const uint32_t oc = g * per + local;
      if (input_major) {
        for (uint32_t ic = 0; ic < cin; ++ic)
          put(g * chunk + 2 * (uint64_t{ic} * per + local), weights[uint64_t{oc} * cin + ic]);
      } else {
        const uint64_t base = g * chunk + local * row;
        if (has_bias) put(base, bias[oc]);
        for (uint32_t ic = 0; ic < cin; ++ic) put(base + 2 * (has_bias + uint64_t{ic}), weights[uint64_t{oc} * cin + ic]);
      }
    }
  }
  if (input_major) k.notes.push_back("assumption A2: lane g holds output channels g*n..g*n+n-1, input-major");
  else if (per > 1)
    k.notes.push_back("all weights are equal, so the unknown channel order inside a lane cannot change the result");
  return k;
}

}  // namespace ane::compiler
