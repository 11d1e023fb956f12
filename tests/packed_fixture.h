// H14 - H18 oracle fixtures: what Apple's compiler wrote for one MIL program
// on a later generation, transcribed from the public records of
// joshuaswarren/mil-hwx-compiler (MIT; research/oracles/h14 .. h18) into the
// line format of tests/fixtures/oracles/README.md.
//
// Everything here is written independently of libane's packed codec and
// container code, so the tests can hold them against each other: the record
// header rule, the stream a task is, and a synthetic .hwx around the record's
// pinned parts (the task text, the descriptors, the section sizes).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ane/bytes.h"
#include "ane/error.h"

namespace ane::packed {

struct Record {
  uint32_t header = 0, address = 0, count = 0;
};

struct Task {
  uint32_t size = 0;  // bytes
  std::vector<uint32_t> header;
  std::vector<Record> records;
  std::map<uint32_t, uint32_t> words;  // every block word, by address
  std::map<uint32_t, std::string> block_of;  // block base -> the record's block name
};

struct Tensor {
  int binding = 0;  // 1 in, 2 out
  uint32_t element_code = 0;
  std::vector<uint64_t> shape, strides;
  uint64_t total = 0;  // the record's figure: one batch's bytes when N > 1
  // Bytes from the first element to past the last (all N batches).
  uint64_t extent() const;
};

struct Section {
  uint64_t size = 0;
  std::string sha256;
  uint64_t nonzero = 0;
  bool present = false;
};

struct Fixture {
  std::string file, target, name, family, source;
  std::vector<std::pair<std::string, bool>> io;  // MIL name, is input
  std::map<std::string, std::string> params, weights;
  uint64_t hwx_bytes = 0;
  Section constant, kernel;
  // The sections' nonzero fp16 words by index ("fp16 const|kernel" lines:
  // records list them for sections of at most 256 bytes).
  std::map<uint32_t, double> constant_fp16, kernel_fp16;
  uint32_t command_size = 0, task_count = 0, text_words = 0;
  uint64_t text_address = 0, constant_address = 0;
  std::vector<uint64_t> resources;
  std::vector<uint32_t> trailing;
  std::map<uint32_t, uint32_t> descriptor;  // program-descriptor word offset -> word (H15 - H18)
  std::vector<Tensor> tensors;
  std::vector<Task> tasks;

  uint32_t cpusubtype() const;
  uint32_t header_words() const;  // 8 or 9
  uint32_t first_surface() const;  // descriptor entry of the first tensor
};

Expected<Fixture> load(const std::string& path);
// Every *.fx under tests/fixtures/oracles/h14 .. h18, sorted.
std::vector<std::string> fixture_files();
// "0,2,3" (or "0x10,...") as numbers.
std::vector<uint64_t> number_list(const std::string& s);

// The records of one operation family under tests/fixtures/oracles/h14
// ("conv", "reduce"), sorted: judged by their own tests
// (sim_generations_conv_test.cpp, sim_generations_reduce_test.cpp) rather
// than the element-wise runs.
std::vector<std::string> operation_fixture_files(const std::string& family);
// The records the malformed-input tests cut and mutate (each thousands of
// times): binary_add_1x64x8x8 on every generation, and the sigmoid of H14
// (table in __const) and H16 (table in __KERN_0). The other records add
// shapes, not container forms.
std::vector<std::string> malformed_sample();
// "h14_binary_add_1x64x8x8": a fixture's test name (generation and case).
std::string test_name(const std::string& path);

// test_name as INSTANTIATE_TEST_SUITE_P's name generator.
struct ParamName {
  template <typename Info>
  std::string operator()(const Info& info) const { return test_name(info.param); }
};

// The record header rule, written from the shared docs: the register
// addresses a header names (burst: a run; masked: the base plus one word per
// mask bit).
std::vector<uint32_t> record_addresses(uint32_t header);
// The task as Apple's compiler wrote it: header words, then each record's
// header followed by the words at the addresses it names.
std::vector<uint32_t> task_stream(const Task& t);
// __TEXT,__text: one zero 16-byte frame, then the tasks at 16-byte
// boundaries; text_words long.
Bytes text_bytes(const Fixture& f);

// The addresses of the program-descriptor entries (u64 at +0x10 + 0x10 i):
// the record's words where it has them; on H14, whose records keep only the
// resource addresses, the surfaces that follow are synthesised at 32 KiB
// steps (marked synthetic in the file).
std::vector<uint64_t> entries(const Fixture& f);

// A synthetic .hwx around the record: the pinned parts exact (cpusubtype,
// __text, section sizes and addresses, descriptor words, tensor
// descriptors), the rest from a layout of our own that no reader may rely on
// (segment flags, buffer names, LC_IDENT text, no symbol table).
// `constant`, when given, is the __const section's bytes (the record's size):
// what a test rebuilt from the record's weight formula; `kernel` likewise
// the __kern_0 section's (H16+).
Bytes assemble_hwx(const Fixture& f, const Bytes* constant = nullptr, const Bytes* kernel = nullptr);

}  // namespace ane::packed
