// Writing a program as an anec image for eiln's Linux driver: the task chain
// padded to 16 bytes, then the kernel bytes; plus the descriptor the driver
// needs, as libane's JSON entry and as the C header eiln's anect writes.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ane/anec.h"

namespace ane {

namespace {

uint64_t tiles_of(uint64_t bytes) { return round_up(bytes, kAnecTileBytes) / kAnecTileBytes; }

struct ExportSlot {
  int slot;
  std::string type;  // cmd, itm, dst, src
  uint64_t bytes;
  const Buffer* buffer = nullptr;
};

// The driver binds by convention; check that the program already follows it.
Expected<std::vector<ExportSlot>> convention_slots(const Program& p, uint64_t image_bytes) {
  std::vector<ExportSlot> out;
  out.push_back({0, "cmd", round_up(image_bytes, kAnecTileBytes)});
  std::vector<const Buffer*> dst, src;
  for (const auto& b : p.buffers) (b.direction == BufferDirection::Output ? dst : src).push_back(&b);
  auto by_slot = [](const Buffer* a, const Buffer* b) { return a->slot < b->slot; };
  std::sort(dst.begin(), dst.end(), by_slot);
  std::sort(src.begin(), src.end(), by_slot);
  for (const auto& s : p.slots) {
    if (s.role != SlotRole::Intermediate) continue;
    if (s.index != 3)
      return make_error(fmt::format("the intermediate buffer sits in slot {}; the driver's convention needs slot 3",
                                    s.index));
    out.push_back({3, "itm", round_up(s.size, kAnecTileBytes)});
  }
  int want = 4;
  for (auto* list : {&dst, &src}) {
    for (const Buffer* b : *list) {
      if (b->direction == BufferDirection::Unknown)
        return make_error(fmt::format("buffer '{}' is neither an input nor an output", b->name));
      if (b->slot != want)
        return make_error(fmt::format("{} '{}' sits in slot {}; the driver's convention (outputs from slot 4, then "
                                      "inputs) needs slot {}",
                                      b->direction == BufferDirection::Output ? "output" : "input", b->name, b->slot,
                                      want));
      if (b->offset != 0) return make_error(fmt::format("buffer '{}' does not start its slot", b->name));
      const ProgramSlot* s = p.slot(b->slot);
      out.push_back({want, b->direction == BufferDirection::Output ? "dst" : "src",
                     round_up(s ? s->size : b->size, kAnecTileBytes), b});
      ++want;
    }
  }
  return out;
}

std::string tile_macro(const std::string& type) {
  if (type == "cmd") return "ANE_TILE_CMD";
  if (type == "itm") return "ANE_TILE_ITM";
  if (type == "dst") return "ANE_TILE_DST";
  return "ANE_TILE_SRC";
}

}  // namespace

Expected<AnecExport> export_anec(const Program& p, const std::string& name) {
  if (p.tasks.empty()) return make_error("the program has no tasks");
  const ProgramSlot* cmd = p.slot(0);
  if (!cmd || cmd->role != SlotRole::Tasks) return make_error("slot 0 does not hold the task chain");
  const Task& last = p.tasks.back();
  const uint64_t task_bytes = last.text_offset + last.size;
  if (cmd->contents.size() < task_bytes) return make_error("the task chain is not backed by bytes");
  const auto kernel = p.kernel_bytes();
  const ProgramSlot* krn = p.slot(1);
  if (!kernel.empty() && (!krn || krn->role != SlotRole::Kernels))
    return make_error("the kernel data does not sit in slot 1, where the driver puts it");
  for (const auto& t : p.tasks)
    for (const char* f : {"Header[9].KBE1", "Header[9].KBE2", "Header[9].KBE3"})
      if (auto v = t.regs.get(f); v && *v)
        return make_error(fmt::format("task {} sets {}: the anec format has one kernel region", t.index, f));

  AnecExport out;
  const uint64_t kernel_offset = round_up(task_bytes, 16);
  out.image.assign(cmd->contents.begin(), cmd->contents.begin() + static_cast<ptrdiff_t>(task_bytes));
  out.image.resize(kernel_offset, 0);
  out.image.insert(out.image.end(), kernel.begin(), kernel.end());

  auto slots = convention_slots(p, out.image.size());
  if (!slots) return slots.error();
  uint32_t inputs = 0, outputs = 0;
  for (const auto& s : *slots) {
    inputs += s.type == "src";
    outputs += s.type == "dst";
  }

  nlohmann::ordered_json j;
  j["name"] = name;
  j["generator"] = "libane hwx-dump --to-anec";
  j["input_count"] = inputs;
  j["output_count"] = outputs;
  j["size"] = out.image.size();
  j["tsk_size"] = task_bytes;
  j["krn_size"] = kernel.size();
  j["td_count"] = p.tasks.size();
  j["td_size"] = p.tasks.front().size;
  nlohmann::ordered_json js = nlohmann::ordered_json::array(), jt = nlohmann::ordered_json::array();
  for (const auto& s : *slots) {
    js.push_back({{"slot", s.slot}, {"type", s.type}, {"tiles", tiles_of(s.bytes)}, {"bytes", s.bytes}});
    if (!s.buffer || !s.buffer->layout) continue;
    const auto& l = *s.buffer->layout;
    jt.push_back({{"name", s.buffer->name}, {"type", s.type}, {"slot", s.slot}, {"nchw", l.nchw}, {"strides", l.strides}});
  }
  j["slots"] = js;
  j["tensors"] = jt;
  out.descriptor_json = j.dump(2) + "\n";

  // The C header, in the shape eiln's anect writes (struct ane_model).
  std::string upper = name;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::string h;
  h += fmt::format("// {}.anec: written by libane (hwx-dump --to-anec) from {}\n", name, p.path);
  h += fmt::format("#ifndef __ANEC_{}_H__\n#define __ANEC_{}_H__\n\n#include \"ane.h\"\n\n", upper, upper);
  h += fmt::format("extern char _binary_{}_anec_start[];\nextern char _binary_{}_anec_end[];\n\n", name, name);
  h += fmt::format("static const struct ane_model anec_{} = {{\n", name);
  h += fmt::format("\t.name = \"{}\",\n\t.input_count = {},\n\t.output_count = {},\n", name, inputs, outputs);
  h += "\t.anec = {\n";
  h += fmt::format("\t\t.size = {:#x},\n\t\t.td_size = {:#x},\n\t\t.td_count = {:#x},\n", out.image.size(),
                   p.tasks.front().size, p.tasks.size());
  h += fmt::format("\t\t.tsk_size = {:#x},\n\t\t.krn_size = {:#x},\n", task_bytes, kernel.size());
  for (const auto& s : *slots)
    h += fmt::format("\t\t.tiles[{}] = {}, // {} {:#x}\n", s.slot, tiles_of(s.bytes),
                     s.buffer ? s.buffer->name : s.type, s.bytes);
  for (const auto& s : *slots) h += fmt::format("\t\t.types[{}] = {},\n", s.slot, tile_macro(s.type));
  h += "\t},\n";
  h += fmt::format("\t.data = _binary_{}_anec_start,\n", name);
  for (const auto& s : *slots) {
    if (!s.buffer || !s.buffer->layout) continue;
    const auto& l = *s.buffer->layout;
    h += fmt::format("\t.nchw[{}] = {{ {}, {}, {}, {}, {:#x}, {:#x} }}, // {}\n", s.slot, l.nchw[0], l.nchw[1],
                     l.nchw[2], l.nchw[3], l.strides[1], l.strides[2], s.buffer->name);
  }
  h += "};\n\n#endif\n";
  out.header = std::move(h);
  return out;
}

}  // namespace ane
