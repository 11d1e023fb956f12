// The HWX container around the compiled tasks, laid out as zin_ane_compiler
// v4.2.1 does (hwx-format.md sections 2-7). Builds the HwxFile model only;
// write_hwx emits the bytes.
#include <algorithm>

#include <fmt/format.h>

#include "ane/compiler.h"
#include "plan.h"

namespace ane::compiler {

namespace {

constexpr uint64_t kPage = 0x4000;
constexpr uint64_t kBaseAddress = 0x30000000;
constexpr uint32_t kProgramStateWords = 0x214;
constexpr uint32_t kProgramNameOffset = 0x860;
constexpr uint32_t kBufferStateWords = 0x1e;
constexpr uint32_t kBufferNamesOffset = 0x88;
constexpr uint32_t kFloat16TypeCode = 5;  // type stab t5 = float16
constexpr uint32_t kRelocationInfo = 0x05000002;  // symbolnum 2 (__const), pcrel, length 2


// NUL-terminated strings, zero padded so that a command whose fixed part is
// `fixed` bytes ends on a multiple of 8.
Bytes padded_strings(std::initializer_list<std::string_view> strings, uint32_t fixed = 0) {
  Bytes out;
  for (auto s : strings) {
    out.insert(out.end(), s.begin(), s.end());
    out.push_back(0);
  }
  out.resize(round_up(fixed + out.size(), 8) - fixed, 0);
  return out;
}

LoadCommand make_command(uint32_t cmd, CommandBody body, Bytes tail = {}) {
  LoadCommand lc;
  lc.cmd = cmd;
  lc.body = std::move(body);
  lc.tail = std::move(tail);
  lc.cmdsize = lc.fixed_size() + static_cast<uint32_t>(lc.tail.size());
  return lc;
}

macho::Section64 section(const char* sect, const char* seg, uint64_t addr, uint64_t size, uint32_t offset,
                         uint32_t align, uint32_t flags) {
  macho::Section64 s;
  s.sectname = sect;
  s.segname = seg;
  s.addr = addr;
  s.size = size;
  s.offset = offset;
  s.align = align;
  s.flags = flags;
  return s;
}

void put_state64(std::vector<uint32_t>& state, uint32_t cmd_offset, uint64_t v) {
  const size_t i = (cmd_offset - 0x10) / 4;
  state[i] = static_cast<uint32_t>(v);
  state[i + 1] = static_cast<uint32_t>(v >> 32);
}
void put_state32(std::vector<uint32_t>& state, uint32_t cmd_offset, uint32_t v) { state[(cmd_offset - 0x10) / 4] = v; }

struct Buffer {
  const Tensor* tensor;
  bool output;
  uint64_t vmaddr = 0, vmsize = 0;
};

// Tensor stab: name:tT=ar1;0;N;T+1=s<Nstride>n:ar1;0;C;T+2=s<Cstride>c:...;T+4=s2w:5
std::string tensor_stab(const Tensor& t, uint32_t first_type) {
  return fmt::format("{}:t{}=ar1;0;1;{}=s{}n:ar1;0;{};{}=s{}c:ar1;0;{};{}=s{}h:ar1;0;{};{}=s2w:{}", t.name,
                     first_type, first_type + 1, t.batch_stride, t.c, first_type + 2, t.plane_stride, t.h,
                     first_type + 3, t.row_stride, t.w, first_type + 4, kFloat16TypeCode);
}

// Task offset of a register in a task's stream layout.
uint32_t register_task_offset(const std::vector<RegisterStream>& layout, uint32_t address) {
  for (const auto& s : layout)
    if (address >= s.address && address < s.address + 4 * s.count) return s.task_offset + 4 + (address - s.address);
  return 0;
}

}  // namespace

std::vector<RegisterStream> task_stream_layout(const Plan& plan, const TaskPlan& task) {
  std::vector<RegisterStream> layout = default_stream_layout();
  if (!plan.macos26() || task.reads_kernel()) return layout;
  std::vector<RegisterStream> out;
  for (const auto& s : layout) {
    if (s.address == 0x1F800 && s.count == 62) {
      out.push_back({0x1F800, 18, 0});  // 0x1F800 - 0x1F844
      out.push_back({0x1F8C8, 12, 0});  // 0x1F8C8 - 0x1F8F4
    } else {
      out.push_back({s.address, s.count, 0});
    }
  }
  uint32_t off = kTaskHeaderBytes;
  for (auto& s : out) {
    s.task_offset = off;
    off += 4 + 4 * s.count;
  }
  return out;
}

uint32_t task_words(const std::vector<RegisterStream>& layout) {
  uint32_t words = kTaskHeaderBytes / 4;
  for (const auto& s : layout) words += 1 + s.count;
  return words;
}

std::vector<uint64_t> task_offsets(const Plan& plan) {
  std::vector<uint64_t> offsets;
  uint64_t next = 0;
  for (const auto& t : plan.tasks) {
    offsets.push_back(next);
    next += plan.macos26() ? round_up(uint64_t{4} * task_words(task_stream_layout(plan, t)), kMacos26TaskAlign)
                           : kTaskStride;
  }
  return offsets;
}

std::vector<uint64_t> kernel_bases(const Plan& plan) {
  std::vector<uint64_t> bases;
  uint64_t next = 0;
  for (const auto& t : plan.tasks) {
    bases.push_back(t.kernel_owner >= 0 ? bases.at(static_cast<size_t>(t.kernel_owner)) : next);
    next += t.kernel.size();
  }
  return bases;
}

Expected<HwxFile> assemble_container(const Network& net, const Plan& plan, const std::vector<RegisterImage>& images,
                                     const std::string& ident) {
  // ---- __TEXT: tasks, then kernel data at the next 64-byte boundary ----------------------
  std::vector<std::vector<RegisterStream>> layouts;
  std::vector<Bytes> encoded;
  for (size_t i = 0; i < images.size(); ++i) {
    layouts.push_back(task_stream_layout(plan, plan.tasks[i]));
    encoded.push_back(encode_task(images[i], layouts.back()));
  }
  const std::vector<uint64_t> at = task_offsets(plan);
  const uint64_t text_size = at.back() + encoded.back().size();
  const uint64_t const_offset = round_up(text_size, 64);
  const std::vector<uint64_t> kbase = kernel_bases(plan);
  uint64_t kernel_bytes = 0;
  for (const auto& t : plan.tasks) kernel_bytes += t.kernel.size();
  // Tensor constants' sections follow the kernel data (Planner::place_constants).
  const uint64_t constants_base = round_up(kernel_bytes, 64);
  const uint64_t data_bytes = plan.constants.empty() ? kernel_bytes : constants_base + plan.constants.size();
  const uint64_t const_size = data_bytes ? data_bytes : kPage;  // empty __const: one zero page
  const uint64_t text_vmsize = round_up(const_offset + const_size, kPage);
  Bytes text(text_vmsize, 0);
  for (size_t i = 0; i < encoded.size(); ++i)
    std::copy(encoded[i].begin(), encoded[i].end(), text.begin() + static_cast<ptrdiff_t>(at[i]));
  for (size_t i = 0; i < plan.tasks.size(); ++i)
    std::copy(plan.tasks[i].kernel.begin(), plan.tasks[i].kernel.end(),
              text.begin() + static_cast<ptrdiff_t>(const_offset + kbase[i]));
  std::copy(plan.constants.begin(), plan.constants.end(),
            text.begin() + static_cast<ptrdiff_t>(const_offset + constants_base));
  const uint64_t const_address = kBaseAddress + const_offset;

  // ---- memory map: __TEXT, scratch __DATA (if any), then the buffers --------------------------
  uint64_t next_address = kBaseAddress + text_vmsize;
  const bool has_scratch = plan.scratch_bytes > 0;
  const uint64_t scratch_address = next_address;
  if (has_scratch) next_address += round_up(plan.scratch_bytes, kPage);
  std::vector<Buffer> buffers;
  auto find_tensor = [&](Tensor::Home home, size_t k) -> const Tensor* {
    for (const auto& t : plan.tensors)
      if (t.home == home && t.buffer == static_cast<int>(k) && t.view_of < 0) return &t;
    return nullptr;
  };
  for (size_t j = 0; j < net.inputs.size(); ++j) buffers.push_back({find_tensor(Tensor::Home::Input, j), false});
  for (size_t k = 0; k < net.outputs.size(); ++k) buffers.push_back({find_tensor(Tensor::Home::Output, k), true});
  for (auto& b : buffers) {
    if (!b.tensor) return make_error("internal: a network buffer has no tensor");
    b.vmaddr = next_address;
    b.vmsize = round_up(b.tensor->bytes(), kPage);
    next_address += b.vmsize;
  }
  // LC_LOADFVMLIB and the DMA base registers hold 32-bit addresses.
  if (next_address > 0xffffffffu)
    return make_error(fmt::format("{}: the buffers need {:#x} bytes of address space from {:#x}, past 4 GiB",
                                  net.path, next_address - kBaseAddress, kBaseAddress));

  // ---- relocations: one per enabled kernel lane, on its CoeffBaseAddr word -------------------
  std::vector<macho::RelocationInfo> relocations;
  for (size_t i = 0; i < plan.tasks.size(); ++i)
    for (size_t lane = 0; lane < plan.tasks[i].lane_offsets.size(); ++lane) {
      const uint32_t addr = RegisterDatabase::h13()
                                .find(fmt::format("KernelDMASrc.CoeffBaseAddr[{}].Addr", lane))
                                ->address;
      relocations.push_back(
          {static_cast<int32_t>(at[i] + register_task_offset(layouts[i], addr)), kRelocationInfo});
    }
  const bool relocated = !relocations.empty();

  // ---- symbols ----------------------------------------------------------------------------------
  HwxFile file;
  auto add_symbol = [&](std::string name, uint8_t type, uint8_t sect, uint16_t desc, uint64_t value) {
    Symbol s;
    s.name = std::move(name);
    s.nlist = {0, type, sect, desc, value};
    file.symbols.push_back(std::move(s));
  };
  for (size_t i = 0; i < plan.tasks.size(); ++i) {
    const TaskPlan& t = plan.tasks[i];
    if (t.kernel.empty()) continue;
    const std::string digits = kernel_symbol_digits(t.kernel);
    if (t.kernel_is_table) {
      add_symbol("K" + digits, macho::N_SECT | macho::N_EXT, 2, 2, const_address + kbase[i]);
      continue;
    }
    for (size_t lane = 0; lane < t.lane_offsets.size(); ++lane)
      add_symbol(fmt::format("K{}_ne_{}", digits, lane), macho::N_SECT | macho::N_EXT, 2, 2,
                 const_address + kbase[i] + t.lane_offsets[lane]);
  }
  const uint8_t first_buffer_section = has_scratch ? 4 : 3;  // after __text, __const (and __bss)
  for (size_t b = 0; b < buffers.size(); ++b)
    add_symbol(buffers[b].tensor->name, macho::N_SECT | macho::N_EXT, static_cast<uint8_t>(first_buffer_section + b),
               buffers[b].output ? 0 : 2, buffers[b].vmaddr);
  for (const char* stab : {"void:t1=1", "int8:t2=r2;0;127", "uint8:t3=r1;0;255", "int16:t4=r1;-32768;32767",
                           "float16:t5=r1;2;0", "float:t6=r1;4;0", "raw10:t7=r1;-512;511", "lut:t8=",
                           "uint4:t9=r1;0;15", "uint6:t10=r1;0;63"})
    add_symbol(stab, macho::N_LSYM, 0, 0, 0);
  for (size_t b = 0; b < buffers.size(); ++b) {
    const auto first_type = static_cast<uint32_t>(11 + 5 * b);
    add_symbol(tensor_stab(*buffers[b].tensor, first_type), macho::N_GSYM, 0, static_cast<uint16_t>(first_type), 0);
  }
  file.string_table.push_back(0);
  for (auto& s : file.symbols) {
    s.nlist.strx = static_cast<uint32_t>(file.string_table.size());
    file.string_table.insert(file.string_table.end(), s.name.begin(), s.name.end());
    file.string_table.push_back(0);
  }

  // ---- load commands ------------------------------------------------------------------------------
  SegmentCommand pagezero;
  pagezero.segname = "__PAGEZERO";
  pagezero.vmsize = kPage;
  pagezero.flags = 0x4;
  file.commands.push_back(make_command(macho::LC_SEGMENT_64, pagezero));

  SegmentCommand textseg;
  textseg.segname = "__TEXT";
  textseg.vmaddr = kBaseAddress;
  textseg.vmsize = textseg.filesize = text_vmsize;
  textseg.maxprot = textseg.initprot = 5;
  textseg.nsects = 2;
  textseg.flags = relocated ? 0 : 0x4;
  textseg.sections.push_back(section("__text", "__TEXT", kBaseAddress, text_size, 0, 14, relocated ? 0x128 : 0x28));
  textseg.sections.push_back(section("__const", "__TEXT", const_address, const_size, 0, 6, 0x26));
  textseg.contents = std::move(text);
  file.commands.push_back(make_command(macho::LC_SEGMENT_64, std::move(textseg)));
  const size_t text_command = file.commands.size() - 1;

  if (has_scratch) {  // libane's intermediates: one VM-only segment in slot 3
    SegmentCommand data;
    data.segname = "__DATA";
    data.vmaddr = scratch_address;
    data.vmsize = round_up(plan.scratch_bytes, kPage);
    data.maxprot = data.initprot = 3;
    data.nsects = 1;
    data.flags = 0x6;
    data.sections.push_back(section("__bss", "__DATA", scratch_address, plan.scratch_bytes, 0, 14, 0x25));
    file.commands.push_back(make_command(macho::LC_SEGMENT_64, std::move(data)));
  }
  for (const auto& b : buffers) {
    SegmentCommand seg;
    seg.segname = "__FVMLIB";
    seg.vmaddr = b.vmaddr;
    seg.vmsize = b.vmsize;
    seg.maxprot = seg.initprot = b.output ? 2 : 1;
    seg.nsects = 1;
    seg.flags = 0x6;
    seg.sections.push_back(section(b.output ? "__data" : "__const", "__FVMLIB", b.vmaddr, b.tensor->bytes(), 0, 14,
                                   b.output ? 0x23 : 0x21));
    file.commands.push_back(make_command(macho::LC_SEGMENT_64, std::move(seg)));
  }
  for (const auto& b : buffers) {
    BufferDeclCommand d;
    d.name_offset = 0x14;
    d.address = b.vmaddr;
    d.name = b.tensor->name;
    file.commands.push_back(make_command(macho::LC_LOADFVMLIB, d, padded_strings({b.tensor->name}, 0x14)));
  }

  // Program descriptor (flavor 1).
  ThreadCommand prog;
  prog.flavor = macho::kThreadProgram;
  prog.count = kProgramStateWords;
  prog.state.assign(kProgramStateWords, 0);
  std::array<uint64_t, 32> slots{};
  slots[kTextSlot] = kBaseAddress;
  slots[kConstSlot] = const_address;
  if (has_scratch) slots[kScratchSlot] = scratch_address;
  for (const auto& b : buffers) slots[b.tensor->slot] = b.vmaddr;
  for (size_t k = 0; k < slots.size(); ++k) put_state64(prog.state, 0x10 + 8 * static_cast<uint32_t>(k), slots[k]);
  put_state64(prog.state, 0x810, kBaseAddress);
  put_state32(prog.state, 0x818, static_cast<uint32_t>(encoded[0].size() / 4 - 1));
  put_state32(prog.state, 0x81c, static_cast<uint32_t>(images.size()));
  put_state32(prog.state, 0x824, 0xffff);
  put_state32(prog.state, 0x83c, kProgramNameOffset);
  uint32_t debug_bits = 0, log_bits = 0;
  for (const auto& img : images) {
    debug_bits += static_cast<uint32_t>(__builtin_popcount(img.header[4] & 0xffffff));
    log_bits += static_cast<uint32_t>(__builtin_popcount(img.header[2] & 0xffffff));
  }
  put_state32(prog.state, 0x850, debug_bits);
  put_state32(prog.state, 0x858, log_bits);
  file.commands.push_back(make_command(macho::LC_THREAD, std::move(prog), padded_strings({net.name})));

  // Buffer descriptors (flavor 3): inputs sorted by name, then the outputs.
  std::vector<const Buffer*> described;
  for (const auto& name : net.inputs_sorted())
    for (const auto& b : buffers)
      if (!b.output && b.tensor->name == name) described.push_back(&b);
  for (const auto& b : buffers)
    if (b.output) described.push_back(&b);
  for (const Buffer* b : described) {
    const Tensor& t = *b->tensor;
    ThreadCommand d;
    d.flavor = macho::kThreadBuffer;
    d.count = kBufferStateWords;
    d.state.assign(kBufferStateWords, 0);
    const uint32_t name_offset = kBufferNamesOffset + static_cast<uint32_t>(net.name.size()) + 1;
    put_state32(d.state, 0x10, 3);
    put_state32(d.state, 0x14, b->output ? 2 : 1);
    put_state32(d.state, 0x18, kBufferNamesOffset);
    put_state32(d.state, 0x20, name_offset);
    put_state32(d.state, 0x24, kFloat16TypeCode);
    put_state32(d.state, 0x28, 1);
    put_state32(d.state, 0x2c, t.c);
    put_state32(d.state, 0x30, t.h);
    put_state32(d.state, 0x34, t.w);
    put_state32(d.state, 0x38, 1);
    put_state64(d.state, 0x50, t.batch_stride);
    put_state64(d.state, 0x58, t.plane_stride);
    put_state64(d.state, 0x60, t.row_stride);
    put_state64(d.state, 0x68, 2);
    put_state64(d.state, 0x70, t.bytes());
    put_state32(d.state, 0x78, 1);
    put_state32(d.state, 0x7c, name_offset + static_cast<uint32_t>(t.name.size()) + 1);
    // Inputs: the whole buffer. Outputs: last byte written + 1.
    const uint64_t extent = (t.c - 1) * t.plane_stride + (t.h - 1) * t.row_stride + (t.w - 1) * 2 + 2;
    put_state32(d.state, 0x80, static_cast<uint32_t>(b->output ? extent : t.bytes()));
    file.commands.push_back(make_command(macho::LC_THREAD, std::move(d), padded_strings({net.name, t.name, t.name})));
  }

  IdentCommand id;
  id.text = ident;
  file.commands.push_back(make_command(macho::LC_IDENT, id, padded_strings({ident})));

  file.commands.push_back(make_command(macho::LC_SYMTAB, SymtabCommand{}));

  // ---- offsets: commands, then symbols, strings and relocations in the first page(s) ----------
  uint32_t sizeofcmds = 0;
  uint64_t off = macho::kHeaderSize;
  for (auto& lc : file.commands) {
    lc.offset = off;
    off += lc.cmdsize;
    sizeofcmds += lc.cmdsize;
  }
  auto& symtab = *file.commands.back().as<SymtabCommand>();
  symtab.symoff = macho::kHeaderSize + sizeofcmds;
  symtab.nsyms = static_cast<uint32_t>(file.symbols.size());
  symtab.stroff = symtab.symoff + macho::kNlistSize * symtab.nsyms;
  symtab.strsize = static_cast<uint32_t>(file.string_table.size());
  uint64_t end = uint64_t{symtab.stroff} + symtab.strsize;
  auto& text_seg = *file.commands[text_command].as<SegmentCommand>();
  if (relocated) {
    const uint64_t reloff = round_up(end, 8);
    text_seg.sections[0].reloff = static_cast<uint32_t>(reloff);
    text_seg.sections[0].nreloc = static_cast<uint32_t>(relocations.size());
    text_seg.sections[0].relocations = relocations;
    end = reloff + macho::kRelocationSize * relocations.size();
  }
  const uint64_t text_fileoff = std::max(kPage, round_up(end, kPage));
  text_seg.fileoff = text_fileoff;
  text_seg.sections[0].offset = static_cast<uint32_t>(text_fileoff);
  text_seg.sections[1].offset = static_cast<uint32_t>(text_fileoff + const_offset);

  file.header.magic = macho::kHwxMagic;
  file.header.cputype = 0x80;
  file.header.cpusubtype = 4;  // H13
  file.header.filetype = 2;    // MH_EXECUTE
  file.header.ncmds = static_cast<uint32_t>(file.commands.size());
  file.header.sizeofcmds = sizeofcmds;
  file.header.flags = 0x00200000;  // MH_PIE
  file.file_size = text_fileoff + text_vmsize;
  return file;
}

}  // namespace ane::compiler
