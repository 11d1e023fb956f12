// Human and machine renderings of an HWX program, and a structural diff.
// Everything is derived from the container model, the decoded tasks and the
// register database.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ane/error.h"
#include "ane/hwx.h"
#include "ane/program.h"
#include "ane/task.h"

namespace ane {

struct DumpOptions {
  bool raw = false;      // also list every task word with its register address
  bool summary = false;  // only the buffers and one line per task saying what it computes
};

std::string dump_text(const Program& p, const DumpOptions& opt = {});
// The JSON document described in the README (pretty-printed, 2-space indent).
std::string dump_json(const Program& p, const DumpOptions& opt = {});

// One difference between two programs.
struct DiffEntry {
  std::string path;  // "header.ncmds", "task[0].Common.InDim.Win", "section __TEXT,__const bytes"
  std::string a;     // value in A ("" when absent)
  std::string b;     // value in B ("" when absent)
};

std::vector<DiffEntry> diff_programs(const Program& a, const Program& b);
std::string format_diff(const Program& a, const Program& b, const std::vector<DiffEntry>& diff);

// A slice of __TEXT,__const named by a kernel symbol (K<hash>[_ne_<lane>]).
struct KernelBlob {
  std::string symbol;
  uint64_t address = 0;
  uint64_t const_offset = 0;  // offset inside __TEXT,__const
  std::vector<uint8_t> data;
};
std::vector<KernelBlob> kernel_blobs(const HwxFile& file);

}  // namespace ane
