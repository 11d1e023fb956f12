// H14 - H18 convolution tasks as the H13 packer sees them: the registers by
// H13 name (with what the records leave unwritten), and the kernel section
// H13's packing of a record's weights gives at the lane offsets the kernel
// DMA words name. Shared by the H14 convolution and the matmul record tests.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ane/bytes.h"
#include "ane/program.h"
#include "conv_reference.h"
#include "oracle_fixture.h"
#include "packed_fixture.h"

namespace ane::test {

// The H13 helpers (ConvRecord, rebuild_constants) read parameters and weight
// formulas from their own fixture type; an H14 record's are the same keys and
// spellings.
oracle::Fixture as_oracle(const packed::Fixture& f);

// A register's value by name: the written value, else what H14 records
// leave unwritten where H13 writes the value of the operation
// (docs/simulator.md): a 1x1 window at stride 1 (U1), 16 channels (U2),
// OCGSize 3 (U9); any other field reads 0.
uint32_t packed_conv_value(const RegisterImage& r, const char* name);

// The registers by H13 name: H14 keeps OCGSize in a word of its own.
ConvFieldReader packed_conv_reader(const RegisterImage& r);

// The tasks that convolve: MACCfg written with OpMode 0 and KernelMode 0.
std::vector<const Task*> packed_conv_tasks(const Program& p);

// The constant section (`size` bytes) H13's packing of `k` gives, each conv
// task's lanes where its H14 words point; or the packer's refusal. Checks
// (gtest) that the enabled lanes and their sizes are the packer's.
struct ConvSection {
  std::optional<Bytes> section;
  std::string refusal;
};
ConvSection pack_conv_section(const Program& p, const oracle::ConvRecord& c, const oracle::Constants& k,
                            uint64_t size, const std::string& name);
// The same with a convolution and weights of its own for each conv task:
// per_task[i] for the i-th in program order (a chain of projections);
// `into`, when given, is the section to add them to (it holds `size`
// bytes); `table`, when given, opens each lane of a task with a table
// activation (rule U15).
struct TaskWeights {
  oracle::ConvRecord conv;
  oracle::Constants constants;
};
ConvSection pack_conv_sections(const Program& p, const std::vector<TaskWeights>& per_task, uint64_t size,
                               const std::string& name, const Bytes* into = nullptr, const Bytes* table = nullptr);

}  // namespace ane::test
