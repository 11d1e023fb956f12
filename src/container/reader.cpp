// Parses an HWX file into the HwxFile model. Every access goes through
// ByteView, so a malformed file yields an Error naming the offset instead of
// reading out of bounds.
#include <algorithm>

#include <fmt/format.h>

#include "ane/hwx.h"

namespace ane {

namespace {

#define ANE_TRY(var, expr)                       \
  auto var##_result = (expr);                    \
  if (!var##_result) return var##_result.error(); \
  auto var = std::move(var##_result).value()

struct Range {
  uint64_t begin, end;
};

class Reader {
 public:
  explicit Reader(std::span<const uint8_t> data) : file_(data) {}

  Expected<HwxFile> run();

 private:
  Status read_header();
  Status read_commands();
  Expected<LoadCommand> read_command(uint64_t off, uint32_t cmd, uint32_t cmdsize);
  Expected<SegmentCommand> read_segment(ByteView lc);
  Status read_symbols();
  Status check_threads();
  void collect_extra();

  ByteView file_;
  HwxFile out_;
  std::vector<Range> covered_;
};

Expected<HwxFile> Reader::run() {
  out_.file_size = file_.size();
  if (auto s = read_header(); !s) return s.error();
  if (auto s = read_commands(); !s) return s.error();
  if (auto s = read_symbols(); !s) return s.error();
  if (auto s = check_threads(); !s) return s.error();
  collect_extra();
  return std::move(out_);
}

Status Reader::read_header() {
  if (file_.size() < macho::kHeaderSize)
    return make_error(0, fmt::format("file is {} bytes, smaller than the 32-byte Mach-O header",
                                     file_.size()));
  auto& h = out_.header;
  h.magic = *file_.u32(0);
  if (h.magic != macho::kHwxMagic) {
    if (h.magic == 0xfeedfacf)
      return make_error(0, "standard 64-bit Mach-O (magic 0xfeedfacf), not an HWX file (0xbeefface)");
    return make_error(0, fmt::format("bad magic {:#010x}, expected 0xbeefface (HWX)", h.magic));
  }
  h.cputype = *file_.u32(4);
  h.cpusubtype = *file_.u32(8);
  h.filetype = *file_.u32(12);
  h.ncmds = *file_.u32(16);
  h.sizeofcmds = *file_.u32(20);
  h.flags = *file_.u32(24);
  h.reserved = *file_.u32(28);
  if (!file_.contains(macho::kHeaderSize, h.sizeofcmds))
    return make_error(0x14, fmt::format("sizeofcmds {:#x} runs past the end of the file ({:#x} bytes)",
                                        h.sizeofcmds, file_.size()));
  if (h.ncmds > h.sizeofcmds / 8)
    return make_error(0x10, fmt::format("ncmds {} cannot fit in sizeofcmds {:#x}", h.ncmds, h.sizeofcmds));
  return Ok{};
}

Status Reader::read_commands() {
  const uint64_t end = macho::kHeaderSize + uint64_t{out_.header.sizeofcmds};
  uint64_t off = macho::kHeaderSize;
  for (uint32_t i = 0; i < out_.header.ncmds; ++i) {
    if (off + 8 > end)
      return make_error(off, fmt::format("load command {} of {} starts past sizeofcmds", i,
                                         out_.header.ncmds));
    uint32_t cmd = *file_.u32(off);
    uint32_t cmdsize = *file_.u32(off + 4);
    if (cmdsize < 8 || cmdsize % 8 != 0)
      return make_error(off + 4, fmt::format("{} cmdsize {:#x} is not a positive multiple of 8",
                                             macho::command_name(cmd), cmdsize));
    if (off + cmdsize > end)
      return make_error(off + 4, fmt::format("{} cmdsize {:#x} runs past sizeofcmds (ends at {:#x})",
                                             macho::command_name(cmd), cmdsize, end));
    ANE_TRY(lc, read_command(off, cmd, cmdsize));
    out_.commands.push_back(std::move(lc));
    off += cmdsize;
  }
  // Only the parsed commands are covered: bytes between the last command
  // and sizeofcmds are kept as extra chunks when they are not zero.
  covered_.push_back({0, off});
  return Ok{};
}

Expected<LoadCommand> Reader::read_command(uint64_t off, uint32_t cmd, uint32_t cmdsize) {
  ByteView lc = *file_.sub(off, cmdsize);
  LoadCommand out;
  out.cmd = cmd;
  out.cmdsize = cmdsize;
  out.offset = off;
  const char* name = macho::command_name(cmd);
  auto need = [&](uint32_t n) -> Status {
    if (cmdsize < n)
      return make_error(off + 4, fmt::format("{} cmdsize {:#x} is smaller than its {:#x}-byte body", name,
                                             cmdsize, n));
    return Ok{};
  };

  switch (cmd) {
    case macho::LC_SEGMENT_64: {
      ANE_TRY(seg, read_segment(lc));
      out.body = std::move(seg);
      break;
    }
    case macho::LC_SYMTAB: {
      if (auto s = need(macho::kSymtabCommandSize); !s) return s.error();
      SymtabCommand st;
      st.symoff = *lc.u32(8);
      st.nsyms = *lc.u32(12);
      st.stroff = *lc.u32(16);
      st.strsize = *lc.u32(20);
      out.body = st;
      break;
    }
    case macho::LC_THREAD: {
      if (auto s = need(16); !s) return s.error();
      ThreadCommand t;
      t.flavor = *lc.u32(8);
      t.count = *lc.u32(12);
      if (uint64_t{t.count} > (cmdsize - 16) / 4)
        return make_error(off + 12, fmt::format("LC_THREAD flavor {} count {:#x} words exceeds cmdsize {:#x}",
                                                t.flavor, t.count, cmdsize));
      t.state.resize(t.count);
      for (uint32_t k = 0; k < t.count; ++k) t.state[k] = *lc.u32(16 + 4 * uint64_t{k});
      out.body = std::move(t);
      break;
    }
    case macho::LC_LOADFVMLIB:
    case macho::LC_ANE_BUFFER: {
      const uint32_t fixed = cmd == macho::LC_ANE_BUFFER ? 0x18 : 0x14;
      if (auto s = need(fixed); !s) return s.error();
      BufferDeclCommand b;
      b.name_offset = *lc.u32(8);
      b.reserved = *lc.u32(12);
      b.address = cmd == macho::LC_ANE_BUFFER ? *lc.u64(16) : *lc.u32(16);
      if (b.name_offset < fixed || b.name_offset >= cmdsize)
        return make_error(off + 8, fmt::format("{} name offset {:#x} is outside the command ({:#x}..{:#x})",
                                               name, b.name_offset, fixed, cmdsize));
      auto n = lc.cstring(b.name_offset);
      if (!n) return make_error(off + b.name_offset, fmt::format("{} buffer name is not NUL-terminated", name));
      b.name = *n;
      out.body = std::move(b);
      break;
    }
    case macho::LC_IDENT: {
      IdentCommand id;
      auto t = lc.cstring(8);
      if (!t && cmdsize > 8) return make_error(off + 8, "LC_IDENT text is not NUL-terminated");
      if (t) id.text = *t;
      out.body = std::move(id);
      break;
    }
    case macho::LC_NOTE: {
      if (auto s = need(0x28); !s) return s.error();
      NoteCommand n;
      n.data_owner = *lc.fixed_string(8, 16);
      n.offset = *lc.u64(0x18);
      n.size = *lc.u64(0x20);
      if (!file_.contains(n.offset, n.size))
        return make_error(off + 0x18, fmt::format("LC_NOTE data {:#x}+{:#x} runs past the end of the file",
                                                  n.offset, n.size));
      covered_.push_back({n.offset, n.offset + n.size});
      out.body = std::move(n);
      break;
    }
    default:
      out.body = RawCommand{};
      break;
  }
  uint32_t fixed = out.fixed_size();
  out.tail = *lc.copy(fixed, cmdsize - fixed);
  return out;
}

Expected<SegmentCommand> Reader::read_segment(ByteView lc) {
  const uint64_t off = lc.base_offset();
  if (lc.size() < macho::kSegmentCommandSize)
    return make_error(off + 4, fmt::format("LC_SEGMENT_64 cmdsize {:#x} is smaller than 0x48", lc.size()));
  SegmentCommand s;
  s.segname = *lc.fixed_string(0x08, 16);
  s.vmaddr = *lc.u64(0x18);
  s.vmsize = *lc.u64(0x20);
  s.fileoff = *lc.u64(0x28);
  s.filesize = *lc.u64(0x30);
  s.maxprot = *lc.u32(0x38);
  s.initprot = *lc.u32(0x3c);
  s.nsects = *lc.u32(0x40);
  s.flags = *lc.u32(0x44);
  if (uint64_t{s.nsects} > (lc.size() - macho::kSegmentCommandSize) / macho::kSectionSize)
    return make_error(off + 0x40, fmt::format("segment {} nsects {} does not fit in cmdsize {:#x}", s.segname,
                                              s.nsects, lc.size()));
  if (!file_.contains(s.fileoff, s.filesize))
    return make_error(off + 0x28, fmt::format("segment {} file range {:#x}+{:#x} runs past the end of the file ({:#x} bytes)",
                                              s.segname, s.fileoff, s.filesize, file_.size()));
  s.contents = *file_.copy(s.fileoff, s.filesize);
  if (s.filesize) covered_.push_back({s.fileoff, s.fileoff + s.filesize});

  for (uint32_t i = 0; i < s.nsects; ++i) {
    const uint64_t so = macho::kSegmentCommandSize + uint64_t{i} * macho::kSectionSize;
    macho::Section64 sec;
    sec.sectname = *lc.fixed_string(so + 0x00, 16);
    sec.segname = *lc.fixed_string(so + 0x10, 16);
    sec.addr = *lc.u64(so + 0x20);
    sec.size = *lc.u64(so + 0x28);
    sec.offset = *lc.u32(so + 0x30);
    sec.align = *lc.u32(so + 0x34);
    sec.reloff = *lc.u32(so + 0x38);
    sec.nreloc = *lc.u32(so + 0x3c);
    sec.flags = *lc.u32(so + 0x40);
    sec.reserved1 = *lc.u32(so + 0x44);
    sec.reserved2 = *lc.u32(so + 0x48);
    sec.reserved3 = *lc.u32(so + 0x4c);
    // Zero-fill sections (S_ZEROFILL, S_GB_ZEROFILL, S_THREAD_LOCAL_ZEROFILL)
    // occupy no file bytes whatever their offset says.
    const uint32_t type = sec.flags & 0xff;
    const bool zerofill = type == 0x01 || type == 0x0c || type == 0x12;
    const bool file_backed = s.filesize != 0 && sec.offset != 0 && !zerofill;
    if (file_backed && !file_.contains(sec.offset, sec.size))
      return make_error(off + so + 0x28, fmt::format("section {},{} range {:#x}+{:#x} runs past the end of the file",
                                                     sec.segname, sec.sectname, sec.offset, sec.size));
    if (sec.nreloc) {
      const uint64_t bytes = uint64_t{sec.nreloc} * macho::kRelocationSize;
      if (!file_.contains(sec.reloff, bytes))
        return make_error(off + so + 0x38, fmt::format("section {},{}: {} relocations at {:#x} run past the end of the file",
                                                       sec.segname, sec.sectname, sec.nreloc, sec.reloff));
      covered_.push_back({sec.reloff, sec.reloff + bytes});
      for (uint32_t r = 0; r < sec.nreloc; ++r) {
        const uint64_t ro = sec.reloff + uint64_t{r} * macho::kRelocationSize;
        macho::RelocationInfo ri;
        ri.address = static_cast<int32_t>(*file_.u32(ro));
        ri.info = *file_.u32(ro + 4);
        if (ri.address < 0 || static_cast<uint64_t>(ri.address) + 4 > sec.size)
          return make_error(ro, fmt::format("relocation {} address {:#x} is outside section {},{} ({:#x} bytes)", r,
                                            static_cast<uint32_t>(ri.address), sec.segname, sec.sectname, sec.size));
        sec.relocations.push_back(ri);
      }
    }
    s.sections.push_back(std::move(sec));
  }
  return s;
}

Status Reader::read_symbols() {
  const SymtabCommand* st = nullptr;
  uint64_t st_off = 0;
  for (const auto& lc : out_.commands)
    if (auto* p = lc.as<SymtabCommand>()) {
      if (st) return make_error(lc.offset, "more than one LC_SYMTAB");
      st = p;
      st_off = lc.offset;
    }
  if (!st) return Ok{};
  const uint64_t sym_bytes = uint64_t{st->nsyms} * macho::kNlistSize;
  if (!file_.contains(st->symoff, sym_bytes))
    return make_error(st_off + 8, fmt::format("symbol table ({} entries at {:#x}) runs past the end of the file",
                                              st->nsyms, st->symoff));
  if (!file_.contains(st->stroff, st->strsize))
    return make_error(st_off + 16, fmt::format("string table ({:#x} bytes at {:#x}) runs past the end of the file",
                                               st->strsize, st->stroff));
  out_.string_table = *file_.copy(st->stroff, st->strsize);
  ByteView strings(out_.string_table, st->stroff);
  covered_.push_back({st->symoff, st->symoff + sym_bytes});
  covered_.push_back({st->stroff, uint64_t{st->stroff} + st->strsize});
  out_.symbols.reserve(st->nsyms);
  for (uint32_t i = 0; i < st->nsyms; ++i) {
    const uint64_t so = st->symoff + uint64_t{i} * macho::kNlistSize;
    Symbol sym;
    sym.nlist.strx = *file_.u32(so);
    sym.nlist.type = *file_.u8(so + 4);
    sym.nlist.sect = *file_.u8(so + 5);
    sym.nlist.desc = *file_.u16(so + 6);
    sym.nlist.value = *file_.u64(so + 8);
    if (sym.nlist.strx >= st->strsize && !(sym.nlist.strx == 0 && st->strsize == 0))
      return make_error(so, fmt::format("symbol {} name index {:#x} is outside the string table ({:#x} bytes)", i,
                                        sym.nlist.strx, st->strsize));
    if (st->strsize) {
      auto name = strings.cstring(sym.nlist.strx);
      if (!name) return make_error(so, fmt::format("symbol {} name is not NUL-terminated in the string table", i));
      sym.name = *name;
    }
    out_.symbols.push_back(std::move(sym));
  }
  return Ok{};
}

// Validates the flavor-1/3 thread payloads up front so later views of them
// cannot fail.
Status Reader::check_threads() {
  for (const auto& lc : out_.commands) {
    const auto* t = lc.as<ThreadCommand>();
    if (!t) continue;
    if (t->flavor == macho::kThreadProgram || t->flavor == macho::kThreadPackedProgram) {
      if (auto p = decode_program(lc); !p) return p.error();
    } else if (t->flavor == macho::kThreadBuffer) {
      if (auto d = decode_buffer_descriptor(lc); !d) return d.error();
    }
  }
  return Ok{};
}

// Records any non-zero byte outside the parsed structures so the writer can
// reproduce files with data in unexpected places.
void Reader::collect_extra() {
  std::sort(covered_.begin(), covered_.end(), [](const Range& a, const Range& b) { return a.begin < b.begin; });
  auto span = file_.span();
  auto scan_gap = [&](uint64_t b, uint64_t e) {
    uint64_t i = b;
    while (i < e) {
      while (i < e && span[i] == 0) ++i;
      if (i == e) break;
      uint64_t j = i;
      while (j < e && span[j] != 0) ++j;
      out_.extra.push_back({i, Bytes(span.begin() + i, span.begin() + j)});
      i = j;
    }
  };
  uint64_t pos = 0;
  for (const auto& r : covered_) {
    if (r.begin > pos) scan_gap(pos, std::min<uint64_t>(r.begin, span.size()));
    pos = std::max(pos, r.end);
  }
  if (pos < span.size()) scan_gap(pos, span.size());
}

}  // namespace

Expected<HwxFile> read_hwx(std::span<const uint8_t> data) { return Reader(data).run(); }

Expected<HwxFile> load_hwx(const std::string& path) {
  auto bytes = read_file(path);
  if (!bytes) return bytes.error();
  return read_hwx(*bytes);
}

}  // namespace ane
