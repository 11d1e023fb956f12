// The H14 - H18 DMA words as H13's (packed_view.cpp): the table DMA of a
// lookup-table activation, a convolution's kernel DMA and H18's tile-DMA
// format words. Internal to the generation layer; the rules and their
// evidence are in docs/simulator.md, "Other generations".
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ane/error.h"
#include "ane/registers.h"
#include "ane/task.h"

namespace ane::sim::detail {

// Shared with packed_view.cpp.
const RegisterDatabase& h13_database();
Error unsupported_in(const std::string& what, uint32_t task);
// The record that writes `address` last in task t; nullptr if none does.
const RegisterStream* record_writing(const Task& t, uint32_t address);
// "H16 Common.Cfg=0x10200000": a written word by its generation's name.
std::string word_name(const RegisterDatabase& db, uint32_t address, uint32_t value);

// Each maps the task's words onto H13's in v and marks the bits it accounts
// for in `covered`, or refuses by name.
Status table_dma(const Task& t, RegisterImage& v, std::map<uint32_t, uint32_t>& covered);
// Whether the task writes its generation's table DMA enable word.
bool table_dma_written(const Task& t);
Status conv_kernel_dma(const Task& t, RegisterImage& v, std::map<uint32_t, uint32_t>& covered,
                       std::vector<std::string>& notes);
Status h18_formats(const Task& t, RegisterImage& v, std::map<uint32_t, uint32_t>& covered);

}  // namespace ane::sim::detail
