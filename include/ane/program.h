// A program as the ANE sees it, whatever container it came in: the memory
// slots its tasks' base fields name, the named I/O buffers inside them, and
// the decoded task chain. The HWX reader (Mach-O) and the anec reader (the
// Linux driver's flat image) both fill this view; the dump, the simulator
// and the bindings read only it. Container details stay in Program::hwx.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ane/bytes.h"
#include "ane/error.h"
#include "ane/hwx.h"
#include "ane/task.h"

namespace ane {

enum class ContainerFormat { Hwx, Anec };
const char* format_name(ContainerFormat f);

// What a slot holds, by the container's own record or the driver's convention.
enum class SlotRole { Tasks, Kernels, Intermediate, Output, Input, Unknown };
const char* slot_role_name(SlotRole r);

// One base-address slot: the memory a task reaches through RBase/WBase/KBase
// (H13), or through a relocated record naming program-descriptor entry
// `index` (H14 - H18).
struct ProgramSlot {
  int index = -1;
  SlotRole role = SlotRole::Unknown;
  uint64_t address = 0;  // program address (HWX: slot-table entry; anec: driver convention)
  uint64_t size = 0;     // bytes mapped
  Bytes contents;        // initial bytes (task chain, kernel data); the rest is zero
  int alias_of = -1;     // another slot at the same address: one memory for both
};

// One named tensor in a slot.
struct Buffer {
  std::string name;
  BufferDirection direction = BufferDirection::Unknown;
  int slot = -1;
  uint64_t address = 0;  // program address of element 0
  uint64_t offset = 0;   // byte offset of element 0 inside the slot
  uint64_t size = 0;     // bytes reserved for it
  std::optional<TensorLayout> layout;
  std::string shape_source;  // where the layout came from ("descriptor", "stab", "task 0 TileDMASrc", ...)

  std::optional<TensorLayout> shape() const { return layout; }
};

// How the anec reader found the image (anec programs only).
struct AnecImage {
  uint64_t task_bytes = 0;    // the task chain (tsk_size)
  uint64_t kernel_offset = 0; // where the kernel bytes start (task_bytes rounded up to 16)
  uint64_t kernel_bytes = 0;
  std::string descriptor;     // where names and shapes came from ("" = the tasks' own DMA extents)
};

struct Program {
  std::string path;  // as given by the caller (used in the output)
  uint64_t size = 0;
  ContainerFormat format = ContainerFormat::Hwx;
  Generation generation = Generation::H13;  // the hardware its tasks are for (the cpusubtype's)
  std::string name;  // network name (HWX) or the descriptor's name (anec)
  std::vector<ProgramSlot> slots;  // ascending by index
  std::vector<Buffer> buffers;
  std::vector<Task> tasks;
  // Packed generations (H14 - H18): the frames between the tasks of __text.
  std::vector<TextFrame> frames;
  std::optional<HwxFile> hwx;  // the Mach-O container (HWX programs)
  std::optional<AnecImage> anec;  // the flat image (anec programs)

  const ProgramSlot* slot(int index) const;
  const Buffer* buffer(const std::string& name) const;
  // The kernel-data slot (1) contents, empty when there is none.
  std::span<const uint8_t> kernel_bytes() const;
};

// Reading options shared by every tool.
struct OpenOptions {
  // nullopt: decided by content (Mach-O magic = HWX, anything else = anec).
  std::optional<ContainerFormat> format;
  // anec only: a descriptor file (the manifest's JSON entry, a JSON file with
  // such an entry, or the anec_<name>.h that eiln's anect writes) naming the
  // buffers and giving their NCHW shapes.
  std::string descriptor_path;
  // anec only: the entry to take from a manifest with several kernels
  // (default: the one whose file name matches the program's).
  std::string descriptor_entry;
};

Expected<Program> open_program(const std::string& path, const OpenOptions& opts = {});
Expected<Program> parse_program(std::span<const uint8_t> bytes, std::string path, const OpenOptions& opts = {});
// The container-neutral view of an already parsed HWX file.
Expected<Program> program_from_hwx(HwxFile file, std::string path, uint64_t size);

// True when the bytes start with the HWX Mach-O magic.
bool looks_like_hwx(std::span<const uint8_t> bytes);
// True when the bytes look like an anec image: the packed header of newer
// anecc, or a task whose first register stream is the kernel DMA block.
bool looks_like_anec(std::span<const uint8_t> bytes);

}  // namespace ane
