#include "oracle_fixture.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "ane/fp16.h"
#include "support.h"

namespace ane::oracle {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep))
    if (!cur.empty()) out.push_back(cur);
  return out;
}

uint64_t number(const std::string& s) {
  size_t used = 0;
  const uint64_t v = std::stoull(s, &used, 0);
  if (used != s.size()) throw std::invalid_argument("not a number: " + s);
  return v;
}

std::map<std::string, std::string> key_values(const std::vector<std::string>& tokens, size_t from) {
  std::map<std::string, std::string> kv;
  for (size_t i = from; i < tokens.size(); ++i) {
    const size_t eq = tokens[i].find('=');
    if (eq == std::string::npos) throw std::invalid_argument("expected key=value: " + tokens[i]);
    kv[tokens[i].substr(0, eq)] = tokens[i].substr(eq + 1);
  }
  return kv;
}

template <size_t N>
std::array<uint64_t, N> list_of(const std::string& s) {
  const auto parts = split(s, ',');
  if (parts.size() != N) throw std::invalid_argument("expected " + std::to_string(N) + " values: " + s);
  std::array<uint64_t, N> a{};
  for (size_t i = 0; i < N; ++i) a[i] = number(parts[i]);
  return a;
}

Fixture parse(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open");
  Fixture f;
  f.file = path;
  std::string line;
  FixtureTask* task = nullptr;
  bool ended = false;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto t = split(line, ' ');
    const std::string& kind = t[0];
    if (kind == "source") {
      f.source = line.substr(7);
    } else if (kind == "case") {
      f.name = t.at(1);
    } else if (kind == "family") {
      f.family = t.at(1);
    } else if (kind == "params") {
      f.params = key_values(t, 1);
    } else if (kind == "weights") {
      f.weights = key_values(t, 1);
    } else if (kind == "constant") {
      const auto kv = key_values(t, 1);
      f.constant_size = number(kv.at("size"));
      f.constant_sha256 = kv.at("sha256");
    } else if (kind == "chunk") {
      f.chunks.emplace_back(number(t.at(1)), t.at(3));
    } else if (kind == "tensor") {
      const auto kv = key_values(t, 1);
      FixtureTensor x;
      x.binding = static_cast<int>(number(kv.at("binding")));
      x.shape = list_of<4>(kv.at("shape"));
      x.strides = list_of<4>(kv.at("strides"));
      x.total = number(kv.at("total"));
      f.tensors.push_back(x);
    } else if (kind == "program") {
      const auto kv = key_values(t, 1);
      f.text_address = number(kv.at("text"));
      f.constant_address = number(kv.at("constant"));
      f.task_count = static_cast<uint32_t>(number(kv.at("tasks")));
      f.words_minus_one = static_cast<uint32_t>(number(kv.at("words_minus_one")));
    } else if (kind == "task") {
      if (number(t.at(1)) != f.tasks.size()) throw std::invalid_argument("tasks out of order");
      task = &f.tasks.emplace_back();
      task->size = static_cast<uint32_t>(number(key_values(t, 2).at("size")));
    } else if (kind == "header") {
      if (!task || t.size() != 11) throw std::invalid_argument("header needs a task and 10 words");
      for (int i = 0; i < 10; ++i) task->header[i] = static_cast<uint32_t>(number(t[i + 1]));
    } else if (kind == "record") {
      if (!task) throw std::invalid_argument("record outside a task");
      StreamRecord r;
      r.address = static_cast<uint32_t>(number(t.at(1)));
      r.count = static_cast<uint32_t>(number(t.at(2)));
      r.header = static_cast<uint32_t>(number(t.at(3)));
      task->records.push_back(r);
    } else if (kind == "words") {
      if (!task || task->records.empty() || !task->records.back().words.empty())
        throw std::invalid_argument("words without a record");
      for (size_t i = 1; i < t.size(); ++i) task->records.back().words.push_back(static_cast<uint32_t>(number(t[i])));
    } else if (kind == "note") {
      // further record figures, kept for readers
    } else if (kind == "end") {
      ended = true;
      break;
    } else {
      throw std::invalid_argument("unknown line: " + kind);
    }
  }
  if (!ended) throw std::invalid_argument("no 'end' line");
  return f;
}

}  // namespace

std::vector<uint32_t> FixtureTask::stream() const {
  std::vector<uint32_t> s(header.begin(), header.end());
  for (const auto& r : records) {
    s.push_back(r.header);
    s.insert(s.end(), r.words.begin(), r.words.end());
  }
  return s;
}

uint32_t FixtureTask::word(uint32_t address) const {
  for (const auto& r : records)
    if (address >= r.address && address < r.address + 4 * r.words.size()) return r.words[(address - r.address) / 4];
  throw std::out_of_range(fmt::format("the task writes no word at {:#x}", address));
}

bool FixtureTask::writes(uint32_t address) const {
  for (const auto& r : records)
    if (address >= r.address && address < r.address + 4 * r.words.size()) return true;
  return false;
}

const std::string& Fixture::param(const std::string& key) const {
  auto it = params.find(key);
  if (it == params.end()) throw std::out_of_range(name + " has no parameter " + key);
  return it->second;
}
uint64_t Fixture::param_u64(const std::string& key) const { return number(param(key)); }
std::vector<uint64_t> Fixture::param_list(const std::string& key) const {
  std::vector<uint64_t> v;
  for (const auto& p : split(param(key), ',')) v.push_back(number(p));
  return v;
}
bool Fixture::param_bool(const std::string& key) const { return param(key) == "true"; }

Expected<Fixture> load_fixture(const std::string& path) {
  try {
    return parse(path);
  } catch (const std::exception& e) {
    return make_error(fmt::format("{}: {}", path, e.what()));
  }
}

std::vector<std::string> fixture_files(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".fx") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

namespace {
// coremltools: "same" pads (out - 1) * s + k - in in all, the smaller half
// first; "valid" pads nothing.
std::pair<uint32_t, uint32_t> pads(const std::string& type, uint32_t in, uint32_t out, uint32_t k, uint32_t s) {
  if (type != "same") return {0, 0};
  const int64_t total = std::max<int64_t>(0, (int64_t{out} - 1) * s + k - in);
  return {static_cast<uint32_t>(total / 2), static_cast<uint32_t>(total - total / 2)};
}
}  // namespace

bool too_large_for_sanitizers(const ConvRecord& c) {
  return test::kSanitized && c.weight_count() > (uint64_t{1} << 21);
}

ConvRecord ConvRecord::of(const Fixture& f) {
  ConvRecord c;
  c.cin = static_cast<uint32_t>(f.param_u64("input_channels"));
  c.cout = static_cast<uint32_t>(f.param_u64("output_channels"));
  c.kh = c.kw = static_cast<uint32_t>(f.param_u64("kernel"));
  c.bias = f.param_bool("bias");
  if (!f.params.count("input_shape")) {
    // The base campaign (research/mint_oracles.py, convolution()): square
    // planes of `spatial`, stride 1, "same", ungrouped, and perhaps a relu.
    c.hin = c.win = c.hout = c.wout = static_cast<uint32_t>(f.param_u64("spatial"));
    std::tie(c.pad_top, c.pad_bottom) = pads("same", c.hin, c.hout, c.kh, 1);
    std::tie(c.pad_left, c.pad_right) = pads("same", c.win, c.wout, c.kw, 1);
    c.relu = f.param_bool("relu");
    return c;
  }
  c.groups = static_cast<uint32_t>(f.param_u64("groups"));
  if (f.params.count("weight_shape")) {
    const auto w = f.param_list("weight_shape");
    c.kh = static_cast<uint32_t>(w.at(2));
    c.kw = static_cast<uint32_t>(w.at(3));
  }
  c.stride = static_cast<uint32_t>(f.param_u64("stride"));
  const auto in = f.param_list("input_shape"), out = f.param_list("output_shape");
  c.hin = static_cast<uint32_t>(in.at(2));
  c.win = static_cast<uint32_t>(in.at(3));
  c.hout = static_cast<uint32_t>(out.at(2));
  c.wout = static_cast<uint32_t>(out.at(3));
  std::tie(c.pad_top, c.pad_bottom) = pads(f.param("pad_type"), c.hin, c.hout, c.kh, c.stride);
  std::tie(c.pad_left, c.pad_right) = pads(f.param("pad_type"), c.win, c.wout, c.kw, c.stride);
  return c;
}

void expect_tasks_match_record(const Fixture& f) {
  ASSERT_EQ(f.tasks.size(), f.task_count);
  for (const auto& t : f.tasks) {
    uint32_t words = 10;  // the task header
    for (const auto& r : t.records) {
      EXPECT_EQ(r.words.size(), r.count) << std::hex << r.address;
      EXPECT_EQ(r.header, ((r.count - 1) << 26) | r.address) << std::hex << r.address;
      words += 1 + r.count;
    }
    EXPECT_EQ(4 * words, t.size);
  }
  EXPECT_EQ(f.tasks[0].size, 4 * (f.words_minus_one + 1));
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param.substr(info.param.rfind('/') + 1);
  n = n.substr(0, n.size() - 3);
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

Expected<Constants> rebuild_constants(const Fixture& f, uint64_t weight_count, uint64_t bias_count) {
  const auto it = f.weights.find("value");
  if (it == f.weights.end()) return make_error(f.name + ": no weight formula");
  const std::string& value = it->second;
  Constants c;
  c.weights.resize(weight_count);
  c.bias.resize(bias_count);
  if (value == "fp16(0x1p-1)" || value == "distinct" || value.rfind("probe_pattern_", 0) == 0) {
    // mil-hwx-compiler's blob: its 128-byte header does not parse as a
    // CoreML blob header, so the compiler reads every constant from byte 0:
    // element i < 64 is header halfword i, then the payload (uniform 0.5, or
    // the 0x3801 baseline that "distinct" records were compiled with). The
    // bias reads from byte 0 too.
    const uint64_t payload = std::stoull(f.weights.at("payload_bytes"));
    std::array<uint16_t, 64> head{};
    head[0] = 1;
    head[2] = 2;
    head[32] = 0xBEEF;
    head[33] = 0xDEAD;
    for (int i = 0; i < 4; ++i) head[34 + i] = static_cast<uint16_t>(payload >> (16 * i));
    head[38] = 0x0080;
    // The H14 matvec probes' payloads (research/mint_h14_matvec_probes.py),
    // a [columns, reduction] matrix row-major: "index" fp16(j + 1) at element
    // j, "mask" 0x3001 | ((31 row + 7 column) mod 512) << 1, "zero" 0,
    // "onehotL" 0x3555 at file halfword L (payload element L - 64), 0 elsewhere.
    const std::string pattern = value.rfind("probe_pattern_", 0) == 0 ? value.substr(14) : "";
    const uint64_t reduction = pattern.empty() ? 0 : f.param_u64("reduction");
    // The pattern is read once, not per element (a matmul record has 2^20).
    enum class Payload { Index, Mask, Zero, OneHot, Uniform } kind = Payload::Uniform;
    uint64_t onehot_at = 0;
    if (pattern == "index") kind = Payload::Index;
    else if (pattern == "mask") kind = Payload::Mask;
    else if (pattern == "zero") kind = Payload::Zero;
    else if (pattern.rfind("onehot", 0) == 0) kind = Payload::OneHot, onehot_at = std::stoull(pattern.substr(6));
    const uint16_t uniform = value == "distinct" ? 0x3801 : 0x3800;
    auto payload_element = [&](uint64_t j) -> uint16_t {
      switch (kind) {
        case Payload::Index: return float_to_fp16(static_cast<float>(j + 1));
        case Payload::Mask: return static_cast<uint16_t>(0x3001 | (((j / reduction) * 31 + (j % reduction) * 7) & 0x1ff) << 1);
        case Payload::Zero: return 0;
        case Payload::OneHot: return j + 64 == onehot_at ? 0x3555 : 0;
        case Payload::Uniform: break;
      }
      return uniform;
    };
    auto element = [&](uint64_t i) { return i < 64 ? head[i] : payload_element(i - 64); };
    for (uint64_t i = 0; i < weight_count; ++i) c.weights[i] = element(i);
    for (uint64_t i = 0; i < bias_count; ++i) c.bias[i] = element(i);
    return c;
  }
  if (value.rfind("uint16(index+1)", 0) == 0 || value == "fp16_bits((index+1)&0xFFFF)") {
    // Weights then bias, one running index, wrapping at 16 bits, xor a mask.
    uint16_t mask = 0;
    if (auto m = f.weights.find("xor_mask"); m != f.weights.end()) mask = static_cast<uint16_t>(number(m->second));
    for (uint64_t i = 0; i < weight_count; ++i) c.weights[i] = static_cast<uint16_t>(i + 1) ^ mask;
    for (uint64_t i = 0; i < bias_count; ++i) c.bias[i] = static_cast<uint16_t>(weight_count + i + 1) ^ mask;
    return c;
  }
  if (value == "fp16_bits_0x3400_+_index,_one_value_per_constant") {
    std::fill(c.weights.begin(), c.weights.end(), 0x3400);
    std::fill(c.bias.begin(), c.bias.end(), 0x3401);
    return c;
  }
  return make_error(f.name + ": unknown weight formula '" + value + "'");
}

std::vector<std::pair<uint32_t, uint32_t>> stream_shape(const FixtureTask& t) {
  std::vector<std::pair<uint32_t, uint32_t>> v;
  for (const auto& r : t.records) v.emplace_back(r.address, r.count);
  return v;
}

std::vector<std::pair<uint32_t, uint32_t>> stream_shape(const Task& t) {
  std::vector<std::pair<uint32_t, uint32_t>> v;
  for (const auto& s : t.streams) v.emplace_back(s.address, s.count);
  return v;
}

Bytes anec_image(const Fixture& f, const Bytes& kernel) {
  // Task i + 1 sits where task i's NextPointer (header word 7) says; the
  // constants at the program's constant address.
  Bytes b;
  uint64_t at = 0;
  for (size_t i = 0; i < f.tasks.size(); ++i) {
    const auto words = f.tasks[i].stream();
    for (size_t k = 0; k < words.size(); ++k) put_u32(b, at + 4 * k, words[k]);
    at = f.tasks[i].header[7];
  }
  const uint64_t konst = f.constant_address - f.text_address;
  if (b.size() > konst) throw std::invalid_argument(f.name + ": the tasks overlap the constant section");
  b.resize(konst, 0);
  b.insert(b.end(), kernel.begin(), kernel.end());
  return b;
}

AnecDescriptor io_descriptor(const Fixture& f, uint32_t input_slot, uint32_t output_slot) {
  AnecDescriptor d;
  d.source = f.file;
  for (const auto& t : f.tensors) {
    AnecTensor a;
    a.name = t.binding == 1 ? "x" : "y";
    a.direction = t.binding == 1 ? BufferDirection::Input : BufferDirection::Output;
    a.slot = static_cast<int>(t.binding == 1 ? input_slot : output_slot);
    a.nchw = t.shape;
    a.strides = t.strides;
    d.tensors.push_back(a);
  }
  return d;
}

}  // namespace ane::oracle
