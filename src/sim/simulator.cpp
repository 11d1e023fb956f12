// Program loading (section 2): slot memories from the file's own slot table
// and sections, named I/O buffers bound through that table, and the walk
// over the task chain that decode_tasks validated.
#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <span>

#include <set>

#include <fmt/format.h>

#include "../core/huge_pages.h"
#include "../core/output_file.h"
#include "ane/npy.h"
#include "two_threads.h"
#include "ane/sim.h"
#include "ane/task.h"
#include "numerics.h"
#include "packed_view.h"
#include "state.h"

namespace ane::sim {

namespace {

constexpr uint32_t kFloat16Type = 5;           // element type code of fp16 buffers

// Byte offset of element (n, c, h, w) relative to the buffer start, bounds
// checked against its slot: the layout of one named buffer.
struct BufferLayout {
  int slot = -1;
  uint64_t offset = 0;  // buffer start inside the slot
  std::array<uint64_t, 4> nchw{}, strides{};
  uint64_t elements = 0;

  uint64_t rows() const { return nchw[0] * nchw[1] * nchw[2]; }
  // Byte offset of W row r (rows in N, C, H order) from the buffer start.
  uint64_t row_offset(uint64_t r) const {
    const uint64_t h = r % nchw[2], c = r / nchw[2] % nchw[1], n = r / (nchw[2] * nchw[1]);
    return n * strides[0] + c * strides[1] + h * strides[2];
  }
  std::string count_error(const std::string& name, uint64_t have) const {
    return fmt::format("input '{}' [{},{},{},{}] needs {} elements, the tensor has {}", name, nchw[0], nchw[1], nchw[2],
                       nchw[3], elements, have);
  }
};

}  // namespace

struct Simulator::Impl {
  Machine machine;
  std::vector<Task> tasks;  // H14 - H18: their H13 views (packed_view.h)
  bool packed = false;
  std::vector<std::vector<std::string>> view_notes, view_traced;  // per task, packed only
  std::vector<Buffer> buffers, inputs, outputs;
  std::set<std::string> given;  // inputs set_input filled
  // Slots an input file may become (Memory::view_of): no section bytes, no
  // alias, one buffer.
  std::array<bool, 32> file_slot{};

  Expected<BufferLayout> layout(const Buffer& b) const;
  const Buffer* find(const std::string& name, bool inputs_only) const;
  // Any buffer's layout by name ("unknown buffer" when there is none).
  Expected<BufferLayout> layout(const std::string& name) const;
  // The buffer's values in NCHW order; `out` holds l.elements.
  void copy_out(const BufferLayout& l, std::span<uint16_t> out) const;
};

const Buffer* Simulator::Impl::find(const std::string& name, bool inputs_only) const {
  for (const auto& b : inputs_only ? inputs : buffers)
    if (b.name == name) return &b;
  return nullptr;
}

Expected<BufferLayout> Simulator::Impl::layout(const std::string& name) const {
  const Buffer* b = find(name, false);
  if (!b) return make_error(fmt::format("unknown buffer '{}'", name));
  return layout(*b);
}

Expected<BufferLayout> Simulator::Impl::layout(const Buffer& b) const {
  const auto& shape = b.layout;
  if (!shape) return make_error(fmt::format("buffer '{}' has no shape (no descriptor or tensor stab)", b.name));
  if (shape->type != kFloat16Type)
    return make_error(fmt::format("buffer '{}' holds {}, only float16 is supported", b.name,
                                  element_type_name(shape->type)));
  if (shape->strides[3] != 2)
    return make_error(fmt::format("buffer '{}' has W stride {}, not 2 bytes", b.name, shape->strides[3]));
  if (b.slot < 0 || b.slot >= 32 || !machine.slot(b.slot))
    return make_error(fmt::format("buffer '{}' (address {:#x}) is in no bound slot", b.name, b.address));
  BufferLayout l;
  l.slot = b.slot;
  l.offset = b.offset;
  l.nchw = shape->nchw;
  l.strides = shape->strides;
  const uint64_t size = machine.slot(b.slot)->size();
  // Elements and extent with overflow checks: descriptors are file data.
  uint64_t elements = 1, extent = 2;
  bool overflow = false;
  for (int i = 0; i < 4; ++i) {
    overflow |= __builtin_mul_overflow(elements, l.nchw[i], &elements);
    uint64_t span = 0;
    if (l.nchw[i] > 0) overflow |= __builtin_mul_overflow(l.nchw[i] - 1, l.strides[i], &span);
    overflow |= __builtin_add_overflow(extent, span, &extent);
  }
  if (overflow || l.offset > size || extent > size - l.offset || elements > (size - l.offset) / 2)
    return make_error(fmt::format("buffer '{}' [{},{},{},{}] with strides [{:#x},{:#x},{:#x},{:#x}] does not fit slot {} "
                                  "(size {:#x})",
                                  b.name, l.nchw[0], l.nchw[1], l.nchw[2], l.nchw[3], l.strides[0], l.strides[1],
                                  l.strides[2], l.strides[3], b.slot, size));
  l.elements = elements;
  return l;
}

Simulator::Simulator() : impl_(std::make_unique<Impl>()) {}
Simulator::~Simulator() = default;
Simulator::Simulator(Simulator&&) noexcept = default;
Simulator& Simulator::operator=(Simulator&&) noexcept = default;

Expected<Simulator> Simulator::create(const Program& program, Options opts) {
  const bool packed = generation_info(program.generation).format == TaskFormat::Packed;
  if (program.generation != Generation::H13 && !packed) return make_error(not_simulated_message(program.generation));
  if (program.slots.empty())
    return make_error(program.hwx ? "no program descriptor (LC_THREAD flavor 1): the file has no slot table"
                                  : "the program binds no memory slots");
  // Decide every slot first, allocate only when the total fits the limit.
  uint64_t total = 0;
  for (const auto& s : program.slots) {
    if (s.index < 0 || s.index >= 32) return make_error(fmt::format("slot {} is outside 0..31", s.index));
    if (s.alias_of >= 0) continue;
    if (__builtin_add_overflow(total, s.size, &total) || total > opts.memory_limit)
      return make_error(fmt::format("slot memories need more than {:#x} bytes (the memory limit); slot {} alone "
                                    "asks for {:#x}",
                                    opts.memory_limit, s.index, s.size));
  }

  Simulator sim;
  Impl& im = *sim.impl_;
  im.machine = Machine(opts.for_generation(program.generation));
  for (const auto& s : program.slots) {
    if (s.alias_of >= 0) continue;
    // The section's bytes, then zeros that cost nothing until written.
    im.machine.set_slot(s.index, Memory(s.contents, s.size));
  }
  for (const auto& s : program.slots)
    if (s.alias_of >= 0) im.machine.alias_slot(s.index, s.alias_of);
  im.tasks = program.tasks;
  im.packed = packed;
  if (packed) {
    // Each task as the H13 registers of the same computation, decided before
    // any input is bound: a task the view cannot account for refuses here.
    detail::EarlierWrites earlier;
    for (Task& t : im.tasks) {
      auto view = detail::packed_view(program, t, earlier);
      if (!view) return view.error();
      t.regs = std::move(view->h13);
      im.view_notes.push_back(std::move(view->notes));
      im.view_traced.push_back(std::move(view->traced));
    }
  }
  im.buffers = program.buffers;
  for (const auto& s : program.slots) im.file_slot[s.index] = s.contents.empty() && s.alias_of < 0;
  for (const auto& s : program.slots)
    if (s.alias_of >= 0 && s.alias_of < 32) im.file_slot[s.alias_of] = false;
  std::array<int, 32> buffers_in{};
  for (const auto& b : im.buffers)
    if (b.slot >= 0 && b.slot < 32) ++buffers_in[b.slot];
  for (int k = 0; k < 32; ++k) im.file_slot[k] = im.file_slot[k] && buffers_in[k] == 1;
  for (const auto& b : im.buffers) {
    if (b.direction == BufferDirection::Input) im.inputs.push_back(b);
    if (b.direction == BufferDirection::Output) im.outputs.push_back(b);
  }
  return sim;
}

const std::vector<Buffer>& Simulator::inputs() const { return impl_->inputs; }
const std::vector<Buffer>& Simulator::outputs() const { return impl_->outputs; }
const Machine& Simulator::machine() const { return impl_->machine; }
Machine& Simulator::machine() { return impl_->machine; }

namespace {

// Calls row(dst, first element) for every W row of a buffer, over two
// threads when the buffer is large (each row is independent).
template <typename Byte, typename Row>
void for_rows(Byte* mem, const BufferLayout& l, Row row) {
  // An empty buffer has rows of no width: nothing to copy, and the caller's
  // span may have no storage (memcpy from a null pointer is undefined).
  if (l.elements == 0) return;
  const uint64_t w = l.nchw[3];
  detail::on_two_threads(
      l.rows(),
      [&](uint64_t begin, uint64_t end) {
        for (uint64_t r = begin; r < end; ++r) row(mem + l.row_offset(r), r * w);
      },
      l.elements >= (uint64_t{1} << 20) ? 2 : UINT64_MAX);
}

}  // namespace

Status Simulator::set_input(const std::string& name, const Tensor& t) {
  // A tensor whose shape disagrees with its data is refused as a wrong count.
  if (t.data.size() != t.elements()) {
    if (const Buffer* b = impl_->find(name, true)) {
      auto l = impl_->layout(*b);
      if (!l) return l.error();
      return make_error(l->count_error(name, t.data.size()));
    }
  }
  const std::span<const uint16_t> v(t.data);
  return set_input(name, npy::Dtype::F16, std::as_bytes(v));
}

Status Simulator::set_input(const std::string& name, npy::Dtype type, std::span<const std::byte> values) {
  const Buffer* b = impl_->find(name, true);
  if (!b) {
    std::vector<std::string> names;
    for (const auto& i : impl_->inputs) names.push_back("'" + i.name + "'");
    return make_error(fmt::format("unknown input '{}' (inputs: {})", name, fmt::join(names, ", ")));
  }
  auto l = impl_->layout(*b);
  if (!l) return l.error();
  const uint64_t item = type == npy::Dtype::F16 ? 2 : 4;
  if (values.size() % item != 0 || values.size() / item != l->elements)
    return make_error(l->count_error(name, values.size() / item));
  impl_->given.insert(name);
  uint8_t* mem = impl_->machine.slot(l->slot)->data() + l->offset;
  const auto* src = reinterpret_cast<const uint8_t*>(values.data());
  const uint64_t w = l->nchw[3];
  if (type == npy::Dtype::F16) {
    // Little-endian fp16 in, little-endian fp16 in the slot: row copies.
    for_rows(mem, *l, [&](uint8_t* row, uint64_t i) { std::memcpy(row, src + 2 * i, 2 * w); });
  } else if (reinterpret_cast<uintptr_t>(src) % alignof(float) == 0) {
    for_rows(mem, *l, [&](uint8_t* row, uint64_t i) {
      float_to_fp16_n(reinterpret_cast<const float*>(src) + i, row, w);
    });
  } else {
    for_rows(mem, *l, [&](uint8_t* row, uint64_t i) {
      for (uint64_t k = 0; k < w; ++k) {
        float f;
        std::memcpy(&f, src + 4 * (i + k), 4);
        detail::store_u16(row + 2 * k, float_to_fp16(f));
      }
    });
  }
  return Ok{};
}

Status Simulator::set_input(const std::string& name, npy::Mapped& file) {
  const Buffer* b = impl_->find(name, true);
  if (b && file.dtype == npy::Dtype::F16 && std::endian::native == std::endian::little) {
    auto l = impl_->layout(*b);
    if (!l) return l.error();
    const uint64_t w = l->nchw[3];
    const bool dense = l->strides[2] == 2 * w && l->strides[1] == l->nchw[2] * l->strides[2] &&
                       l->strides[0] == l->nchw[1] * l->strides[1];
    const uint64_t slot_size = impl_->machine.slot(l->slot)->size();
    if (dense && l->offset == 0 && impl_->file_slot[l->slot] && file.data.size() == 2 * l->elements &&
        file.data_offset() % 2 == 0) {
      Memory view = Memory::view_of(file.file(), file.data_offset(), slot_size);
      if (!view.empty()) {
        impl_->machine.set_slot(l->slot, std::move(view));
        impl_->given.insert(name);
        return Ok{};
      }
    }
  }
  return set_input(name, file.dtype, std::as_bytes(file.data));
}

Status Simulator::check_inputs() const {
  for (const auto& b : impl_->inputs)
    if (!impl_->given.count(b.name)) return make_error(fmt::format("missing input '{}'", b.name));
  return Ok{};
}

Expected<Tensor> Simulator::read_buffer(const std::string& name) const {
  auto l = impl_->layout(name);
  if (!l) return l.error();
  Tensor t;
  for (int i = 0; i < 4; ++i) t.nchw[i] = static_cast<uint32_t>(l->nchw[i]);
  ane::detail::reserve_huge(t.data, l->elements);
  t.data.resize(l->elements);
  impl_->copy_out(*l, t.data);
  return t;
}

Status Simulator::read_buffer(const std::string& name, std::span<uint16_t> out) const {
  auto l = impl_->layout(name);
  if (!l) return l.error();
  if (out.size() != l->elements)
    return make_error(fmt::format("buffer '{}' holds {} values, not {}", name, l->elements, out.size()));
  impl_->copy_out(*l, out);
  return Ok{};
}

void Simulator::Impl::copy_out(const BufferLayout& l, std::span<uint16_t> out) const {
  const uint8_t* mem = machine.slot(l.slot)->data() + l.offset;
  const uint64_t w = l.nchw[3];
  // Little-endian fp16 in the slot, row by row (the slot's rows may be padded).
  for_rows(mem, l, [&](const uint8_t* row, uint64_t i) {
    if constexpr (std::endian::native == std::endian::little) {
      std::memcpy(out.data() + i, row, 2 * w);
    } else {
      for (uint64_t k = 0; k < w; ++k) out[i + k] = detail::load_u16(row + 2 * k);
    }
  });
}

Status Simulator::save_npy(const std::string& name, const std::string& path) const {
  auto l = impl_->layout(name);
  if (!l) return l.error();
  auto f = ane::detail::OutputFile::open(path);
  if (!f) return f.error();
  if (Status st = f->write(npy::f16_header(l->nchw)); !st) return st;
  const uint8_t* mem = impl_->machine.slot(l->slot)->data() + l->offset;
  const uint64_t bytes = 2 * l->elements;
  const bool dense = l->strides[2] == 2 * l->nchw[3] && l->strides[1] == l->nchw[2] * l->strides[2] &&
                     l->strides[0] == l->nchw[1] * l->strides[1];
  if (dense) {
    // The slot already holds the file's data: one write from it, no copy.
    if (Status st = f->write({mem, bytes}); !st) return st;
  } else {
    // Rows gathered into 1 MiB pieces, so the output is never copied whole.
    std::vector<uint8_t> piece;
    if (bytes == 0) return f->finish();
    const uint64_t row = 2 * l->nchw[3], per = std::max<uint64_t>(1, (uint64_t{1} << 20) / std::max<uint64_t>(row, 1));
    for (uint64_t r0 = 0; r0 < l->rows(); r0 += per) {
      const uint64_t n = std::min(per, l->rows() - r0);
      piece.resize(n * row);
      for (uint64_t r = r0; r < r0 + n; ++r) std::memcpy(piece.data() + (r - r0) * row, mem + l->row_offset(r), row);
      if (Status st = f->write(piece); !st) return st;
    }
  }
  return f->finish();
}

namespace {

// Streams may skip registers (the compact layout of the macOS 26 compiler
// leaves out CoeffBaseAddr and CoeffBfrSize). What an unwritten register
// holds (reset value or the last task's) is not known, so a task runs only
// when every register it skips is one that cannot matter: the address and
// size of a kernel DMA lane that is off. docs/hwx-format.md has the evidence.
Status check_unwritten(const Task& task) {
  const auto& db = RegisterDatabase::h13();
  const FieldInfo* lane_en[16];
  for (int i = 0; i < 16; ++i) lane_en[i] = db.find(fmt::format("KernelDMASrc.CoeffDMAConfig[{}].En", i));
  constexpr uint32_t kLaneAddr = 0x1F848, kLaneSize = 0x1F888, kLanes = 16;
  for (uint32_t k = 0; k < db.register_count(); ++k) {
    const uint32_t a = db.register_address(static_cast<int>(k));
    if (task.regs.written(a)) continue;
    const bool addr = a >= kLaneAddr && a < kLaneAddr + 4 * kLanes, size = a >= kLaneSize && a < kLaneSize + 4 * kLanes;
    if (addr || size) {
      const uint32_t lane = (a - (addr ? kLaneAddr : kLaneSize)) / 4;
      if (task.regs.written(lane_en[lane]->address) && task.regs.get(*lane_en[lane]) == 0) continue;
    }
    const BlockInfo* b = db.block_at(a);
    return make_error(fmt::format("unsupported: TD layout: {} is not written in task {} (what an unwritten register "
                                  "holds is unknown)",
                                  db.register_name(b ? b->id : Block::Common, a), task.index));
  }
  return Ok{};
}

}  // namespace

Status Simulator::run(const TraceHook& trace) {
  impl_->machine.clear_l2();  // nothing carries over from an earlier run
  for (size_t k = 0; k < impl_->tasks.size(); ++k) {
    const Task& task = impl_->tasks[k];
    if (!impl_->packed) {
      if (Status s = check_unwritten(task); !s) return s;
      if (Status s = impl_->machine.run_task(task.regs, task.index, task.text_offset, trace); !s) return s;
      continue;
    }
    // A view's trace carries the rules it relied on and the words it set aside.
    TraceHook with_view;
    if (trace)
      with_view = [&](const TraceRecord& r) {
        TraceRecord c = r;
        c.notes.insert(c.notes.end(), impl_->view_notes[k].begin(), impl_->view_notes[k].end());
        c.traced.insert(c.traced.end(), impl_->view_traced[k].begin(), impl_->view_traced[k].end());
        trace(c);
      };
    if (Status s = impl_->machine.run_task(task.regs, task.index, task.text_offset, with_view); !s) return s;
  }
  return Ok{};
}

}  // namespace ane::sim
