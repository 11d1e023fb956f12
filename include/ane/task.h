// Task descriptors. H13: a 0x28-byte header followed by register streams, each
// one header word ((count - 1) << 26 | register address) and `count` data
// words written to consecutive registers, tasks chained by NextPointer.
// H14 - H18 ("packed"): 16-byte aligned tasks after a 16-byte frame, 8 or 9
// header words (word 0 = TID | words << 16), then burst, masked-scatter and
// relocation-tagged records (docs/generations.md).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ane/bytes.h"
#include "ane/error.h"
#include "ane/generation.h"
#include "ane/hwx.h"
#include "ane/registers.h"

namespace ane {

constexpr uint32_t kTaskHeaderBytes = 0x28;

// How a record header names the registers it writes.
enum class RecordKind : uint8_t {
  Linked,  // H13: ((count - 1) << 26) | byte address; count consecutive words
  Burst,   // H14+: word address in bits 0-14, count - 1 in bits 15-20, tag in bits 21-30
  Masked,  // H14+: bit 31 set, word address in bits 0-14; bit i of bits 15-30 also
           // writes address + 4 (i + 1)
};
const char* record_kind_name(RecordKind k);  // "stream", "burst", "masked"

struct RegisterStream {
  uint32_t address = 0;  // first register
  uint32_t count = 0;    // data words
  uint32_t task_offset = 0;  // byte offset of the stream header inside the task
  RecordKind kind = RecordKind::Linked;
  uint16_t mask = 0;  // Masked: the words written after the first
  // Burst: header bits 21-30. Bit 8 (header bit 29) marks a relocated word: a
  // base address the loader fills from program-descriptor entry relocation().
  uint16_t tag = 0;

  // The record header as it is encoded.
  uint32_t header_word() const;
  // Register address of the k-th data word (k < count).
  uint32_t word_address(uint32_t k) const;
  bool relocated() const { return kind == RecordKind::Burst && (tag & 0x100) != 0; }
  // The program-descriptor entry a relocated record binds (header bits 23-28).
  uint32_t relocation() const { return (tag >> 2) & 0x3f; }
};

// Decodes one record header of a packed task (count follows from it).
RegisterStream decode_record_header(uint32_t header);
// Headers for building packed tasks.
uint32_t burst_header(uint32_t address, uint32_t count, uint16_t tag = 0);
uint32_t masked_header(uint32_t address, uint16_t mask);

struct Task {
  uint32_t index = 0;
  Generation generation = Generation::H13;
  uint64_t text_offset = 0;  // offset inside __text
  uint64_t file_offset = 0;  // offset inside the file
  uint32_t size = 0;         // bytes: header + streams
  std::vector<RegisterStream> streams;
  RegisterImage regs;
  // H14 - H18: a later record may write a register again (Apple's H17 add
  // writes TileDMASrc 0x4d28 twice). The image holds the last value; the
  // words it replaced are kept here so that encoding gives the same bytes.
  struct SupersededWord {
    uint32_t stream = 0, word = 0;  // which record, which of its words
    uint32_t value = 0;
    bool operator==(const SupersededWord&) const = default;
  };
  std::vector<SupersededWord> superseded;
};

// Decodes one task from its bytes (exactly `size` bytes, starting with the
// header). `base_offset` is used in error messages.
Expected<Task> decode_task(std::span<const uint8_t> bytes, uint64_t base_offset);

// The tasks of a file, in its generation's format (the cpusubtype names it).
// H13: starts at __text offset 0, follows Header[7].NextPointer /
// Header[1].NextSize until EON or a zero pointer, rejecting chains that loop,
// go backwards or leave __text. H14 - H18: decode_packed_text over __text.
// Either way the task count must match the program descriptor's.
Expected<std::vector<Task>> decode_tasks(const HwxFile& file);

// The same walk over any byte range holding a chain (`region` names it in
// messages: "__text", "the anec image"). NextPointer offsets are relative to
// the start of `text`; `file_offset` is where `text` starts in the file.
// `first_task_bytes` is the size of task 0 (later sizes come from NextSize).
Expected<std::vector<Task>> decode_task_chain(std::span<const uint8_t> text, uint64_t file_offset,
                                              uint64_t first_task_bytes, const char* region);

// ---- H14 - H18 -------------------------------------------------------------

// A 16-byte unit of __text whose word 0 declares no task words: the frame
// before the first task (its bytes kept, since some compilers put a 1 there).
struct TextFrame {
  uint64_t text_offset = 0;
  Bytes bytes;
};

// A packed __text: frames and tasks at their offsets; zero bytes elsewhere.
struct PackedText {
  Generation generation = Generation::H14;
  uint64_t size = 0;
  std::vector<TextFrame> frames;
  std::vector<Task> tasks;
};

// Decodes one packed task from exactly its bytes (word 0's size).
Expected<Task> decode_packed_task(std::span<const uint8_t> bytes, uint64_t base_offset, Generation g);
// Walks a packed __text: frames, then tasks at 16-byte boundaries, zero
// padding between them. `region` names it in messages.
Expected<PackedText> decode_packed_text(std::span<const uint8_t> text, uint64_t file_offset, Generation g,
                                        const char* region);
// The inverse: header words, then each record header and the words the
// image holds at the record's addresses.
Bytes encode_packed_task(const Task& t);
Bytes encode_packed_text(const PackedText& text);
// A packed file's whole __text (frames included); an error on other generations.
Expected<PackedText> decode_packed_tasks(const HwxFile& file);

// The stream layout Apple's v4.2.1 compiler writes: one stream per block.
std::vector<RegisterStream> default_stream_layout();

// Encodes header + streams. Registers a stream covers but the image never
// wrote are emitted as 0. A stream longer than 64 words (the most one stream
// header can count) is emitted as several consecutive streams.
Bytes encode_task(const RegisterImage& regs, const std::vector<RegisterStream>& layout);

}  // namespace ane
