// The declarative part of the generation layer (packed_view.h): the fields a
// task must write, H13's names for a generation's fields, the values
// unwritten fields take (rule U1), the tensor bindings, and the written words
// known to change no value. The view that applies them is packed_view.cpp;
// their evidence is in docs/simulator.md, "Other generations".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ane/generation.h"
#include "ane/registers.h"

namespace ane::sim::detail {

// Fields a task must write: no rule says what they hold otherwise.
inline constexpr const char* kMustWrite[] = {
    "Common.Cfg.TaskType", "Common.InDim.Win",   "Common.InDim.Hin",          "Common.Cin.Cin",
    "Common.Cout.Cout",    "Common.OutDim.Wout", "Common.OutDim.Hout",        "L2.SourceCfg.SourceType",
    "L2.ResultCfg.ResultType"};

// Where a named field's H13 namesake is called something else.
std::string h13_name(const FieldInfo& f);

// Fields only the neural engine reads (H13's planner takes them for NE
// tasks alone): a planar-engine task does not depend on what they hold.
bool ne_only(std::string_view h13_field);

// The generation's name of an H13 L2 type field (H15+ keep the second
// source's type in a word of its own).
const char* h13_type_name(Generation g, const char* h13_field);

// H13's L2 offset of a generation's L2 word, where the layouts match: H14's
// block is H13's; H15 inserts Source2Cfg at +0x08 and moves the rest up one
// word; H16 - H18 move the sources up two words and the result (H13 +0x30 on)
// six (the named fields of docs/registers-h1x.md place them so).
std::optional<uint32_t> h13_l2_offset(Generation g, uint32_t offset);

// The L2 config words' fields beyond the types: H13's planner reads none.
bool l2_cfg_beyond_types(std::string_view n);

// Rule U4: an L2 base a task leaves unwritten is 0, whatever an earlier task
// wrote there. pow's last task (H14 - H17) reads the two tensors its first
// tasks left at L2 0 and 0x10 with SourceBase unwritten, after both wrote
// 0x4100 there (their staging copies): kept, that value would read x's copy
// instead of z and log2 x.
inline constexpr const char* kL2BaseNote = "U4: an L2 base the task leaves unwritten is 0";
bool l2_base(std::string_view h13_field);

// H13's SourceCfg offset in its L2 block, and its bit 25 (no named field).
inline constexpr uint32_t kH13SourceCfg = 0x04, kSourceCfgBit25 = 1u << 25;

// Whether H13's L2 word at `offset` from its block has no named field.
bool h13_unnamed_l2_word(uint32_t offset);

// H13 fields no H14 - H18 element-wise or activation record writes, and the
// value the program's own arithmetic needs them to hold: Apple's compiler
// leaves them unwritten in programs that compute exactly the MIL operation
// (an fp16 add of two [1,64,8,8] tensors is one group, no window, fp16
// formats, unit scales). Taking them so is rule U1 (docs/simulator.md).
struct Inert {
  const char* field;
  uint32_t value;
};
inline constexpr Inert kInert[] = {
    {"Common.InDepth.Din", 1},         {"Common.OutDepth.Dout", 1},         {"Common.ChCfg.InFmt", 2},
    {"Common.ChCfg.Src2InFmt", 2},     {"Common.ChCfg.OutFmt", 2},          {"Common.ConvCfg.Kw", 1},
    {"Common.ConvCfg.Kh", 1},          {"Common.ConvCfg.Sx", 1},            {"Common.ConvCfg.Sy", 1},
    {"Common.ConvCfg.Ox", 1},          {"Common.ConvCfg.Oy", 1},            {"Common.GroupConvCfg.NumGroups", 1},
    {"Common.GroupConvCfg.UnicastCin", 1},
};
// The planar engine's, for planar-engine tasks only (a neural-engine task
// leaves the planar engine idle, its words zero, as on H13).
inline constexpr Inert kInertPe[] = {
    {"PE.BiasScale.Scale", 0x3c00}, {"PE.PreScale.PreScale", 0x3c00}, {"PE.FinalScale.FinalScale", 0x3f800000}};
inline constexpr const char* kInertNote =
    "U1: unwritten registers taken as the operation needs them (fp16, one group, no window, no broadcast; unit "
    "scales on planar-engine tasks)";

// The tensors a task reads and writes: each base address is a relocated
// record naming the program-descriptor entry (the slot), as H13's header
// names slots in Header[8].
struct Binding {
  const char* base;  // the generation's field, H13's name
  const char* slot;  // H13 header fields
  const char* enable;
};
inline constexpr Binding kBindings[] = {
    {"TileDMASrc.BaseAddr.Addr", "Header[8].RBase0", "Header[8].RBE0"},
    {"TileDMASrc.Src2BaseAddr.Addr", "Header[8].RBase1", "Header[8].RBE1"},
    {"TileDMADst.BaseAddr.Addr", "Header[8].WBase", "Header[8].WBE"},
};

// Written words, or the parts of them no named field covers, with no effect
// on the values computed. Bits in `any` may hold anything (their role is
// known: cache hints, scheduling, task identity); the rest must equal
// `fixed`, the value every record shows, where the meaning is unknown.
enum class Layouts : uint8_t { H14_15, H16_18, H17_18, H18, All };
struct Harmless {
  Block block;
  uint32_t offset;  // from the block base
  Layouts on;
  uint32_t any, fixed;
  const char* why;
};

// Whether the generation has H16's register layout (H16 - H18).
bool h16_layout(Generation g);

// The entry that accounts for `rest`, the bits of a written word no named
// field covers; nullptr where none does.
const Harmless* harmless(Generation g, Block b, uint32_t offset, uint32_t rest);

}  // namespace ane::sim::detail
