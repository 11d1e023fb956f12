// JSON rendering of a program: container, buffers, symbols and every
// register field of every task (field list from the register database).
#include <fmt/format.h>

#include "ane/sim.h"
#include "json_model.h"

namespace ane::detail {

std::string hex(uint64_t v) { return fmt::format("{:#x}", v); }

namespace {

Json section_json(const macho::Section64& s) {
  Json j;
  j["name"] = s.sectname;
  j["segment"] = s.segname;
  j["addr"] = s.addr;
  j["size"] = s.size;
  j["offset"] = s.offset;
  j["align"] = s.align;
  j["reloff"] = s.reloff;
  j["nreloc"] = s.nreloc;
  j["flags"] = s.flags;
  Json rel = Json::array();
  for (const auto& r : s.relocations)
    rel.push_back({{"address", r.address}, {"symbolnum", r.symbolnum()}, {"pcrel", r.pcrel()},
                   {"length", r.length()}, {"extern", r.external()}, {"type", r.type()}});
  j["relocations"] = rel;
  return j;
}

Json segment_json(const SegmentCommand& s) {
  Json j;
  j["name"] = s.segname;
  j["vmaddr"] = s.vmaddr;
  j["vmsize"] = s.vmsize;
  j["fileoff"] = s.fileoff;
  j["filesize"] = s.filesize;
  j["maxprot"] = s.maxprot;
  j["initprot"] = s.initprot;
  j["nsects"] = s.nsects;
  j["flags"] = s.flags;
  Json secs = Json::array();
  for (const auto& sec : s.sections) secs.push_back(section_json(sec));
  j["sections"] = secs;
  return j;
}

Json command_json(const LoadCommand& lc, size_t index) {
  Json j;
  j["index"] = index;
  j["cmd"] = lc.cmd;
  j["name"] = macho::command_name(lc.cmd);
  j["cmdsize"] = lc.cmdsize;
  j["offset"] = lc.offset;
  if (const auto* s = lc.as<SegmentCommand>()) {
    j["segname"] = s->segname;
    j["nsects"] = s->nsects;
  } else if (const auto* st = lc.as<SymtabCommand>()) {
    j["symoff"] = st->symoff;
    j["nsyms"] = st->nsyms;
    j["stroff"] = st->stroff;
    j["strsize"] = st->strsize;
  } else if (const auto* t = lc.as<ThreadCommand>()) {
    j["flavor"] = t->flavor;
    j["count"] = t->count;
  } else if (const auto* b = lc.as<BufferDeclCommand>()) {
    j["buffer_name"] = b->name;
    j["address"] = b->address;
    j["name_offset"] = b->name_offset;
  } else if (const auto* id = lc.as<IdentCommand>()) {
    j["text"] = id->text;
  } else if (const auto* n = lc.as<NoteCommand>()) {
    j["data_owner"] = n->data_owner;
    j["data_offset"] = n->offset;
    j["data_size"] = n->size;
  } else if (lc.as<RawCommand>()) {
    std::string bytes;  // the undecoded body, as hex
    for (uint8_t b : lc.tail) bytes += fmt::format("{:02x}", b);
    j["raw"] = bytes;
  }
  return j;
}

// n, c, h, w, strides and type of a buffer, in both buffer documents.
void add_layout(Json& j, const TensorLayout& shape) {
  j["n"] = shape.nchw[0];
  j["c"] = shape.nchw[1];
  j["h"] = shape.nchw[2];
  j["w"] = shape.nchw[3];
  j["strides"] = {{"n", shape.strides[0]}, {"c", shape.strides[1]}, {"h", shape.strides[2]}, {"w", shape.strides[3]}};
  j["type"] = shape.type;
  j["type_name"] = element_type_name(shape.type);
}

Json buffer_json(const BufferInfo& b) {
  Json j;
  j["name"] = b.name;
  j["direction"] = direction_name(b.direction);
  j["address"] = b.address;
  j["size"] = b.size;
  j["slot"] = b.slot;
  if (const auto shape = b.shape()) add_layout(j, *shape);
  if (b.descriptor) {
    const auto& d = *b.descriptor;
    j["depth"] = d.depth;
    j["total_size"] = d.total_size;
    j["extent"] = d.extent;
    j["descriptor_names"] = {d.name, d.name2};
  }
  if (!b.stab.empty()) j["stab"] = b.stab;
  return j;
}

Json program_info_json(const ProgramInfo& p) {
  Json j;
  j["kind"] = p.kind;
  j["network_name"] = p.network_name;
  j["count"] = p.count;
  j["text_address"] = p.text_address;
  if (p.kind == macho::kThreadPackedProgram)
    j["text_words"] = p.text_words;
  else
    j["first_task_words"] = uint64_t{p.first_task_words_m1} + 1;
  j["task_count"] = p.task_count;
  j["debug_log_event_bits"] = p.debug_log_event_bits;
  j["log_event_bits"] = p.log_event_bits;
  Json slots = Json::array();
  for (uint64_t s : p.slots) slots.push_back(s);
  j["slots"] = slots;
  return j;
}

}  // namespace

Json task_json(const Task& t, const DumpOptions& opt) {
  const auto& db = t.regs.database();
  const bool packed = t.generation != Generation::H13;
  Json j;
  j["index"] = t.index;
  j["generation"] = generation_info(t.generation).target;
  j["offset"] = t.file_offset;
  j["text_offset"] = t.text_offset;
  j["size"] = t.size;
  j["header"] = t.regs.header;
  Json streams = Json::array();
  for (const auto& s : t.streams) {
    Json sj = {{"address", s.address}, {"count", s.count}, {"task_offset", s.task_offset}};
    if (packed) {
      sj["kind"] = record_kind_name(s.kind);
      sj["mask"] = s.mask;
      sj["tag"] = s.tag;
      sj["header"] = s.header_word();
      if (s.relocated()) sj["relocation"] = s.relocation();
    }
    streams.push_back(std::move(sj));
  }
  j["streams"] = streams;
  // Every register the task writes, by its address in the generation's
  // register space: "not written" is absent, a written zero is 0.
  Json written = Json::object();
  for (const auto& [addr, value] : t.regs.written_words()) written[fmt::format("{:#07x}", addr)] = value;
  j["written"] = written;
  Json regs;
  Json unwritten = Json::array();
  for (const auto& f : db.fields()) {
    regs[f.name] = t.regs.get(f);
    if (!t.regs.field_written(f)) unwritten.push_back(f.name);
  }
  j["registers"] = regs;
  j["unwritten_fields"] = unwritten;
  Json unknown = Json::object();
  for (const auto& [addr, value] : t.regs.unknown_words()) unknown[fmt::format("{:#07x}", addr)] = value;
  j["unknown_words"] = unknown;
  if (opt.raw) {
    Json words = Json::array();
    for (size_t i = 0; i < t.regs.header.size(); ++i)
      words.push_back({{"task_offset", 4 * i}, {"header", i}, {"value", t.regs.header[i]}});
    for (const auto& s : t.streams) {
      words.push_back({{"task_offset", s.task_offset}, {"stream_header", true}, {"value", s.header_word()}});
      for (uint32_t k = 0; k < s.count; ++k)
        words.push_back({{"task_offset", s.task_offset + 4 + 4 * k}, {"address", s.word_address(k)},
                         {"value", t.regs.word(s.word_address(k))}});
    }
    j["raw"] = words;
  }
  return j;
}

Json slot_json(const ProgramSlot& s) {
  Json j = {{"index", s.index}, {"role", slot_role_name(s.role)}, {"address", s.address}, {"size", s.size},
            {"initial_bytes", s.contents.size()}};
  if (s.alias_of >= 0) j["alias_of"] = s.alias_of;
  return j;
}

Json neutral_buffer_json(const Buffer& b) {
  Json j;
  j["name"] = b.name;
  j["direction"] = direction_name(b.direction);
  j["address"] = b.address;
  j["size"] = b.size;
  j["slot"] = b.slot;
  j["offset"] = b.offset;
  if (const auto& shape = b.layout) add_layout(j, *shape);
  j["shape_from"] = b.shape_source;
  return j;
}

// The Mach-O side of an HWX program.
void hwx_json(Json& j, const HwxFile& f) {
  j["header"] = {{"magic", f.header.magic},     {"cputype", f.header.cputype},
                 {"cpusubtype", f.header.cpusubtype}, {"filetype", f.header.filetype},
                 {"ncmds", f.header.ncmds},     {"sizeofcmds", f.header.sizeofcmds},
                 {"flags", f.header.flags},     {"reserved", f.header.reserved}};
  const GenerationInfo* g = generation_by_subtype(f.header.cpusubtype);
  j["target"] = g ? std::string(g->target) : fmt::format("cpusubtype{}", f.header.cpusubtype);
  Json cmds = Json::array();
  for (size_t i = 0; i < f.commands.size(); ++i) cmds.push_back(command_json(f.commands[i], i));
  j["load_commands"] = cmds;
  Json segs = Json::array();
  for (const auto* s : f.segments()) segs.push_back(segment_json(*s));
  j["segments"] = segs;
  Json syms = Json::array();
  for (const auto& s : f.symbols)
    syms.push_back({{"name", s.name}, {"value", s.nlist.value}, {"type", s.nlist.type}, {"sect", s.nlist.sect},
                    {"desc", s.nlist.desc}, {"strx", s.nlist.strx}});
  j["symbols"] = syms;
  Json bufs = Json::array();
  for (const auto& b : f.buffers()) bufs.push_back(buffer_json(b));
  j["buffers"] = bufs;
  if (auto prog = f.program()) j["program"] = program_info_json(*prog);
  if (const auto* id = f.ident()) j["ident"] = id->text;
  Json kernels = Json::array();
  for (const auto& k : kernel_blobs(f))
    kernels.push_back({{"symbol", k.symbol}, {"address", k.address}, {"const_offset", k.const_offset},
                       {"size", k.data.size()}});
  j["kernels"] = kernels;
  Json extra = Json::array();
  for (const auto& c : f.extra) extra.push_back({{"offset", c.offset}, {"size", c.data.size()}});
  j["unparsed_bytes"] = extra;
}

Json program_json(const Program& p, const DumpOptions& opt) {
  Json j;
  j["file"] = p.path;
  j["size"] = p.size;
  j["format"] = format_name(p.format);
  if (p.hwx) {
    hwx_json(j, *p.hwx);
  } else {
    j["target"] = "h13";
    j["name"] = p.name;
    Json bufs = Json::array();
    for (const auto& b : p.buffers) bufs.push_back(neutral_buffer_json(b));
    j["buffers"] = bufs;
    if (p.anec)
      j["anec"] = {{"task_bytes", p.anec->task_bytes},
                   {"kernel_offset", p.anec->kernel_offset},
                   {"kernel_bytes", p.anec->kernel_bytes},
                   {"descriptor", p.anec->descriptor}};
  }
  Json slots = Json::array();
  for (const auto& s : p.slots) slots.push_back(slot_json(s));
  j["slots"] = slots;
  Json tasks = Json::array();
  for (const auto& t : p.tasks) {
    Json tj = task_json(t, opt);
    tj["summary"] = sim::describe_task(p, t);
    tasks.push_back(std::move(tj));
  }
  j["tasks"] = tasks;
  return j;
}

}  // namespace ane::detail

namespace ane {

std::string dump_json(const Program& p, const DumpOptions& opt) {
  // Names come from the file: replace invalid UTF-8 instead of failing.
  return detail::program_json(p, opt).dump(2, ' ', false, detail::Json::error_handler_t::replace) + "\n";
}

}  // namespace ane
