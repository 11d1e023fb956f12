// Test helper: XML network plists built from small pieces, so each test can
// state the one thing it changes.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ane::test::pl {

inline std::string integer(int64_t v) { return "<integer>" + std::to_string(v) + "</integer>"; }
inline std::string str(const std::string& s) { return "<string>" + s + "</string>"; }
inline std::string boolean(bool b) { return b ? "<true/>" : "<false/>"; }
inline std::string array(const std::vector<std::string>& items) {
  std::string s = "<array>";
  for (const auto& i : items) s += "\n" + i;
  return s + "\n</array>";
}
inline std::string strings(const std::vector<std::string>& names) {
  std::vector<std::string> items;
  for (const auto& n : names) items.push_back(str(n));
  return array(items);
}
using Dict = std::vector<std::pair<std::string, std::string>>;
inline std::string dict(const Dict& kv) {
  std::string s = "<dict>";
  for (const auto& [k, v] : kv) s += "\n<key>" + k + "</key>\n" + v;
  return s + "\n</dict>";
}
inline std::string document(const std::string& top) {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" "
         "\"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n"
         "<plist version=\"1.0\">\n" +
         top + "\n</plist>\n";
}

// Replaces (or adds, or with an empty value removes) one key of a Dict.
inline Dict with(Dict d, const std::string& key, const std::string& value) {
  for (auto it = d.begin(); it != d.end(); ++it)
    if (it->first == key) {
      if (value.empty())
        d.erase(it);
      else
        it->second = value;
      return d;
    }
  if (!value.empty()) d.emplace_back(key, value);
  return d;
}

inline Dict input(int c, int w, int h = 1) {
  return {{"InputChannels", integer(c)}, {"InputHeight", integer(h)}, {"InputWidth", integer(w)},
          {"InputType", str("Float16")}};
}
inline Dict conv_params(int index = 0, int offset = 0, const std::string& type = "Float16") {
  return {{"KernelHeight", integer(1)}, {"KernelWidth", integer(1)},   {"KernelIndex", integer(index)},
          {"KernelOffset", integer(offset)}, {"KernelType", str(type)}, {"Step", array({integer(1), integer(1)})},
          {"Type", str("Conv")}};
}
inline Dict conv(const std::string& bottom, int cout, const Dict& params = conv_params()) {
  return {{"Bottom", str(bottom)}, {"OutputChannels", integer(cout)}, {"OutputType", str("Float16")},
          {"Params", dict(params)}, {"Type", str("Conv")}};
}
inline Dict unit(const std::string& bottom, const std::string& type, const Dict& params) {
  Dict d{{"Bottom", str(bottom)}, {"OutputType", str("Float16")}, {"Type", str(type)}};
  if (!params.empty()) d.emplace_back("Params", dict(params));
  return d;
}
inline Dict unit2(const std::string& a, const std::string& b, const std::string& type, const Dict& params) {
  Dict d = unit(a, type, params);
  d[0].second = strings({a, b});
  return d;
}
inline Dict output(const std::string& bottom) { return {{"Bottom", str(bottom)}, {"OutputType", str("Float16")}}; }

// A whole network: named dictionaries in Inputs / Units / Outputs order.
struct Net {
  std::vector<std::pair<std::string, Dict>> inputs, units, outputs;
  std::vector<std::string> weights;
  Dict extra;  // further keys of the network dictionary

  std::string xml() const {
    std::vector<std::string> in, un, out;
    Dict net;
    for (const auto& [n, d] : inputs) in.push_back(n);
    for (const auto& [n, d] : units) un.push_back(n);
    for (const auto& [n, d] : outputs) out.push_back(n);
    net.emplace_back("Inputs", strings(in));
    net.emplace_back("Outputs", strings(out));
    net.emplace_back("Units", strings(un));
    if (!weights.empty()) net.emplace_back("Weights", strings(weights));
    for (const auto* list : {&inputs, &units, &outputs})
      for (const auto& [n, d] : *list) net.emplace_back(n, dict(d));
    for (const auto& kv : extra) net.push_back(kv);
    return document(dict({{"Networks", strings({"net"})}, {"Version", str("1.0.9")}, {"net", dict(net)}}));
  }
};

}  // namespace ane::test::pl
