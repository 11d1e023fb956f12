// The generation layer of the simulator: an H14 - H18 task seen as the H13
// registers that program the same computation, so that one planner and one
// set of units run every generation. The view is built from the fields the
// generation's register table names with H13's names, the tensors its
// relocation tags bind, and a short list of rules for what Apple's compiler
// leaves unwritten. A written word the view cannot account for, and an
// unwritten one it would have to guess, refuse the task by name
// (docs/simulator.md, "Other generations").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ane/error.h"
#include "ane/program.h"
#include "ane/registers.h"
#include "ane/task.h"

namespace ane::sim::detail {

struct PackedView {
  RegisterImage h13;               // Header, Common, L2, PE, NE and tile DMA in H13's layout
  std::vector<std::string> notes;  // the rules the view relied on
  std::vector<std::string> traced; // written words with no effect on values
};

// What earlier tasks of the same program wrote: a register a task leaves
// unwritten holds its reset value again (rule U12), and the view names the
// earlier values it sets aside in the trace.
using EarlierWrites = std::map<uint32_t, uint32_t>;  // address -> last value written

// The program-descriptor entry the relocation tag of the record writing
// `field`'s register binds (the last such record wins); none when the field
// is unknown, unwritten or written without a tag.
std::optional<uint32_t> bound_entry(const Task& t, const char* field);

// The view of task `t` of `program`; `earlier` holds the words tasks before
// it wrote and is updated with this task's.
Expected<PackedView> packed_view(const Program& program, const Task& t, EarlierWrites& earlier);

}  // namespace ane::sim::detail
