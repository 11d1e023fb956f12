// Lookups over a parsed HwxFile and the joined view of its I/O buffers.
#include <algorithm>

#include <fmt/format.h>

#include "ane/hwx.h"

namespace ane {

namespace macho {
const char* command_name(uint32_t cmd) {
  switch (cmd) {
    case LC_SYMTAB: return "LC_SYMTAB";
    case LC_THREAD: return "LC_THREAD";
    case LC_LOADFVMLIB: return "LC_LOADFVMLIB";
    case LC_IDENT: return "LC_IDENT";
    case LC_SEGMENT_64: return "LC_SEGMENT_64";
    case LC_NOTE: return "LC_NOTE";
    case LC_ANE_BUFFER: return "LC_ANE_BUFFER(0x40)";
    default: return "load command";
  }
}
}  // namespace macho

const char* direction_name(BufferDirection d) {
  switch (d) {
    case BufferDirection::Input: return "input";
    case BufferDirection::Output: return "output";
    default: return "unknown";
  }
}

std::string element_type_name(uint32_t code) {
  // Numbering of the type stabs every HWX symbol table starts with.
  static const char* const kNames[] = {nullptr,   "void",  "int8",  "uint8", "int16",
                                       "float16", "float", "raw10", "lut",   "uint4", "uint6"};
  if (code > 0 && code < std::size(kNames)) return kNames[code];
  return fmt::format("type{}", code);
}

std::optional<BufferInfo::Shape> BufferInfo::shape() const {
  Shape s;
  if (descriptor) {
    for (int d = 0; d < 4; ++d) s.nchw[d] = descriptor->nchw[d];
    s.strides = descriptor->strides;
    s.type = descriptor->type;
    return s;
  }
  if (stab_shape) {
    s.nchw = stab_shape->nchw;
    s.strides = stab_shape->strides;
    s.type = stab_shape->element_type;
    return s;
  }
  return std::nullopt;
}

const SymtabCommand* HwxFile::symtab() const {
  for (const auto& lc : commands)
    if (auto* st = lc.as<SymtabCommand>()) return st;
  return nullptr;
}

std::vector<const SegmentCommand*> HwxFile::segments() const {
  std::vector<const SegmentCommand*> out;
  for (const auto& lc : commands)
    if (auto* s = lc.as<SegmentCommand>()) out.push_back(s);
  return out;
}

const SegmentCommand* HwxFile::find_segment(const std::string& name) const {
  for (const auto* s : segments())
    if (s->segname == name) return s;
  return nullptr;
}

const macho::Section64* HwxFile::find_section(const std::string& seg, const std::string& sect) const {
  for (const auto* s : segments())
    for (const auto& sec : s->sections)
      if (sec.segname == seg && sec.sectname == sect) return &sec;
  return nullptr;
}

unsigned HwxFile::section_ordinal(const std::string& seg, const std::string& sect) const {
  unsigned n = 0;
  for (const auto* s : segments())
    for (const auto& sec : s->sections) {
      ++n;
      if (sec.segname == seg && sec.sectname == sect) return n;
    }
  return 0;
}

const macho::Section64* HwxFile::section_by_ordinal(unsigned ordinal) const {
  unsigned n = 0;
  for (const auto* s : segments())
    for (const auto& sec : s->sections)
      if (++n == ordinal) return &sec;
  return nullptr;
}

const macho::Section64* HwxFile::text_section() const {
  if (const auto* s = find_section("__TEXT", "__text")) return s;
  return find_section("__TEXT", "__TEXT");
}

const IdentCommand* HwxFile::ident() const {
  for (const auto& lc : commands)
    if (auto* id = lc.as<IdentCommand>()) return id;
  return nullptr;
}

std::span<const uint8_t> HwxFile::section_data(const macho::Section64& sec) const {
  for (const auto* s : segments()) {
    if (s->filesize == 0 || sec.offset < s->fileoff) continue;
    const uint64_t rel = sec.offset - s->fileoff;
    if (rel <= s->contents.size() && sec.size <= s->contents.size() - rel)
      return std::span<const uint8_t>(s->contents).subspan(rel, sec.size);
  }
  return {};
}

std::optional<ProgramInfo> HwxFile::program() const {
  for (size_t i = 0; i < commands.size(); ++i) {
    const auto* t = commands[i].as<ThreadCommand>();
    if (!t || (t->flavor != macho::kThreadProgram && t->flavor != macho::kThreadPackedProgram)) continue;
    auto p = decode_program(commands[i]);
    if (!p) return std::nullopt;
    p->command_index = i;
    return *p;
  }
  return std::nullopt;
}

std::vector<BufferDescriptor> HwxFile::descriptors() const {
  std::vector<BufferDescriptor> out;
  for (size_t i = 0; i < commands.size(); ++i) {
    const auto* t = commands[i].as<ThreadCommand>();
    if (!t || t->flavor != macho::kThreadBuffer) continue;
    auto d = decode_buffer_descriptor(commands[i]);
    if (!d) continue;
    d->command_index = i;
    out.push_back(std::move(d).value());
  }
  return out;
}

std::vector<BufferInfo> HwxFile::buffers() const {
  std::vector<BufferInfo> out;
  const auto prog = program();
  const auto descs = descriptors();
  const auto segs = segments();
  // Tensor stabs, parsed once: (symbol index, parsed stab).
  std::vector<std::pair<size_t, TensorStab>> stabs;
  for (size_t s = 0; s < symbols.size(); ++s)
    if (symbols[s].nlist.type == macho::N_GSYM)
      if (auto st = parse_tensor_stab(symbols[s].name)) stabs.emplace_back(s, std::move(*st));

  for (size_t i = 0; i < commands.size(); ++i) {
    const auto* decl = commands[i].as<BufferDeclCommand>();
    if (!decl) continue;
    BufferInfo b;
    b.name = decl->name;
    b.address = decl->address;
    b.decl_command_index = static_cast<int>(i);

    // The segment that starts at the buffer's address (VM-only, one section).
    for (size_t s = 0; s < segs.size(); ++s) {
      if (segs[s]->vmaddr != b.address || segs[s]->filesize != 0) continue;
      b.segment_index = static_cast<int>(s);
      if (!segs[s]->sections.empty()) b.size = segs[s]->sections[0].size;
      if (segs[s]->maxprot & 2)
        b.direction = BufferDirection::Output;
      else if (segs[s]->maxprot & 1)
        b.direction = BufferDirection::Input;
      break;
    }
    if (prog)
      for (size_t k = 0; k < prog->slots.size(); ++k)
        if (prog->slots[k] == b.address && b.address != 0) {
          b.slot = static_cast<int>(k);
          break;
        }
    // Descriptors name outputs "x@output" in newer files while declarations
    // say "x": match either spelling on either name.
    auto matches = [&](const std::string& n) {
      return !n.empty() && (n == b.name || n == b.name + "@output" || b.name == n + "@output");
    };
    for (size_t d = 0; d < descs.size(); ++d)
      if (matches(descs[d].name2) || matches(descs[d].name)) {
        b.descriptor_index = static_cast<int>(d);
        b.descriptor = descs[d];
        if (b.direction == BufferDirection::Unknown)
          b.direction = descs[d].direction == 2 ? BufferDirection::Output
                        : descs[d].direction == 1 ? BufferDirection::Input
                                                  : BufferDirection::Unknown;
        break;
      }
    for (size_t s = 0; s < symbols.size(); ++s) {
      const auto& sym = symbols[s];
      if (sym.nlist.type == (macho::N_SECT | macho::N_EXT) && sym.nlist.value == b.address &&
          b.symbol_index < 0)
        b.symbol_index = static_cast<int>(s);
    }
    for (const auto& [s, st] : stabs)
      if (matches(st.name)) {
        b.stab = symbols[s].name;
        b.stab_shape = st;
        break;
      }
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace ane
