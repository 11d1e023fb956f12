// The HWX container model: a parsed Mach-O image that can be written back
// byte for byte. read_hwx() fills it from file bytes, write_hwx() emits it.
// Builders (hwx-build) fill the same model and hand it to the writer.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "ane/bytes.h"
#include "ane/error.h"
#include "ane/macho.h"

namespace ane {

struct SegmentCommand {
  std::string segname;  // char[16] on disk
  uint64_t vmaddr = 0;
  uint64_t vmsize = 0;
  uint64_t fileoff = 0;
  uint64_t filesize = 0;
  uint32_t maxprot = 0;
  uint32_t initprot = 0;
  uint32_t nsects = 0;
  uint32_t flags = 0;
  std::vector<macho::Section64> sections;
  Bytes contents;  // the filesize bytes at fileoff
};

struct SymtabCommand {
  uint32_t symoff = 0;
  uint32_t nsyms = 0;
  uint32_t stroff = 0;
  uint32_t strsize = 0;
};

// LC_THREAD: flavor, count, then `count` 32-bit state words. Bytes past the
// state (names, padding) stay in LoadCommand::tail.
struct ThreadCommand {
  uint32_t flavor = 0;
  uint32_t count = 0;
  std::vector<uint32_t> state;
};

// LC_LOADFVMLIB (0x06) or command 0x40: names one I/O buffer.
//   0x06: +8 name offset (0x14), +0xc minor version, +0x10 u32 address
//   0x40: +8 name offset (0x18), +0xc u32 reserved, +0x10 u64 address
struct BufferDeclCommand {
  uint32_t name_offset = 0;
  uint32_t reserved = 0;  // minor_version for 0x06
  uint64_t address = 0;
  std::string name;  // parsed from the tail at name_offset
};

// LC_IDENT: NUL-terminated text (compiler version and command line).
struct IdentCommand {
  std::string text;  // parsed from the tail
};

// LC_NOTE: data_owner[16], offset, size.
struct NoteCommand {
  std::string data_owner;
  uint64_t offset = 0;
  uint64_t size = 0;
};

struct RawCommand {};  // unknown command: everything after cmd/cmdsize is tail

using CommandBody = std::variant<RawCommand, SegmentCommand, SymtabCommand, ThreadCommand,
                                 BufferDeclCommand, IdentCommand, NoteCommand>;

struct LoadCommand {
  uint32_t cmd = 0;
  uint32_t cmdsize = 0;
  uint64_t offset = 0;  // file offset of the command (informational)
  CommandBody body;
  // Bytes after the structured part, up to cmdsize, kept verbatim so that
  // names, unknown words and padding round-trip exactly.
  Bytes tail;

  // Size of the part the typed body describes (header included).
  uint32_t fixed_size() const;
  template <typename T>
  const T* as() const { return std::get_if<T>(&body); }
  template <typename T>
  T* as() { return std::get_if<T>(&body); }

  // The command encoded as on disk (cmdsize bytes).
  Bytes encode() const;
};

struct Symbol {
  macho::Nlist64 nlist;
  std::string name;  // from the string table
};

// Bytes of the file that no structure above covers but that are not zero
// (kept so that write(read(x)) == x for any input).
struct Chunk {
  uint64_t offset = 0;
  Bytes data;
};

// The program descriptor: an LC_THREAD of flavor 1 (H13, "kind 1") or 4
// (H14 - H18, "kind 4"). Offsets are command-relative.
struct ProgramInfo {
  size_t command_index = 0;
  uint32_t kind = 1;                  // the LC_THREAD flavor
  uint32_t count = 0;                 // state words (kind 1: 0x214 v4..v5, 0x21a v7+; kind 4: 0x21e, 0x222)
  // Kind 1: the 32-entry slot table of u64 at +0x10 + 8 k, which task headers
  // index. Kind 4: the u64 addresses at +0x10 + 0x10 k (k < 127), which the
  // relocation tags of task records index (entry 0 __text, 1 __TEXT,__const,
  // the tensors from the generation's first surface on).
  std::vector<uint64_t> slots;
  uint64_t text_address = 0;          // +0x810
  uint32_t first_task_words_m1 = 0;   // kind 1 +0x818: size of task 0 in words, minus 1
  uint32_t task_count = 0;            // kind 1 +0x81c, kind 4 +0x830
  uint32_t task_count_offset = 0x81c;
  uint32_t text_words = 0;            // kind 4 +0x824: the words of __text
  uint32_t name_offset = 0;           // kind 1 +0x83c, kind 4 +0x848
  uint32_t debug_log_event_bits = 0;  // kind 1 +0x850
  uint32_t log_event_bits = 0;        // kind 1 +0x858
  std::string network_name;
};

// Flavor-3 thread: one tensor descriptor.
struct BufferDescriptor {
  size_t command_index = 0;
  uint32_t count = 0;
  uint32_t direction = 0;  // 1 input, 2 output
  uint32_t type = 0;       // element type, same numbering as the type stabs
  std::array<uint32_t, 4> nchw{};
  uint32_t depth = 0;               // +0x38 (always 1 so far)
  std::array<uint64_t, 4> strides{};  // N, C, H, W in bytes
  uint64_t total_size = 0;
  uint32_t extent = 0;  // +0x80
  std::string network_name;
  std::string name;   // name at +0x20
  std::string name2;  // second name at +0x7c
};

// A tensor stab (N_GSYM symbol) as HWX symbol tables write them:
//   name:tT=ar1;0;N;T+1=s<Nstride>n:ar1;0;C;T+2=s<Cstride>c:ar1;0;H;
//   T+3=s<Hstride>h:ar1;0;W;T+4=s<elem size>w:<element type>
struct TensorStab {
  std::string name;
  uint32_t first_type = 0;          // T
  std::array<uint64_t, 4> nchw{};   // N, C, H, W
  std::array<uint64_t, 4> strides{};  // bytes
  uint32_t element_type = 0;        // type stab number (5 = float16)
};
// nullopt when the string is not a tensor stab of that form.
std::optional<TensorStab> parse_tensor_stab(std::string_view s);

enum class BufferDirection { Input, Output, Unknown };

// Where the elements of an [N,C,H,W] tensor sit: byte strides per dimension
// and the element type code (same numbering as the type stabs; 5 = fp16).
struct TensorLayout {
  std::array<uint64_t, 4> nchw{};
  std::array<uint64_t, 4> strides{};
  uint32_t type = 0;
  bool operator==(const TensorLayout&) const = default;
};

// One I/O tensor, joined from its declaration, segment, symbols, stab and
// descriptor (all keyed by address or name).
struct BufferInfo {
  std::string name;
  BufferDirection direction = BufferDirection::Unknown;
  uint64_t address = 0;
  uint64_t size = 0;     // __FVMLIB section size in bytes
  int slot = -1;         // index in the flavor-1 slot table
  int segment_index = -1;
  int decl_command_index = -1;
  int descriptor_index = -1;  // into HwxFile::descriptors()
  int symbol_index = -1;
  std::optional<BufferDescriptor> descriptor;
  std::string stab;  // tensor stab string, when present
  std::optional<TensorStab> stab_shape;  // the stab, parsed

  // Shape, strides and element type: from the descriptor, else the stab.
  using Shape = TensorLayout;
  std::optional<Shape> shape() const;
};

const char* direction_name(BufferDirection d);
// Name of an element type code (5 -> "float16"); "type<N>" if unknown.
std::string element_type_name(uint32_t code);

class HwxFile {
 public:
  macho::MachHeader header;
  std::vector<LoadCommand> commands;
  std::vector<Symbol> symbols;
  Bytes string_table;
  std::vector<Chunk> extra;  // uncovered non-zero bytes
  uint64_t file_size = 0;

  // Lookups over the commands.
  const SymtabCommand* symtab() const;
  std::vector<const SegmentCommand*> segments() const;
  const SegmentCommand* find_segment(const std::string& name) const;
  const macho::Section64* find_section(const std::string& seg, const std::string& sect) const;
  // __TEXT,__text (some compilers name the section __TEXT,__TEXT).
  const macho::Section64* text_section() const;
  // 1-based section ordinal (as used by nlist n_sect), 0 if absent.
  unsigned section_ordinal(const std::string& seg, const std::string& sect) const;
  const macho::Section64* section_by_ordinal(unsigned ordinal) const;
  const IdentCommand* ident() const;
  // Bytes of a section inside its segment's contents (empty for VM-only).
  std::span<const uint8_t> section_data(const macho::Section64& s) const;

  // Typed views of the LC_THREAD commands (validated by read_hwx).
  std::optional<ProgramInfo> program() const;
  std::vector<BufferDescriptor> descriptors() const;
  std::vector<BufferInfo> buffers() const;
};

// Parses a whole file. Never reads out of bounds; errors carry the offset.
Expected<HwxFile> read_hwx(std::span<const uint8_t> data);
// Reads and parses; errors are prefixed with nothing (callers add the path).
Expected<HwxFile> load_hwx(const std::string& path);
// Emits the model. For a model from read_hwx this reproduces the input.
Bytes write_hwx(const HwxFile& file);

// Decoders for the flavor-1 / flavor-4 / flavor-3 thread payloads
// (command-relative offsets, docs/hwx-format.md and docs/generations.md).
Expected<ProgramInfo> decode_program(const LoadCommand& lc);
Expected<BufferDescriptor> decode_buffer_descriptor(const LoadCommand& lc);

}  // namespace ane
