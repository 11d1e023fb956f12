// Walks the chain of task descriptors in __TEXT,__text.
#include <fmt/format.h>

#include "ane/task.h"

namespace ane {

namespace {
constexpr uint32_t kEonBit = 1u << 25;
constexpr uint32_t kV4TaskWordsM1 = 0x9c;  // used when no program descriptor says
constexpr uint32_t kCpuSubtypeH13 = 4;
}  // namespace

Expected<std::vector<Task>> decode_tasks(const HwxFile& file) {
  // Other generations (H11, H14, ...) lay tasks out differently; decoding them
  // with the H13 table would print plausible nonsense.
  if (file.header.cpusubtype != kCpuSubtypeH13)
    return make_error(8, fmt::format("cpusubtype {} is not H13 (4): libane only knows the H13 task format",
                                     file.header.cpusubtype));
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
    const uint64_t at = file.commands[prog->command_index].offset + 0x81c;
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
