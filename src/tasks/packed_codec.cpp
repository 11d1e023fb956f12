// Decoding and encoding of H14 - H18 ("packed") task descriptors and of the
// __text they sit in. Layout (docs/generations.md, from every H14 - H18
// record of mil-hwx-compiler and freedomtan's parser):
//   __text   16-byte units; a unit whose word 0 declares zero task words is a
//            frame (one precedes the first task); a task starts at a 16-byte
//            boundary and is followed by zero bytes up to the next one;
//   header   8 (H14, H15) or 9 (H16 - H18) words, word 0 = TID | words << 16,
//            one more word when the last one's low two bits are both set;
//   records  burst:  word address bits 0-14, count - 1 bits 15-20, tag 21-30;
//            masked: bit 31, word address bits 0-14, bit i of 15-30 writes the
//                    word at address + 4 (i + 1) too;
//            each followed by its data words in address order.
#include <algorithm>

#include <map>

#include <fmt/format.h>

#include "ane/registers.h"
#include "ane/task.h"

namespace ane {

namespace {

constexpr uint32_t kMaskedBit = 0x80000000u;
constexpr uint32_t kWordAddressMask = 0x7fff;
constexpr uint32_t kTaskWordsShift = 16, kTaskWordsMask = 0x7ff;
constexpr uint64_t kUnit = 16;

uint64_t align_unit(uint64_t v) { return (v + kUnit - 1) / kUnit * kUnit; }

const RegisterDatabase& database_of(Generation g) {
  const RegisterDatabase* db = RegisterDatabase::for_generation(g);
  return db ? *db : RegisterDatabase::h13();
}

}  // namespace

const char* record_kind_name(RecordKind k) {
  switch (k) {
    case RecordKind::Linked: return "stream";
    case RecordKind::Burst: return "burst";
    case RecordKind::Masked: return "masked";
  }
  return "?";
}

uint32_t RegisterStream::header_word() const {
  switch (kind) {
    case RecordKind::Linked: return ((count - 1) << 26) | address;
    case RecordKind::Burst: return burst_header(address, count, tag);
    case RecordKind::Masked: return masked_header(address, mask);
  }
  return 0;
}

uint32_t RegisterStream::word_address(uint32_t k) const {
  if (kind != RecordKind::Masked || k == 0) return address + 4 * k;
  // The k-th set bit of the mask, counting the first word as k = 0.
  uint32_t seen = 0;
  for (uint32_t bit = 0; bit < 16; ++bit)
    if (mask & (1u << bit))
      if (++seen == k) return address + 4 * (bit + 1);
  return address;  // k >= count: not reached by callers
}

RegisterStream decode_record_header(uint32_t header) {
  RegisterStream s;
  s.address = (header & kWordAddressMask) * 4;
  if (header & kMaskedBit) {
    s.kind = RecordKind::Masked;
    s.mask = static_cast<uint16_t>((header >> 15) & 0xffff);
    s.count = 1 + static_cast<uint32_t>(__builtin_popcount(s.mask));
  } else {
    s.kind = RecordKind::Burst;
    s.count = ((header >> 15) & 0x3f) + 1;
    s.tag = static_cast<uint16_t>((header >> 21) & 0x3ff);
  }
  return s;
}

uint32_t burst_header(uint32_t address, uint32_t count, uint16_t tag) {
  return (uint32_t{tag} & 0x3ff) << 21 | ((count - 1) & 0x3f) << 15 | ((address / 4) & kWordAddressMask);
}

uint32_t masked_header(uint32_t address, uint16_t mask) {
  return kMaskedBit | uint32_t{mask} << 15 | ((address / 4) & kWordAddressMask);
}

Expected<Task> decode_packed_task(std::span<const uint8_t> bytes, uint64_t base_offset, Generation g) {
  const RegisterDatabase& db = database_of(g);
  const uint32_t fixed = generation_info(g).header_words;
  ByteView v(bytes, base_offset);
  if (bytes.size() % 4 != 0)
    return make_error(base_offset, fmt::format("task size {:#x} is not a whole number of words", bytes.size()));
  if (bytes.size() < 4 * uint64_t{fixed})
    return make_error(base_offset, fmt::format("task is {} words, fewer than the {} header words of {}",
                                               bytes.size() / 4, fixed, generation_name(g)));
  Task t;
  t.generation = g;
  t.size = static_cast<uint32_t>(bytes.size());
  t.regs = RegisterImage(db);
  t.regs.header.clear();
  for (uint32_t i = 0; i < fixed; ++i) t.regs.header.push_back(*v.u32(4 * i));
  // Both low bits of the last fixed word announce one more header word.
  if ((t.regs.header.back() & 3) == 3) {
    if (bytes.size() < 4 * uint64_t{fixed + 1})
      return make_error(base_offset + 4 * (fixed - 1),
                        "the last header word announces an extended header word the task has no room for");
    t.regs.header.push_back(*v.u32(4 * fixed));
  }
  uint64_t off = 4 * t.regs.header.size();
  std::map<uint32_t, std::pair<uint32_t, uint32_t>> writer;  // address -> (record, word) that wrote it last
  while (off < bytes.size()) {
    RegisterStream s = decode_record_header(*v.u32(off));
    s.task_offset = static_cast<uint32_t>(off);
    if (!v.contains(off + 4, uint64_t{s.count} * 4))
      return make_error(base_offset + off,
                        fmt::format("{} record of {} words at {:#07x} runs past the end of the task ({:#x} bytes)",
                                    record_kind_name(s.kind), s.count, s.address, bytes.size()));
    const auto record = static_cast<uint32_t>(t.streams.size());
    for (uint32_t k = 0; k < s.count; ++k) {
      const uint32_t address = s.word_address(k);
      if (auto it = writer.find(address); it != writer.end())
        t.superseded.push_back({it->second.first, it->second.second, t.regs.word(address)});
      writer[address] = {record, k};
      t.regs.set_word(address, *v.u32(off + 4 + 4 * uint64_t{k}));
    }
    t.streams.push_back(s);
    off += 4 + uint64_t{s.count} * 4;
  }
  return t;
}

Expected<PackedText> decode_packed_text(std::span<const uint8_t> text, uint64_t file_offset, Generation g,
                                        const char* region) {
  PackedText out;
  out.generation = g;
  out.size = text.size();
  const uint32_t fixed = generation_info(g).header_words;
  ByteView v(text, file_offset);
  uint64_t off = 0;
  while (off < text.size()) {
    if (text.size() - off < 4) {
      if (std::any_of(text.begin() + static_cast<ptrdiff_t>(off), text.end(), [](uint8_t b) { return b != 0; }))
        return make_error(file_offset + off, fmt::format("{} ends in {} bytes that are neither a task nor zero",
                                                         region, text.size() - off));
      break;
    }
    const uint32_t h0 = *v.u32(off);
    const uint32_t words = (h0 >> kTaskWordsShift) & kTaskWordsMask;
    if (words == 0) {
      const uint64_t n = std::min<uint64_t>(kUnit, text.size() - off);
      out.frames.push_back({off, Bytes(text.begin() + static_cast<ptrdiff_t>(off),
                                       text.begin() + static_cast<ptrdiff_t>(off + n))});
      off += n;
      continue;
    }
    const uint64_t bytes = 4 * uint64_t{words};
    if (words < fixed)
      return make_error(file_offset + off, fmt::format("task {} at {}+{:#x} declares {} words, fewer than its {} "
                                                       "header words",
                                                       out.tasks.size(), region, off, words, fixed));
    if (off + bytes > text.size())
      return make_error(file_offset + off,
                        fmt::format("task {} ({} words at {}+{:#x}) runs past the end of {} ({:#x} bytes)",
                                    out.tasks.size(), words, region, off, region, text.size()));
    auto t = decode_packed_task(text.subspan(off, bytes), file_offset + off, g);
    if (!t) return t.error();
    t->index = static_cast<uint32_t>(out.tasks.size());
    t->text_offset = off;
    t->file_offset = file_offset + off;
    out.tasks.push_back(std::move(t).value());
    const uint64_t next = std::min<uint64_t>(align_unit(off + bytes), text.size());
    for (uint64_t p = off + bytes; p < next; ++p)
      if (text[p] != 0)
        return make_error(file_offset + p, fmt::format("nonzero byte in the padding after task {} ({}+{:#x})",
                                                       out.tasks.size() - 1, region, p));
    off = next;
  }
  // All-zero units after the last task are padding, not frames.
  while (!out.frames.empty() && (out.tasks.empty() || out.frames.back().text_offset > out.tasks.back().text_offset) &&
         std::all_of(out.frames.back().bytes.begin(), out.frames.back().bytes.end(), [](uint8_t b) { return b == 0; }))
    out.frames.pop_back();
  return out;
}

Bytes encode_packed_task(const Task& t) {
  Bytes out;
  for (size_t i = 0; i < t.regs.header.size(); ++i) put_u32(out, 4 * i, t.regs.header[i]);
  uint64_t off = 4 * t.regs.header.size();
  for (uint32_t i = 0; i < t.streams.size(); ++i) {
    const auto& s = t.streams[i];
    put_u32(out, off, s.header_word());
    for (uint32_t k = 0; k < s.count; ++k) {
      uint32_t value = t.regs.word(s.word_address(k));
      for (const auto& w : t.superseded)
        if (w.stream == i && w.word == k) value = w.value;
      put_u32(out, off + 4 + 4 * k, value);
    }
    off += 4 + 4 * uint64_t{s.count};
  }
  return out;
}

Bytes encode_packed_text(const PackedText& text) {
  Bytes out(text.size, 0);
  for (const auto& f : text.frames)
    std::copy(f.bytes.begin(), f.bytes.end(), out.begin() + static_cast<ptrdiff_t>(f.text_offset));
  for (const auto& t : text.tasks) {
    const Bytes b = encode_packed_task(t);
    if (out.size() < t.text_offset + b.size()) out.resize(t.text_offset + b.size(), 0);
    std::copy(b.begin(), b.end(), out.begin() + static_cast<ptrdiff_t>(t.text_offset));
  }
  return out;
}

}  // namespace ane
