// Fingerprints of every output of the example networks, the random programs
// and the corpus programs under every numerics setting (golden_outputs.cpp).
#pragma once

#include <string>
#include <vector>

namespace ane::golden {

// "default" and each --option setting the simulator has.
const std::vector<std::string>& settings();

// One line per program, setting and output: "<program> <setting> <output>
// <fnv-1a 64 of its fp16 values>", or "... error <message>". corpus_dir ""
// leaves the corpus out.
std::vector<std::string> table(const std::string& source_dir, const std::string& corpus_dir);

}  // namespace ane::golden
