// Reading an anec image (eiln's Linux driver format) into the
// container-neutral program view. Facts and their sources: docs/anec.md.
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "../tasks/tensor_dma.h"
#include "ane/anec.h"

namespace ane {

namespace {

constexpr uint64_t kClassicTaskBytes = 0x274;  // the complete H13 TD eiln's driver submits
constexpr uint64_t kCompactTaskBytes = 0x1f8;  // first task of the macOS 26 compiler's chains
constexpr uint32_t kCompactKernelStream = 0x4401F800;  // its first stream header (17 KernelDMASrc words)
constexpr int kKernelSlot = 1, kIntermediateSlot = 3, kFirstTensorSlot = 4;

uint32_t load_u32(std::span<const uint8_t> b, uint64_t off) {
  return b[off] | b[off + 1] << 8 | b[off + 2] << 16 | uint32_t{b[off + 3]} << 24;
}

// Size of task 0: the descriptor's td_size, else what the first stream says.
uint64_t first_task_bytes(std::span<const uint8_t> bytes, const AnecDescriptor* d) {
  if (d && d->td_size) return *d->td_size;
  if (bytes.size() >= 0x2c && load_u32(bytes, 0x28) == kCompactKernelStream) return kCompactTaskBytes;
  return kClassicTaskBytes;
}

// Every tensor DMA of the chain, grouped by slot.
struct SlotUse {
  uint64_t extent = 0;
  bool written = false, read = false;
  // The DMA that best describes the buffer: the first plain one (one group,
  // depth 1, at the slot start), else the first one.
  std::optional<detail::TensorDmaGeometry> shape_dma;
  uint32_t shape_task = 0;
};

bool plain(const detail::TensorDmaGeometry& g) { return g.groups == 1 && g.d == 1 && g.base == 0; }

const char* dma_name(detail::TensorDmaGeometry::Kind k) {
  switch (k) {
    case detail::TensorDmaGeometry::Kind::Source: return "TileDMASrc";
    case detail::TensorDmaGeometry::Kind::Source2: return "TileDMASrc second source";
    case detail::TensorDmaGeometry::Kind::Destination: return "TileDMADst";
  }
  return "";
}

Expected<std::map<int, SlotUse>> slot_uses(const std::vector<Task>& tasks) {
  std::map<int, SlotUse> uses;
  for (const auto& t : tasks) {
    for (const auto& g : detail::task_tensor_dmas(t.regs)) {
      const auto end = g.end();
      if (!end)
        return make_error(t.file_offset, fmt::format("task {}: the {} extent overflows", t.index, dma_name(g.kind)));
      SlotUse& u = uses[g.slot];
      u.extent = std::max(u.extent, *end);
      const bool write = g.kind == detail::TensorDmaGeometry::Kind::Destination;
      (write ? u.written : u.read) = true;
      if (!u.shape_dma || (!plain(*u.shape_dma) && plain(g))) {
        u.shape_dma = g;
        u.shape_task = t.index;
      }
    }
  }
  return uses;
}

// [1, C, H, W] with the DMA's strides (the batch stride spans the channels).
TensorLayout layout_of(const detail::TensorDmaGeometry& g) {
  TensorLayout l;
  l.nchw = {1, g.c, g.h, g.w};
  l.strides = {g.c * g.plane, g.plane, g.row, g.element_bytes};
  l.type = g.element_bytes == 2 ? 5 : 3;  // float16, else uint8 (by the type stab numbering)
  return l;
}

// The compiler's rule for I/O tensors (simulator-semantics section 3).
TensorLayout default_layout(const std::array<uint64_t, 4>& nchw) {
  TensorLayout l;
  l.nchw = nchw;
  const uint64_t row = round_up(2 * nchw[3], 64), plane = round_up(row * nchw[2], 64);
  l.strides = {nchw[1] * plane, plane, row, 2};
  l.type = 5;
  return l;
}

SlotRole role_of_type(const std::string& type) {
  if (type == "cmd") return SlotRole::Tasks;
  if (type == "krn") return SlotRole::Kernels;
  if (type == "itm") return SlotRole::Intermediate;
  if (type == "dst") return SlotRole::Output;
  if (type == "src") return SlotRole::Input;
  return SlotRole::Unknown;
}

Status check_descriptor_sizes(const AnecDescriptor& d, uint64_t file_bytes, uint64_t task_bytes,
                              uint64_t kernel_bytes, size_t td_count) {
  auto mismatch = [&](const char* what, uint64_t said, uint64_t found) {
    return make_error(fmt::format("{} says {} {:#x}, the image has {:#x}", d.source, what, said, found));
  };
  if (d.size && *d.size != file_bytes) return mismatch("size", *d.size, file_bytes);
  if (d.task_bytes && *d.task_bytes != task_bytes) return mismatch("tsk_size", *d.task_bytes, task_bytes);
  if (d.kernel_bytes && *d.kernel_bytes != kernel_bytes) return mismatch("krn_size", *d.kernel_bytes, kernel_bytes);
  if (d.td_count && *d.td_count != td_count) return mismatch("td_count", *d.td_count, td_count);
  return Ok{};
}

// The packed header newer anecc (and mil-hwx-compiler) put in front of the
// image: no magic, so it is recognised by its fields agreeing with the file.
constexpr uint64_t kPackedHeaderBytes = 0x1000, kPackedHeaderFields = 0x6a8;
constexpr uint64_t kTilesAt = 0x28, kNchwAt = 0xa8;

uint64_t load_u64(std::span<const uint8_t> b, uint64_t off) { return load_u32(b, off) | uint64_t{load_u32(b, off + 4)} << 32; }

std::optional<AnecDescriptor> packed_header(std::span<const uint8_t> bytes) {
  if (bytes.size() <= kPackedHeaderBytes) return std::nullopt;
  const uint64_t size = load_u64(bytes, 0), td_size = load_u32(bytes, 8), td_count = load_u32(bytes, 0xc);
  const uint64_t tsk = load_u64(bytes, 0x10), krn = load_u64(bytes, 0x18);
  if (size != bytes.size() - kPackedHeaderBytes || td_size < kTaskHeaderBytes || td_size % 4 || td_size > tsk ||
      td_count == 0 || tsk > size || krn > size - tsk)
    return std::nullopt;
  for (uint64_t i = kPackedHeaderFields; i < kPackedHeaderBytes; ++i)
    if (bytes[i]) return std::nullopt;
  AnecDescriptor d;
  d.source = "the image's 0x1000-byte header";
  d.size = size;
  d.td_size = td_size;
  d.td_count = static_cast<uint32_t>(td_count);
  d.task_bytes = tsk;
  d.kernel_bytes = krn;
  d.input_count = load_u32(bytes, 0x20);
  d.output_count = load_u32(bytes, 0x24);
  for (int k = 2; k < 32; ++k) {
    const uint64_t tiles = load_u32(bytes, kTilesAt + 4 * k);
    if (tiles == 0) continue;
    const char* type = k < 4 ? "itm" : static_cast<uint32_t>(k - 4) < *d.output_count ? "dst" : "src";
    d.slots.push_back({k, type, tiles * kAnecTileBytes});
    const uint64_t at = kNchwAt + 48 * static_cast<uint64_t>(k);
    std::array<uint64_t, 6> v{};
    for (int i = 0; i < 6; ++i) v[i] = load_u64(bytes, at + 8 * i);
    if (v[0] == 0) continue;  // no shape recorded
    AnecTensor t;
    t.slot = k;
    t.nchw = std::array<uint64_t, 4>{v[0], v[1], v[2], v[3]};
    t.strides = std::array<uint64_t, 4>{v[1] * v[4], v[4], v[5], 2};
    d.tensors.push_back(t);
  }
  return d;
}

Expected<Program> read_payload(std::span<const uint8_t> bytes, uint64_t base, std::string path,
                               const AnecDescriptor* desc);

}  // namespace

bool anec_has_packed_header(std::span<const uint8_t> bytes) { return packed_header(bytes).has_value(); }

Expected<Program> read_anec(std::span<const uint8_t> file, std::string path, const AnecDescriptor* desc) {
  if (auto header = packed_header(file)) {
    if (desc)
      return make_error(fmt::format("the image carries its own 0x1000-byte header; drop the descriptor {}",
                                    desc->source));
    auto p = read_payload(file.subspan(kPackedHeaderBytes), kPackedHeaderBytes, std::move(path), &*header);
    if (p) p->size = file.size();
    return p;
  }
  return read_payload(file, 0, std::move(path), desc);
}

namespace {

Expected<Program> read_payload(std::span<const uint8_t> bytes, uint64_t base, std::string path,
                               const AnecDescriptor* desc) {
  if (bytes.size() < kTaskHeaderBytes)
    return make_error(0, fmt::format("{} bytes: too short for an anec image (a task header alone is 0x28)",
                                     bytes.size()));
  const uint64_t first = first_task_bytes(bytes, desc);
  if (first < kTaskHeaderBytes || first % 4 != 0 || first > bytes.size())
    return make_error(base, fmt::format("first task of {:#x} bytes does not fit the {:#x}-byte image", first,
                                        bytes.size()));
  auto chain = decode_task_chain(bytes, base, first, "the anec image");
  if (!chain) return chain.error();
  Program p;
  p.path = std::move(path);
  p.size = bytes.size();
  p.format = ContainerFormat::Anec;
  p.tasks = std::move(chain).value();
  const Task& last = p.tasks.back();
  AnecImage img;
  img.task_bytes = last.text_offset + last.size;
  // The driver puts the kernel bytes at the chain rounded up to 16; a
  // descriptor that gives both sizes places them exactly (mil-hwx-compiler
  // rounds to 64).
  img.kernel_offset = round_up(img.task_bytes, 16);
  if (desc && desc->size && desc->kernel_bytes && *desc->kernel_bytes <= *desc->size &&
      *desc->size - *desc->kernel_bytes >= img.task_bytes)
    img.kernel_offset = *desc->size - *desc->kernel_bytes;
  if (img.kernel_offset > bytes.size()) img.kernel_offset = bytes.size();
  for (uint64_t i = img.task_bytes; i < img.kernel_offset; ++i)
    if (bytes[i] != 0)
      return make_error(base + i, fmt::format("byte {:#04x} in the padding after the task chain (which ends at {:#x})",
                                              bytes[i], img.task_bytes));
  img.kernel_bytes = bytes.size() - img.kernel_offset;
  if (desc) {
    if (Status s = check_descriptor_sizes(*desc, bytes.size(), img.task_bytes, img.kernel_bytes, p.tasks.size()); !s)
      return s.error();
    img.descriptor = desc->source;
    p.name = desc->name;
  }

  auto uses = slot_uses(p.tasks);
  if (!uses) return uses.error();

  // Slot 0: the whole image; slot 1: its kernel bytes.
  ProgramSlot cmd;
  cmd.index = 0;
  cmd.role = SlotRole::Tasks;
  cmd.address = kAnecBaseAddress;
  cmd.contents.assign(bytes.begin(), bytes.end());
  cmd.size = round_up(bytes.size(), kAnecTileBytes);
  ProgramSlot krn;
  krn.index = kKernelSlot;
  krn.role = SlotRole::Kernels;
  krn.address = kAnecBaseAddress + img.kernel_offset;
  krn.contents.assign(bytes.begin() + static_cast<ptrdiff_t>(img.kernel_offset), bytes.end());
  krn.size = krn.contents.size();
  p.slots.push_back(std::move(cmd));
  p.slots.push_back(std::move(krn));

  // Tensor slots: the descriptor's table, else every slot >= 3 a task touches.
  struct TensorSlot {
    int index;
    SlotRole role;
    uint64_t size;
  };
  std::vector<TensorSlot> tensor_slots;
  if (desc && !desc->slots.empty()) {
    for (const auto& s : desc->slots) {
      const SlotRole role = role_of_type(s.type);
      if (role == SlotRole::Tasks || role == SlotRole::Kernels) continue;
      if (s.slot < 2 || s.slot >= 32)
        return make_error(fmt::format("descriptor {}: {} slot {} is outside 2..31", desc->source, s.type, s.slot));
      tensor_slots.push_back({s.slot, role, s.bytes});
    }
  } else {
    for (const auto& [k, u] : *uses) {
      if (k < kIntermediateSlot || k >= 32) continue;
      SlotRole role = k == kIntermediateSlot ? SlotRole::Intermediate
                      : u.written            ? SlotRole::Output
                                             : SlotRole::Input;
      tensor_slots.push_back({k, role, round_up(u.extent, kAnecTileBytes)});
    }
  }
  std::sort(tensor_slots.begin(), tensor_slots.end(), [](auto& a, auto& b) { return a.index < b.index; });
  // Addresses follow the driver: one region after another, tile aligned.
  uint64_t next_address = p.slots[0].address + p.slots[0].size;
  int srcs = 0, dsts = 0;
  std::set<int> seen;
  for (const auto& t : tensor_slots) {
    if (!seen.insert(t.index).second)
      return make_error(fmt::format("descriptor {}: slot {} is listed twice", desc ? desc->source : "", t.index));
    ProgramSlot s;
    s.index = t.index;
    s.role = t.role;
    s.address = next_address;
    s.size = t.size;
    next_address += round_up(t.size, kAnecTileBytes);
    p.slots.push_back(s);
    if (t.role != SlotRole::Input && t.role != SlotRole::Output) continue;
    Buffer b;
    b.direction = t.role == SlotRole::Input ? BufferDirection::Input : BufferDirection::Output;
    b.name = t.role == SlotRole::Input ? fmt::format("src{}", srcs++) : fmt::format("dst{}", dsts++);
    b.slot = t.index;
    b.address = s.address;
    b.size = t.size;
    if (auto it = uses->find(t.index); it != uses->end() && it->second.shape_dma) {
      b.layout = layout_of(*it->second.shape_dma);
      b.shape_source = fmt::format("task {} {}", it->second.shape_task, dma_name(it->second.shape_dma->kind));
    }
    p.buffers.push_back(std::move(b));
  }
  // Names and shapes the descriptor gives override the derived ones.
  if (desc) {
    for (const auto& t : desc->tensors) {
      Buffer* b = nullptr;
      for (auto& cand : p.buffers)
        if (cand.slot == t.slot) b = &cand;
      if (!b)
        return make_error(fmt::format("descriptor {}: tensor '{}' names slot {}, which holds no input or output",
                                      desc->source, t.name, t.slot));
      if (!t.name.empty()) b->name = t.name;
      if (t.nchw) {
        b->layout = default_layout(*t.nchw);
        if (t.strides) b->layout->strides = *t.strides;
        b->shape_source = "descriptor";
      }
    }
  }
  p.anec = img;
  return p;
}

}  // namespace

}  // namespace ane
