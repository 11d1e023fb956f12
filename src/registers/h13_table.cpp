// The H13 (M1 / A14) register table: every field of the task header and of
// the seven register blocks a zin_ane_compiler v4.2.1 task programs, written
// down exactly once.
//
// One row = one field: block, register, field, hardware byte address, bit
// offset inside the 32-bit word, width, confidence, note. A row with a count
// describes a register array (count registers `stride` bytes apart, named
// Reg[0], Reg[1], ...); it is expanded when the database is built.
//
// Sources and confidence (see registers.h):
//   Published  the 258 fields of corpus aneregs.json, names and bit positions
//              verbatim (tests/registers_test.cpp re-derives every one of them);
//   Claimed    names from other reverse-engineering work (tinygrad notes,
//              freedomtan/coreml_to_ane_hwx), not checked against files here;
//   Inferred   our reading of values observed in Apple-compiled files
//              (../shared/docs/plist-to-hwx.md sections 6 and 9);
//   Unknown    no known meaning.
//
// Naming of what has no published name:
//   * a register word without a known meaning is one 32-bit field named after
//     its address: <Block>.Unk<5 hex digits>.Value, e.g. Common.Unk00020.Value
//     (rows with an empty register name; a run of such words is one row with a
//     count, each word still named after its own address);
//   * an unexplained bit inside a named register is <Block>.<Reg>.UnkBit<n>,
//     e.g. Common.Cfg.UnkBit0;
//   * registers that look like a second copy of a published register for the
//     planar engine's second source are prefixed Src2 (TileDMASrc) or
//     Source2 (L2) and keep the published field layout.
//
// The header is not a hardware address space: its words get the pseudo
// address 4 * word index (Header[0] = 0x00, Header[9] = 0x24).
//
// The blocks are listed in v4.2.1 stream order (task offsets 0x028, 0x124,
// 0x168, 0x1dc, 0x228, 0x23c, 0x254); tools derive task offsets from it.

#include <algorithm>
#include <iterator>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ane/registers.h"
#include "field_names.h"
#include "table_shorthands.h"

namespace ane {
namespace {

struct Row {
  Block block;
  const char* reg;  // "" = word without a known meaning (named Unk<address>)
  const char* field;
  uint32_t address;  // hardware byte address of the (first) register
  uint8_t bit;
  uint8_t width;
  Confidence confidence;
  const char* note;
  uint8_t count = 1;   // registers described by the row (array / run of words)
  uint8_t stride = 4;  // bytes between them
};

using namespace table_shorthands;

// clang-format off
constexpr BlockInfo kBlocks[] = {
  // id                   name            base     words
  {Block::Header,        "Header",       0x00000, 10},
  {Block::KernelDMASrc,  "KernelDMASrc", 0x1F800, 62},
  {Block::Common,        "Common",       0x00000, 16},
  {Block::TileDMASrc,    "TileDMASrc",   0x13800, 28},
  {Block::L2,            "L2",           0x04800, 18},
  {Block::PE,            "PE",           0x08800,  4},
  {Block::NE,            "NE",           0x0C800,  5},
  {Block::TileDMADst,    "TileDMADst",   0x17800,  7},
};

constexpr Row kRows[] = {
  // ---- Header (task offset 0x000; pseudo address = 4 * word) ---------------------------------
  // block          register     field              addr  bit wid  conf  note
  {Block::Header, "Header[0]", "TID",             0x00,  0, 16, Pub, "task index in the program"},
  {Block::Header, "Header[0]", "NID",             0x00, 16,  8, Pub, ""},
  {Block::Header, "Header[0]", "LNID",            0x00, 24,  1, Pub, "1 on the last task of a multi-task program"},
  {Block::Header, "Header[0]", "EON",             0x00, 25,  1, Pub, "1 on the last task"},
  {Block::Header, "Header[1]", "ExeCycles",       0x04,  0, 16, Pub, ""},
  {Block::Header, "Header[1]", "NextSize",        0x04, 16,  9, Pub, "word count - 1 of the next task (0x9c), 0 on the last"},
  {Block::Header, "Header[2]", "LogEvents",       0x08,  0, 24, Pub, "0x400; 0x422 on the last task"},
  {Block::Header, "Header[3]", "Exceptions",      0x0C,  0, 24, Pub, ""},
  {Block::Header, "Header[4]", "DebugLogEvents",  0x10,  0, 24, Pub, "0xfff868 compute, 0x68 compiler-made copy; +2 on the last task"},
  {Block::Header, "Header[5]", "DebugExceptions", 0x14,  0, 24, Pub, ""},
  {Block::Header, "Header[6]", "DisallowAbort",   0x18,  8,  1, Pub, ""},
  {Block::Header, "Header[6]", "TDSkip",          0x18,  9,  1, Pub, ""},
  {Block::Header, "Header[6]", "KPC",             0x18, 10,  1, Pub, ""},
  {Block::Header, "Header[6]", "SPL",             0x18, 11,  1, Pub, ""},
  {Block::Header, "Header[6]", "TSR",             0x18, 12,  1, Pub, ""},
  {Block::Header, "Header[6]", "SPC",             0x18, 13,  1, Pub, ""},
  {Block::Header, "Header[6]", "DPC",             0x18, 14,  1, Pub, ""},
  {Block::Header, "Header[6]", "TSE",             0x18, 15,  1, Pub, ""},
  {Block::Header, "Header[6]", "NextPriority",    0x18, 16,  6, Pub, ""},
  {Block::Header, "Header[6]", "TDE",             0x18, 24,  1, Pub, ""},
  {Block::Header, "Header[6]", "SrcLoc",          0x18, 28,  1, Pub, ""},
  {Block::Header, "Header[6]", "DstLoc",          0x18, 29,  1, Pub, ""},
  {Block::Header, "Header[6]", "TQDis",           0x18, 31,  1, Pub, ""},
  {Block::Header, "Header[7]", "NextPointer",     0x1C,  0, 32, Pub, "`__text` offset of the next task; 0 ends the chain"},
  {Block::Header, "Header[8]", "RBase0",          0x20,  0,  5, Pub, "slot of the first source"},
  {Block::Header, "Header[8]", "RBE0",            0x20,  5,  1, Pub, "enables RBase0"},
  {Block::Header, "Header[8]", "RBase1",          0x20,  6,  5, Pub, "slot of the second source (planar engine)"},
  {Block::Header, "Header[8]", "RBE1",            0x20, 11,  1, Pub, "enables RBase1"},
  {Block::Header, "Header[8]", "WBase",           0x20, 12,  5, Pub, "slot of the destination"},
  {Block::Header, "Header[8]", "WBE",             0x20, 17,  1, Pub, "enables WBase"},
  {Block::Header, "Header[8]", "TBase",           0x20, 18,  5, Pub, "task-base slot (0 = `__text`)"},
  {Block::Header, "Header[8]", "TBE",             0x20, 23,  1, Pub, "1 when another task follows"},
  {Block::Header, "Header[8]", "ENE",             0x20, 24,  3, Pub, "number of neural-engine cores used"},
  {Block::Header, "Header[9]", "KBase0",          0x24,  0,  5, Pub, "kernel-data slot (1 = `__const`)"},
  {Block::Header, "Header[9]", "KBE0",            0x24,  5,  1, Pub, "enables KBase0"},
  {Block::Header, "Header[9]", "KBase1",          0x24,  6,  5, Pub, ""},
  {Block::Header, "Header[9]", "KBE1",            0x24, 11,  1, Pub, ""},
  {Block::Header, "Header[9]", "KBase2",          0x24, 12,  5, Pub, ""},
  {Block::Header, "Header[9]", "KBE2",            0x24, 17,  1, Pub, ""},
  {Block::Header, "Header[9]", "KBase3",          0x24, 18,  5, Pub, ""},
  {Block::Header, "Header[9]", "KBE3",            0x24, 23,  1, Pub, ""},

  // ---- KernelDMASrc (task offset 0x028, 62 words) --------------------------------------------
  // block                register          field                    addr     bit wid  conf      note                                            count stride
  {Block::KernelDMASrc, kUnnamed,         "Value",                 0x1F800,  0, 32, Unknown,  "0x40 when any kernel lane is enabled, else 0"},
  {Block::KernelDMASrc, kUnnamed,         "Value",                 0x1F804,  0, 32, Unknown,  "0 in every sample"},
  {Block::KernelDMASrc, "CoeffDMAConfig", "En",                    0x1F808,  0,  1, Pub,      "lane reads kernel data",                         16, 4},
  {Block::KernelDMASrc, "CoeffDMAConfig", "CrH",                   0x1F808,  4,  2, Pub,      "",                                               16, 4},
  {Block::KernelDMASrc, "CoeffDMAConfig", "CacheHint",             0x1F808,  6,  4, Pub,      "",                                               16, 4},
  {Block::KernelDMASrc, "CoeffDMAConfig", "PrefetchParticipateEn", 0x1F808, 28,  1, Pub,      "",                                               16, 4},
  {Block::KernelDMASrc, "CoeffBaseAddr",  "Addr",                  0x1F848,  6, 26, Pub,      "offset in kernel data / 64 (word = bytes)",      16, 4},
  {Block::KernelDMASrc, "CoeffBfrSize",   "MemBfrSize",            0x1F888,  6, 26, Pub,      "lane size / 64 (word = bytes)",                  16, 4},
  {Block::KernelDMASrc, kUnnamed,         "Value",                 0x1F8C8,  0, 32, Unknown,  "0x80 except in PE tasks; looks like a disabled CoeffDMAConfig (CacheHint 2)", 4, 4},
  {Block::KernelDMASrc, kUnnamed,         "Value",                 0x1F8D8,  0, 32, Unknown,  "0 in every sample",                              8, 4},

  // ---- Common (task offset 0x124, 16 words) --------------------------------------------------
  // block          register        field               addr     bit wid  conf      note
  {Block::Common, "InDim",        "Win",              0x00000,  0, 15, Pub,      "input width"},
  {Block::Common, "InDim",        "Hin",              0x00000, 16, 15, Pub,      "input height"},
  {Block::Common, "InDepth",      "Din",              0x00004,  0, 16, Claimed,  "input depth (tinygrad notes); 1 in every sample"},
  {Block::Common, "ChCfg",        "InFmt",            0x00008,  0,  2, Pub,      "2 = fp16"},
  {Block::Common, "ChCfg",        "Src2InFmt",        0x00008,  2,  2, Inferred, "format of the PE second source: 2 in PE tasks, else 0"},
  {Block::Common, "ChCfg",        "OutFmt",           0x00008,  4,  2, Pub,      "2 = fp16"},
  {Block::Common, "Cin",          "Cin",              0x0000C,  0, 17, Pub,      "input channels"},
  {Block::Common, "Cout",         "Cout",             0x00010,  0, 17, Pub,      "output channels"},
  {Block::Common, "OutDim",       "Wout",             0x00014,  0, 15, Pub,      "output width"},
  {Block::Common, "OutDim",       "Hout",             0x00014, 16, 15, Pub,      "output height"},
  {Block::Common, "OutDepth",     "Dout",             0x00018,  0, 16, Claimed,  "output depth (tinygrad notes); 1 in every sample"},
  {Block::Common, "ConvCfg",      "Kw",               0x0001C,  0,  5, Pub,      "kernel width"},
  {Block::Common, "ConvCfg",      "Kh",               0x0001C,  5,  5, Pub,      "kernel height"},
  {Block::Common, "ConvCfg",      "OCGSize",          0x0001C, 10,  3, Pub,      ""},
  {Block::Common, "ConvCfg",      "Sx",               0x0001C, 13,  2, Pub,      "stride x"},
  {Block::Common, "ConvCfg",      "Sy",               0x0001C, 15,  2, Pub,      "stride y"},
  {Block::Common, "ConvCfg",      "Px",               0x0001C, 17,  5, Pub,      "padding x"},
  {Block::Common, "ConvCfg",      "Py",               0x0001C, 22,  5, Pub,      "padding y"},
  {Block::Common, "ConvCfg",      "Ox",               0x0001C, 28,  2, Pub,      ""},
  {Block::Common, "ConvCfg",      "Oy",               0x0001C, 30,  2, Pub,      ""},
  {Block::Common, kUnnamed,       "Value",            0x00020,  0, 32, Unknown,  "0x2041 in every sample"},
  {Block::Common, "GroupConvCfg", "NumGroups",        0x00024,  0, 13, Pub,      ""},
  {Block::Common, "GroupConvCfg", "UnicastEn",        0x00024, 14,  1, Pub,      ""},
  {Block::Common, "GroupConvCfg", "ElemMultMode",     0x00024, 15,  1, Pub,      ""},
  {Block::Common, "GroupConvCfg", "UnicastCin",       0x00024, 16, 16, Pub,      ""},
  {Block::Common, "TileCfg",      "TileHeight",       0x00028,  0, 15, Pub,      ""},
  {Block::Common, kUnnamed,       "Value",            0x0002C,  0, 32, Unknown,  "0 in NE tasks; 4 (v4.2.1) or 0x59 in PE tasks, 0x44 when the source is in L2, 9 in reductions over 1600 values; the planar block: log2 width | log2 height << 4; macOS 26 (mil-hwx-compiler records) at most 256 values in element-wise tasks (0x08 at 224x224), at most 64 wide in reductions (docs/compiler.md)"},
  {Block::Common, "Broadcast",    "Src1W",            0x00030,  0,  1, Inferred, "the first source holds one value per row, repeated along W (eiln softmax, norm)"},
  {Block::Common, "Broadcast",    "Src1H",            0x00030,  1,  1, Inferred, "the first source is repeated along H (mil-hwx-compiler layer_norm)"},
  {Block::Common, "Broadcast",    "Src1C",            0x00030,  3,  1, Inferred, "the first source is repeated along C (mil-hwx-compiler softmax over C)"},
  {Block::Common, "Broadcast",    "Src2W",            0x00030,  4,  1, Inferred, "the second source holds one value per row, repeated along W (eiln softmax)"},
  {Block::Common, "Broadcast",    "Src2H",            0x00030,  5,  1, Inferred, "the second source is repeated along H"},
  {Block::Common, "Broadcast",    "Src2C",            0x00030,  7,  1, Inferred, "the second source is repeated along C (mil-hwx-compiler softmax over C)"},
  {Block::Common, "Broadcast",    "Src1ChannelsW",    0x00030,  8,  1, Inferred, "the first source is a result laid with its channels along W (OutChannelsW), read as one value per channel (mil-hwx-compiler softmax over the W of [1,C,1,W]: 0x101)"},
  {Block::Common, "Broadcast",    "Src2ChannelsW",    0x00030,  9,  1, Inferred, "the second source likewise (mil-hwx-compiler softmax over the W of [1,C,1,W]: 0x210)"},
  {Block::Common, "Broadcast",    "OutChannelsW",     0x00030, 10,  1, Inferred, "a reduction's result lays its channels along W, 2 bytes apart (mil-hwx-compiler reduce over C and keep_dims=false)"},
  {Block::Common, "Cfg",          "UnkBit0",          0x00034,  0,  1, Unknown,  "1 in every sample"},
  {Block::Common, "Cfg",          "UnkBit1",          0x00034,  1,  1, Unknown,  "1 only in PE tasks"},
  {Block::Common, "Cfg",          "SmallSourceMode",  0x00034,  2,  1, Pub,      ""},
  {Block::Common, "Cfg",          "TaskType",         0x00034,  4,  3, Inferred, "0 NE, 2 PE one operand, 3 PE two operands, 5 PE reduction (eiln kernels)"},
  {Block::Common, "Cfg",          "ShPref",           0x00034,  8,  3, Pub,      ""},
  {Block::Common, "Cfg",          "ShMin",            0x00034, 12,  3, Pub,      ""},
  {Block::Common, "Cfg",          "ShMax",            0x00034, 16,  3, Pub,      ""},
  {Block::Common, "Cfg",          "ActiveNE",         0x00034, 19,  3, Pub,      "ENE - 1"},
  {Block::Common, "Cfg",          "ContextSwitchIn",  0x00034, 22,  1, Pub,      ""},
  {Block::Common, "Cfg",          "ContextSwitchOut", 0x00034, 24,  1, Pub,      ""},
  {Block::Common, "Cfg",          "AccDoubleBufEn",   0x00034, 26,  1, Pub,      ""},
  {Block::Common, "Cfg",          "ChannelsInner",    0x00034, 28,  1, Inferred, "the result lays channels 2 bytes apart and W at the channel (L2) or plane (DMA) stride (mil-hwx-compiler reductions over C and H)"},
  {Block::Common, "TaskInfo",     "TaskID",           0x00038,  0, 16, Pub,      "0 in every sample"},
  {Block::Common, "TaskInfo",     "TaskQ",            0x00038, 16,  4, Pub,      ""},
  {Block::Common, "TaskInfo",     "NID",              0x00038, 20,  8, Pub,      ""},
  {Block::Common, "DPE",          "Category",         0x0003C,  0,  4, Pub,      ""},

  // ---- TileDMASrc (task offset 0x168, 28 words) ----------------------------------------------
  // block              register           field               addr     bit wid  conf      note                                           count stride
  {Block::TileDMASrc, "DMAConfig",       "En",               0x13800,  0,  1, Pub,      ""},
  {Block::TileDMASrc, "DMAConfig",       "CrH",              0x13800,  4,  2, Pub,      ""},
  {Block::TileDMASrc, "DMAConfig",       "CacheHint",        0x13800,  6,  4, Pub,      ""},
  {Block::TileDMASrc, "DMAConfig",       "CacheHintReuse",   0x13800, 10,  4, Pub,      ""},
  {Block::TileDMASrc, "DMAConfig",       "CacheHintNoReuse", 0x13800, 14,  4, Pub,      ""},
  {Block::TileDMASrc, "DMAConfig",       "DependencyMode",   0x13800, 18,  2, Pub,      ""},
  {Block::TileDMASrc, "Src2DMAConfig",   "En",               0x13804,  0,  1, Inferred, "second-source DMA config, laid out like DMAConfig"},
  {Block::TileDMASrc, "Src2DMAConfig",   "CrH",              0x13804,  4,  2, Inferred, ""},
  {Block::TileDMASrc, "Src2DMAConfig",   "CacheHint",        0x13804,  6,  4, Inferred, "2 in every sample"},
  {Block::TileDMASrc, "Src2DMAConfig",   "CacheHintReuse",   0x13804, 10,  4, Inferred, "14 in PE tasks, else 2"},
  {Block::TileDMASrc, "Src2DMAConfig",   "CacheHintNoReuse", 0x13804, 14,  4, Inferred, "12 in PE tasks, else 2"},
  {Block::TileDMASrc, "Src2DMAConfig",   "DependencyMode",   0x13804, 18,  2, Inferred, ""},
  {Block::TileDMASrc, "BaseAddr",        "Addr",             0x13808,  6, 26, Pub,      "bytes / 64 (word = bytes)"},
  {Block::TileDMASrc, "RowStride",       "Stride",           0x1380C,  6, 26, Pub,      "bytes / 64 (word = bytes)"},
  {Block::TileDMASrc, "PlaneStride",     "PlaneStride",      0x13810,  6, 26, Pub,      "bytes / 64 (word = bytes)"},
  {Block::TileDMASrc, "DepthStride",     "Stride",           0x13814,  6, 26, Pub,      "bytes / 64 (word = bytes)"},
  {Block::TileDMASrc, "GroupStride",     "Stride",           0x13818,  6, 26, Pub,      "bytes / 64 (word = bytes)"},
  {Block::TileDMASrc, "Src2BaseAddr",    "Addr",             0x1381C,  6, 26, Inferred, "base of the second source, bytes / 64 (word = bytes): eiln atan, ceil, norm read the intermediate's second plane through it"},
  {Block::TileDMASrc, "Src2RowStride",   "Stride",           0x13820,  6, 26, Inferred, "row stride of the PE second source"},
  {Block::TileDMASrc, "Src2PlaneStride", "PlaneStride",      0x13824,  6, 26, Inferred, "plane stride of the PE second source"},
  {Block::TileDMASrc, "Src2DepthStride", "Stride",           0x13828,  6, 26, Inferred, "depth stride of the PE second source"},
  {Block::TileDMASrc, "Src2GroupStride", "Stride",           0x1382C,  6, 26, Inferred, "group stride of the second source: equals Src2DepthStride wherever a second source is on"},
  {Block::TileDMASrc, kUnnamed,          "Value",            0x13830,  0, 32, Unknown,  "0 in every sample",                               2, 4},
  {Block::TileDMASrc, "Fmt",             "FmtMode",          0x13838,  0,  2, Pub,      ""},
  {Block::TileDMASrc, "Fmt",             "Truncate",         0x13838,  4,  2, Pub,      ""},
  {Block::TileDMASrc, "Fmt",             "Shift",            0x13838,  8,  1, Pub,      ""},
  {Block::TileDMASrc, "Fmt",             "MemFmt",           0x13838, 12,  2, Pub,      ""},
  {Block::TileDMASrc, "Fmt",             "OffsetCh",         0x13838, 16,  3, Pub,      ""},
  {Block::TileDMASrc, "Fmt",             "Interleave",       0x13838, 24,  4, Pub,      ""},
  {Block::TileDMASrc, "Fmt",             "CmpVec",           0x13838, 28,  4, Pub,      ""},
  {Block::TileDMASrc, "Src2Fmt",         "FmtMode",          0x1383C,  0,  2, Inferred, "second-source format, laid out like Fmt"},
  {Block::TileDMASrc, "Src2Fmt",         "Truncate",         0x1383C,  4,  2, Inferred, "3 in PE tasks"},
  {Block::TileDMASrc, "Src2Fmt",         "Shift",            0x1383C,  8,  1, Inferred, ""},
  {Block::TileDMASrc, "Src2Fmt",         "MemFmt",           0x1383C, 12,  2, Inferred, "2 in PE tasks"},
  {Block::TileDMASrc, "Src2Fmt",         "OffsetCh",         0x1383C, 16,  3, Inferred, ""},
  {Block::TileDMASrc, "Src2Fmt",         "Interleave",       0x1383C, 24,  4, Inferred, ""},
  {Block::TileDMASrc, "Src2Fmt",         "CmpVec",           0x1383C, 28,  4, Inferred, ""},
  {Block::TileDMASrc, kUnnamed,          "Value",            0x13840,  0, 32, Unknown,  "0x100 except in PE tasks"},
  {Block::TileDMASrc, kUnnamed,          "Value",            0x13844,  0, 32, Unknown,  "0 in every sample",                               3, 4},
  {Block::TileDMASrc, "PixelOffset",     "Offset",           0x13850,  0, 16, Pub,      "",                                                4, 4},
  {Block::TileDMASrc, kUnnamed,          "Value",            0x13860,  0, 32, Unknown,  "0 in every sample",                               4, 4},

  // ---- L2 (task offset 0x1dc, 18 words) ------------------------------------------------------
  // block      register                   field              addr     bit wid  conf      note
  {Block::L2, "L2Cfg",                   "InputReLU",       0x04800,  0,  1, Pub,      ""},
  {Block::L2, "L2Cfg",                   "PaddingMode",     0x04800,  2,  2, Pub,      ""},
  {Block::L2, "SourceCfg",               "SourceType",      0x04804,  0,  2, Pub,      "2 tile DMA, 0 or 3 a result an earlier task left in L2, 1 tile DMA with the tensor kept in L2 at SourceBase (mil-hwx-compiler input-channel tiling)"},
  {Block::L2, "SourceCfg",               "Dependent",       0x04804,  2,  2, Pub,      ""},
  {Block::L2, "SourceCfg",               "AliasConvSrc",    0x04804,  4,  1, Pub,      ""},
  {Block::L2, "SourceCfg",               "AliasConvRslt",   0x04804,  5,  1, Pub,      ""},
  {Block::L2, "SourceCfg",               "DMAFmt",          0x04804,  6,  2, Pub,      ""},
  {Block::L2, "SourceCfg",               "DMAInterleave",   0x04804,  8,  4, Pub,      ""},
  {Block::L2, "SourceCfg",               "DMACmpVec",       0x04804, 12,  4, Pub,      ""},
  {Block::L2, "SourceCfg",               "DMAOffsetCh",     0x04804, 16,  3, Pub,      ""},
  {Block::L2, "SourceCfg",               "AliasPlanarSrc",  0x04804, 20,  1, Pub,      ""},
  {Block::L2, "SourceCfg",               "AliasPlanarRslt", 0x04804, 22,  1, Pub,      ""},
  {Block::L2, "SourceCfg",               "Source2Type",     0x04804, 23,  2, Inferred, "like SourceType, for the second source: 2 tile DMA, 0 or 3 in L2"},
  {Block::L2, "SourceBase",              "Addr",            0x04808,  4, 17, Pub,      "bytes / 16 (word = bytes)"},
  {Block::L2, "SourceChannelStride",     "Stride",          0x0480C,  4, 17, Pub,      "bytes / 16 (word = bytes)"},
  {Block::L2, "SourceRowStride",         "Stride",          0x04810,  4, 17, Pub,      "bytes / 16 (word = bytes)"},
  {Block::L2, kUnnamed,                  "Value",           0x04814,  0, 32, Unknown,  "Cin x channel stride; tinygrad notes: channels x 0x10"},
  {Block::L2, kUnnamed,                  "Value",           0x04818,  0, 32, Unknown,  "Cin x channel stride; tinygrad notes: depth x channels x 0x10; the group stride of an L2 source (mil-hwx-compiler reduce_probe_sum_ax1_1x64x8x8 task 1: 0x420)"},
  {Block::L2, "Source2Base",             "Addr",            0x0481C,  4, 17, Inferred, "L2 base of the PE second source"},
  {Block::L2, "Source2ChannelStride",    "Stride",          0x04820,  4, 17, Inferred, "channel stride of the PE second source"},
  {Block::L2, "Source2RowStride",        "Stride",          0x04824,  4, 17, Inferred, "row stride of the PE second source"},
  {Block::L2, kUnnamed,                  "Value",           0x04828,  0, 32, Unknown,  "second-source counterpart of 0x04814 (PE tasks)"},
  {Block::L2, kUnnamed,                  "Value",           0x0482C,  0, 32, Unknown,  "second-source counterpart of 0x04818 (PE tasks)"},
  {Block::L2, "ResultCfg",               "ResultType",      0x04830,  0,  2, Pub,      "2 out through tile DMA, 0 or 3 kept in L2 for a later task"},
  {Block::L2, "ResultCfg",               "L2BfrMode",       0x04830,  3,  1, Pub,      ""},
  {Block::L2, "ResultCfg",               "AliasConvSrc",    0x04830,  4,  1, Pub,      ""},
  {Block::L2, "ResultCfg",               "AliasConvRslt",   0x04830,  5,  1, Pub,      ""},
  {Block::L2, "ResultCfg",               "DMAFmt",          0x04830,  6,  2, Pub,      ""},
  {Block::L2, "ResultCfg",               "DMAInterleave",   0x04830,  8,  4, Pub,      ""},
  {Block::L2, "ResultCfg",               "DMACmpVec",       0x04830, 12,  4, Pub,      ""},
  {Block::L2, "ResultCfg",               "DMAOffsetCh",     0x04830, 16,  3, Pub,      ""},
  {Block::L2, "ResultCfg",               "AliasPlanarSrc",  0x04830, 20,  1, Pub,      ""},
  {Block::L2, "ResultCfg",               "AliasPlanarRslt", 0x04830, 22,  1, Pub,      ""},
  {Block::L2, "ResultBase",              "Addr",            0x04834,  4, 17, Pub,      "bytes / 16 (word = bytes)"},
  {Block::L2, "ConvResultChannelStride", "Stride",          0x04838,  4, 17, Pub,      "bytes / 16 (word = bytes)"},
  {Block::L2, "ConvResultRowStride",     "Stride",          0x0483C,  4, 17, Pub,      "bytes / 16 (word = bytes)"},
  {Block::L2, kUnnamed,                  "Value",           0x04840,  0, 32, Unknown,  "Cout x channel stride in Conv tasks, else 0; result counterpart of 0x04814"},
  {Block::L2, kUnnamed,                  "Value",           0x04844,  0, 32, Unknown,  "Cout x channel stride in Conv tasks, else 0; result counterpart of 0x04818: the group stride of a result kept in L2 (reduce_probe_mean_ax2_1x128x16x16 task 1: 0x800)"},

  // ---- PE, planar engine (task offset 0x228, 4 words; no published field) -----------------
  // block      register      field         addr     bit wid  conf      note
  {Block::PE, "Cfg",        "PoolMode",   0x08800,  0,  2, Inferred, "reductions: 0 sum, 2 max (eiln softmax); freedomtan names bit 1 En"},
  {Block::PE, "Cfg",        "OpMode",     0x08800,  2,  3, Inferred, "0 add, 1 mul, 2 max, 3 min (eiln add, mul, max; mil-hwx-compiler minimum)"},
  {Block::PE, "Cfg",        "ReluEn",     0x08800,  5,  1, Claimed,  ""},
  {Block::PE, "Cfg",        "Cond",       0x08800,  6,  1, Inferred, "absolute value of the result (eiln abs, norm)"},
  {Block::PE, "Cfg",        "Reciprocal", 0x08800, 12,  1, Inferred, "a reduction returns 1 / result (eiln softmax: exp times 1/sum)"},
  {Block::PE, "Cfg",        "RSqrt",      0x08800, 13,  1, Inferred, "a reduction returns 1 / sqrt(result + Epsilon); with OpMode 4 it sums squares (mil-hwx-compiler layer_norm over W: 0x2010)"},
  {Block::PE, "Cfg",        "FirstSrc",   0x08800, 16,  1, Claimed,  ""},
  {Block::PE, "Cfg",        "SecSrc",     0x08800, 18,  2, Inferred, "0 one operand, 2 a op b, 3 a op (-b) (eiln softmax)"},
  {Block::PE, "BiasScale",  "Bias",       0x08804,  0, 16, Inferred, "fp16, added last: y = Scale x op(...) + Bias (eiln sigmoid: +0.5)"},
  {Block::PE, "BiasScale",  "Scale",      0x08804, 16, 16, Inferred, "fp16 factor on the op's result (eiln log: ln 2; softmax: log2 e)"},
  {Block::PE, "PreScale",   "Epsilon",    0x08808,  0, 16, Inferred, "fp16 added before RSqrt (mil-hwx-compiler layer_norm: 0x00a8, its epsilon 1e-5)"},
  {Block::PE, "PreScale",   "PreScale",   0x08808, 16, 16, Inferred, "fp16 factor on the first source (eiln sub: -1 on the subtrahend read first)"},
  {Block::PE, "FinalScale", "FinalScale", 0x0880C,  0, 32, Claimed,  "fp32; 1 / count in mil-hwx-compiler's reduce_mean"},

  // ---- NE, neural engine (task offset 0x23c, 5 words) ----------------------------------------
  // block      register            field               addr     bit wid  conf     note
  {Block::NE, "KernelCfg",        "KernelFmt",        0x0C800,  0,  2, Pub,     "2 = fp16 kernel"},
  {Block::NE, "KernelCfg",        "PalettizedEn",     0x0C800,  2,  1, Pub,     ""},
  {Block::NE, "KernelCfg",        "PalettizedBits",   0x0C800,  4,  4, Pub,     ""},
  {Block::NE, "KernelCfg",        "SparseFmt",        0x0C800,  8,  1, Pub,     ""},
  {Block::NE, "KernelCfg",        "GroupKernelReuse", 0x0C800, 10,  1, Pub,     ""},
  {Block::NE, "MACCfg",           "OpMode",           0x0C804,  0,  3, Pub,     ""},
  {Block::NE, "MACCfg",           "KernelMode",       0x0C804,  3,  1, Pub,     ""},
  {Block::NE, "MACCfg",           "BiasMode",         0x0C804,  4,  1, Pub,     ""},
  {Block::NE, "MACCfg",           "MatrixBiasEn",     0x0C804,  6,  1, Pub,     ""},
  {Block::NE, "MACCfg",           "BinaryPoint",      0x0C804,  8,  5, Pub,     ""},
  {Block::NE, "MACCfg",           "PostScaleMode",    0x0C804, 14,  1, Pub,     ""},
  {Block::NE, "MACCfg",           "NonlinearMode",    0x0C804, 16,  2, Pub,     "0 none, 1 ReLU, 2 lookup table in kernel lane 0"},
  {Block::NE, "MACCfg",           "UnkBit20",         0x0C804, 20,  1, Unknown, "1 in every NE task"},
  {Block::NE, "MatrixVectorBias", "MatrixVectorBias", 0x0C808,  0, 16, Pub,     ""},
  {Block::NE, "AccBias",          "AccBias",          0x0C80C,  0, 16, Pub,     "fp16 added to the accumulator (eiln inv: 1e-4, Core ML's inverse epsilon)"},
  {Block::NE, "AccBias",          "AccBiasShift",     0x0C80C, 16,  5, Pub,     ""},
  {Block::NE, "PostScale",        "PostScale",        0x0C810,  0, 16, Pub,     "fp16"},
  {Block::NE, "PostScale",        "PostRightShift",   0x0C810, 16,  5, Pub,     ""},

  // ---- TileDMADst (task offset 0x254, 7 words) -----------------------------------------------
  // block              register       field           addr     bit wid  conf note
  {Block::TileDMADst, "DMAConfig",   "En",           0x17800,  0,  1, Pub, ""},
  {Block::TileDMADst, "DMAConfig",   "CrH",          0x17800,  4,  2, Pub, ""},
  {Block::TileDMADst, "DMAConfig",   "CacheHint",    0x17800,  6,  4, Pub, ""},
  {Block::TileDMADst, "DMAConfig",   "L2BfrMode",    0x17800, 26,  1, Pub, ""},
  {Block::TileDMADst, "DMAConfig",   "BypassEOW",    0x17800, 27,  1, Pub, ""},
  {Block::TileDMADst, "BaseAddr",    "Addr",         0x17804,  6, 26, Pub, "bytes / 64 (word = bytes)"},
  {Block::TileDMADst, "RowStride",   "RowStride",    0x17808,  6, 26, Pub, "bytes / 64 (word = bytes)"},
  {Block::TileDMADst, "PlaneStride", "PlaneStride",  0x1780C,  6, 26, Pub, "bytes / 64 (word = bytes)"},
  {Block::TileDMADst, "DepthStride", "DepthStride",  0x17810,  6, 26, Pub, "bytes / 64 (word = bytes)"},
  {Block::TileDMADst, "GroupStride", "GroupStride",  0x17814,  6, 26, Pub, "bytes / 64 (word = bytes)"},
  {Block::TileDMADst, "Fmt",         "FmtMode",      0x17818,  0,  2, Pub, ""},
  {Block::TileDMADst, "Fmt",         "Truncate",     0x17818,  4,  2, Pub, ""},
  {Block::TileDMADst, "Fmt",         "Shift",        0x17818,  8,  1, Pub, ""},
  {Block::TileDMADst, "Fmt",         "MemFmt",       0x17818, 12,  2, Pub, ""},
  {Block::TileDMADst, "Fmt",         "OffsetCh",     0x17818, 16,  3, Pub, ""},
  {Block::TileDMADst, "Fmt",         "ZeroPadLast",  0x17818, 20,  1, Pub, ""},
  {Block::TileDMADst, "Fmt",         "ZeroPadFirst", 0x17818, 21,  1, Pub, ""},
  {Block::TileDMADst, "Fmt",         "CmpVecFill",   0x17818, 22,  1, Pub, ""},
  {Block::TileDMADst, "Fmt",         "Interleave",   0x17818, 24,  4, Pub, ""},
  {Block::TileDMADst, "Fmt",         "CmpVec",       0x17818, 28,  4, Pub, ""},
};
// clang-format on

// Expands the rows into fields: arrays get Reg[i], unnamed words Unk<address>.
std::vector<FieldInfo> expand(std::span<const Row> rows) {
  std::vector<FieldInfo> out;
  size_t count = 0;
  for (const Row& r : rows) count += r.count;
  out.reserve(count);
  for (const Row& r : rows) {
    for (uint32_t i = 0; i < r.count; ++i) {
      FieldInfo f;
      f.block = r.block;
      f.address = r.address + i * r.stride;
      f.reg = detail::element_register_name(r.reg, r.count, i, f.address);
      f.field = r.field;
      f.name = detail::qualified_field_name(r.block, f.reg, f.field);
      f.bit = r.bit;
      f.width = r.width;
      f.confidence = r.confidence;
      f.note = r.note;
      out.push_back(std::move(f));
    }
  }
  // Block (stream) order, then address, then bit: the order docs and dumps use.
  auto block_rank = [](Block b) {
    for (size_t i = 0; i < std::size(kBlocks); ++i)
      if (kBlocks[i].id == b) return i;
    return std::size(kBlocks);
  };
  detail::sort_fields_in_register_order(out, block_rank);
  return out;
}

}  // namespace

const RegisterDatabase& RegisterDatabase::h13() {
  static const RegisterDatabase db(Generation::H13, 10,
                                   std::vector<BlockInfo>(std::begin(kBlocks), std::end(kBlocks)), expand(kRows));
  return db;
}

}  // namespace ane
