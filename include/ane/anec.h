// The anec format of eiln's Asahi Linux ANE driver (eiln/ane, eiln/anecc):
// an H13 task chain padded to 16 bytes, then the kernel bytes (tables,
// weights). No header: the driver learns sizes, slots and tensor shapes from
// a descriptor compiled into it (anec_<name>.h) or given alongside.
//
// Memory by the driver's convention (docs/anec.md has the evidence):
//   slot 0  the whole image (tasks + kernel bytes), tiles of 0x4000 bytes
//   slot 1  the kernel bytes: slot 0 + roundup(task bytes, 16)
//   slot 3  the intermediate buffer, when a chain needs one
//   slot 4.. the outputs (dst0, dst1, ...), then the inputs (src0, src1, ...)
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ane/bytes.h"
#include "ane/error.h"
#include "ane/program.h"

namespace ane {

constexpr uint64_t kAnecTileBytes = 0x4000;
constexpr uint64_t kAnecBaseAddress = 0x30000000;  // where the driver maps slot 0 (program addresses only)

// One tensor of a descriptor. Shapes are optional: eiln's manifest lists only
// slot sizes; libane's own descriptors and anect headers give NCHW.
struct AnecTensor {
  std::string name;
  BufferDirection direction = BufferDirection::Unknown;
  int slot = -1;
  std::optional<std::array<uint64_t, 4>> nchw;
  std::optional<std::array<uint64_t, 4>> strides;  // bytes; default: the compiler's row/plane rule
};

struct AnecSlotInfo {
  int slot = -1;
  std::string type;  // "cmd", "krn", "itm", "dst", "src"
  uint64_t bytes = 0;
};

struct AnecDescriptor {
  std::string source;  // file (and entry) it was read from, for messages
  std::string name;
  std::optional<uint64_t> size, task_bytes, kernel_bytes, td_size;
  std::optional<uint32_t> td_count, input_count, output_count;
  std::vector<AnecSlotInfo> slots;
  std::vector<AnecTensor> tensors;
};

// Reads a descriptor: a JSON object (one manifest entry or libane's own
// descriptor), a JSON manifest {"kernels": [...]} (the entry named `entry`,
// else the one whose "file" or "name" matches `program_path`), or the C
// header eiln's anect writes (anec_<name>.h).
Expected<AnecDescriptor> load_anec_descriptor(const std::string& path, const std::string& entry,
                                              const std::string& program_path);
Expected<AnecDescriptor> parse_anec_descriptor(std::string_view text, const std::string& entry,
                                               const std::string& program_path);

// True when the bytes start with the packed header of newer anecc (fields
// that agree with the file; there is no magic).
bool anec_has_packed_header(std::span<const uint8_t> bytes);

// Parses an anec image into the container-neutral view. Without a
// descriptor, the buffers are src0.., dst0.. and their shapes and slot sizes
// come from the tasks' own DMA extents.
Expected<Program> read_anec(std::span<const uint8_t> bytes, std::string path, const AnecDescriptor* descriptor);

// What --to-anec writes for a program: the image, libane's JSON descriptor
// (a manifest-style entry with tensor names and shapes) and a C header.
struct AnecExport {
  Bytes image;
  std::string descriptor_json;
  std::string header;
};
// The program's task chain and kernel bytes as an anec image. The program's
// buffers must sit where the driver's convention puts them (outputs from
// slot 4, then inputs; intermediate in slot 3); otherwise an error names the
// buffer.
Expected<AnecExport> export_anec(const Program& p, const std::string& name);

}  // namespace ane
