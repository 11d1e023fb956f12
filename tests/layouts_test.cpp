// Files laid out like newer compilers write them (hwx-format.md section 10),
// assembled here field by field: buffers declared with command 0x40,
// __FVMLIB segments before __TEXT, larger thread payloads, LC_NOTE, and
// 126-word tasks with a split kernel-DMA stream. No corpus needed.
#include <gtest/gtest.h>

#include "ane/dump.h"
#include "support.h"

namespace ane {
namespace {

uint64_t roundup(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

Bytes padded_string(const std::string& s, size_t align = 8) {
  Bytes b(s.begin(), s.end());
  b.push_back(0);
  b.resize(roundup(b.size(), align), 0);
  return b;
}

LoadCommand segment(const std::string& name, uint64_t vmaddr, uint64_t vmsize, uint64_t fileoff, uint64_t filesize,
                    uint32_t prot, std::vector<macho::Section64> sections) {
  SegmentCommand s;
  s.segname = name;
  s.vmaddr = vmaddr;
  s.vmsize = vmsize;
  s.fileoff = fileoff;
  s.filesize = filesize;
  s.maxprot = s.initprot = prot;
  s.nsects = static_cast<uint32_t>(sections.size());
  s.flags = 0x6;
  s.sections = std::move(sections);
  LoadCommand lc;
  lc.cmd = macho::LC_SEGMENT_64;
  lc.cmdsize = 0x48 + 0x50 * s.nsects;
  lc.body = std::move(s);
  return lc;
}

macho::Section64 section(const std::string& seg, const std::string& name, uint64_t addr, uint64_t size,
                         uint32_t offset) {
  macho::Section64 s;
  s.segname = seg;
  s.sectname = name;
  s.addr = addr;
  s.size = size;
  s.offset = offset;
  s.align = 14;
  return s;
}

LoadCommand buffer_decl_0x40(const std::string& name, uint64_t address) {
  BufferDeclCommand b;
  b.name_offset = 0x18;
  b.address = address;
  b.name = name;
  LoadCommand lc;
  lc.cmd = macho::LC_ANE_BUFFER;
  lc.tail = padded_string(name);
  lc.cmdsize = static_cast<uint32_t>(0x18 + lc.tail.size());
  lc.body = std::move(b);
  return lc;
}

LoadCommand thread(uint32_t flavor, uint32_t count, const std::vector<std::pair<uint32_t, uint64_t>>& words32,
                   const std::vector<std::pair<uint32_t, uint64_t>>& words64, const std::vector<std::string>& strings) {
  ThreadCommand t;
  t.flavor = flavor;
  t.count = count;
  t.state.assign(count, 0);
  for (auto [off, v] : words32) t.state[(off - 0x10) / 4] = static_cast<uint32_t>(v);
  for (auto [off, v] : words64) {
    t.state[(off - 0x10) / 4] = static_cast<uint32_t>(v);
    t.state[(off - 0x10) / 4 + 1] = static_cast<uint32_t>(v >> 32);
  }
  LoadCommand lc;
  lc.cmd = macho::LC_THREAD;
  for (const auto& s : strings) lc.tail.insert(lc.tail.end(), s.begin(), s.end() + 1);
  lc.tail.resize(roundup(lc.tail.size(), 8), 0);
  lc.cmdsize = static_cast<uint32_t>(16 + 4 * count + lc.tail.size());
  lc.body = std::move(t);
  return lc;
}

struct Newer {
  HwxFile file;
  Bytes bytes;
  RegisterImage task;
};

// A one-task program "in" -> "probs" in the v9.509 style.
Newer make_newer_layout() {
  Newer n;
  HwxFile& f = n.file;
  f.header.cputype = 0x80;
  f.header.cpusubtype = 4;
  f.header.filetype = 2;
  f.header.flags = 0x200000;

  const uint64_t in_addr = 0x30004000, out_addr = 0x30008000, text_addr = 0x3000c000;
  // The task: 126 words, KernelDMASrc split in two streams, no CoeffBaseAddr/BfrSize.
  const std::vector<RegisterStream> layout{{0x1F800, 18, 0}, {0x1F8C8, 12, 0}, {0x00000, 16, 0}, {0x13800, 28, 0},
                                           {0x04800, 18, 0}, {0x08800, 4, 0},  {0x0C800, 5, 0},  {0x17800, 7, 0}};
  RegisterImage& r = n.task;
  EXPECT_TRUE(r.set("Header[0].EON", 1).ok());
  EXPECT_TRUE(r.set("Header[8].RBase0", 4).ok());
  EXPECT_TRUE(r.set("Header[8].RBE0", 1).ok());
  EXPECT_TRUE(r.set("Header[8].WBase", 5).ok());
  EXPECT_TRUE(r.set("Header[8].WBE", 1).ok());
  EXPECT_TRUE(r.set("Common.InDim.Win", 32).ok());
  EXPECT_TRUE(r.set("Common.Cin.Cin", 4).ok());
  EXPECT_TRUE(r.set("KernelDMASrc.CoeffDMAConfig[2].CacheHint", 2).ok());
  EXPECT_TRUE(r.set("NE.MACCfg.NonlinearMode", 1).ok());
  for (const auto& s : layout)
    for (uint32_t k = 0; k < s.count; ++k) r.set_word(s.address + 4 * k, r.word(s.address + 4 * k));
  const Bytes task = encode_task(r, layout);
  EXPECT_EQ(task.size(), 126u * 4);

  Bytes text_contents(0x4000, 0);
  std::copy(task.begin(), task.end(), text_contents.begin());

  auto text_sec = section("__TEXT", "__text", text_addr, task.size(), 0x8000);
  auto const_sec = section("__TEXT", "__const", text_addr + 0x200, 0x40, 0x8200);
  f.commands.push_back(segment("__PAGEZERO", 0, 0x4000, 0, 0, 0, {}));
  f.commands.push_back(segment("__FVMLIB", in_addr, 0x4000, 0, 0, 1, {section("__FVMLIB", "__const", in_addr, 0x800, 0)}));
  f.commands.push_back(segment("__FVMLIB", out_addr, 0x4000, 0, 0, 2, {section("__FVMLIB", "__data", out_addr, 0x800, 0)}));
  f.commands.push_back(segment("__TEXT", text_addr, 0x4000, 0x8000, 0x4000, 5, {text_sec, const_sec}));
  f.commands[3].as<SegmentCommand>()->contents = text_contents;
  f.commands.push_back(buffer_decl_0x40("in", in_addr));
  f.commands.push_back(buffer_decl_0x40("probs", out_addr));
  // Flavor 1, count 0x21a, name at 0x878; slots: inputs then the output.
  f.commands.push_back(thread(1, 0x21a, {{0x818, 125}, {0x81c, 1}, {0x824, 0xffff}, {0x83c, 0x878}},
                              {{0x10, text_addr}, {0x18, text_addr + 0x200}, {0x30, in_addr}, {0x38, out_addr},
                               {0x810, text_addr}},
                              {"net"}));
  // Flavor 3, count 0x34a, strings at +0xd38; the output is "probs@output" in the descriptor.
  auto desc = [&](uint32_t dir, const std::string& n1, const std::string& n2) {
    const uint32_t s0 = 0xd38;
    return thread(3, 0x34a,
                  {{0x10, 3}, {0x14, dir}, {0x18, s0}, {0x20, s0 + 4}, {0x24, 5}, {0x28, 1}, {0x2c, 4}, {0x30, 1},
                   {0x34, 32}, {0x38, 1}, {0x78, 1}, {0x7c, s0 + 4 + n1.size() + 1}, {0x80, 0x800}},
                  {{0x50, 0x800}, {0x58, 0x200}, {0x60, 0x40}, {0x68, 2}, {0x70, 0x800}}, {"net", n1, n2});
  };
  f.commands.push_back(desc(1, "in", "in"));
  f.commands.push_back(desc(2, "probs@output", "probs"));
  {
    NoteCommand note;
    note.data_owner = "src model info";
    LoadCommand lc;
    lc.cmd = macho::LC_NOTE;
    lc.cmdsize = 0x28;
    lc.body = note;
    f.commands.push_back(lc);
  }
  LoadCommand st;
  st.cmd = macho::LC_SYMTAB;
  st.cmdsize = 0x18;
  st.body = SymtabCommand{};
  f.commands.push_back(st);

  uint32_t sizeofcmds = 0;
  for (const auto& lc : f.commands) sizeofcmds += lc.cmdsize;
  f.header.ncmds = static_cast<uint32_t>(f.commands.size());
  f.header.sizeofcmds = sizeofcmds;

  // Symbols: the two buffers (desc 0 in v9.509) and their tensor stabs.
  const std::vector<std::pair<std::string, uint64_t>> names{{"in", in_addr}, {"probs", out_addr}};
  f.string_table = {0};
  for (size_t i = 0; i < names.size(); ++i) {
    Symbol s;
    s.name = names[i].first;
    s.nlist = {static_cast<uint32_t>(f.string_table.size()), 0x0f, static_cast<uint8_t>(i + 1), 0, names[i].second};
    f.string_table.insert(f.string_table.end(), s.name.begin(), s.name.end() + 1);
    f.symbols.push_back(s);
  }
  const std::string stab = "in:t24=ar1;0;1;25=s2048n:ar1;0;4;26=s512c:ar1;0;1;27=s64h:ar1;0;32;28=s2w:5";
  Symbol s;
  s.name = stab;
  s.nlist = {static_cast<uint32_t>(f.string_table.size()), 0x20, 0, 24, 0};
  f.string_table.insert(f.string_table.end(), stab.begin(), stab.end() + 1);
  f.symbols.push_back(s);

  auto* symtab = f.commands.back().as<SymtabCommand>();
  symtab->symoff = 0x20 + sizeofcmds;
  symtab->nsyms = static_cast<uint32_t>(f.symbols.size());
  symtab->stroff = symtab->symoff + 16 * symtab->nsyms;
  symtab->strsize = static_cast<uint32_t>(f.string_table.size());
  // The note's data sits in the zero fill after the string table.
  auto* note = f.commands[f.commands.size() - 2].as<NoteCommand>();
  note->offset = roundup(symtab->stroff + symtab->strsize, 8);
  note->size = 8;
  f.file_size = 0xc000;
  n.bytes = write_hwx(f);
  return n;
}

TEST(NewerLayouts, AssembledV9StyleFileReadsBack) {
  const Newer n = make_newer_layout();
  ASSERT_EQ(n.bytes.size(), 0xc000u);
  auto p = parse_program(n.bytes, "v9.hwx");
  ASSERT_TRUE(p.ok()) << p.error().str();
  EXPECT_TRUE(write_hwx(*p->hwx) == n.bytes);

  // Buffers: names from command 0x40, directions from the segments, slots
  // from the v7+ order (inputs first), descriptors matched across the
  // "probs" / "probs@output" spellings.
  const auto bufs = p->hwx->buffers();
  ASSERT_EQ(bufs.size(), 2u);
  EXPECT_EQ(bufs[0].name, "in");
  EXPECT_EQ(bufs[0].direction, BufferDirection::Input);
  EXPECT_EQ(bufs[0].slot, 4);
  EXPECT_EQ(bufs[1].name, "probs");
  EXPECT_EQ(bufs[1].direction, BufferDirection::Output);
  EXPECT_EQ(bufs[1].slot, 5);
  ASSERT_TRUE(bufs[1].descriptor.has_value());
  EXPECT_EQ(bufs[1].descriptor->name, "probs@output");
  EXPECT_EQ(bufs[1].descriptor->name2, "probs");
  EXPECT_EQ(bufs[1].descriptor->count, 0x34au);
  EXPECT_EQ(bufs[1].descriptor->nchw, (std::array<uint32_t, 4>{1, 4, 1, 32}));
  ASSERT_TRUE(bufs[0].stab_shape.has_value());
  EXPECT_EQ(bufs[0].stab_shape->nchw[3], 32u);

  const auto prog = p->hwx->program();
  ASSERT_TRUE(prog.has_value());
  EXPECT_EQ(prog->count, 0x21au);
  EXPECT_EQ(prog->network_name, "net");
  EXPECT_EQ(prog->text_address, 0x3000c000u);

  // The task: found through __text wherever __TEXT sits, 126 words.
  ASSERT_EQ(p->tasks.size(), 1u);
  const Task& t = p->tasks[0];
  EXPECT_EQ(t.file_offset, 0x8000u);
  EXPECT_EQ(t.size, 126u * 4);
  EXPECT_EQ(t.streams.size(), 8u);
  EXPECT_EQ(*t.regs.get("Common.InDim.Win"), 32u);
  EXPECT_EQ(*t.regs.get("KernelDMASrc.CoeffDMAConfig[2].CacheHint"), 2u);
  EXPECT_EQ(*t.regs.get("NE.MACCfg.NonlinearMode"), 1u);
  EXPECT_EQ(*t.regs.get("Header[8].WBase"), 5u);
  EXPECT_FALSE(t.regs.written(0x1F848));  // CoeffBaseAddr[0] is not in any stream

  // The JSON still lists every field; the skipped ones are marked.
  const std::string json = dump_json(*p);
  EXPECT_NE(json.find("\"KernelDMASrc.CoeffBaseAddr[0].Addr\": 0"), std::string::npos);
  EXPECT_NE(json.find("\"unwritten_fields\": [\n        \"KernelDMASrc.CoeffBaseAddr[0].Addr\""), std::string::npos);
  EXPECT_NE(dump_text(*p).find("CoeffBaseAddr[0]         (not written)"), std::string::npos);
}

TEST(NewerLayouts, NoteDataMustBeInsideTheFile) {
  Newer n = make_newer_layout();
  auto& note_lc = n.file.commands[n.file.commands.size() - 2];
  note_lc.as<NoteCommand>()->offset = 0x20000;
  const Bytes b = write_hwx(n.file);
  auto r = read_hwx(b);
  ASSERT_FALSE(r.ok());
  uint64_t note_at = 0x20;
  for (size_t i = 0; i + 2 < n.file.commands.size(); ++i) note_at += n.file.commands[i].cmdsize;
  EXPECT_EQ(r.error().offset, note_at + 0x18);
  EXPECT_NE(r.error().message.find("LC_NOTE data"), std::string::npos) << r.error().str();
}

}  // namespace
}  // namespace ane
