// The task descriptors in __TEXT,__text, in the file's generation's format.
#include <fmt/format.h>

#include "ane/task.h"

namespace ane {

namespace {
constexpr uint32_t kEonBit = 1u << 25;
constexpr uint32_t kV4TaskWordsM1 = 0x9c;  // used when no program descriptor says
// The program descriptor's kind must match the generation the cpusubtype
// names: an H13 descriptor in a file claiming H16 (or the reverse) means the
// header or the descriptor is wrong, and either way the tasks cannot be read.
Status check_descriptor_kind(const HwxFile& file, const GenerationInfo& gen) {
  const auto prog = file.program();
  if (!prog) return Ok{};
  const uint32_t want = gen.format == TaskFormat::Packed ? macho::kThreadPackedProgram : macho::kThreadProgram;
  if (prog->kind == want) return Ok{};
  return make_error(8, fmt::format("cpusubtype {} says {}, but the program descriptor is LC_THREAD flavor {} "
                                   "(expected flavor {} for {})",
                                   file.header.cpusubtype, gen.name, prog->kind, want, gen.name));
}

}  // namespace

Expected<PackedText> decode_packed_tasks(const HwxFile& file) {
  auto gen = decodable_generation(file.header.cpusubtype);
  if (!gen) return gen.error();
  if ((*gen)->format != TaskFormat::Packed)
    return make_error(8, fmt::format("cpusubtype {} is {}, whose tasks are not in the packed format",
                                     file.header.cpusubtype, (*gen)->name));
  if (auto st = check_descriptor_kind(file, **gen); !st) return st.error();
  const macho::Section64* text_sec = file.text_section();
  if (!text_sec) return make_error("no __TEXT,__text section: the file holds no task descriptors");
  const auto text = file.section_data(*text_sec);
  if (text.size() != text_sec->size)
    return make_error(text_sec->offset, "__TEXT,__text is not backed by file bytes");
  auto packed = decode_packed_text(text, text_sec->offset, (*gen)->id, "__text");
  if (!packed) return packed.error();
  const auto prog = file.program();
  if (prog && prog->task_count != packed->tasks.size())
    return make_error(file.commands[prog->command_index].offset + prog->task_count_offset,
                      fmt::format("program descriptor says {} tasks but __text holds {}", prog->task_count,
                                  packed->tasks.size()));
  return packed;
}

Expected<std::vector<Task>> decode_tasks(const HwxFile& file) {
  // Each generation lays its tasks out its own way; decoding one with another's
  // table would print plausible nonsense, so the cpusubtype decides.
  auto gen = decodable_generation(file.header.cpusubtype);
  if (!gen) return gen.error();
  if ((*gen)->format == TaskFormat::Packed) {
    auto packed = decode_packed_tasks(file);
    if (!packed) return packed.error();
    return std::move(packed->tasks);
  }
  if (auto st = check_descriptor_kind(file, **gen); !st) return st.error();
  const macho::Section64* text_sec = file.find_section("__TEXT", "__text");
  if (!text_sec) return make_error("no __TEXT,__text section: the file holds no task descriptors");
  const auto text = file.section_data(*text_sec);
  if (text.size() != text_sec->size)
    return make_error(text_sec->offset, "__TEXT,__text is not backed by file bytes");

  const auto prog = file.program();
  const uint64_t first = 4 * (uint64_t{prog ? prog->first_task_words_m1 : kV4TaskWordsM1} + 1);
  auto chain = decode_task_chain(text, text_sec->offset, first, "__text");
  if (!chain) return chain.error();
  std::vector<Task> tasks = std::move(chain).value();
  if (prog && prog->task_count != tasks.size()) {
    const uint64_t at = file.commands[prog->command_index].offset + prog->task_count_offset;
    return make_error(at, fmt::format("program descriptor says {} tasks but the task chain has {}", prog->task_count,
                                      tasks.size()));
  }
  return tasks;
}

Expected<std::vector<Task>> decode_task_chain(std::span<const uint8_t> text, uint64_t file_offset,
                                              uint64_t first_task_bytes, const char* region) {
  uint64_t size = first_task_bytes;
  uint64_t off = 0;
  std::vector<Task> tasks;
  while (true) {
    const uint64_t file_off = file_offset + off;
    if (off + size > text.size())
      return make_error(file_off, fmt::format("task {} ({:#x} bytes at {}+{:#x}) runs past the end of {} ({:#x} bytes)",
                                              tasks.size(), size, region, off, region, text.size()));
    auto t = decode_task(text.subspan(off, size), file_off);
    if (!t) return t.error();
    t->index = static_cast<uint32_t>(tasks.size());
    t->text_offset = off;
    t->file_offset = file_off;
    const uint32_t h0 = t->regs.header[0], h1 = t->regs.header[1], next = t->regs.header[7];
    tasks.push_back(std::move(t).value());
    if ((h0 & kEonBit) || next == 0) break;
    if (next <= off)
      return make_error(file_off + 0x1c, fmt::format("task {} NextPointer {:#x} does not move forward (cyclic task chain)",
                                                     tasks.size() - 1, next));
    if (next >= text.size())
      return make_error(file_off + 0x1c, fmt::format("task {} NextPointer {:#x} is outside {} ({:#x} bytes)",
                                                     tasks.size() - 1, next, region, text.size()));
    size = 4 * (uint64_t{(h1 >> 16) & 0x1ff} + 1);
    off = next;
  }
  return tasks;
}

}  // namespace ane
