// Typed views of the LC_THREAD payloads: flavor 1 (H13 program descriptor),
// flavor 4 (H14 - H18 program descriptor) and flavor 3 (tensor descriptor).
// Offsets are relative to the command start.
#include <fmt/format.h>

#include "ane/hwx.h"

namespace ane {

namespace {

// Bounds-checked reads over the encoded command, with file offsets in errors.
struct CommandView {
  Bytes bytes;
  ByteView view;
  uint64_t file_offset;
  explicit CommandView(const LoadCommand& lc)
      : bytes(lc.encode()), view(bytes, lc.offset), file_offset(lc.offset) {}
};

}  // namespace

namespace {

// The network name at `field`, when its offset is not 0.
Status read_network_name(const CommandView& c, const LoadCommand& lc, uint64_t field, ProgramInfo& p) {
  p.name_offset = *c.view.u32(field);
  if (p.name_offset == 0) return Ok{};
  if (p.name_offset >= lc.cmdsize)
    return make_error(lc.offset + field, fmt::format("network name offset {:#x} is outside the command ({:#x} bytes)",
                                                     p.name_offset, lc.cmdsize));
  auto name = c.view.cstring(p.name_offset);
  if (!name) return make_error(lc.offset + p.name_offset, "network name is not NUL-terminated");
  p.network_name = *name;
  return Ok{};
}

// Kind 4 (mil-hwx-compiler research/mint_oracles.py and inspect_hwx.py, every
// H14 - H18 record): +0x10 text address and the 16-byte entries the
// relocation tags index, +0x810 text address again, +0x824 text words,
// +0x830 task count, +0x848 name offset.
constexpr uint32_t kPackedEntries = 127;  // +0x10 .. +0x800
constexpr uint64_t kPackedMinimum = 0x84c;

Expected<ProgramInfo> decode_packed_program(const LoadCommand& lc, const ThreadCommand& t) {
  CommandView c(lc);
  const uint64_t state_end = 16 + 4 * uint64_t{t.count};
  if (state_end < kPackedMinimum || lc.cmdsize < kPackedMinimum)
    return make_error(lc.offset + 12, fmt::format("program descriptor (LC_THREAD flavor 4) has {:#x} state words, "
                                                  "too few for the task fields at +0x848",
                                                  t.count));
  ProgramInfo p;
  p.kind = macho::kThreadPackedProgram;
  p.count = t.count;
  p.slots.resize(kPackedEntries);
  for (uint32_t k = 0; k < kPackedEntries; ++k) p.slots[k] = *c.view.u64(0x10 + 0x10 * uint64_t{k});
  p.text_address = *c.view.u64(0x810);
  p.text_words = *c.view.u32(0x824);
  p.task_count = *c.view.u32(0x830);
  p.task_count_offset = 0x830;
  if (auto s = read_network_name(c, lc, 0x848, p); !s) return s.error();
  return p;
}

}  // namespace

Expected<ProgramInfo> decode_program(const LoadCommand& lc) {
  const auto* t = lc.as<ThreadCommand>();
  if (t && t->flavor == macho::kThreadPackedProgram) return decode_packed_program(lc, *t);
  if (!t || t->flavor != macho::kThreadProgram) return make_error(lc.offset, "not a flavor-1 LC_THREAD");
  CommandView c(lc);
  const uint64_t state_end = 16 + 4 * uint64_t{t->count};
  if (state_end < 0x860)
    return make_error(lc.offset + 12, fmt::format("program descriptor (LC_THREAD flavor 1) has {:#x} state words, "
                                                  "too few for the task fields at +0x81c", t->count));
  ProgramInfo p;
  p.count = t->count;
  p.slots.resize(32);
  for (size_t k = 0; k < p.slots.size(); ++k) p.slots[k] = *c.view.u64(0x10 + 8 * k);
  p.text_address = *c.view.u64(0x810);
  p.first_task_words_m1 = *c.view.u32(0x818);
  p.task_count = *c.view.u32(0x81c);
  p.debug_log_event_bits = *c.view.u32(0x850);
  p.log_event_bits = *c.view.u32(0x858);
  if (auto s = read_network_name(c, lc, 0x83c, p); !s) return s.error();
  return p;
}

Expected<BufferDescriptor> decode_buffer_descriptor(const LoadCommand& lc) {
  const auto* t = lc.as<ThreadCommand>();
  if (!t || t->flavor != macho::kThreadBuffer) return make_error(lc.offset, "not a flavor-3 LC_THREAD");
  CommandView c(lc);
  const uint64_t state_end = 16 + 4 * uint64_t{t->count};
  if (state_end < 0x88)
    return make_error(lc.offset + 12, fmt::format("buffer descriptor (LC_THREAD flavor 3) has {:#x} state words, "
                                                  "fewer than the 0x1e that hold its shape",
                                                  t->count));
  BufferDescriptor d;
  d.count = t->count;
  d.direction = *c.view.u32(0x14);
  d.type = *c.view.u32(0x24);
  for (int i = 0; i < 4; ++i) d.nchw[i] = *c.view.u32(0x28 + 4 * i);
  d.depth = *c.view.u32(0x38);
  for (int i = 0; i < 4; ++i) d.strides[i] = *c.view.u64(0x50 + 8 * i);
  d.total_size = *c.view.u64(0x70);
  d.extent = *c.view.u32(0x80);
  auto string_at = [&](uint64_t field, std::string& dst, const char* what) -> Status {
    uint32_t off = *c.view.u32(field);
    if (off == 0) return Ok{};
    if (off >= lc.cmdsize)
      return make_error(lc.offset + field, fmt::format("buffer descriptor {} offset {:#x} is outside the command ({:#x} bytes)",
                                                       what, off, lc.cmdsize));
    auto s = c.view.cstring(off);
    if (!s) return make_error(lc.offset + off, fmt::format("buffer descriptor {} is not NUL-terminated", what));
    dst = *s;
    return Ok{};
  };
  if (auto s = string_at(0x18, d.network_name, "network name"); !s) return s.error();
  if (auto s = string_at(0x20, d.name, "buffer name"); !s) return s.error();
  if (auto s = string_at(0x7c, d.name2, "second buffer name"); !s) return s.error();
  return d;
}

}  // namespace ane
