// Decoding and encoding of single H13 task descriptors.
#include <algorithm>

#include <fmt/format.h>

#include "ane/task.h"

namespace ane {

namespace {
constexpr uint32_t kStreamAddressMask = (1u << 26) - 1;
constexpr uint32_t kMaxStreamWords = 64;
}

Expected<Task> decode_task(std::span<const uint8_t> bytes, uint64_t base_offset) {
  ByteView v(bytes, base_offset);
  if (bytes.size() < kTaskHeaderBytes)
    return make_error(base_offset, fmt::format("task is {:#x} bytes, smaller than its 0x28-byte header", bytes.size()));
  if (bytes.size() % 4 != 0)
    return make_error(base_offset, fmt::format("task size {:#x} is not a whole number of words", bytes.size()));
  Task t;
  t.size = static_cast<uint32_t>(bytes.size());
  for (size_t i = 0; i < t.regs.header.size(); ++i) t.regs.header[i] = *v.u32(4 * i);
  uint64_t off = kTaskHeaderBytes;
  while (off < bytes.size()) {
    const uint32_t head = *v.u32(off);
    RegisterStream s;
    s.address = head & kStreamAddressMask;
    s.count = (head >> 26) + 1;
    s.task_offset = static_cast<uint32_t>(off);
    if (!v.contains(off + 4, uint64_t{s.count} * 4))
      return make_error(base_offset + off,
                        fmt::format("register stream of {} words at {:#x} runs past the end of the task ({:#x} bytes)",
                                    s.count, s.address, bytes.size()));
    for (uint32_t k = 0; k < s.count; ++k) t.regs.set_word(s.address + 4 * k, *v.u32(off + 4 + 4 * uint64_t{k}));
    t.streams.push_back(s);
    off += 4 + uint64_t{s.count} * 4;
  }
  return t;
}

std::vector<RegisterStream> default_stream_layout() {
  std::vector<RegisterStream> out;
  uint32_t off = kTaskHeaderBytes;
  for (const auto& b : RegisterDatabase::h13().blocks()) {
    if (b.id == Block::Header) continue;
    out.push_back({b.base, b.words, off});
    off += 4 + 4 * b.words;
  }
  return out;
}

Bytes encode_task(const RegisterImage& regs, const std::vector<RegisterStream>& layout) {
  Bytes out;
  for (size_t i = 0; i < regs.header.size(); ++i) put_u32(out, 4 * i, regs.header[i]);
  uint64_t off = kTaskHeaderBytes;
  for (const auto& s : layout) {
    // A stream header holds at most 64 words: longer runs become several streams.
    for (uint32_t done = 0; done < s.count; done += kMaxStreamWords) {
      const uint32_t n = std::min(kMaxStreamWords, s.count - done);
      const uint32_t first = s.address + 4 * done;
      put_u32(out, off, ((n - 1) << 26) | (first & kStreamAddressMask));
      for (uint32_t k = 0; k < n; ++k) put_u32(out, off + 4 + 4 * k, regs.word(first + 4 * k));
      off += 4 + 4 * uint64_t{n};
    }
  }
  return out;
}

}  // namespace ane
