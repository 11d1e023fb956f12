// hwx-dump: show everything inside an Apple Neural Engine .hwx program.
#include <cstdio>
#include <set>
#include <filesystem>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ane/dump.h"

namespace {

// Prints the one-line error and gives the exit status for bad input.
int fail(const std::string& path, const ane::Error& e) {
  fmt::print(stderr, "hwx-dump: {}: {}\n", path, e.str());
  return 2;
}

// Symbol names come from the file: keep [A-Za-z0-9_.@-] and never let a name
// climb out of the output directory.
std::string safe_file_name(const std::string& symbol, size_t index) {
  std::string out = ane::sanitize_file_name(symbol);
  if (out.empty() || out.find_first_not_of('.') == std::string::npos || out.size() > 200)
    out = fmt::format("kernel{}", index);
  return out;
}

int write_weights(const ane::Program& p, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return fail(dir, ane::make_error("cannot create directory: " + ec.message()));
  const auto blobs = ane::kernel_blobs(p.file);
  if (blobs.empty()) fmt::print("{}: no kernel data symbols in __TEXT,__const\n", p.path);
  std::set<std::string> used;
  for (size_t i = 0; i < blobs.size(); ++i) {
    const auto& k = blobs[i];
    std::string name = safe_file_name(k.symbol, i);
    if (!used.insert(name).second) name = fmt::format("{}.{}", name, i);  // repeated symbol names
    const std::string out = (std::filesystem::path(dir) / (name + ".bin")).string();
    if (auto s = ane::write_file(out, k.data); !s) return fail(out, s.error());
    fmt::print("{}  {:#x} bytes from __const+{:#x}\n", out, k.data.size(), k.const_offset);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "hwx-dump: show everything inside an Apple Neural Engine .hwx program (H13 / M1):\n"
      "the Mach-O container, named I/O buffers, symbols, kernel data and every task\n"
      "descriptor decoded into named register fields.\n\n"
      "Examples:\n"
      "  hwx-dump model.hwx                  text for people\n"
      "  hwx-dump --json model.hwx | jq .tasks[0].registers\n"
      "  hwx-dump --diff a.hwx b.hwx         what differs, per element and register field\n"
      "  hwx-dump --weights out/ model.hwx   write each kernel symbol's bytes to out/\n\n"
      "Exit status: 0 success (for --diff: identical), 1 differences found (--diff),\n"
      "2 unreadable or malformed input, usage errors.",
      "hwx-dump"};
  std::vector<std::string> files;
  bool json = false, raw = false, diff = false;
  std::string weights_dir;
  app.add_option("files", files, "The .hwx file (two files with --diff)")->required()->expected(1, 2);
  app.add_flag("--json", json, "Machine-readable JSON instead of text");
  app.add_flag("--raw", raw, "Also list every task word with its task offset and register address");
  app.add_flag("--diff", diff, "Compare two files: container elements and register fields by name");
  app.add_option("--weights", weights_dir, "Write the kernel data of each kernel symbol to DIR/<symbol>.bin")
      ->type_name("DIR");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  if (diff != (files.size() == 2)) {
    fmt::print(stderr, "hwx-dump: {}\n", diff ? "--diff needs two files" : "give one file (or --diff A B)");
    return 2;
  }

  std::vector<ane::Program> programs;
  for (const auto& f : files) {
    auto p = ane::open_program(f);
    if (!p) return fail(f, p.error());
    programs.push_back(std::move(p).value());
  }
  ane::DumpOptions opt;
  opt.raw = raw;

  if (diff) {
    const auto d = ane::diff_programs(programs[0], programs[1]);
    if (json) {
      nlohmann::ordered_json j = nlohmann::ordered_json::array();
      for (const auto& e : d) j.push_back({{"path", e.path}, {"a", e.a}, {"b", e.b}});
      fmt::print("{}\n", j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
    } else {
      fmt::print("{}", ane::format_diff(programs[0], programs[1], d));
    }
    return d.empty() ? 0 : 1;
  }

  const auto& p = programs[0];
  if (!weights_dir.empty()) return write_weights(p, weights_dir);
  fmt::print("{}", json ? ane::dump_json(p, opt) : ane::dump_text(p, opt));
  return 0;
}
