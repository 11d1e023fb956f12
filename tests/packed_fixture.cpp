#include "packed_fixture.h"
#include "oracle_fixture.h"

#include "reference/torch_ops.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

namespace ane::packed {

namespace {

uint64_t num(const std::string& s) { return std::stoull(s, nullptr, 0); }

std::map<std::string, std::string> key_values(std::istringstream& in) {
  std::map<std::string, std::string> out;
  for (std::string kv; in >> kv;) {
    const auto eq = kv.find('=');
    if (eq != std::string::npos) out[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return out;
}

void put32(Bytes& b, uint64_t off, uint32_t v) {
  if (b.size() < off + 4) b.resize(off + 4, 0);
  for (int i = 0; i < 4; ++i) b[off + i] = static_cast<uint8_t>(v >> (8 * i));
}
void put64(Bytes& b, uint64_t off, uint64_t v) {
  put32(b, off, static_cast<uint32_t>(v));
  put32(b, off + 4, static_cast<uint32_t>(v >> 32));
}
void put_name(Bytes& b, uint64_t off, const std::string& s, size_t width) {
  if (b.size() < off + width) b.resize(off + width, 0);
  for (size_t i = 0; i < s.size() && i < width; ++i) b[off + i] = static_cast<uint8_t>(s[i]);
}
uint64_t align(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace

std::vector<uint64_t> number_list(const std::string& s) {
  std::vector<uint64_t> out;
  std::stringstream in(s);
  for (std::string x; std::getline(in, x, ',');) out.push_back(num(x));
  return out;
}

uint32_t Fixture::cpusubtype() const {
  static const std::map<std::string, uint32_t> kSubtype{{"h14", 5}, {"h15", 6}, {"h16", 7}, {"h17", 9}, {"h18", 10}};
  return kSubtype.at(target);
}
uint32_t Fixture::header_words() const { return target == "h14" || target == "h15" ? 8 : 9; }
uint32_t Fixture::first_surface() const { return target == "h14" ? 4 : 6; }

Expected<Fixture> load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_error(fmt::format("{}: cannot open", path));
  Fixture f;
  f.file = path;
  bool ended = false;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    std::string kind;
    s >> kind;
    auto bad = [&](const std::string& why) { return make_error(fmt::format("{}:{}: {}", path, n, why)); };
    if (kind == "source") {
      std::string repo, file, commit;
      s >> repo >> file >> commit;
      f.source = repo + " " + file + " " + commit;
    } else if (kind == "case") {
      s >> f.name;
    } else if (kind == "family") {
      s >> f.family;
    } else if (kind == "target") {
      s >> f.target;
    } else if (kind == "io") {
      for (std::string kv; s >> kv;) {  // in order: inputs, then outputs
        const auto eq = kv.find('=');
        if (eq == std::string::npos) return bad("io wants name=in|out");
        f.io.emplace_back(kv.substr(0, eq), kv.substr(eq + 1) == "in");
      }
    } else if (kind == "params") {
      f.params = key_values(s);
    } else if (kind == "weights") {
      f.weights = key_values(s);
    } else if (kind == "hwx") {
      f.hwx_bytes = num(key_values(s).at("bytes"));
    } else if (kind == "constant" || kind == "kernel") {
      auto kv = key_values(s);
      Section& sec = kind == "constant" ? f.constant : f.kernel;
      sec = {num(kv.at("size")), kv.at("sha256"), num(kv.at("nonzero")), true};
    } else if (kind == "program") {
      auto kv = key_values(s);
      f.command_size = static_cast<uint32_t>(num(kv.at("size")));
      f.text_address = num(kv.at("text"));
      f.constant_address = num(kv.at("constant"));
      f.task_count = static_cast<uint32_t>(num(kv.at("tasks")));
      f.text_words = static_cast<uint32_t>(num(kv.at("text_words")));
    } else if (kind == "resources") {
      std::string x;
      s >> x;
      f.resources = number_list(x);
    } else if (kind == "trailing") {
      for (std::string w; s >> w;) f.trailing.push_back(static_cast<uint32_t>(num(w)));
    } else if (kind == "descriptor") {
      for (const auto& [k, v] : key_values(s)) f.descriptor[static_cast<uint32_t>(num(k))] = static_cast<uint32_t>(num(v));
    } else if (kind == "tensor") {
      auto kv = key_values(s);
      Tensor t;
      t.binding = static_cast<int>(num(kv.at("binding")));
      t.element_code = static_cast<uint32_t>(num(kv.at("element_code")));
      t.shape = number_list(kv.at("shape"));
      t.strides = number_list(kv.at("strides"));
      t.total = num(kv.at("total"));
      f.tensors.push_back(std::move(t));
    } else if (kind == "task") {
      std::string index, size;
      s >> index >> size;
      if (num(index) != f.tasks.size() || size.rfind("size=", 0) != 0) return bad("task lines are 'task <i> size=<n>' in order");
      f.tasks.emplace_back().size = static_cast<uint32_t>(num(size.substr(5)));
    } else if (kind == "header" || kind == "record" || kind == "block") {
      if (f.tasks.empty()) return bad(kind + " before the first task line");
      Task& t = f.tasks.back();
      if (kind == "header") {
        for (std::string w; s >> w;) t.header.push_back(static_cast<uint32_t>(num(w)));
      } else if (kind == "record") {
        std::string h, a, c;
        if (!(s >> h >> a >> c)) return bad("record wants <header> <address> <count>");
        t.records.push_back({static_cast<uint32_t>(num(h)), static_cast<uint32_t>(num(a)), static_cast<uint32_t>(num(c))});
      } else {
        std::string base, name;
        s >> base >> name;
        t.block_of[static_cast<uint32_t>(num(base))] = name;
        for (std::string kv; s >> kv;) {
          const auto eq = kv.find('=');
          if (eq == std::string::npos) return bad("block words are <address>=<value>");
          if (!t.words.emplace(static_cast<uint32_t>(num(kv.substr(0, eq))), static_cast<uint32_t>(num(kv.substr(eq + 1)))).second)
            return bad("a block word appears twice");
        }
      }
    } else if (kind == "end") {
      ended = true;
    } else if (kind == "fp16") {
      std::string which;
      s >> which;
      if (which != "const" && which != "kernel") return bad("fp16 wants const or kernel");
      auto& words = which == "const" ? f.constant_fp16 : f.kernel_fp16;
      for (const auto& [index, value] : key_values(s)) words[static_cast<uint32_t>(num(index))] = std::stod(value);
    } else if (kind != "chunk" && kind != "task_section") {
      return bad("unknown line kind '" + kind + "'");
    }
  }
  if (!ended) return make_error(fmt::format("{}: no 'end' line (truncated?)", path));
  if (f.target.empty() || f.tasks.empty()) return make_error(fmt::format("{}: no target or no tasks", path));
  return f;
}

uint64_t Tensor::extent() const {
  uint64_t end = 2;
  for (size_t k = 0; k < shape.size() && k < strides.size(); ++k)
    if (shape[k] > 0) end += (shape[k] - 1) * strides[k];
  return std::max(end, total);
}

std::vector<std::string> malformed_sample() {
  const std::string root = std::string(LIBANE_SOURCE_DIR) + "/tests/fixtures/oracles/";
  std::vector<std::string> out;
  for (const char* g : {"h14", "h15", "h16", "h17", "h18"}) out.push_back(root + g + "/binary_add_1x64x8x8.fx");
  out.push_back(root + "h14/unary_sigmoid_c64.fx");
  out.push_back(root + "h16/unary_sigmoid_c64.fx");
  return out;
}

std::vector<std::string> operation_fixture_files(const std::string& family) {
  std::vector<std::string> out;
  for (const char* g : {"h14", "h15", "h16", "h17", "h18"}) {
    const auto dir = std::filesystem::path(LIBANE_SOURCE_DIR) / "tests/fixtures/oracles" / g / family;
    if (!std::filesystem::is_directory(dir)) continue;
    for (auto& f : oracle::fixture_files(dir.string())) out.push_back(std::move(f));
  }
  return out;
}

std::string test_name(const std::string& path) {
  const std::filesystem::path p(path);
  std::string dir = p.parent_path().filename().string();
  if (dir.size() != 3 || dir[0] != 'h')  // h14/conv, h14/reduce
    dir = p.parent_path().parent_path().filename().string() + "_" + dir;
  std::string n = dir + "_" + p.stem().string();
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

std::vector<std::string> fixture_files() {
  std::vector<std::string> out;
  const std::filesystem::path root = std::filesystem::path(LIBANE_SOURCE_DIR) / "tests/fixtures/oracles";
  for (const char* gen : {"h14", "h15", "h16", "h17", "h18"}) {
    const auto dir = root / gen;
    if (!std::filesystem::is_directory(dir)) continue;
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.path().extension() == ".fx") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<uint32_t> record_addresses(uint32_t h) {
  const uint32_t base = (h & 0x7fff) * 4;
  std::vector<uint32_t> out{base};
  if (h >> 31) {
    for (uint32_t bit = 0; bit < 16; ++bit)
      if ((h >> (15 + bit)) & 1) out.push_back(base + 4 * (bit + 1));
  } else {
    const uint32_t count = ((h >> 15) & 0x3f) + 1;
    for (uint32_t i = 1; i < count; ++i) out.push_back(base + 4 * i);
  }
  return out;
}

std::vector<uint32_t> task_stream(const Task& t) {
  std::vector<uint32_t> out = t.header;
  for (const Record& r : t.records) {
    out.push_back(r.header);
    for (uint32_t a : record_addresses(r.header)) out.push_back(t.words.at(a));
  }
  return out;
}

Bytes text_bytes(const Fixture& f) {
  Bytes out(16, 0);  // the frame
  for (const Task& t : f.tasks) {
    out.resize(align(out.size(), 16), 0);
    const uint64_t at = out.size();
    const auto words = task_stream(t);
    for (size_t i = 0; i < words.size(); ++i) put32(out, at + 4 * i, words[i]);
  }
  out.resize(4 * uint64_t{f.text_words}, 0);
  return out;
}

std::vector<uint64_t> entries(const Fixture& f) {
  std::vector<uint64_t> out(127, 0);
  if (!f.descriptor.empty()) {
    for (uint32_t i = 0; i < out.size(); ++i) {
      const uint32_t off = 0x10 + 0x10 * i;
      const uint64_t lo = f.descriptor.count(off) ? f.descriptor.at(off) : 0;
      const uint64_t hi = f.descriptor.count(off + 4) ? f.descriptor.at(off + 4) : 0;
      out[i] = lo | hi << 32;
    }
    return out;
  }
  // H14: text, constant, the five resource u64s at +0x30 (entries 2 and 3 and
  // the first surface, entry 4, at +0x50); the further tensors follow in
  // ascending-name order, each at a 16 KiB boundary after the one before (as
  // H15 - H18 place them).
  out[0] = f.text_address;
  out[1] = f.constant_address;
  for (size_t k = 0; k < f.resources.size(); ++k) {
    const uint32_t off = 0x30 + 8 * static_cast<uint32_t>(k);
    if (off % 0x10 == 0) out[(off - 0x10) / 0x10] = f.resources[k];
  }
  std::vector<std::pair<std::string, uint64_t>> by_name;  // name, bytes
  for (size_t k = 0; k < f.tensors.size(); ++k)
    by_name.emplace_back(k < f.io.size() ? f.io[k].first
                                         : fmt::format("{}{}", f.tensors[k].binding == 1 ? "in" : "out", k),
                         f.tensors[k].extent());
  std::sort(by_name.begin(), by_name.end());
  uint64_t next = out[4] ? out[4] : 0x30000000;
  for (size_t i = 0; i < by_name.size(); ++i) {
    out[4 + i] = next;
    next += align(by_name[i].second, 0x4000);
  }
  return out;
}

Bytes assemble_hwx(const Fixture& f, const Bytes* constant, const Bytes* kernel) {
  const auto entry = entries(f);
  const uint32_t first = f.first_surface();
  // Surfaces in ascending MIL-name order (the resource order mil-hwx-compiler
  // reports); the tensor descriptors list the inputs, then the outputs.
  std::vector<std::pair<std::string, bool>> io = f.io;
  if (io.empty())
    for (size_t k = 0; k < f.tensors.size(); ++k)
      io.emplace_back(fmt::format("{}{}", f.tensors[k].binding == 1 ? "in" : "out", k), f.tensors[k].binding == 1);
  std::vector<std::string> by_name;
  for (const auto& [n, in] : io) by_name.push_back(n);
  std::sort(by_name.begin(), by_name.end());
  auto address_of = [&](const std::string& n) {
    const size_t k = std::find(by_name.begin(), by_name.end(), n) - by_name.begin();
    return entry.at(first + k);
  };
  auto tensor_of = [&](const std::string& n) -> const Tensor* {
    size_t k = 0;
    for (const auto& [name, in] : io) {
      if (name == n) return k < f.tensors.size() ? &f.tensors[k] : nullptr;
      ++k;
    }
    return nullptr;
  };

  std::vector<Bytes> cmds;
  auto segment = [&](const std::string& segname, uint64_t vmaddr, uint64_t vmsize, uint64_t fileoff,
                     uint64_t filesize, uint32_t prot, uint32_t flags,
                     const std::vector<std::tuple<std::string, uint64_t, uint64_t, uint32_t, uint32_t, uint32_t>>& sects) {
    Bytes c;
    put32(c, 0, 0x19);
    put32(c, 4, static_cast<uint32_t>(0x48 + 0x50 * sects.size()));
    put_name(c, 8, segname, 16);
    put64(c, 0x18, vmaddr);
    put64(c, 0x20, vmsize);
    put64(c, 0x28, fileoff);
    put64(c, 0x30, filesize);
    put32(c, 0x38, prot);
    put32(c, 0x3c, prot);
    put32(c, 0x40, static_cast<uint32_t>(sects.size()));
    put32(c, 0x44, flags);
    for (size_t i = 0; i < sects.size(); ++i) {
      const auto& [sectname, addr, size, offset, align_log2, sflags] = sects[i];
      const uint64_t o = 0x48 + 0x50 * i;
      put_name(c, o, sectname, 16);
      put_name(c, o + 16, segname, 16);
      put64(c, o + 0x20, addr);
      put64(c, o + 0x28, size);
      put32(c, o + 0x30, offset);
      put32(c, o + 0x34, align_log2);
      put32(c, o + 0x40, sflags);
      c.resize(o + 0x50, 0);
    }
    c.resize(0x48 + 0x50 * sects.size(), 0);
    cmds.push_back(std::move(c));
  };

  const uint64_t text_size = 4 * uint64_t{f.text_words};
  constexpr uint64_t kTextOff = 0x4000;
  const uint64_t const_off = kTextOff + (f.constant_address - f.text_address);
  const uint64_t text_seg_size = align(f.constant_address - f.text_address + f.constant.size, 0x4000);
  segment("__PAGEZERO", 0, 0x4000, 0, 0, 0, 4, {});
  segment("__TEXT", f.text_address, text_seg_size, kTextOff, text_seg_size, 5, 4,
          {{"__text", f.text_address, text_size, static_cast<uint32_t>(kTextOff), 14, 0x28},
           {"__const", f.constant_address, f.constant.size, static_cast<uint32_t>(const_off), 6, 0x26}});
  uint64_t file_end = kTextOff + text_seg_size;
  uint64_t kern_off = 0;
  if (f.kernel.present) {
    // __KERN_0 at the last descriptor entry.
    uint64_t kaddr = 0;
    for (uint32_t i = first; i < entry.size(); ++i)
      if (entry[i]) kaddr = entry[i];
    kern_off = file_end;
    const uint64_t ksize = align(f.kernel.size, 0x4000);
    segment("__KERN_0", kaddr, ksize, kern_off, ksize, 1, 4,
            {{"__kern_0", kaddr, f.kernel.size, static_cast<uint32_t>(kern_off), 6, 0x26}});
    file_end += ksize;
  }
  for (const auto& [name, in] : io) {
    const Tensor* t = tensor_of(name);
    const uint64_t size = t ? t->extent() : 0;
    segment("__FVMLIB", address_of(name), align(size, 0x4000), 0, 0, in ? 1 : 2, 6,
            {{in ? "__const" : "__data", address_of(name), size, 0, 14, in ? 0x21u : 0x23u}});
  }
  for (const auto& [name, in] : io) {
    Bytes c;
    put32(c, 0, 0x40);
    put32(c, 8, 0x18);
    put64(c, 16, address_of(name));
    put_name(c, 0x18, name, name.size() + 1);
    c.resize(align(c.size(), 8), 0);
    put32(c, 4, static_cast<uint32_t>(c.size()));
    cmds.push_back(std::move(c));
  }
  {  // the kind-4 program descriptor
    Bytes c(f.command_size, 0);
    put32(c, 0, 0x04);
    put32(c, 4, f.command_size);
    put32(c, 8, 4);
    put32(c, 12, f.target == "h14" ? 0x21e : (f.command_size - 16) / 4);  // H14: synthetic
    if (!f.descriptor.empty()) {
      for (const auto& [off, w] : f.descriptor) put32(c, off, w);
    } else {
      for (uint32_t i = 0; i < 127; ++i)
        if (entry[i]) put64(c, 0x10 + 0x10 * i, entry[i]);
      for (size_t k = 0; k < f.trailing.size(); ++k) put32(c, 0x810 + 4 * k, f.trailing[k]);
    }
    c.resize(f.command_size, 0);
    cmds.push_back(std::move(c));
  }
  {
    size_t k = 0;
    for (const Tensor& t : f.tensors) {
      std::string name = k < io.size() ? io[k].first : fmt::format("t{}", k);
      if (t.binding == 2) name += "@output";
      ++k;
      Bytes c(0x88, 0);
      put32(c, 0, 0x04);
      put32(c, 8, 3);
      put32(c, 12, 0x1e);
      put32(c, 0x14, static_cast<uint32_t>(t.binding));
      put32(c, 0x18, 0x88);  // network name
      put32(c, 0x24, t.element_code);
      for (size_t i = 0; i < 4 && i < t.shape.size(); ++i) put32(c, 0x28 + 4 * i, static_cast<uint32_t>(t.shape[i]));
      put32(c, 0x38, 1);
      for (size_t i = 0; i < 4 && i < t.strides.size(); ++i) put64(c, 0x50 + 8 * i, t.strides[i]);
      put64(c, 0x70, t.total);
      put_name(c, 0x88, "main", 5);
      put32(c, 0x20, static_cast<uint32_t>(c.size()));
      put_name(c, c.size(), name, name.size() + 1);
      c.resize(align(c.size(), 8), 0);
      put32(c, 4, static_cast<uint32_t>(c.size()));
      cmds.push_back(std::move(c));
    }
  }
  {
    Bytes c;
    put32(c, 0, 0x08);
    put_name(c, 8, "synthetic: assembled by libane tests from a mil-hwx-compiler record -t " + f.target, 80);
    c.resize(align(c.size() + 1, 8), 0);
    put32(c, 4, static_cast<uint32_t>(c.size()));
    cmds.push_back(std::move(c));
  }

  Bytes out;
  uint64_t sizeofcmds = 0;
  for (const auto& c : cmds) sizeofcmds += c.size();
  put32(out, 0, 0xbeefface);
  put32(out, 4, 0x80);
  put32(out, 8, f.cpusubtype());
  put32(out, 12, 2);
  put32(out, 16, static_cast<uint32_t>(cmds.size()));
  put32(out, 20, static_cast<uint32_t>(sizeofcmds));
  put32(out, 24, 0x00200000);
  put32(out, 28, 0);
  for (const auto& c : cmds) out.insert(out.end(), c.begin(), c.end());
  out.resize(std::max<uint64_t>(file_end, f.hwx_bytes), 0);
  const Bytes text = text_bytes(f);
  std::copy(text.begin(), text.end(), out.begin() + kTextOff);
  // Section bytes: the nonzero fp16 words where the record lists them (small
  // sections: lookup tables), zeros otherwise (only hashes are known).
  auto put_fp16 = [&](uint64_t off, const std::map<uint32_t, double>& words, uint64_t size) {
    for (const auto& [index, value] : words) {
      if (2 * uint64_t{index} + 2 > size) continue;  // a slip: the section's hash test fails
      const uint16_t h = ref::torch::to_fp16(value);
      out[off + 2 * index] = static_cast<uint8_t>(h);
      out[off + 2 * index + 1] = static_cast<uint8_t>(h >> 8);
    }
  };
  put_fp16(const_off, f.constant_fp16, f.constant.size);
  if (constant) {
    if (constant->size() != f.constant.size) throw std::invalid_argument(f.name + ": constant bytes of another size");
    std::copy(constant->begin(), constant->end(), out.begin() + static_cast<ptrdiff_t>(const_off));
  }
  if (f.kernel.present) put_fp16(kern_off, f.kernel_fp16, f.kernel.size);
  if (kernel) {
    if (!f.kernel.present || kernel->size() != f.kernel.size)
      throw std::invalid_argument(f.name + ": kernel bytes without a kernel section of that size");
    std::copy(kernel->begin(), kernel->end(), out.begin() + static_cast<ptrdiff_t>(kern_off));
  }
  return out;
}

}  // namespace ane::packed
