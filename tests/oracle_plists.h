// A convolution record's program as a network plist (tests/plist_builder.h):
// a Conv with the record's kernel, stride, padding and groups, a GOC for the
// bias, weights in w.weights and b.weights. The names are the caller's, so
// that the plist can match a MIL program's units (docs/mil.md, "Names").
#pragma once

#include <string>

#include "oracle_fixture.h"
#include "plist_builder.h"

namespace ane::oracle {

struct ConvNames {
  std::string input = "x", conv = "conv", bias = "bias", relu = "relu", output = "y@output";
};

inline test::pl::Net conv_record_network(const ConvRecord& c, const ConvNames& names = {}) {
  using namespace test::pl;
  Net n;
  n.inputs = {{names.input, input(static_cast<int>(c.cin), static_cast<int>(c.win), static_cast<int>(c.hin))}};
  Dict params = conv_params();
  params = with(params, "KernelWidth", integer(c.kw));
  params = with(params, "KernelHeight", integer(c.kh));
  params = with(params, "Step", array({integer(c.stride), integer(c.stride)}));
  params = with(params, "PadTop", integer(c.pad_top));
  params = with(params, "PadBot", integer(c.pad_bottom));
  params = with(params, "PadLeft", integer(c.pad_left));
  params = with(params, "PadRight", integer(c.pad_right));
  Dict conv_unit = conv(names.input, static_cast<int>(c.cout), params);
  conv_unit.emplace_back("NumGroups", integer(c.groups));
  n.units = {{names.conv, conv_unit}};
  n.weights = {"w.weights"};
  std::string last = names.conv;
  if (c.bias) {
    n.weights.push_back("b.weights");
    n.units.push_back({names.bias, unit(names.conv, "GOC",
                                        {{"BiasScaleGroupData", dict({{"BiasIndex", integer(1)},
                                                                      {"BiasOffset", integer(0)},
                                                                      {"BiasCount", integer(c.cout)},
                                                                      {"BiasType", str("Float16")}})}})});
    last = names.bias;
  }
  if (c.relu) {
    n.units.push_back({names.relu, unit(last, "Neuron", {{"Type", str("ReLU")}})});
    last = names.relu;
  }
  n.outputs = {{names.output, output(last)}};
  return n;
}

}  // namespace ane::oracle
