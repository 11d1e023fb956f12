// The container-neutral view of an HWX file: slots from its own slot table
// (the program descriptor) and the sections at those addresses, buffers
// joined from the Mach-O records, and the decoded task chain.
#include <fmt/format.h>

#include "ane/program.h"

namespace ane {

namespace {

constexpr uint32_t kSectionTypeMask = 0xff;
constexpr uint32_t kZerofill = 0x1, kGbZerofill = 0xc;

struct SectionAt {
  const SegmentCommand* segment = nullptr;
  const macho::Section64* section = nullptr;
};

SectionAt section_at(const HwxFile& file, uint64_t address) {
  for (const SegmentCommand* seg : file.segments())
    for (const auto& sec : seg->sections)
      if (sec.addr == address) return {seg, &sec};
  return {};
}

SlotRole role_of(const macho::Section64& s, const std::vector<BufferInfo>& buffers) {
  if (s.segname == "__TEXT" && (s.sectname == "__text" || s.sectname == "__TEXT")) return SlotRole::Tasks;
  if (s.segname == "__TEXT" && s.sectname == "__const") return SlotRole::Kernels;
  if (s.segname.rfind("__KERN", 0) == 0) return SlotRole::Kernels;  // __KERN_0 (H16 - H18)
  for (const auto& b : buffers)
    if (b.address == s.addr) {
      if (b.direction == BufferDirection::Input) return SlotRole::Input;
      if (b.direction == BufferDirection::Output) return SlotRole::Output;
    }
  if (s.segname == "__DATA") return SlotRole::Intermediate;
  return SlotRole::Unknown;
}

// The memory a section gives its slot (simulator-semantics section 2.2):
// file-backed sections bring their bytes and size; VM-only ones (tensor
// buffers, __DATA scratch) get zeros up to the end of their segment, since
// the driver maps whole pages.
void fill_slot(const HwxFile& file, const SectionAt& at, ProgramSlot& slot) {
  const auto& seg = *at.segment;
  const auto& sec = *at.section;
  const uint32_t type = sec.flags & kSectionTypeMask;
  const bool vm_only = seg.filesize == 0 || type == kZerofill || type == kGbZerofill;
  slot.size = sec.size;
  if (!vm_only) {
    const auto data = file.section_data(sec);
    slot.contents.assign(data.begin(), data.end());
  } else if (sec.addr >= seg.vmaddr && sec.addr - seg.vmaddr <= seg.vmsize &&
             seg.vmsize - (sec.addr - seg.vmaddr) > sec.size) {
    slot.size = seg.vmsize - (sec.addr - seg.vmaddr);
  }
}

}  // namespace

Expected<Program> program_from_hwx(HwxFile file, std::string path, uint64_t size) {
  auto gen = decodable_generation(file.header.cpusubtype);
  if (!gen) return gen.error();
  Program p;
  p.path = std::move(path);
  p.size = size;
  p.format = ContainerFormat::Hwx;
  p.generation = (*gen)->id;
  if ((*gen)->format == TaskFormat::Packed) {
    auto text = decode_packed_tasks(file);
    if (!text) return text.error();
    p.tasks = std::move(text->tasks);
    p.frames = std::move(text->frames);
  } else {
    auto tasks = decode_tasks(file);
    if (!tasks) return tasks.error();
    p.tasks = std::move(tasks).value();
  }
  const auto infos = file.buffers();
  if (const auto prog = file.program()) {
    p.name = prog->network_name;
    for (int k = 0; k < static_cast<int>(prog->slots.size()); ++k) {
      const uint64_t a = prog->slots[k];
      if (a == 0) continue;  // unbound: a task that names it fails
      const SectionAt at = section_at(file, a);
      if (!at.section) continue;  // no section at that address: unbound
      ProgramSlot s;
      s.index = k;
      s.address = a;
      s.role = role_of(*at.section, infos);
      for (const auto& earlier : p.slots)
        if (earlier.address == a) s.alias_of = earlier.alias_of >= 0 ? earlier.alias_of : earlier.index;
      if (s.alias_of < 0) fill_slot(file, at, s);
      p.slots.push_back(std::move(s));
    }
  }
  for (const auto& b : infos) {
    Buffer out;
    out.name = b.name;
    out.direction = b.direction;
    out.slot = b.slot;
    out.address = b.address;
    out.size = b.size;
    out.layout = b.shape();
    out.shape_source = b.descriptor ? "descriptor" : b.stab_shape ? "stab" : "";
    if (const ProgramSlot* s = p.slot(b.slot)) out.offset = b.address - s->address;
    p.buffers.push_back(std::move(out));
  }
  p.hwx = std::move(file);
  return p;
}

}  // namespace ane
