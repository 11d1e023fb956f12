// The container-neutral program view: lookups, and opening a file of either
// container by content.
#include <algorithm>

#include <fmt/format.h>

#include "ane/anec.h"
#include "ane/macho.h"
#include "ane/program.h"

namespace ane {

const char* format_name(ContainerFormat f) { return f == ContainerFormat::Hwx ? "hwx" : "anec"; }

const char* slot_role_name(SlotRole r) {
  switch (r) {
    case SlotRole::Tasks: return "tasks";
    case SlotRole::Kernels: return "kernels";
    case SlotRole::Intermediate: return "intermediate";
    case SlotRole::Output: return "output";
    case SlotRole::Input: return "input";
    case SlotRole::Unknown: break;
  }
  return "unknown";
}

const ProgramSlot* Program::slot(int index) const {
  for (const auto& s : slots)
    if (s.index == index) return &s;
  return nullptr;
}

const Buffer* Program::buffer(const std::string& name) const {
  for (const auto& b : buffers)
    if (b.name == name) return &b;
  return nullptr;
}

std::span<const uint8_t> Program::kernel_bytes() const {
  for (const auto& s : slots)
    if (s.role == SlotRole::Kernels) return s.contents;
  return {};
}

bool looks_like_hwx(std::span<const uint8_t> bytes) {
  return bytes.size() >= 4 && (bytes[0] | bytes[1] << 8 | bytes[2] << 16 | uint32_t{bytes[3]} << 24) == macho::kHwxMagic;
}

bool looks_like_anec(std::span<const uint8_t> bytes) {
  if (looks_like_hwx(bytes)) return false;
  if (anec_has_packed_header(bytes)) return true;
  constexpr uint64_t kFirstStream = 0x28;
  constexpr uint32_t kKernelDmaBlock = 0x1F800, kAddressMask = (1u << 26) - 1;
  if (bytes.size() < kFirstStream + 4) return false;
  const uint32_t w = bytes[kFirstStream] | bytes[kFirstStream + 1] << 8 | bytes[kFirstStream + 2] << 16 |
                     uint32_t{bytes[kFirstStream + 3]} << 24;
  return (w & kAddressMask) == kKernelDmaBlock;
}

Expected<Program> parse_program(std::span<const uint8_t> bytes, std::string path, const OpenOptions& opts) {
  // By content: an anec image starts with a task whose first register stream
  // is the kernel DMA block (or with the packed header newer anecc writes);
  // everything else goes to the HWX reader, whose errors name the Mach-O magic.
  const ContainerFormat format =
      opts.format ? *opts.format : (looks_like_anec(bytes) ? ContainerFormat::Anec : ContainerFormat::Hwx);
  if (format == ContainerFormat::Anec) {
    std::optional<AnecDescriptor> desc;
    if (!opts.descriptor_path.empty()) {
      auto d = load_anec_descriptor(opts.descriptor_path, opts.descriptor_entry, path);
      if (!d) return d.error();
      desc = std::move(d).value();
    }
    return read_anec(bytes, std::move(path), desc ? &*desc : nullptr);
  }
  if (!opts.descriptor_path.empty())
    return make_error("a descriptor (--descriptor) only applies to anec programs; this is an HWX file");
  auto file = read_hwx(bytes);
  if (!file) return file.error();
  return program_from_hwx(std::move(file).value(), std::move(path), bytes.size());
}

Expected<Program> open_program(const std::string& path, const OpenOptions& opts) {
  auto bytes = map_file(path);  // the program copies what it keeps
  if (!bytes) return bytes.error();
  return parse_program(bytes->span(), path, opts);
}

}  // namespace ane
