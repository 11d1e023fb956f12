// MIL conv -> a Conv unit (and a GOC for its bias), with the weights read
// where the MIL says: a checked MILBlob v2 record, or values in the text.
#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>

#include "ane/fp16.h"
#include "mil_lowering.h"

namespace ane::mil_lowering {
namespace {

// coremltools' "same": the output is ceil(in / stride); the padding that
// needs is split with the smaller half first ("same_lower": larger first).
std::pair<int64_t, int64_t> same_pads(int64_t in, int64_t k, int64_t stride, int64_t dilation, bool lower) {
  const int64_t out = (in + stride - 1) / stride;
  const int64_t total = std::max<int64_t>(0, (out - 1) * stride + (k - 1) * dilation + 1 - in);
  const int64_t small = total / 2;
  return lower ? std::pair{total - small, small} : std::pair{small, total - small};
}

bool in_u16(int64_t v) { return v >= 0 && v <= 0xffff; }

}  // namespace

Expected<uint32_t> Lowering::weight_file(const Operation& op, std::string_view argument, const std::string& blob_path) {
  namespace fs = std::filesystem;
  std::string resolved;
  std::error_code ec;
  if (!opts_.weights.empty() && fs::is_regular_file(opts_.weights, ec)) {
    resolved = opts_.weights;  // --weights FILE: every BLOBFILE reads it
  } else {
    const fs::path base =
        opts_.weights.empty() ? fs::path(program_.path).parent_path() : fs::path(opts_.weights);
    const std::string kRoot = "@model_path";
    std::string rest = blob_path;
    if (rest.rfind(kRoot, 0) == 0) rest = rest.substr(kRoot.size());
    while (!rest.empty() && rest.front() == '/') rest.erase(0, 1);
    fs::path p = fs::path(blob_path).is_absolute() && blob_path.rfind(kRoot, 0) != 0 ? fs::path(blob_path)
                                                                                       : base / rest;
    resolved = p.lexically_normal().string();
  }
  if (auto it = weight_index_.find(resolved); it != weight_index_.end()) return it->second;
  if (fs::exists(resolved, ec) && !fs::is_regular_file(resolved, ec))
    return fail(op, argument, fmt::format("weight file '{}' ('{}') is not a regular file", blob_path, resolved));
  auto bytes = read_file(resolved);
  if (!bytes)
    return fail(op, argument, fmt::format("weight file '{}' ('{}'): {}", blob_path, resolved, bytes.error().message));
  auto file = mil::BlobFile::open(*bytes, resolved);
  if (!file) return fail(op, argument, fmt::format("weight file '{}': {}", blob_path, file.error().str()));
  const auto index = static_cast<uint32_t>(net_.weights.size());
  net_.weights.push_back(blob_path);
  net_.weight_paths.push_back(resolved);
  net_.weight_contents.resize(index);
  net_.weight_contents.push_back(std::move(bytes).value());
  weight_index_[resolved] = index;
  return index;
}

Expected<WeightRef> Lowering::weight(const Operation& op, std::string_view argument, const Literal& c) {
  WeightRef w;
  mil::BlobDataType blob_type;
  uint32_t element_bytes;
  switch (c.type.dtype) {
    case mil::DType::Fp16:
      w.type = ElementType::Float16;
      blob_type = mil::BlobDataType::Fp16;
      element_bytes = 2;
      break;
    case mil::DType::Fp32:
      w.type = ElementType::Float32;
      blob_type = mil::BlobDataType::Fp32;
      element_bytes = 4;
      break;
    default:
      return fail(op, argument,
                  fmt::format("{} weights are not supported (fp16 and fp32 are)", mil::type_text(c.type)));
  }
  const uint64_t count = c.type.element_count();
  if (count == 0 || count > (uint64_t{1} << 32))
    return fail(op, argument, fmt::format("{} has {} elements", mil::type_text(c.type), count));
  if (const auto* blob = std::get_if<mil::BlobRef>(&c.values)) {
    auto index = weight_file(op, argument, blob->path);
    if (!index) return index.error();
    mil::BlobFile file = *mil::BlobFile::open(net_.weight_contents[*index], net_.weight_paths[*index]);
    auto meta = file.metadata(blob->offset, blob_type, count * element_bytes);
    if (!meta) return fail(op, argument, fmt::format("'{}': {}", net_.weights[*index], meta.error().str()));
    w.index = *index;
    w.offset = meta->data_offset;
    return w;
  }
  // Values written in the text: kept as an in-memory fp16 "file".
  const auto* values = std::get_if<std::vector<double>>(&c.values);
  if (!values || values->size() != count)
    return fail(op, argument, fmt::format("expected {} floating-point values", count));
  Bytes bytes(count * 2);
  for (uint64_t i = 0; i < count; ++i) {
    const uint16_t h = float_to_fp16(static_cast<float>((*values)[i]));
    if (std::isfinite((*values)[i]) && fp16_is_inf(h))
      return fail(op, argument, fmt::format("value {} ({}) is beyond the fp16 range (65504)", i, (*values)[i]));
    bytes[2 * i] = static_cast<uint8_t>(h);
    bytes[2 * i + 1] = static_cast<uint8_t>(h >> 8);
  }
  w.index = static_cast<uint32_t>(net_.weights.size());
  w.offset = 0;
  w.type = ElementType::Float16;
  net_.weights.push_back(fmt::format("<constant '{}' at line {}>", op.result, c.line));
  net_.weight_paths.push_back(net_.weights.back());
  net_.weight_contents.resize(w.index);
  net_.weight_contents.push_back(std::move(bytes));
  return w;
}

Status Lowering::lower_conv(const Operation& op) {
  auto x = tensor(op, "x");
  if (!x) return x.error();
  if (x->type.shape.size() != 4)
    return fail(op, "x", fmt::format("{}: only 2-D convolutions (rank-4 input) are supported", mil::type_text(x->type)));
  auto wc = constant(op, "weight", true);
  if (!wc) return wc.error();
  const Literal& wl = **wc;
  if (wl.type.shape.size() != 4)
    return fail(op, "weight", fmt::format("{}: expected [Cout, Cin / groups, kH, kW]", mil::type_text(wl.type)));
  auto groups = ints(op, "groups", {1});
  auto strides = ints(op, "strides", {1, 1});
  auto dilations = ints(op, "dilations", {1, 1});
  auto pad_type = text(op, "pad_type", "valid");
  if (!groups) return groups.error();
  if (!strides) return strides.error();
  if (!dilations) return dilations.error();
  if (!pad_type) return pad_type.error();
  if (groups->size() != 1 || groups->front() < 1 || !in_u16(groups->front()))
    return fail(op, "groups", "expected one integer from 1 to 65535");
  if (strides->size() != 2 || !in_u16((*strides)[0]) || !in_u16((*strides)[1]) || (*strides)[0] < 1 ||
      (*strides)[1] < 1)
    return fail(op, "strides", "expected two integers [y, x] from 1 to 65535");
  if (dilations->size() != 2 || !in_u16((*dilations)[0]) || !in_u16((*dilations)[1]) || (*dilations)[0] < 1 ||
      (*dilations)[1] < 1)
    return fail(op, "dilations", "expected two integers [y, x] from 1 to 65535");
  const int64_t g = groups->front(), cin = x->surface.c, cout = wl.type.shape[0];
  const int64_t kh = wl.type.shape[2], kw = wl.type.shape[3];
  if (!in_u16(kh) || !in_u16(kw) || kh < 1 || kw < 1 || cout < 1 || cout > 0x1ffff)
    return fail(op, "weight", fmt::format("{}: kernel or channel count out of range", mil::type_text(wl.type)));
  if (wl.type.shape[1] * g != cin || cout % g != 0)
    return fail(op, "weight",
                fmt::format("{} does not fit {} input channels in {} groups", mil::type_text(wl.type), cin, g));
  std::array<int64_t, 4> pad{};  // top, bottom, left, right
  const int64_t sy = (*strides)[0], sx = (*strides)[1], dy = (*dilations)[0], dx = (*dilations)[1];
  if (*pad_type == "custom") {
    auto p = ints(op, "pad", {}, true);
    if (!p) return p.error();
    if (p->size() != 4 || !std::all_of(p->begin(), p->end(), in_u16))
      return fail(op, "pad", "expected four integers [top, bottom, left, right] from 0 to 65535");
    std::copy(p->begin(), p->end(), pad.begin());
  } else if (*pad_type == "same" || *pad_type == "same_lower") {
    const bool lower = *pad_type == "same_lower";
    std::tie(pad[0], pad[1]) = same_pads(x->surface.h, kh, sy, dy, lower);
    std::tie(pad[2], pad[3]) = same_pads(x->surface.w, kw, sx, dx, lower);
  } else if (*pad_type != "valid") {
    return fail(op, "pad_type", fmt::format("'{}' is not a MIL padding type (valid, same, same_lower, custom)",
                                            *pad_type));
  }
  const int64_t hout = (x->surface.h + pad[0] + pad[1] - ((kh - 1) * dy + 1)) / sy + 1;
  const int64_t wout = (x->surface.w + pad[2] + pad[3] - ((kw - 1) * dx + 1)) / sx + 1;
  if (hout < 1 || wout < 1 || x->surface.h + pad[0] + pad[1] < (kh - 1) * dy + 1 ||
      x->surface.w + pad[2] + pad[3] < (kw - 1) * dx + 1)
    return fail(op, "weight", "the kernel is larger than the padded input");

  auto kernel = weight(op, "weight", wl);
  if (!kernel) return kernel.error();
  ConvParams c;
  c.kernel_width = static_cast<uint32_t>(kw);
  c.kernel_height = static_cast<uint32_t>(kh);
  c.step_x = static_cast<uint32_t>(sx);
  c.step_y = static_cast<uint32_t>(sy);
  c.pad_top = static_cast<uint32_t>(pad[0]);
  c.pad_bottom = static_cast<uint32_t>(pad[1]);
  c.pad_left = static_cast<uint32_t>(pad[2]);
  c.pad_right = static_cast<uint32_t>(pad[3]);
  c.kernel = *kernel;
  c.num_groups = static_cast<uint32_t>(g);
  c.dilation_x = static_cast<uint32_t>(dx);
  c.dilation_y = static_cast<uint32_t>(dy);

  auto bias = constant(op, "bias", false);
  if (!bias) return bias.error();
  const std::string conv_name = *bias ? op.result + "@conv" : op.result;
  Layer l = unit(op, conv_name, "Conv",
                 {{"Bottom", "x"},
                  {"NumGroups", "groups"},
                  {"OutputChannels", "weight"},
                  {"Params.Step", "strides"},
                  {"Params.Pad*", "pad"},
                  {"Params.PaddingMode", "pad_type"},
                  {"Params.KernelDilation*", "dilations"},
                  {"Params.Kernel*", "weight"}});
  l.bottoms = {x->unit};
  l.output_channels = static_cast<uint32_t>(cout);
  l.params = c;
  const Surface made{x->surface.n, static_cast<uint32_t>(cout), static_cast<uint32_t>(hout),
                     static_cast<uint32_t>(wout)};
  const std::vector<int64_t> shape{x->type.shape[0], cout, hout, wout};
  if (!*bias) return add_unit(op, std::move(l), made, shape);

  const Literal& bl = **bias;
  if (bl.type.shape != std::vector<int64_t>{cout})
    return fail(op, "bias", fmt::format("{}: expected [{}]", mil::type_text(bl.type), cout));
  auto b = weight(op, "bias", bl);
  if (!b) return b.error();
  if (auto st = claim_unit_name(op, conv_name); !st) return st;
  net_.units.push_back(std::move(l));
  Layer goc = unit(op, op.result, "GOC", {{"Bottom", "x"}, {"Params.BiasScaleGroupData*", "bias"}});
  goc.bottoms = {conv_name};
  GocParams gp;
  gp.bias = *b;
  gp.bias_count = static_cast<uint32_t>(cout);
  goc.params = gp;
  return add_unit(op, std::move(goc), made, shape);
}

}  // namespace ane::mil_lowering
