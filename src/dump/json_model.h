// Internal: the JSON model of a program, shared by dump_json and the diff.
#pragma once

#include <nlohmann/json.hpp>

#include "ane/dump.h"

namespace ane::detail {

using Json = nlohmann::ordered_json;

Json program_json(const Program& p, const DumpOptions& opt);
Json task_json(const Task& t, const DumpOptions& opt);
std::string hex(uint64_t v);

}  // namespace ane::detail
