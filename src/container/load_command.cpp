// Encoding of load commands and command-relative accessors.
#include "ane/hwx.h"

namespace ane {

namespace {

void put_section(Bytes& out, uint64_t off, const macho::Section64& s) {
  put_fixed_string(out, off + 0x00, s.sectname, 16);
  put_fixed_string(out, off + 0x10, s.segname, 16);
  put_u64(out, off + 0x20, s.addr);
  put_u64(out, off + 0x28, s.size);
  put_u32(out, off + 0x30, s.offset);
  put_u32(out, off + 0x34, s.align);
  put_u32(out, off + 0x38, s.reloff);
  put_u32(out, off + 0x3c, s.nreloc);
  put_u32(out, off + 0x40, s.flags);
  put_u32(out, off + 0x44, s.reserved1);
  put_u32(out, off + 0x48, s.reserved2);
  put_u32(out, off + 0x4c, s.reserved3);
}

struct FixedEncoder {
  Bytes& out;
  uint32_t cmd;
  void operator()(const RawCommand&) const {}
  void operator()(const SegmentCommand& s) const {
    put_fixed_string(out, 0x08, s.segname, 16);
    put_u64(out, 0x18, s.vmaddr);
    put_u64(out, 0x20, s.vmsize);
    put_u64(out, 0x28, s.fileoff);
    put_u64(out, 0x30, s.filesize);
    put_u32(out, 0x38, s.maxprot);
    put_u32(out, 0x3c, s.initprot);
    put_u32(out, 0x40, s.nsects);
    put_u32(out, 0x44, s.flags);
    for (size_t i = 0; i < s.sections.size(); ++i)
      put_section(out, macho::kSegmentCommandSize + i * macho::kSectionSize, s.sections[i]);
  }
  void operator()(const SymtabCommand& s) const {
    put_u32(out, 0x08, s.symoff);
    put_u32(out, 0x0c, s.nsyms);
    put_u32(out, 0x10, s.stroff);
    put_u32(out, 0x14, s.strsize);
  }
  void operator()(const ThreadCommand& t) const {
    put_u32(out, 0x08, t.flavor);
    put_u32(out, 0x0c, t.count);
    for (size_t i = 0; i < t.state.size(); ++i) put_u32(out, 0x10 + 4 * i, t.state[i]);
  }
  void operator()(const BufferDeclCommand& b) const {
    put_u32(out, 0x08, b.name_offset);
    put_u32(out, 0x0c, b.reserved);
    if (cmd == macho::LC_ANE_BUFFER)
      put_u64(out, 0x10, b.address);
    else
      put_u32(out, 0x10, static_cast<uint32_t>(b.address));
  }
  void operator()(const IdentCommand&) const {}
  void operator()(const NoteCommand& n) const {
    put_fixed_string(out, 0x08, n.data_owner, 16);
    put_u64(out, 0x18, n.offset);
    put_u64(out, 0x20, n.size);
  }
};

}  // namespace

uint32_t LoadCommand::fixed_size() const {
  struct Size {
    uint32_t cmd;
    uint32_t operator()(const RawCommand&) const { return 8; }
    uint32_t operator()(const SegmentCommand& s) const {
      return macho::kSegmentCommandSize + macho::kSectionSize * static_cast<uint32_t>(s.sections.size());
    }
    uint32_t operator()(const SymtabCommand&) const { return macho::kSymtabCommandSize; }
    uint32_t operator()(const ThreadCommand& t) const {
      return 16 + 4 * static_cast<uint32_t>(t.state.size());
    }
    uint32_t operator()(const BufferDeclCommand&) const {
      return cmd == macho::LC_ANE_BUFFER ? 0x18 : 0x14;
    }
    uint32_t operator()(const IdentCommand&) const { return 8; }
    uint32_t operator()(const NoteCommand&) const { return 0x28; }
  };
  return std::visit(Size{cmd}, body);
}

Bytes LoadCommand::encode() const {
  uint32_t fixed = fixed_size();
  Bytes out(fixed, 0);
  put_u32(out, 0, cmd);
  put_u32(out, 4, cmdsize);
  std::visit(FixedEncoder{out, cmd}, body);
  out.resize(fixed);
  out.insert(out.end(), tail.begin(), tail.end());
  return out;
}

}  // namespace ane
