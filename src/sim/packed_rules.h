// The rules of the generation layer (packed_view.h): the fields a task must
// write, H13's names for a generation's fields, the values unwritten fields
// take (rules U1 - U14), the tensor bindings, the written words known to
// change no value, and the packing marks read as H13 layouts. The view that
// applies them is packed_view.cpp; their evidence is in docs/simulator.md,
// "Other generations".
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ane/error.h"
#include "ane/generation.h"
#include "ane/program.h"
#include "ane/registers.h"
#include "ane/task.h"

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

// Numerics per generation, named in every trace: H13's where no public
// measurement says otherwise; M4's measured rounding and fixed-point
// accumulator on H16 - H18 (the round and acc options' "by generation"
// defaults, Options::for_generation).
std::string numerics_note(Generation g);

// Rule U2: Cin and Cout unwritten mean 16 channels. H14's records write them
// for every channel count but 16 (1, 3, 64, 128 ... 4096), and leave both
// unwritten in every 16-channel record (1x16x1x1 of five ops, 1x16x128x128):
// 16 is what the registers hold unwritten, their reset value (U12): grouped
// convolutions leave them so at 16 channels per group, the 16-column matmuls
// (h14mv_index_m1_k16_n16) too, and h14norm_reduce_mean_ax2_1x128x16x16, whose
// reduction over H reads the [1,128,16,16] tensor as 16 channels, leaves Cin
// so and runs to its reference only with 16.
inline constexpr const char* kSixteenNote = "U2: Cin and Cout unwritten, 16 (their reset value)";

// Rule U14: on H16 - H18, whose widths have words of their own, Win and
// Wout unwritten mean 256. matmul_m1_k256_n256_ty1 (H16, H17, H18) leaves
// both unwritten in its copy of x's 256 values, where the same program of
// 512 columns writes 0x200 there; every other record writes its widths (1,
// 2, 8, 16, 224, 512), and the product comes out right only with 256, its
// reset value as 16 is Cin's (U2).
inline constexpr uint32_t kUnwrittenWidth = 256;

inline constexpr const char* kWidthNote = "U14: Win and Wout unwritten, 256 (their reset value on H16 - H18)";

// Rule U3: a task that leaves TaskType unwritten but writes the neural
// engine's words and no planar-engine word is a neural-engine task (type 0):
// every record's task of that kind that writes TaskType writes 0 (H14's
// broadcast copies into L2: env_bcast_add_1x96x8x8_runtime_1x96x1x1 writes
// 0x00200001, env_bcast_add_1x768x16x16_runtime_1x1x1x1 leaves it unwritten).
inline constexpr const char* kNeTypeNote =
    "U3: TaskType unwritten in a task that programs the neural engine alone, taken as 0 (NE)";

bool programs_ne_alone(const Task& t);

// Rule U5: a task that leaves ResultType unwritten and writes no result DMA
// word keeps its result in L2 (type 0, its reset value by U12): H18's pow
// multiplies on the planar engine into L2 so (its next task reads the product
// there with the same strides); H14's softmax keeps x - max and the row sums'
// reciprocals so, and H13's records of the same MILs write ResultType 0 there
// (norm_softmax_a3_1x64x1x128 task 3: 0x140, its H14 twin no result word at all).
inline constexpr const char* kL2ResultNote =
    "U5: ResultType unwritten in a task that writes no result DMA word, taken as 0 (kept in L2)";

// U12 for SourceType: a task after the first that leaves SourceType
// unwritten and binds no source tile DMA reads its input from L2 (type 0,
// the reset value): the tiled convolutions' later tasks read the input an
// earlier task kept in L2 so (conv_probe_k3_c1024_n1024_s16_st1_g4_bias0_same
// tasks 2 - 8 after task 1 wrote SourceCfg 0x120; their H13 twins write
// SourceType 0), and their kernel sections hash to H13's packing for it.
inline constexpr const char* kL2SourceNote =
    "U12: SourceType unwritten in a later task that binds no source DMA, its reset value 0 (read from L2)";

// Whether `t` reads its source from L2 by that rule.
bool reads_source_from_l2(const Task& t);

// Whether `t` keeps its result in L2 by U5.
bool keeps_result_in_l2(const Task& t);

// Rule U6: real_div over [1,C,1,1] (every generation) keeps the reciprocal
// in L2 between its two tasks with the L2 strides unwritten on both sides;
// the writing NE pass sets packing words no other record sets
// (GroupConvCfg.UnicastCin 4 over 64 channels, 8 over 256, the OCGSize word
// 2, Cfg bits 28-29) and the
// reading PE task broadcast bit 9 (set besides only by blob constants' PE
// tasks, after a copy that is not such a writer). The two tasks name one layout, and
// the values do not depend on which: the view lays the writer's result one
// channel per 16 bytes, and reads the packing words and bit 9 as that
// layout. Only those exact values, on one-position tensors.
inline constexpr const char* kOnePositionNote =
    "U6: a one-position tensor kept in L2 with its strides unwritten on both sides, laid one channel per 16 bytes "
    "(the writer's packing words and the reader's broadcast bit 9 taken as that layout)";

// The writing side of U6, from the generation's own registers: an NE pass
// over one position per channel, kept in L2 with its channel stride
// unwritten, with Cfg bits 28-29 as real_div's reciprocal task sets them.
bool one_position_writer(const Task& t);

// U6 applied to the view `v` of `t`; the words it accounts for go to `covered`.
bool one_position_in_l2(const Program& program, const Task& t, RegisterImage& v,
                        std::map<uint32_t, uint32_t>& covered);

// Rule U13: a copy of more than 16 rows into L2, channels innermost (matmul).
// x's M rows become the channels of each of the K positions, M values 2
// bytes apart within a channel slot of (M + 8) x 2 bytes (L2's result channel
// stride: 0x50 for 32 rows, 0x90 for 64), which the convolution reads back
// with the same stride. The pass marks that packing as U6's writer does:
// Cfg bit 29 beside ChannelsInner, GroupConvCfg UnicastEn with UnicastCin M /
// 16, and the OCGSize word log2(M / 16) (h14mv_mask_m64_k256_n256: 0x30220201,
// 0x44001, 2; env_mm_r2rb_m32_k4096_n2048_tx0_ty1: 0x30230301, 0x24001, 1).
// layer_norm over C copies [1,64,8,8] so too (h14norm_layer_norm_ax1_1x64x8x8:
// 0x30244401, UnicastCin 4, OCGSize 2) before reducing the copy. The strides
// give the layout, and the values do not depend on the marks: the view takes
// them as that packing (a plain channels-inner copy for H13's planner), only
// at exactly those values.
inline constexpr const char* kRowsCopyNote =
    "U13: a channels-innermost copy of M > 16 rows (Cfg bit 29, UnicastCin M/16, OCGSize log2(M/16)) taken as a "
    "plain copy; the L2 strides give its layout";

bool rows_copy_packing(const Task& t, RegisterImage& v, std::map<uint32_t, uint32_t>& covered);

// H15 - H18 write PE.Cfg bits 6-8 all set where H14 and H13 set bit 6
// (Cond) alone: in every abs record (c64, H15 - H17) and in no other record.
// Bits 7-8 set with bit 6 are taken as H13's absolute value; any other
// pattern of them stays unaccounted for, and refuses the task.
void abs_bits(const Task& t, std::map<uint32_t, uint32_t>& covered);

// H15 - H18 planar-engine scales are fp32 words; H13 has fp16 halves of
// BiasScale. Exact fp16 values only.
Status fp32_scales(const Task& t, RegisterImage& v, std::map<uint32_t, uint32_t>& covered);

// Rule U11, L2 group strides (H14). H13's planner steps the groups of a
// source or result kept in L2 by two words its table leaves unnamed, L2
// +0x18 and +0x44 (0x4818, 0x4844). H14's L2 block is H13's at the same
// slots, and its records write those words with H13's values for the same
// MIL (h14norm_reduce_max_ax2_1x32x4x4 task 1: 0x10 and 0x200, as H13's):
// the view copies them. A stride left unwritten is refused. A second source
// in L2 over groups has no group stride in H13's table: the planner reads
// one group's tensor for every group (H14's batch broadcasts keep one
// [1,C,1,1] copy for [N,C,H,W]), and L2 refuses the read unless the result
// there holds exactly one group.
inline constexpr const char* kL2GroupNote = "U11: L2 group strides at H13's slots (0x518, 0x544)";

// Rule U12: each task starts from the reset values. A register a task leaves
// unwritten holds what U1 names even when an earlier task of the program
// wrote another value: pow's last task reads L2 bases of 0 after its first
// tasks wrote 0x4100 there (U4); the tiled 1024-channel convolution leaves
// UnicastEn unwritten after its L2 copy set it, and its kernel hashes only
// with the dense packing (UnicastEn 0); h14norm_reduce_max_ax2_1x32x4x4 leaves
// L2Cfg unwritten after the task before wrote 4, where H13's record of that
// MIL writes 0; softmax_1x64x8x8 leaves NumGroups, the broadcast bits and
// the scale unwritten after its reductions and subtraction set them, and
// computes softmax to fp16 precision only when they are back at reset.
inline constexpr const char* kResetNote = "U12: registers left unwritten hold their reset values, not an earlier task's";

// U11 applied to the view `v` of `t`.
Status l2_group_strides(const Task& t, RegisterImage& v, std::map<uint32_t, uint32_t>& covered, bool source_dma,
                        bool result_dma, std::vector<std::string>& notes);

}  // namespace ane::sim::detail
