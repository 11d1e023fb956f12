// Oracle fixtures: Apple-compiled H13 tasks transcribed from the public
// records of joshuaswarren/mil-hwx-compiler (MIT; research/oracles/h13) into
// a line format of our own (tests/fixtures/oracles/README.md). A fixture
// holds the record's parameters, weight formula, constant-section hash,
// tensor descriptors and every task word; this turns it into a runnable
// anec image, with the constants rebuilt from the formula.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ane/anec.h"
#include "ane/bytes.h"
#include "ane/error.h"
#include "ane/task.h"

namespace ane::oracle {

struct StreamRecord {
  uint32_t address = 0, count = 0, header = 0;
  std::vector<uint32_t> words;
};

struct FixtureTask {
  uint32_t size = 0;
  std::array<uint32_t, 10> header{};
  std::vector<StreamRecord> records;
  // The task as the compiler wrote it: header words, then each record's
  // header and words.
  std::vector<uint32_t> stream() const;
  // The word the task writes at a register address (throws if none).
  uint32_t word(uint32_t address) const;
  // Whether the task writes the register at `address`.
  bool writes(uint32_t address) const;
};

struct FixtureTensor {
  int binding = 0;
  std::array<uint64_t, 4> shape{}, strides{};
  uint64_t total = 0;
};

struct Fixture {
  std::string file, source, name, family;
  std::map<std::string, std::string> params, weights;
  uint64_t constant_size = 0;
  std::string constant_sha256;
  std::vector<std::pair<uint64_t, std::string>> chunks;  // offset, sha256 (2048-byte chunks)
  std::vector<FixtureTensor> tensors;
  uint64_t text_address = 0, constant_address = 0;
  uint32_t task_count = 0, words_minus_one = 0;
  std::vector<FixtureTask> tasks;

  const std::string& param(const std::string& key) const;  // throws if absent
  uint64_t param_u64(const std::string& key) const;
  std::vector<uint64_t> param_list(const std::string& key) const;
  bool param_bool(const std::string& key) const;
};

Expected<Fixture> load_fixture(const std::string& path);
// Every *.fx under dir, sorted by name.
std::vector<std::string> fixture_files(const std::string& dir);
// The transcribed task words against the record's own figures (gtest
// expectations): the task count, each stream header re-encoding its address
// and word count, each task's size, and task 0's words_minus_one.
void expect_tasks_match_record(const Fixture& f);
// The task's streams as (address, word count), in order: the record's, or a
// decoded task's (to compare the stream layouts).
std::vector<std::pair<uint32_t, uint32_t>> stream_shape(const FixtureTask& t);
std::vector<std::pair<uint32_t, uint32_t>> stream_shape(const Task& t);
// A test name for a fixture path: the record's name, in identifier characters.
std::string test_name(const ::testing::TestParamInfo<std::string>& info);

// The convolution a conv record's MIL program describes, from its parameters.
struct ConvRecord {
  uint32_t cin = 0, cout = 0, groups = 1, stride = 1;
  uint32_t kh = 1, kw = 1;  // from weight_shape (O, I/G, Kh, Kw), else the one "kernel" number
  uint32_t hin = 0, win = 0, hout = 0, wout = 0;
  uint32_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  bool bias = false;
  bool relu = false;  // a relu of the convolution's result (the base campaign's conv + relu chain)
  // Kernel weights in all groups: Cout x (Cin / groups) x Kh x Kw.
  uint64_t weight_count() const { return uint64_t{cout} * (cin / groups) * kh * kw; }
  bool depthwise() const { return groups > 1 && groups == cin && groups == cout; }
  static ConvRecord of(const Fixture& f);
};

// Under AddressSanitizer the convolution record tests that pack, compile and
// run a kernel skip records of more than 2^21 weights (3x3 kernels of 512 x
// 512 channels, or 256 x 1024, and up): each costs seconds there, the release build checks
// them all, and the smaller records take the same code paths (tiled tasks,
// zero-skipping chunks, L2 kept between tasks) under the sanitizers.
bool too_large_for_sanitizers(const ConvRecord& c);

// The constants the compiler saw, rebuilt from the record's weight formula:
// region 0 (weights, `weight_count` values) and region 1 (bias, `bias_count`,
// may be 0), as fp16 bit patterns. Errors name formulas this does not know.
struct Constants {
  std::vector<uint16_t> weights, bias;
};
Expected<Constants> rebuild_constants(const Fixture& f, uint64_t weight_count, uint64_t bias_count);

// The program as an anec image: the tasks (each padded to 16 bytes, as the
// driver expects), then `kernel` (the constant section).
Bytes anec_image(const Fixture& f, const Bytes& kernel);

// The record's tensors as the buffers of such an image: the input "x" at
// `input_slot`, the output "y" at `output_slot` (the Header[8] RBase0 of the
// task that reads it, the WBase of the one that writes it).
AnecDescriptor io_descriptor(const Fixture& f, uint32_t input_slot, uint32_t output_slot);

}  // namespace ane::oracle
