// Output fingerprints of every program the project runs, under every numerics
// setting: the regression lock for speed work (issue "hwx-run as fast as
// numpy"), which must not change a single output bit on the corpus, the
// example networks and random programs. The random programs are small
// networks drawn by a fixed rule (random_network below: 1x1 and 3x3
// convolutions, bias, ReLU, sigmoid, element-wise add and multiply, concat),
// written as plist files and compiled as hwx-build compiles them. Only the
// public API is used, so that this file also compiles against an older
// libane: the table in tests/fixtures/golden/outputs.txt was written by this
// code built against the library as it was before that work
// (tests/fixtures/golden/README.md).
#include "golden_outputs.h"

#include <cmath>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <optional>

#include <unistd.h>

#include <fmt/format.h>

#include "ane/compiler.h"
#include "ane/fp16.h"
#include "ane/network.h"
#include "ane/program.h"
#include "ane/sim.h"

namespace ane::golden {

namespace {

// Inputs from a formula both sides can evaluate: SplitMix64 of (buffer
// name's FNV, element index), scaled to [-4, 4) and rounded once to fp16;
// every 97th element a small value (a subnormal or near one), every 101st
// a large one, so that rounding, overflow and flush settings all matter.
uint64_t splitmix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t fnv(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

std::vector<uint16_t> input_values(const std::string& name, size_t n) {
  std::vector<uint16_t> v(n);
  const uint64_t seed = fnv(name);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t r = splitmix(seed ^ (uint64_t{i} * 0x2545f4914f6cdd1dull));
    double x = (static_cast<double>(r >> 11) * 0x1p-53) * 8.0 - 4.0;
    if (i % 97 == 0) x *= 0x1p-16;
    if (i % 101 == 0) x *= 8192.0;
    v[i] = double_to_fp16(x);
  }
  return v;
}

uint64_t fingerprint(const std::vector<uint16_t>& v) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint16_t x : v) h = ((h ^ (x & 0xffu)) * 0x100000001b3ull ^ (x >> 8)) * 0x100000001b3ull;
  return h;
}

// One program under one setting (options joined by commas): a line per
// output, or a line saying why not.
void run(const std::string& label, const Program& p, const std::string& setting, std::vector<std::string>& out) {
  sim::Options opts;
  for (size_t at = 0; setting != "default" && at <= setting.size();) {
    const size_t comma = std::min(setting.find(',', at), setting.size());
    if (auto st = sim::apply_option(opts, setting.substr(at, comma - at)); !st) {
      out.push_back(fmt::format("{} {} error {}", label, setting, st.error().str()));
      return;
    }
    at = comma + 1;
  }
  auto s = sim::Simulator::create(p, opts);
  if (!s) {
    out.push_back(fmt::format("{} {} error {}", label, setting, s.error().str()));
    return;
  }
  for (const auto& b : s->inputs()) {
    const auto& l = b.layout;
    const size_t n = l ? l->nchw[0] * l->nchw[1] * l->nchw[2] * l->nchw[3] : 0;
    sim::Tensor t;
    t.nchw = {1, 1, 1, static_cast<uint32_t>(n)};
    t.data = input_values(b.name, n);
    if (auto st = s->set_input(b.name, t); !st) {
      out.push_back(fmt::format("{} {} error {}", label, setting, st.error().str()));
      return;
    }
  }
  if (auto st = s->run(); !st) {
    out.push_back(fmt::format("{} {} error {}", label, setting, st.error().str()));
    return;
  }
  for (const auto& b : s->outputs()) {
    auto t = s->read_buffer(b.name);
    out.push_back(t ? fmt::format("{} {} {} {:016x}", label, setting, b.name, fingerprint(t->data))
                    : fmt::format("{} {} {} error {}", label, setting, b.name, t.error().str()));
  }
}

// ---- Random programs -------------------------------------------------------

// SplitMix64 as a stream (the state steps by the gamma splitmix adds): the
// only source of randomness, so every machine and every libane draws the
// same programs.
class Dice {
 public:
  explicit Dice(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    const uint64_t r = splitmix(state_);
    state_ += 0x9e3779b97f4a7c15ull;
    return r;
  }
  uint32_t below(uint32_t n) { return static_cast<uint32_t>(next() % n); }
  bool percent(uint32_t p) { return below(100) < p; }
  // In [lo, hi): 53 random bits, as input_values() draws them.
  double uniform(double lo, double hi) { return lo + static_cast<double>(next() >> 11) * 0x1p-53 * (hi - lo); }
  template <typename T>
  T pick(std::initializer_list<T> choices) {
    return choices.begin()[below(static_cast<uint32_t>(choices.size()))];
  }

 private:
  uint64_t state_;
};

// Plist XML, the keys and layout of examples/networks/*/net.plist.
using PlistEntries = std::vector<std::pair<std::string, std::string>>;  // key, value as XML

std::string plist_integer(int64_t v) { return fmt::format("<integer>{}</integer>", v); }
std::string plist_string(const std::string& s) { return "<string>" + s + "</string>"; }

std::string plist_array(const std::vector<std::string>& values_xml) {
  std::string s = "<array>\n";
  for (const auto& v : values_xml) s += v + "\n";
  return s + "</array>";
}

std::string plist_strings(const std::vector<std::string>& strings) {
  std::vector<std::string> xml;
  for (const auto& s : strings) xml.push_back(plist_string(s));
  return plist_array(xml);
}

std::string plist_dict(const PlistEntries& entries) {
  std::string s = "<dict>\n";
  for (const auto& [key, value] : entries) s += "<key>" + key + "</key>\n" + value + "\n";
  return s + "</dict>";
}

// A tensor of a random network: the input or unit that produces it, C x H x W.
struct NetTensor {
  std::string name;
  uint32_t c = 0, h = 0, w = 0;
};

// What a network's weights hold besides uniform values: a few large ones (so
// that sums overflow and overflow=saturate matters), exact zeros (which the
// stride-2 kernel form skips) and subnormal ones (subnormal=ftz).
struct WeightMix {
  bool large = false, zeros = false, subnormals = false;
};

// Builds one network plist and its single Float16 weight file.
class RandomNetworkWriter {
 public:
  RandomNetworkWriter(Dice& dice, std::string input_prefix, WeightMix mix)
      : dice_(dice), input_prefix_(std::move(input_prefix)), mix_(mix) {}

  NetTensor input(uint32_t c, uint32_t h, uint32_t w) {
    // Input names are distinct across networks: input_values() draws from the name.
    const std::string name = fmt::format("{}{}", input_prefix_, input_names_.size());
    input_names_.push_back(name);
    entries_.emplace_back(name, plist_dict({{"InputChannels", plist_integer(c)},
                                            {"InputHeight", plist_integer(h)},
                                            {"InputWidth", plist_integer(w)},
                                            {"InputType", plist_string("Float16")}}));
    return {name, c, h, w};
  }

  // A k x k Conv with k / 2 pads on every side, optionally a per-channel GOC
  // bias and a ReLU after it (both fused into its task by the compiler).
  NetTensor conv(const NetTensor& in, uint32_t cout, uint32_t k, uint32_t step, uint32_t groups, bool bias,
                 bool relu) {
    const uint32_t pad = k / 2;
    const uint32_t fan_in = in.c / groups * k * k;
    const uint64_t kernel_offset = add_weights(uint64_t{cout} * fan_in, 1.0 / std::sqrt(double(fan_in)));
    PlistEntries params = {{"KernelWidth", plist_integer(k)},
                           {"KernelHeight", plist_integer(k)},
                           {"KernelIndex", plist_integer(0)},
                           {"KernelOffset", plist_integer(kernel_offset)},
                           {"KernelType", plist_string("Float16")},
                           {"Step", plist_array({plist_integer(step), plist_integer(step)})},
                           {"Type", plist_string("Conv")}};
    if (pad > 0)
      for (const char* side : {"PadTop", "PadBot", "PadLeft", "PadRight"})
        params.emplace_back(side, plist_integer(pad));
    PlistEntries conv = {{"Bottom", plist_string(in.name)}, {"OutputChannels", plist_integer(cout)}};
    if (groups > 1) conv.emplace_back("NumGroups", plist_integer(groups));
    conv.emplace_back("Params", plist_dict(params));
    NetTensor out{add_unit("conv", "Conv", std::move(conv)), cout, (in.h + 2 * pad - k) / step + 1,
                  (in.w + 2 * pad - k) / step + 1};
    if (bias) {
      const uint64_t bias_offset = add_biases(cout);
      const PlistEntries data = {{"BiasCount", plist_integer(cout)},
                                 {"BiasIndex", plist_integer(0)},
                                 {"BiasOffset", plist_integer(bias_offset)},
                                 {"BiasType", plist_string("Float16")}};
      out.name = add_unit("bias", "GOC",
                          {{"Bottom", plist_string(out.name)},
                           {"Params", plist_dict({{"BiasScaleGroupData", plist_dict(data)}})}});
    }
    if (relu) out = neuron(out, "ReLU");
    return out;
  }

  NetTensor neuron(const NetTensor& in, const std::string& type) {
    NetTensor out = in;
    out.name = add_unit(type == "ReLU" ? "relu" : "sigmoid", "Neuron",
                        {{"Bottom", plist_string(in.name)}, {"Params", plist_dict({{"Type", plist_string(type)}})}});
    return out;
  }

  // a op b; ScaledElementWise multiplies the result by `scale` (fp16 bits).
  NetTensor elementwise(const NetTensor& a, const NetTensor& b, const std::string& op, std::optional<uint16_t> scale) {
    PlistEntries params = {{"Type", plist_string(op)}};
    if (scale) params.emplace_back("Scale", plist_integer(*scale));
    NetTensor out = a;
    out.name = add_unit(op == "Add" ? "add" : "mul", scale ? "ScaledElementWise" : "ElementWise",
                        {{"Bottom", plist_strings({a.name, b.name})}, {"Params", plist_dict(params)}});
    return out;
  }

  NetTensor concat(const NetTensor& a, const NetTensor& b) {
    NetTensor out = a;
    out.c = a.c + b.c;
    out.name = add_unit("concat", "Concat",
                        {{"Bottom", plist_strings({a.name, b.name})},
                         {"Params", plist_dict({{"Dimension", plist_string("Channel")}})}});
    return out;
  }

  void output(const NetTensor& t) {
    output_names_.push_back(t.name + "@output");
    entries_.emplace_back(output_names_.back(),
                          plist_dict({{"Bottom", plist_string(t.name)}, {"OutputType", plist_string("Float16")}}));
  }

  std::string plist() const {
    PlistEntries net = {{"Inputs", plist_strings(input_names_)},
                        {"Outputs", plist_strings(output_names_)},
                        {"Units", plist_strings(unit_names_)}};
    if (!weights_.empty()) net.emplace_back("Weights", plist_strings({kWeightFile}));
    net.insert(net.end(), entries_.begin(), entries_.end());
    return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
           "<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" "
           "\"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n"
           "<plist version=\"1.0\">\n" +
           plist_dict({{"Networks", plist_strings({"net"})},
                       {"Version", plist_string("1.0.9")},
                       {"net", plist_dict(net)}}) +
           "\n</plist>\n";
  }

  const std::vector<uint16_t>& weights() const { return weights_; }

  static constexpr const char* kWeightFile = "net.weights";

 private:
  std::string add_unit(const std::string& kind, const std::string& type, PlistEntries entries) {
    const std::string name = fmt::format("{}{}", kind, unit_names_.size() + 1);
    unit_names_.push_back(name);
    entries.emplace_back("Name", plist_string(name));
    entries.emplace_back("OutputType", plist_string("Float16"));
    entries.emplace_back("Type", plist_string(type));
    entries_.emplace_back(name, plist_dict(entries));
    return name;
  }

  // Uniform in [-bound, bound), mixed as mix_ says; returns the byte offset.
  uint64_t add_weights(uint64_t count, double bound) {
    const uint64_t offset = weights_.size() * 2;
    for (uint64_t i = 0; i < count; ++i) {
      double v = dice_.uniform(-bound, bound);
      if (mix_.large && dice_.percent(2)) v *= std::ldexp(1.0, 8 + static_cast<int>(dice_.below(5)));  // 256..4096
      if (mix_.subnormals && dice_.percent(2)) v *= 0x1p-16;
      if (mix_.zeros && dice_.percent(4)) v = 0.0;
      weights_.push_back(double_to_fp16(v));
    }
    return offset;
  }

  uint64_t add_biases(uint32_t count) {
    const uint64_t offset = weights_.size() * 2;
    for (uint32_t i = 0; i < count; ++i) weights_.push_back(double_to_fp16(dice_.uniform(-2.0, 2.0)));
    return offset;
  }

  Dice& dice_;
  std::string input_prefix_;
  WeightMix mix_;
  std::vector<std::string> input_names_, unit_names_, output_names_;
  PlistEntries entries_;  // inputs, units and outputs, in the order written
  std::vector<uint16_t> weights_;
};

// The layers of the random programs: what the compilers at both ends of the
// speed work accept (docs/compiler.md, "Layers" and "Refused").
enum class LayerKind {
  Pointwise,    // 1x1 Conv, any Cout (every channel count drawn is <= 16 or a multiple of 16)
  Dense3x3,     // 3x3 Conv, pads 1, stride 1
  Strided3x3,   // the same at stride 2: 16 full planes, Cout 16, 32 or 64
  Deep3x3,      // Dense3x3 on 48 or 64 channels to 32..64: many sums of 432 or 576 products
  Grouped3x3,   // NumGroups 2, 3 or 4, one chunk of 16 x 2^n output channels per group
  Depthwise3x3, // NumGroups = channels
  Neuron,       // Sigmoid or ReLU on its own task
  ElementWise,  // Add or Mul, with a Scale or without
  Concat,       // along channels
};

// Network i starts with kind i mod 8, so that 24 networks hold each three times.
// (Dense3x3 at stride 1 is common enough after them.)
constexpr LayerKind kFirstLayers[] = {LayerKind::Pointwise,    LayerKind::Strided3x3, LayerKind::Deep3x3,
                                      LayerKind::Grouped3x3,   LayerKind::Depthwise3x3, LayerKind::Neuron,
                                      LayerKind::ElementWise,  LayerKind::Concat};

bool groupable(uint32_t channels) { return channels % 2 == 0 || channels % 3 == 0; }

// A layer to follow `in`. Tasks other than convolutions only on one-row
// tensors: the compilers know the memory layout of taller ones for
// convolutions only.
LayerKind random_next_layer(Dice& dice, const NetTensor& in) {
  const uint32_t roll = dice.below(100);
  if (in.h > 1 || roll < 55) {
    const uint32_t conv = dice.below(100);
    if (conv < 40) return LayerKind::Pointwise;
    if (conv < 60 && groupable(in.c)) return LayerKind::Grouped3x3;
    if (conv < 80 && in.c > 1) return LayerKind::Depthwise3x3;
    return dice.percent(35) ? LayerKind::Strided3x3 : LayerKind::Dense3x3;
  }
  if (roll < 70) return LayerKind::Neuron;
  if (roll < 88) return LayerKind::ElementWise;
  return LayerKind::Concat;
}

// Appends a layer of `kind` reading `in`; the second operand of an
// element-wise op or concat is a network input (the first one when its shape
// fits: a skip connection), never a second intermediate.
NetTensor add_layer(RandomNetworkWriter& net, Dice& dice, LayerKind kind, const NetTensor& in,
                    const NetTensor& first_input) {
  // Drawn for every kind; only convolutions use them.
  const bool bias = dice.percent(50);
  const bool relu = dice.percent(40);
  switch (kind) {
    case LayerKind::Pointwise:
      return net.conv(in, dice.pick({1u, 2u, 3u, 5u, 8u, 16u, 32u, 48u, 64u}), 1, 1, 1, bias, relu);
    case LayerKind::Grouped3x3: {
      std::vector<uint32_t> group_counts;
      for (uint32_t g : {2u, 3u, 4u})
        if (in.c % g == 0) group_counts.push_back(g);
      const uint32_t groups = group_counts[dice.below(static_cast<uint32_t>(group_counts.size()))];
      const uint32_t per_group = groups == 2 && dice.percent(50) ? 32 : 16;
      const uint32_t step = dice.percent(35) ? 2 : 1;
      return net.conv(in, groups * per_group, 3, step, groups, bias, relu);
    }
    case LayerKind::Depthwise3x3: {
      const uint32_t step = dice.percent(35) ? 2 : 1;
      return net.conv(in, in.c, 3, step, in.c, bias, relu);
    }
    case LayerKind::Dense3x3:
      return net.conv(in, dice.pick({1u, 2u, 3u, 5u, 8u, 16u, 32u, 48u, 64u}), 3, 1, 1, bias, relu);
    case LayerKind::Strided3x3:
      return net.conv(in, dice.pick({16u, 32u, 64u}), 3, 2, 1, bias, relu);
    case LayerKind::Deep3x3:
      return net.conv(in, dice.pick({32u, 48u, 64u}), 3, 1, 1, bias, relu);
    case LayerKind::Neuron:
      return net.neuron(in, dice.percent(60) ? "Sigmoid" : "ReLU");
    case LayerKind::ElementWise: {
      const bool skip = in.name != first_input.name && in.c == first_input.c && in.w == first_input.w &&
                        first_input.h == 1 && dice.percent(60);
      const NetTensor other = skip ? first_input : net.input(in.c, 1, in.w);
      const std::string op = dice.percent(50) ? "Add" : "Mul";
      std::optional<uint16_t> scale;  // fp16 1, 0.5, 2, 0.3333
      if (dice.percent(50)) scale = dice.pick<uint16_t>({0x3c00, 0x3800, 0x4000, 0x3555});
      return net.elementwise(in, other, op, scale);
    }
    case LayerKind::Concat: {
      const NetTensor other = net.input(dice.pick({1u, 2u, 3u, 5u, 8u, 16u, 32u}), 1, in.w);
      return dice.percent(50) ? net.concat(in, other) : net.concat(other, in);
    }
  }
  return in;
}

constexpr uint32_t kRandomNetworks = 24;

// Network `index` of the random programs: a first layer of kind index mod 8
// on an input of C x H x W shaped for it (C from {1, 2, 3, 5, 8, 16, 32, 48,
// 64}, H from {1, 2, 5, 8}, W from {1, 3, 7, 16, 33}), then 0 to 2 layers
// drawn by random_next_layer; more inputs as element-wise and concat
// operands; the last layer an output and sometimes an earlier one too.
// Written into `dir` as net.plist and its weight file; returns the plist's path.
std::filesystem::path write_random_network(uint32_t index, const std::filesystem::path& dir) {
  Dice dice(fnv(fmt::format("random/{:02}", index)));
  const LayerKind first_kind = kFirstLayers[index % std::size(kFirstLayers)];
  WeightMix mix;
  mix.large = dice.percent(30);
  mix.zeros = dice.percent(25);
  mix.subnormals = dice.percent(25);
  RandomNetworkWriter net(dice, fmt::format("r{:02}_in", index), mix);
  // One draw per statement: the order of function arguments is unspecified.
  uint32_t channels = dice.pick({1u, 2u, 3u, 5u, 8u, 16u, 32u, 48u, 64u});
  uint32_t height = dice.pick({1u, 1u, 2u, 5u, 8u});  // one row most often: every layer kind applies
  uint32_t width = dice.pick({1u, 3u, 7u, 16u, 33u});
  switch (first_kind) {
    case LayerKind::Deep3x3:
      channels = dice.pick({48u, 64u});
      height = dice.pick({5u, 8u});
      width = dice.pick({16u, 33u});
      break;
    case LayerKind::Grouped3x3:
      channels = dice.pick({2u, 3u, 8u, 16u, 32u, 48u, 64u});
      break;
    case LayerKind::Depthwise3x3:
      channels = dice.pick({2u, 3u, 5u, 8u, 16u, 32u, 48u, 64u});
      break;
    case LayerKind::Neuron:
    case LayerKind::ElementWise:
    case LayerKind::Concat:
      height = 1;
      break;
    default:
      break;
  }
  const NetTensor first = net.input(channels, height, width);
  NetTensor last = add_layer(net, dice, first_kind, first, first);
  bool two_outputs = false;
  for (uint32_t more = dice.below(3); more > 0; --more) {
    if (!two_outputs && dice.percent(30)) {
      net.output(last);
      two_outputs = true;
    }
    last = add_layer(net, dice, random_next_layer(dice, last), last, first);
  }
  net.output(last);
  std::filesystem::create_directories(dir);
  const auto plist_path = dir / "net.plist";
  std::ofstream(plist_path) << net.plist();
  std::ofstream weights(dir / RandomNetworkWriter::kWeightFile, std::ios::binary);
  for (uint16_t v : net.weights()) {
    const char bytes[2] = {static_cast<char>(v & 0xff), static_cast<char>(v >> 8)};
    weights.write(bytes, 2);
  }
  return plist_path;
}

// A directory removed with everything in it when the scope ends.
struct ScratchDirectory {
  std::filesystem::path path;
  ~ScratchDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

}  // namespace

const std::vector<std::string>& settings() {
  static const std::vector<std::string> s = {"default",       "acc=fp64",      "acc=fp32-ordered",
                                             "products=fp16", "bias=after-round", "overflow=saturate",
                                             "subnormal=ftz", "lut=ideal"};
  return s;
}

std::vector<std::string> table(const std::string& source_dir, const std::string& corpus_dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  auto each_setting = [&](const std::string& label, const Program& p) {
    for (const auto& s : settings()) run(label, p, s, out);
  };
  // eiln's kernels are element-wise and table programs on 2560x1600: the
  // settings that act on those units (the accumulator and product models
  // act on the MAC: none of these outputs changes under them).
  auto elementwise_settings = [&](const std::string& label, const Program& p) {
    for (const char* s : {"default", "overflow=saturate", "subnormal=ftz", "lut=ideal"}) run(label, p, s, out);
  };
  // The random programs' convolutions are deep enough that a BLAS sgemm's
  // summation order (its kernels differ between CPUs) shows in their
  // outputs: every setting is taken with the input-channel order, which is
  // the same on every machine.
  auto machine_independent_settings = [&](const std::string& label, const Program& p) {
    for (const char* s : {"acc=fp32-ordered", "products=fp16", "acc=fp32-ordered,bias=after-round",
                          "acc=fp32-ordered,overflow=saturate", "acc=fp32-ordered,subnormal=ftz",
                          "acc=fp32-ordered,lut=ideal"})
      run(label, p, s, out);
  };
  // A network plist compiled as hwx-build compiles it.
  auto each_setting_of_network = [&](const std::string& label, const fs::path& plist, bool random = false) {
    auto net = load_network(plist.string());
    auto c = net ? compile_network(*net) : Expected<CompiledProgram>(net.error());
    auto p = c ? parse_program(c->bytes, label) : Expected<Program>(c.error());
    if (!p) {
      out.push_back(label + " error " + p.error().str());
      return;
    }
    if (random)
      machine_independent_settings(label, *p);
    else
      each_setting(label, *p);
  };
  // The example networks.
  std::vector<fs::path> nets;
  for (const auto& d : fs::directory_iterator(fs::path(source_dir) / "examples/networks"))
    if (fs::exists(d.path() / "net.plist")) nets.push_back(d.path());
  std::sort(nets.begin(), nets.end());
  for (const auto& d : nets) each_setting_of_network("examples/" + d.filename().string(), d / "net.plist");
  // The random programs, each written to a directory of its own (the
  // process id keeps concurrent runs apart) and removed after.
  for (uint32_t i = 0; i < kRandomNetworks; ++i) {
    const ScratchDirectory dir{fs::temp_directory_path() / fmt::format("libane_golden_random_{}_{:02}", ::getpid(), i)};
    each_setting_of_network(fmt::format("random/{:02}", i), write_random_network(i, dir.path), true);
  }
  if (corpus_dir.empty()) return out;
  // The corpus: Apple's HWX files and eiln's compiled kernels.
  std::vector<fs::path> files;
  for (const auto& f : fs::directory_iterator(fs::path(corpus_dir) / "hwx"))
    if (f.path().extension() == ".hwx") files.push_back(f.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    const std::string label = "corpus/hwx/" + f.filename().string();
    auto p = open_program(f.string());
    if (!p) {
      out.push_back(label + " error " + p.error().str());
      continue;
    }
    each_setting(label, *p);
  }
  std::vector<fs::path> kernels;
  for (const auto& f : fs::recursive_directory_iterator(fs::path(corpus_dir) / "anec"))
    if (f.path().extension() == ".bin") kernels.push_back(f.path());
  std::sort(kernels.begin(), kernels.end());
  OpenOptions anec;
  anec.descriptor_path = (fs::path(corpus_dir) / "anec/MANIFEST.json").string();
  for (const auto& f : kernels) {
    const std::string label = "corpus/anec/" + fs::relative(f, fs::path(corpus_dir) / "anec").string();
    auto p = open_program(f.string(), anec);
    if (!p) {
      out.push_back(label + " error " + p.error().str());
      continue;
    }
    elementwise_settings(label, *p);
  }
  return out;
}

}  // namespace ane::golden
