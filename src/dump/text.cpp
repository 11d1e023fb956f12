// Text rendering of a program for people.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ane/dump.h"
#include "ane/sim.h"

namespace ane {

namespace {

template <typename... Args>
void line(std::string& out, fmt::format_string<Args...> f, Args&&... args) {
  out += fmt::format(f, std::forward<Args>(args)...);
  out += '\n';
}

void dump_header(std::string& out, const Program& p) {
  const auto& h = p.hwx->header;
  line(out, "");
  line(out, "Mach-O header");
  line(out, "  magic       {:#010x}", h.magic);
  line(out, "  cputype     {:#x}", h.cputype);
  const GenerationInfo* g = generation_by_subtype(h.cpusubtype);
  line(out, "  cpusubtype  {}{}", h.cpusubtype, g ? fmt::format(" ({}: {})", g->name, g->chips) : "");
  line(out, "  filetype    {}", h.filetype);
  line(out, "  ncmds       {}", h.ncmds);
  line(out, "  sizeofcmds  {:#x}", h.sizeofcmds);
  line(out, "  flags       {:#x}", h.flags);
}

void dump_commands(std::string& out, const HwxFile& f) {
  line(out, "");
  line(out, "Load commands");
  for (size_t i = 0; i < f.commands.size(); ++i) {
    const auto& lc = f.commands[i];
    std::string what;
    if (const auto* s = lc.as<SegmentCommand>())
      what = fmt::format("{} ({} sections)", s->segname, s->sections.size());
    else if (const auto* st = lc.as<SymtabCommand>())
      what = fmt::format("symoff {:#x} nsyms {} stroff {:#x} strsize {:#x}", st->symoff, st->nsyms, st->stroff,
                         st->strsize);
    else if (const auto* t = lc.as<ThreadCommand>())
      what = fmt::format("flavor {} count {:#x}{}", t->flavor, t->count,
                         t->flavor == 1   ? " (program)"
                         : t->flavor == 4 ? " (program, packed tasks)"
                         : t->flavor == 3 ? " (buffer descriptor)"
                                          : "");
    else if (const auto* b = lc.as<BufferDeclCommand>())
      what = fmt::format("buffer {} at {:#x}", b->name, b->address);
    else if (const auto* id = lc.as<IdentCommand>())
      what = fmt::format("{} bytes of text", id->text.size());
    else if (const auto* n = lc.as<NoteCommand>())
      what = fmt::format("owner \"{}\" data {:#x}+{:#x}", n->data_owner, n->offset, n->size);
    else
      what = fmt::format("not decoded: {:02x}", fmt::join(lc.tail, " "));
    line(out, "  [{:2}] {:#06x} {:<20} cmd {:#04x} cmdsize {:#06x}  {}", i, lc.offset, macho::command_name(lc.cmd),
         lc.cmd, lc.cmdsize, what);
  }
}

void dump_segments(std::string& out, const HwxFile& f) {
  line(out, "");
  line(out, "Segments");
  for (const auto* s : f.segments()) {
    line(out, "  {:<12} vmaddr {:#010x} vmsize {:#08x} fileoff {:#07x} filesize {:#08x} prot {}/{} flags {:#x}",
         s->segname, s->vmaddr, s->vmsize, s->fileoff, s->filesize, s->maxprot, s->initprot, s->flags);
    for (const auto& sec : s->sections) {
      line(out, "    {:<16} addr {:#010x} size {:#08x} offset {:#07x} align 2^{} flags {:#x}{}",
           sec.segname + "," + sec.sectname, sec.addr, sec.size, sec.offset, sec.align, sec.flags,
           sec.nreloc ? fmt::format(" relocs {} at {:#x}", sec.nreloc, sec.reloff) : "");
      for (const auto& r : sec.relocations)
        line(out, "      reloc address {:#06x} symbolnum {} pcrel {} length {} extern {} type {}", r.address,
             r.symbolnum(), r.pcrel() ? 1 : 0, r.length(), r.external() ? 1 : 0, r.type());
    }
  }
}

void dump_program(std::string& out, const HwxFile& f) {
  auto p = f.program();
  if (!p) return;
  line(out, "");
  line(out, "Program (LC_THREAD flavor {})", p->kind);
  line(out, "  network      {}", p->network_name);
  line(out, "  tasks        {}", p->task_count);
  if (p->kind == macho::kThreadPackedProgram) {
    line(out, "  __text       {:#x}, {} words", p->text_address, p->text_words);
  } else {
    line(out, "  first task   {} words", uint64_t{p->first_task_words_m1} + 1);
    line(out, "  __text       {:#x}", p->text_address);
    line(out, "  event bits   debug {} log {}", p->debug_log_event_bits, p->log_event_bits);
  }
  // Kind 4: the entries the relocation tags of task records index.
  const char* what = p->kind == macho::kThreadPackedProgram ? "entry" : "slot ";
  for (size_t k = 0; k < p->slots.size(); ++k)
    if (p->slots[k]) line(out, "  {} {:<3}    {:#x}", what, k, p->slots[k]);
}

void dump_buffers(std::string& out, const HwxFile& f) {
  const auto bufs = f.buffers();
  line(out, "");
  line(out, "Buffers");
  line(out, "  {:<20} {:<6} {:>4} {:<10} {:>18} {:<28} {:<8} {:>9}", "name", "dir", "slot", "address", "N,C,H,W",
       "strides N,C,H,W", "type", "size");
  for (const auto& b : bufs) {
    std::string shape = "-", strides = "-", type = "-";
    if (const auto sh = b.shape()) {
      shape = fmt::format("{},{},{},{}", sh->nchw[0], sh->nchw[1], sh->nchw[2], sh->nchw[3]);
      strides = fmt::format("{:#x},{:#x},{:#x},{:#x}", sh->strides[0], sh->strides[1], sh->strides[2], sh->strides[3]);
      type = element_type_name(sh->type);
    }
    line(out, "  {:<20} {:<6} {:>4} {:<#10x} {:>18} {:<28} {:<8} {:>#9x}", b.name, direction_name(b.direction),
         b.slot, b.address, shape, strides, type, b.size);
  }
}

void dump_symbols(std::string& out, const HwxFile& f) {
  line(out, "");
  line(out, "Symbols ({})", f.symbols.size());
  for (size_t i = 0; i < f.symbols.size(); ++i) {
    const auto& s = f.symbols[i];
    line(out, "  [{:2}] value {:#010x} type {:#04x} sect {} desc {}  {}", i, s.nlist.value, s.nlist.type,
         s.nlist.sect, s.nlist.desc, s.name);
  }
  const auto kernels = kernel_blobs(f);
  if (!kernels.empty()) {
    line(out, "");
    line(out, "Kernel data (__TEXT,__const)");
    for (const auto& k : kernels)
      line(out, "  {:#08x} {:#8x} bytes  {}", k.const_offset, k.data.size(), k.symbol);
  }
}

void dump_ident(std::string& out, const HwxFile& f) {
  const auto* id = f.ident();
  if (!id) return;
  line(out, "");
  line(out, "Ident");
  size_t pos = 0;
  while (pos < id->text.size()) {
    size_t nl = id->text.find('\n', pos);
    if (nl == std::string::npos) nl = id->text.size();
    std::string l = id->text.substr(pos, nl - pos);
    if (!l.empty() && l[0] == '\t') l = "    " + l.substr(1);
    line(out, "  {}", l);
    pos = nl + 1;
  }
}

std::string fields_of(const RegisterImage& regs, const std::vector<const FieldInfo*>& fields) {
  std::string s;
  for (const auto* fi : fields) {
    if (!s.empty()) s += ' ';
    const uint32_t v = regs.get(*fi);
    s += fi->width > 8 ? fmt::format("{}={:#x}", fi->field, v) : fmt::format("{}={}", fi->field, v);
  }
  return s;
}

std::string register_label(const RegisterDatabase& db, Block b, uint32_t addr) {
  std::string name = db.register_name(b, addr);
  if (auto dot = name.find('.'); dot != std::string::npos) name = name.substr(dot + 1);
  return name;
}

// H13: every word of every block, "(not written)" where the task leaves it.
void dump_linked_registers(std::string& out, const Task& t) {
  const auto& db = t.regs.database();
  for (const auto& b : db.blocks()) {
    line(out, "  {}", b.name);
    for (uint32_t k = 0; k < b.words; ++k) {
      const uint32_t addr = b.base + 4 * k;
      const auto fields = db.fields_at(b.id, addr);
      const bool header = b.id == Block::Header;
      const bool written = header || t.regs.written(addr);
      const uint32_t word = header ? t.regs.header[k] : t.regs.word(addr);
      const std::string name = header ? fmt::format("Header[{}]", k) : register_label(db, b.id, addr);
      // Header words have no hardware address: show their task offset.
      const std::string where = header ? fmt::format("+{:#04x}", addr) : fmt::format("{:#07x}", addr);
      line(out, "    {:>7} {:<24} {}  {}", where, name, written ? fmt::format("{:#010x}", word) : "(not written)",
           written ? fields_of(t.regs, fields) : "");
    }
  }
}

// H14 - H18: the records as written (kind, tag, what a relocation binds),
// then the words each block received; a packed task writes only some.
void dump_packed_registers(std::string& out, const Program& p, const Task& t) {
  const auto& db = t.regs.database();
  line(out, "  Header");
  for (uint32_t k = 0; k < t.regs.header.size(); ++k)
    line(out, "    +{:#04x} {:<24} {:#010x}  {}", 4 * k, fmt::format("Header[{}]", k), t.regs.header[k],
         fields_of(t.regs, db.fields_at(Block::Header, 4 * k)));
  line(out, "  Records");
  for (const auto& s : t.streams) {
    std::string extra;
    if (s.kind == RecordKind::Masked) extra = fmt::format(" mask {:#06x}", s.mask);
    if (s.tag) extra += fmt::format(" tag {:#x}", s.tag);
    if (s.relocated()) {
      std::string bound = fmt::format("entry {}", s.relocation());
      for (const auto& b : p.buffers)
        if (b.slot == static_cast<int>(s.relocation())) bound += " (" + b.name + ")";
      if (const ProgramSlot* slot = p.slot(static_cast<int>(s.relocation()))) {
        if (slot->role == SlotRole::Kernels) bound += " (kernel data)";
      } else {
        bound += " (no address: on H15 - H18 this tag marks DMA-config words)";
      }
      extra += ", relocated: " + bound;
    }
    line(out, "    +{:#05x} {:#010x} {:<6} {:#07x} x{}{}", s.task_offset, s.header_word(), record_kind_name(s.kind),
         s.address, s.count, extra);
  }
  size_t written = 0, words = 0;
  for (const auto& b : db.blocks()) {
    if (b.id == Block::Header) continue;
    words += b.words;
    bool shown = false;
    for (uint32_t k = 0; k < b.words; ++k) {
      const uint32_t addr = b.base + 4 * k;
      if (!t.regs.written(addr)) continue;
      if (!shown) line(out, "  {}", b.name);
      shown = true;
      ++written;
      line(out, "    {:#07x} {:<24} {:#010x}  {}", addr, register_label(db, b.id, addr), t.regs.word(addr),
           fields_of(t.regs, db.fields_at(b.id, addr)));
    }
  }
  line(out, "  ({} of the {} {} register words written; the rest are not written, which is not zero)", written,
       words, generation_name(t.generation));
}

void dump_task(std::string& out, const Program& p, const Task& t, const DumpOptions& opt) {
  line(out, "");
  line(out, "Task {} at {}+{:#x} (file {:#x}), {:#x} bytes, {} {}", t.index, p.hwx ? "__text" : "image",
       t.text_offset, t.file_offset, t.size, t.streams.size(),
       t.generation == Generation::H13 ? "streams" : "records");
  line(out, "  {}", sim::describe_task(p, t));
  if (t.generation == Generation::H13)
    dump_linked_registers(out, t);
  else
    dump_packed_registers(out, p, t);
  if (!t.regs.unknown_words().empty()) {
    line(out, "  registers outside the known blocks");
    for (const auto& [addr, value] : t.regs.unknown_words()) line(out, "    {:#07x} {:#010x}", addr, value);
  }
  if (opt.raw) {
    line(out, "  raw words (task offset: value [register address])");
    for (size_t i = 0; i < t.regs.header.size(); ++i)
      line(out, "    +{:#05x}: {:#010x}  Header[{}]", 4 * i, t.regs.header[i], i);
    for (const auto& s : t.streams) {
      line(out, "    +{:#05x}: {:#010x}  {}: {} words at {:#07x}", s.task_offset, s.header_word(),
           s.kind == RecordKind::Linked ? "stream" : record_kind_name(s.kind), s.count, s.address);
      for (uint32_t k = 0; k < s.count; ++k)
        line(out, "    +{:#05x}: {:#010x}  [{:#07x}]", s.task_offset + 4 + 4 * k, t.regs.word(s.word_address(k)),
             s.word_address(k));
    }
  }
}

// The anec image: where its parts are and the slots the driver maps.
void dump_anec(std::string& out, const Program& p) {
  const AnecImage& a = *p.anec;
  line(out, "");
  line(out, "anec image (the Linux driver's format: task chain, padding, kernel bytes)");
  line(out, "  name         {}", p.name.empty() ? "-" : p.name);
  line(out, "  tasks        {} ({:#x} bytes at 0x0)", p.tasks.size(), a.task_bytes);
  line(out, "  kernel data  {:#x} bytes at {:#x}", a.kernel_bytes, a.kernel_offset);
  line(out, "  buffers from {}", a.descriptor.empty() ? "the tasks' own DMA extents (no descriptor)" : a.descriptor);
  line(out, "");
  line(out, "Slots");
  for (const auto& s : p.slots)
    line(out, "  slot {:<2} {:<12} address {:#010x} size {:#09x}{}", s.index, slot_role_name(s.role), s.address,
         s.size, s.contents.empty() ? "" : fmt::format(" ({:#x} bytes from the image)", s.contents.size()));
}

// Buffers of the container-neutral view (anec programs).
void dump_program_buffers(std::string& out, const Program& p) {
  line(out, "");
  line(out, "Buffers");
  line(out, "  {:<20} {:<6} {:>4} {:>10} {:>18} {:<28} {:<8} {}", "name", "dir", "slot", "offset", "N,C,H,W",
       "strides N,C,H,W", "type", "shape from");
  for (const auto& b : p.buffers) {
    std::string shape = "-", strides = "-", type = "-";
    if (const auto& sh = b.layout) {
      shape = fmt::format("{},{},{},{}", sh->nchw[0], sh->nchw[1], sh->nchw[2], sh->nchw[3]);
      strides = fmt::format("{:#x},{:#x},{:#x},{:#x}", sh->strides[0], sh->strides[1], sh->strides[2], sh->strides[3]);
      type = element_type_name(sh->type);
    }
    line(out, "  {:<20} {:<6} {:>4} {:>#10x} {:>18} {:<28} {:<8} {}", b.name, direction_name(b.direction), b.slot,
         b.offset, shape, strides, type, b.shape_source.empty() ? "-" : b.shape_source);
  }
}

}  // namespace

std::string dump_text(const Program& p, const DumpOptions& opt) {
  std::string out;
  line(out, "file: {} ({} bytes, {})", p.path, p.size, p.format == ContainerFormat::Hwx ? "HWX" : "anec");
  if (opt.summary) {
    if (p.hwx)
      dump_buffers(out, *p.hwx);
    else
      dump_program_buffers(out, p);
    line(out, "");
    line(out, "Tasks ({})", p.tasks.size());
    for (const auto& t : p.tasks) line(out, "  {}", sim::describe_task(p, t));
    return out;
  }
  if (p.hwx) {
    dump_header(out, p);
    dump_commands(out, *p.hwx);
    dump_segments(out, *p.hwx);
    dump_program(out, *p.hwx);
    dump_buffers(out, *p.hwx);
    dump_symbols(out, *p.hwx);
    dump_ident(out, *p.hwx);
  } else if (p.anec) {
    dump_anec(out, p);
    dump_program_buffers(out, p);
  }
  for (const auto& t : p.tasks) dump_task(out, p, t, opt);
  if (p.hwx && !p.hwx->extra.empty()) {
    line(out, "");
    line(out, "Bytes outside every parsed structure");
    for (const auto& c : p.hwx->extra) line(out, "  {:#x}: {} bytes", c.offset, c.data.size());
  }
  return out;
}

}  // namespace ane
