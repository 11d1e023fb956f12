// hwx-info: a small libane client. Prints the network name, the I/O buffers
// and, for every task, its input and output shape as decoded register fields.
//
//   usage: hwx-info FILE.hwx
//   exit status: 0 success, 1 unreadable or malformed file, 2 usage error
#include <cstdio>
#include <string>

#include <ane/hwx.h>
#include <ane/registers.h>
#include <ane/task.h>

namespace {

int fail(const std::string& path, const ane::Error& e) {
  std::fprintf(stderr, "hwx-info: %s: %s\n", path.c_str(), e.str().c_str());
  return 1;
}

// A named field of a decoded task, or "?" when the name is not in the database.
std::string field(const ane::Task& t, const char* name) {
  auto v = t.regs.get(name);
  return v ? std::to_string(*v) : "?";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: hwx-info FILE.hwx\n");
    return 2;
  }
  const std::string path = argv[1];

  auto file = ane::load_hwx(path);  // container: Mach-O commands, sections, symbols
  if (!file) return fail(path, file.error());
  auto tasks = ane::decode_tasks(*file);  // the task descriptors in __TEXT,__text
  if (!tasks) return fail(path, tasks.error());

  const auto program = file->program();
  std::printf("%s: network \"%s\"\n", path.c_str(), program ? program->network_name.c_str() : "");

  const auto buffers = file->buffers();
  std::printf("%zu buffers\n", buffers.size());
  for (const auto& b : buffers) {
    if (b.descriptor) {
      const auto& d = *b.descriptor;
      std::printf("  %-24s %-7s N=%u C=%u H=%u W=%u %s\n", b.name.c_str(), ane::direction_name(b.direction),
                  d.nchw[0], d.nchw[1], d.nchw[2], d.nchw[3], ane::element_type_name(d.type).c_str());
    } else {
      std::printf("  %-24s %-7s (no descriptor) %llu bytes\n", b.name.c_str(), ane::direction_name(b.direction),
                  static_cast<unsigned long long>(b.size));
    }
  }

  std::printf("%zu tasks\n", tasks->size());
  for (const auto& t : *tasks) {
    std::printf("  task %u at __text+0x%llx (%u bytes): in %sx%sx%s (W x H x C) -> out %sx%sx%s\n", t.index,
                static_cast<unsigned long long>(t.text_offset), t.size, field(t, "Common.InDim.Win").c_str(),
                field(t, "Common.InDim.Hin").c_str(), field(t, "Common.Cin.Cin").c_str(),
                field(t, "Common.OutDim.Wout").c_str(), field(t, "Common.OutDim.Hout").c_str(),
                field(t, "Common.Cout.Cout").c_str());
  }
  return 0;
}
