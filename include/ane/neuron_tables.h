// The lookup tables (NE NonlinearMode 2) that Neuron units compile to.
//
// Every table Apple's compiler wrote into the corpus kernels follows one rule
// (docs/compiler.md, "Neuron tables"): its 33 nodes are the function rounded
// once to fp16 on a grid the table's own slots describe, and the other slots
// (input range, the values beyond it, the two lines, the grid step, the mode)
// are constants per function. So a table is generated from a short spec: the
// function, its grid and those constants. Only GELU's and SiLU's nodes are
// not the function's values (Apple fitted them); their tables are Apple's,
// copied.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ane {

struct NeuronTable {
  std::array<uint16_t, 64> slots{};  // little-endian fp16 (slot 41, 42: integers)
  uint16_t post_scale = 0x3c00;      // NE.PostScale: the input scale before the table
  bool generated = true;             // false: Apple's table copied (GELU, SiLU)
  // Header[4].DebugLogEvents bit 13 cleared: eiln's single-task log2, sqrt and
  // inv kernels (the range-reducing transforms) clear it, every other table
  // task sets it; what the bit enables is not known.
  bool clears_debug_event_13 = false;
  std::string rule;                  // what the table holds, for --explain
  std::string evidence;              // the Apple-compiled table it reproduces, if any
};

// Parameters a Neuron unit may give (plist Params).
struct NeuronArgs {
  double alpha = 0.01;            // LeakyReLU: the slope below 0 (PyTorch's default)
  double min = -1.0, max = 1.0;   // Clip: the range (PyTorch hardtanh's default)
};

// The table a Neuron `type` compiles to; nullopt for a type with no table
// rule (the caller names the known ones).
std::optional<NeuronTable> neuron_table(std::string_view type, const NeuronArgs& args = {});

// The Neuron types with a table rule, sorted.
std::vector<std::string> neuron_table_types();

}  // namespace ane
