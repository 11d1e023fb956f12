// H13 task descriptors: a 0x28-byte header followed by register streams.
// A stream is one header word ((count - 1) << 26 | register address) and
// `count` data words written to consecutive registers.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ane/bytes.h"
#include "ane/error.h"
#include "ane/hwx.h"
#include "ane/registers.h"

namespace ane {

constexpr uint32_t kTaskHeaderBytes = 0x28;

struct RegisterStream {
  uint32_t address = 0;  // first register
  uint32_t count = 0;    // data words
  uint32_t task_offset = 0;  // byte offset of the stream header inside the task
};

struct Task {
  uint32_t index = 0;
  uint64_t text_offset = 0;  // offset inside __text
  uint64_t file_offset = 0;  // offset inside the file
  uint32_t size = 0;         // bytes: header + streams
  std::vector<RegisterStream> streams;
  RegisterImage regs;
};

// Decodes one task from its bytes (exactly `size` bytes, starting with the
// header). `base_offset` is used in error messages.
Expected<Task> decode_task(std::span<const uint8_t> bytes, uint64_t base_offset);

// Walks the task chain of a file: starts at __text offset 0, follows
// Header[7].NextPointer / Header[1].NextSize until EON or a zero pointer.
// Rejects chains that loop, go backwards or leave __text.
Expected<std::vector<Task>> decode_tasks(const HwxFile& file);

// The same walk over any byte range holding a chain (`region` names it in
// messages: "__text", "the anec image"). NextPointer offsets are relative to
// the start of `text`; `file_offset` is where `text` starts in the file.
// `first_task_bytes` is the size of task 0 (later sizes come from NextSize).
Expected<std::vector<Task>> decode_task_chain(std::span<const uint8_t> text, uint64_t file_offset,
                                              uint64_t first_task_bytes, const char* region);

// The stream layout Apple's v4.2.1 compiler writes: one stream per block.
std::vector<RegisterStream> default_stream_layout();

// Encodes header + streams. Registers a stream covers but the image never
// wrote are emitted as 0. A stream longer than 64 words (the most one stream
// header can count) is emitted as several consecutive streams.
Bytes encode_task(const RegisterImage& regs, const std::vector<RegisterStream>& layout);

}  // namespace ane
