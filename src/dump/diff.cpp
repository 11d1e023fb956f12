// Structural diff of two programs: every container element and every task
// register field, by name, plus the bytes of each file-backed section.
#include <map>

#include <fmt/format.h>

#include "json_model.h"

namespace ane {

namespace {

using detail::Json;
using Flat = std::vector<std::pair<std::string, std::string>>;

std::string scalar(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_unsigned()) {
    const uint64_t n = v.get<uint64_t>();
    return n < 10 ? std::to_string(n) : fmt::format("{} ({:#x})", n, n);
  }
  return v.dump();
}

// Key of an array element: its name (with a counter for repeats), else its index.
std::string element_key(const Json& e, size_t index, std::map<std::string, int>& seen) {
  if (e.is_object() && e.contains("name") && e["name"].is_string()) {
    std::string n = e["name"].get<std::string>();
    if (e.contains("segment") && e["segment"].is_string()) n = e["segment"].get<std::string>() + "," + n;
    int k = seen[n]++;
    return k ? fmt::format("{}#{}", n, k) : n;
  }
  return std::to_string(index);
}

void flatten(const Json& j, const std::string& path, Flat& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      if (path.empty() && k == "file") continue;  // the path names differ by design
      if (k == "summary") continue;               // derived from the registers the diff compares
      // The same words again, by address: the register fields carry them.
      if (k == "written" || (k == "header" && path.rfind("task[", 0) == 0)) continue;
      if (k == "registers") {  // task fields read as task[i].Block.Reg.Field
        flatten(v, path, out);
        continue;
      }
      flatten(v, path.empty() ? k : path + "." + k, out);
    }
  } else if (j.is_array()) {
    std::map<std::string, int> seen;
    const bool tasks = path == "tasks";
    for (size_t i = 0; i < j.size(); ++i) {
      std::string key = tasks ? fmt::format("task[{}]", i) : path + "[" + element_key(j[i], i, seen) + "]";
      flatten(j[i], key, out);
    }
  } else {
    out.emplace_back(path, scalar(j));
  }
}

// Sections in file order, so that the k-th section of a given name in A is
// compared with the k-th of that name in B (names repeat: __FVMLIB,__const).
std::vector<const macho::Section64*> all_sections(const HwxFile& f) {
  std::vector<const macho::Section64*> out;
  for (const auto* s : f.segments())
    for (const auto& sec : s->sections) out.push_back(&sec);
  return out;
}

// "N of M bytes differ, first at +X", or "" when equal.
std::string byte_difference(std::span<const uint8_t> da, std::span<const uint8_t> db) {
  size_t differ = 0, first = SIZE_MAX;
  const size_t n = std::min(da.size(), db.size());
  for (size_t i = 0; i < n; ++i)
    if (da[i] != db[i]) {
      ++differ;
      if (first == SIZE_MAX) first = i;
    }
  if (differ == 0 && da.size() == db.size()) return "";
  const size_t longest = std::max(da.size(), db.size());
  std::string what = fmt::format("{} of {} bytes differ", differ + (longest - n), longest);
  if (first != SIZE_MAX) what += fmt::format(", first at +{:#x}", first);
  return what;
}

void diff_sections(const Program& a, const Program& b, std::vector<DiffEntry>& out) {
  if (!a.hwx || !b.hwx) {
    // Another container on either side: compare what both have, the kernel data.
    const std::string what = byte_difference(a.kernel_bytes(), b.kernel_bytes());
    if (!what.empty()) out.push_back({"kernel data bytes", what, what});
    return;
  }
  const auto sa = all_sections(*a.hwx), sb = all_sections(*b.hwx);
  std::map<std::string, std::vector<const macho::Section64*>> by_name;
  for (const auto* s : sb) by_name[s->segname + "," + s->sectname].push_back(s);
  std::map<std::string, size_t> used;
  for (const auto* seca : sa) {
    const std::string name = seca->segname + "," + seca->sectname;
    const size_t k = used[name]++;
    const auto& candidates = by_name[name];
    if (k >= candidates.size()) continue;
    const auto da = a.hwx->section_data(*seca), db = b.hwx->section_data(*candidates[k]);
    if (da.empty() && db.empty()) continue;
    const std::string what = byte_difference(da, db);
    if (what.empty()) continue;
    const std::string label = k ? fmt::format("section {}#{} bytes", name, k) : fmt::format("section {} bytes", name);
    out.push_back({label, what, what});
  }
}

// A field both generations name for the same quantity: not an address-named
// Unk word, not a header word (each format has its own header), except TID.
bool comparable_across_generations(const FieldInfo& f) {
  if (f.reg.rfind("Unk", 0) == 0) return false;
  return f.block != Block::Header || f.name == "Header[0].TID";
}

// Tasks of different generations, by meaning: the fields both register
// tables name (one name is one quantity on every generation), a field the
// task leaves unwritten shown as such.
void flatten_tasks_by_meaning(const Program& p, const Program& other, Flat& out) {
  const Generation og = other.generation;
  const RegisterDatabase* odb = RegisterDatabase::for_generation(og);
  for (const Task& t : p.tasks) {
    const auto& db = t.regs.database();
    for (const FieldInfo& f : db.fields()) {
      if (!comparable_across_generations(f) || !odb || !odb->find(f.name)) continue;
      const std::string value =
          t.regs.field_written(f) ? scalar(detail::Json(t.regs.get(f))) : std::string("(not written)");
      out.emplace_back(fmt::format("task[{}].{}", t.index, f.name), value);
    }
  }
}

}  // namespace

std::vector<DiffEntry> diff_programs(const Program& a, const Program& b) {
  Flat fa, fb;
  detail::Json ja = detail::program_json(a, {}), jb = detail::program_json(b, {});
  if (a.generation != b.generation) {
    ja.erase("tasks");
    jb.erase("tasks");
  }
  flatten(ja, "", fa);
  flatten(jb, "", fb);
  if (a.generation != b.generation) {
    fa.emplace_back("generation", generation_name(a.generation));
    fb.emplace_back("generation", generation_name(b.generation));
    fa.emplace_back("task count", std::to_string(a.tasks.size()));
    fb.emplace_back("task count", std::to_string(b.tasks.size()));
    flatten_tasks_by_meaning(a, b, fa);
    flatten_tasks_by_meaning(b, a, fb);
  }
  std::map<std::string, std::string> mb(fb.begin(), fb.end());
  std::map<std::string, std::string> ma(fa.begin(), fa.end());
  std::vector<DiffEntry> out;
  for (const auto& [k, va] : fa) {
    auto it = mb.find(k);
    if (it == mb.end())
      out.push_back({k, va, ""});
    else if (it->second != va)
      out.push_back({k, va, it->second});
  }
  for (const auto& [k, vb] : fb)
    if (!ma.count(k)) out.push_back({k, "", vb});
  diff_sections(a, b, out);
  return out;
}

std::string format_diff(const Program& a, const Program& b, const std::vector<DiffEntry>& diff) {
  std::string out = fmt::format("--- {}\n+++ {}\n", a.path, b.path);
  if (a.generation != b.generation)
    out += fmt::format("(different generations, {} and {}: tasks compared by the register fields both name; "
                       "fields only one generation names, and the raw words, are not compared)\n",
                       generation_name(a.generation), generation_name(b.generation));
  if (diff.empty()) return out + "no differences\n";
  for (const auto& d : diff) {
    if (d.path.rfind("section ", 0) == 0)
      out += fmt::format("{}: {}\n", d.path, d.a);
    else if (d.b.empty())
      out += fmt::format("{}: {} -> (absent)\n", d.path, d.a);
    else if (d.a.empty())
      out += fmt::format("{}: (absent) -> {}\n", d.path, d.b);
    else
      out += fmt::format("{}: {} -> {}\n", d.path, d.a, d.b);
  }
  out += fmt::format("{} differences\n", diff.size());
  return out;
}

}  // namespace ane
