// compile_network: plan -> register images -> container -> bytes, then the
// written bytes are read back and checked before anyone sees them.
#include <fmt/format.h>

#include "ane/compiler.h"
#include "ane/sha256.h"
#include "plan.h"

#ifndef LIBANE_VERSION
#define LIBANE_VERSION "0"
#endif

namespace ane {

std::string default_ident(const std::string& plist_path, const std::string& output_path) {
  return fmt::format("libane hwx-build v{}\n\t-t h13\n\t-i {}\n\t-o {}\n", LIBANE_VERSION, plist_path, output_path);
}

std::string kernel_symbol_digits(std::span<const uint8_t> kernel_bytes) { return sha256_hex(kernel_bytes, true); }

namespace {

// The checks a written file must pass: it reads back, its task chain decodes
// to exactly the images that were encoded, it writes back to the same bytes,
// sections sit at their alignment, and every buffer is reachable through the
// slot table with the shape it was compiled for.
Status verify(const Network& net, const compiler::Plan& plan, const std::vector<RegisterImage>& images,
              const Bytes& bytes, std::vector<Task>& tasks_out) {
  auto file = read_hwx(bytes);
  if (!file) return make_error("written file does not read back: " + file.error().str());
  auto tasks = decode_tasks(*file);
  if (!tasks) return make_error("written task chain does not decode: " + tasks.error().str());
  if (tasks->size() != images.size())
    return make_error(fmt::format("written file decodes to {} tasks, {} were compiled", tasks->size(), images.size()));
  for (size_t i = 0; i < images.size(); ++i) {
    if ((*tasks)[i].regs.header != images[i].header)
      return make_error(fmt::format("task {} header reads back differently from what was compiled", i));
    for (const auto& [addr, value] : images[i].written_words())
      if ((*tasks)[i].regs.word(addr) != value)
        return make_error(fmt::format("task {} register {:#x} reads back as {:#x}, {:#x} was compiled", i, addr,
                                      (*tasks)[i].regs.word(addr), value));
  }
  if (write_hwx(*file) != bytes) return make_error("written file does not round-trip through the reader");
  for (const auto* seg : file->segments())
    for (const auto& s : seg->sections)
      if (seg->filesize && s.align < 32 && s.offset % (uint64_t{1} << s.align) != 0)
        return make_error(fmt::format("section {},{} at file offset {:#x} breaks its 2^{} alignment", s.segname,
                                      s.sectname, s.offset, s.align));
  const auto buffers = file->buffers();
  for (const auto& t : plan.tensors) {
    if (t.home == compiler::Tensor::Home::Scratch || t.home == compiler::Tensor::Home::L2 ||
        t.home == compiler::Tensor::Home::Constant || t.view_of >= 0)
      continue;
    const BufferInfo* found = nullptr;
    for (const auto& b : buffers)
      if (b.name == t.name) found = &b;
    if (!found) return make_error(fmt::format("buffer '{}' is missing from the written file", t.name));
    const auto shape = found->shape();
    if (found->slot != t.slot || !shape || shape->nchw != std::array<uint64_t, 4>{1, t.c, t.h, t.w} ||
        shape->strides[1] != t.plane_stride || shape->strides[2] != t.row_stride)
      return make_error(fmt::format("buffer '{}' reads back with slot {} or a shape that differs from the compiled one",
                                    t.name, found->slot));
  }
  (void)net;
  tasks_out = std::move(tasks).value();
  return Ok{};
}

}  // namespace

const char* compiler_profile_name(CompilerProfile p) {
  return p == CompilerProfile::Macos26 ? "macos26" : "v4.2.1";
}

std::optional<CompilerProfile> compiler_profile_of_name(std::string_view name) {
  if (name == "v4.2.1") return CompilerProfile::V421;
  if (name == "macos26") return CompilerProfile::Macos26;
  return std::nullopt;
}

Expected<CompiledProgram> compile_network(const Network& net, const CompileOptions& opts) {
  auto plan = compiler::plan_network(net, opts);
  if (!plan) return plan.error();
  std::vector<RegisterImage> images;
  const std::vector<uint64_t> kbase = compiler::kernel_bases(*plan);
  const std::vector<uint64_t> at = compiler::task_offsets(*plan);
  for (size_t i = 0; i < plan->tasks.size(); ++i) {
    auto img = compiler::lower_task(net, *plan, i, kbase[i], i + 1 < at.size() ? at[i + 1] : 0);
    if (!img) return img.error();
    images.push_back(std::move(img).value());
  }
  const std::string ident = opts.ident.empty() ? default_ident(net.path, opts.output_path) : opts.ident;
  auto file = compiler::assemble_container(net, *plan, images, ident);
  if (!file) return file.error();
  CompiledProgram out;
  out.bytes = write_hwx(*file);
  if (auto s = verify(net, *plan, images, out.bytes, out.tasks); !s)
    return make_error(fmt::format("{}: internal check failed: {}", net.path, s.error().message));
  out.file = std::move(file).value();
  out.lowering = std::move(plan->lowering);
  return out;
}

std::string explain_text(const Network& net, const CompiledProgram& program) {
  std::string out = fmt::format("{}: network '{}', {} unit{}, {} task{}\n", net.path, net.name, net.units.size(),
                                net.units.size() == 1 ? "" : "s", program.tasks.size(),
                                program.tasks.size() == 1 ? "" : "s");
  for (const auto& u : program.lowering) {
    std::string tasks;
    for (uint32_t t : u.tasks) tasks += fmt::format("{}{}", tasks.empty() ? "" : ", ", t);
    out += fmt::format("  {} ({}): {}\n", u.unit, u.type, u.rule);
    out += tasks.empty() ? "      tasks: none of its own\n"
                         : fmt::format("      task{} {}\n", u.tasks.size() == 1 ? "" : "s", tasks);
    for (const auto& n : u.notes) out += fmt::format("      inferred: {}\n", n);
  }
  return out;
}

}  // namespace ane
