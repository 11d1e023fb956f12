// hwx-dump: show everything inside an Apple Neural Engine .hwx program.
#include <cstdio>
#include <set>
#include <filesystem>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ane/anec.h"
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

int make_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return fail(dir, ane::make_error("cannot create directory: " + ec.message()));
  return 0;
}

int write_weights(const ane::Program& p, const std::string& dir) {
  if (int rc = make_dir(dir)) return rc;
  if (!p.hwx) {
    // An anec image has no symbols: its kernel bytes are one region.
    const auto kernel = p.kernel_bytes();
    if (kernel.empty()) {
      fmt::print("{}: no kernel bytes\n", p.path);
      return 0;
    }
    const std::string out = (std::filesystem::path(dir) / "kernel.bin").string();
    if (auto s = ane::write_file(out, ane::Bytes(kernel.begin(), kernel.end())); !s) return fail(out, s.error());
    fmt::print("{}  {:#x} bytes from the image at {:#x}\n", out, kernel.size(), p.anec ? p.anec->kernel_offset : 0);
    return 0;
  }
  const auto blobs = ane::kernel_blobs(*p.hwx);
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

// --to-anec: the image, libane's JSON descriptor and the C header.
int write_anec(const ane::Program& p, const std::string& dir) {
  std::string name = ane::sanitize_file_name(std::filesystem::path(p.path).stem().string());
  if (name.empty() || name.find_first_not_of('.') == std::string::npos) name = "model";
  for (char& c : name)
    if (c == '.' || c == '@' || c == '-') c = '_';  // the name becomes C identifiers
  auto out = ane::export_anec(p, name);
  if (!out) return fail(p.path, out.error());
  if (int rc = make_dir(dir)) return rc;
  const std::filesystem::path d(dir);
  const std::string image = (d / (name + ".anec")).string(), json = (d / (name + ".json")).string(),
                    header = (d / ("anec_" + name + ".h")).string();
  if (auto s = ane::write_file(image, out->image); !s) return fail(image, s.error());
  if (auto s = ane::write_file(json, ane::Bytes(out->descriptor_json.begin(), out->descriptor_json.end())); !s)
    return fail(json, s.error());
  if (auto s = ane::write_file(header, ane::Bytes(out->header.begin(), out->header.end())); !s)
    return fail(header, s.error());
  fmt::print("{}  {:#x} bytes: {} tasks, kernel data at {:#x}\n", image, out->image.size(), p.tasks.size(),
             out->image.size() - p.kernel_bytes().size());
  fmt::print("{}  descriptor (hwx-run {} --descriptor {})\n", json, image, json);
  fmt::print("{}  C header for eiln's driver\n", header);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "hwx-dump: show everything inside an Apple Neural Engine program (H13 / M1): an .hwx\n"
      "(Mach-O: the container, named I/O buffers, symbols) or an anec image of eiln's Linux\n"
      "driver (the format is recognised by content), with every task descriptor decoded into\n"
      "named register fields.\n\n"
      "Examples:\n"
      "  hwx-dump model.hwx                  text for people: buffers, then each task (what it\n"
      "                                      computes, then every register field)\n"
      "  hwx-dump --summary model.hwx        only the buffers and what each task computes\n"
      "  hwx-dump --json model.hwx | jq .tasks[0].registers\n"
      "  hwx-dump --diff a.hwx b.hwx         what differs, per element and register field\n"
      "  hwx-dump --weights out/ model.hwx   write each kernel symbol's bytes to out/\n"
      "  hwx-dump tanh.bin                   an anec image: buffers src0.., dst0.. from its tasks\n"
      "  hwx-dump add.bin --descriptor MANIFEST.json   names and sizes from a descriptor\n"
      "  hwx-dump --to-anec out/ model.hwx   write out/model.anec + model.json + anec_model.h\n\n"
      "Exit status: 0 success (for --diff: identical), 1 differences found (--diff),\n"
      "2 unreadable or malformed input, usage errors.",
      "hwx-dump"};
  std::vector<std::string> files;
  bool json = false, raw = false, diff = false, summary = false;
  std::string weights_dir, anec_dir, format, descriptor, entry;
  app.add_option("files", files, "The program: .hwx or anec (two files with --diff)")->required()->expected(1, 2);
  app.add_flag("--json", json, "Machine-readable JSON instead of text");
  app.add_flag("--raw", raw, "Also list every task word with its task offset and register address");
  app.add_flag("--summary", summary, "Only the buffers and one line per task saying what it computes");
  app.add_flag("--diff", diff, "Compare two files: container elements and register fields by name");
  app.add_option("--weights", weights_dir, "Write the kernel data of each kernel symbol to DIR/<symbol>.bin")
      ->type_name("DIR");
  app.add_option("--to-anec", anec_dir,
                 "Write the program as an anec image for eiln's Linux driver: DIR/<name>.anec, its JSON "
                 "descriptor DIR/<name>.json and C header DIR/anec_<name>.h")
      ->type_name("DIR");
  app.add_option("--format", format, "Read the file as this format instead of deciding by content")
      ->check(CLI::IsMember({"hwx", "anec"}));
  app.add_option("--descriptor", descriptor,
                 "anec only: the descriptor naming buffers and giving sizes (a manifest JSON, one JSON entry, "
                 "or the anec_<name>.h eiln's anect writes)")
      ->type_name("FILE");
  app.add_option("--entry", entry, "With --descriptor: the manifest entry or model to use (default: by file name)")
      ->type_name("NAME");
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

  ane::OpenOptions open;
  if (!format.empty()) open.format = format == "hwx" ? ane::ContainerFormat::Hwx : ane::ContainerFormat::Anec;
  open.descriptor_path = descriptor;
  open.descriptor_entry = entry;
  std::vector<ane::Program> programs;
  for (const auto& f : files) {
    auto p = ane::open_program(f, open);
    if (!p) return fail(f, p.error());
    programs.push_back(std::move(p).value());
  }
  ane::DumpOptions opt;
  opt.raw = raw;
  opt.summary = summary;

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
  if (!anec_dir.empty()) return write_anec(p, anec_dir);
  fmt::print("{}", json ? ane::dump_json(p, opt) : ane::dump_text(p, opt));
  return 0;
}
