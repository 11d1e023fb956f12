// Emits an HwxFile. Structures are written at the offsets the model records;
// everything else is zero, except the `extra` chunks the reader kept.
#include <algorithm>

#include "ane/hwx.h"

namespace ane {

Bytes write_hwx(const HwxFile& file) {
  Bytes out;
  out.reserve(file.file_size);
  const auto& h = file.header;
  put_u32(out, 0x00, h.magic);
  put_u32(out, 0x04, h.cputype);
  put_u32(out, 0x08, h.cpusubtype);
  put_u32(out, 0x0c, h.filetype);
  put_u32(out, 0x10, h.ncmds);
  put_u32(out, 0x14, h.sizeofcmds);
  put_u32(out, 0x18, h.flags);
  put_u32(out, 0x1c, h.reserved);

  uint64_t off = macho::kHeaderSize;
  for (const auto& lc : file.commands) {
    Bytes b = lc.encode();
    put_bytes(out, off, b);
    off += b.size();

    if (const auto* seg = lc.as<SegmentCommand>()) {
      if (!seg->contents.empty()) put_bytes(out, seg->fileoff, seg->contents);
      for (const auto& sec : seg->sections)
        for (size_t r = 0; r < sec.relocations.size(); ++r) {
          const uint64_t ro = sec.reloff + r * macho::kRelocationSize;
          put_u32(out, ro, static_cast<uint32_t>(sec.relocations[r].address));
          put_u32(out, ro + 4, sec.relocations[r].info);
        }
    }
  }

  if (const auto* st = file.symtab()) {
    for (size_t i = 0; i < file.symbols.size(); ++i) {
      const auto& n = file.symbols[i].nlist;
      const uint64_t so = st->symoff + i * macho::kNlistSize;
      put_u32(out, so, n.strx);
      if (out.size() < so + 16) out.resize(so + 16);
      out[so + 4] = n.type;
      out[so + 5] = n.sect;
      put_u16(out, so + 6, n.desc);
      put_u64(out, so + 8, n.value);
    }
    put_bytes(out, st->stroff, file.string_table);
  }

  for (const auto& c : file.extra) put_bytes(out, c.offset, c.data);
  if (out.size() < file.file_size) out.resize(file.file_size, 0);
  return out;
}

}  // namespace ane
