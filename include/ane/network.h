// The typed model of an ANECompiler network plist (one network of it), and
// its parser. Everything the plist says is kept as written; whether a value
// can be compiled is decided by the compiler (compiler.h), which names the
// unit and key of anything it cannot lower.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ane/bytes.h"
#include "ane/error.h"
#include "ane/plist.h"

namespace ane {

// Where a value came from, for messages: "unit 'conv1': key 'Params.KernelType'".
struct SourceRef {
  std::string owner;  // "unit 'conv1'", "input 'image'", "output 'probs@output'", "network 'net'"
  std::string key;    // "Params.KernelType" (empty: the owner itself)
  uint32_t line = 0;
  std::string key_label = "key";  // "argument" for a network lowered from MIL
};

enum class ElementType { Float16, Float32, UInt8, Int8 };
const char* element_type_plist_name(ElementType t);  // "Float16", ...
uint32_t element_type_bytes(ElementType t);

// An input dictionary or an output (`<layer>@output`) dictionary.
struct TensorSpec {
  std::string name;
  SourceRef ref;
  ElementType type = ElementType::Float16;
  // Inputs only (outputs take their shape from the layer that produces them).
  uint32_t channels = 0, height = 0, width = 0;
  uint32_t batch = 1, depth = 1;
  // Strides in bytes as written; nullopt = the compiler's default.
  std::optional<uint64_t> row_stride, plane_stride, batch_stride, depth_stride;
  uint32_t interleave = 1;
  std::string bottom;  // outputs: the producing layer
  std::vector<std::pair<std::string, uint32_t>> key_lines;

  SourceRef at(const std::string& key) const;
};

struct WeightRef {
  uint32_t index = 0;   // into Network::weights
  uint64_t offset = 0;  // bytes into that file
  ElementType type = ElementType::Float16;
};

struct ConvParams {
  uint32_t kernel_width = 1, kernel_height = 1, kernel_depth = 1;
  uint32_t step_x = 1, step_y = 1;
  uint32_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  WeightRef kernel;
  std::string kernel_mode = "Dense";
  bool kernel_group_reuse = false;
  uint32_t num_groups = 1;              // the unit's NumGroups (Espresso's group count)
  std::string padding_mode = "Zero";    // Params.PaddingMode
  uint32_t dilation_x = 1, dilation_y = 1;  // Params.KernelDilationX / Y
};

struct GocParams {
  std::optional<WeightRef> bias;  // BiasScaleGroupData
  uint32_t bias_count = 0;
  std::optional<int64_t> bias_scalar, scale_scalar;  // scalar form (fp16 bits)
};

struct NeuronParams {
  std::string type;                // "ReLU", "Sigmoid", "Tanh", ...
  std::optional<double> alpha;     // Params.Alpha: LeakyReLU's slope below 0 (libane's key)
  std::optional<double> min, max;  // Params.Min / Max: Clip's range (libane's keys)
  // Added to the input before the table (NE.AccBias): MIL's rsqrt and
  // inverse epsilon. No plist key: set only by the MIL lowering.
  std::optional<double> input_bias;
};

struct ConcatParams {
  std::string dimension = "Channel";
};

struct ReshapeParams {
  uint32_t batch = 1, channels = 0, depth = 1, height = 0, width = 0;
};

struct ElementWiseParams {
  std::string op;          // "Add", "Mul", "Min", ...
  uint16_t scale = 0x3c00;  // ScaledElementWise: fp16 bits (15360 = 1.0)
  bool has_scale = false;
  // The second operand as an fp16 scalar (one Bottom): MIL's element-wise
  // ops with a scalar constant. No plist key sets it.
  std::optional<uint16_t> constant;
  // The second operand as a tensor constant of one value per channel (MIL's
  // element-wise ops on a [1,C,H,W] tensor and a [1,C,1,1] weight-blob
  // constant): C values at constant_tensor. No plist key sets it.
  std::optional<WeightRef> constant_tensor;
};

// Reduction: Params Type ("Sum", "Avg", "Max", "Min") over Params Dimension
// ("Channel", "Height", "Width", one name or several); reduced axes keep
// size 1 (MLCompute's ANE plist builder, ANEForge).
struct ReductionParams {
  std::string op;
  std::vector<std::string> dimensions;
  // The [C,1,1] result laid out as one row of C values (MIL's keep_dims
  // false on a plane reduction: [1,C] is the surface [1,1,1,C]).
  bool channels_along_width = false;
};

// Layer kinds the parser recognises but the compiler cannot lower keep their
// type name only (Broadcast, InputView, ...).
struct OtherParams {};

using LayerParams =
    std::variant<ConvParams, GocParams, NeuronParams, ConcatParams, ReshapeParams, ElementWiseParams, ReductionParams,
                 OtherParams>;

struct Layer {
  std::string name;
  std::string type;  // "Conv", "GOC", "Neuron", "Concat", "Reshape", "ScaledElementWise", "ElementWise", ...
  SourceRef ref;
  std::vector<std::string> bottoms;
  std::optional<uint32_t> output_channels;
  ElementType output_type = ElementType::Float16;
  LayerParams params;
  // Line of every key of the unit ("Bottom", "Params.KernelType", ...).
  std::vector<std::pair<std::string, uint32_t>> key_lines;
  // A unit lowered from MIL: which argument of the op each plist key came
  // from ("Params.Step" -> "strides"; a key ending in '*' is a prefix), so
  // that the compiler's messages name the argument. Keys not listed name the
  // op alone.
  std::vector<std::pair<std::string, std::string>> key_arguments;

  // The SourceRef of one key (its line when present, else the unit's).
  SourceRef at(const std::string& key) const;
};

struct Network {
  std::string path;  // the plist, as given
  std::string name;  // Networks[0]
  std::string version;
  std::vector<TensorSpec> inputs;   // plist Inputs order
  std::vector<TensorSpec> outputs;  // plist Outputs order
  std::vector<Layer> units;         // plist Units order
  std::vector<std::string> weights;           // as written in the plist
  std::vector<std::string> weight_paths;      // resolved against the weights directory
  // The contents of weight file i when already in memory (MIL: the checked
  // blob files, and constants written in the MIL text); an index past the
  // end, or an empty entry, is read from weight_paths.
  std::vector<Bytes> weight_contents;
  std::vector<std::string> inputs_sorted() const;  // input names in byte order
};

// Formats "<path>: line N: <owner>: key '<key>': <what>" (parts left out when empty).
Error network_error(const std::string& path, const SourceRef& ref, const std::string& what);

struct ParseOptions {
  // Directory that relative weight paths resolve against; empty = the
  // plist's own directory.
  std::string weights_dir;
};

// Parses and checks the structure: required keys and their types, names that
// resolve (every Bottom names an input or an earlier unit, every output names
// a unit), no cycles. Errors are one line naming file, line, unit and key.
Expected<Network> parse_network(const plist::Value& root, const std::string& path, const ParseOptions& opts = {});
// Reads the file and parses it (XML plist).
Expected<Network> load_network(const std::string& path, const ParseOptions& opts = {});

}  // namespace ane
