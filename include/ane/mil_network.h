// Core ML input for hwx-build: a MIL program (mil.h) lowered onto the same
// network model a plist gives (network.h), so that the planner, --explain,
// hwx-run and Python are shared. docs/mil.md lists the ops and their rules;
// anything else is refused with "model.mil:LINE: op 'name': argument 'x': ...".
#pragma once

#include <string>

#include "ane/compiler.h"
#include "ane/error.h"
#include "ane/mil.h"
#include "ane/network.h"

namespace ane {

struct MilOptions {
  // Where BLOBFILE paths point. Empty: "@model_path" is the directory that
  // holds the MIL file (a bundle's root). A directory: "@model_path" is it.
  // A regular file: every BLOBFILE reads that file, whatever its path says.
  std::string weights;
};

// The main function of `program` as a network. Weight files are opened and
// every BLOBFILE's metadata checked against the MIL type it is read as.
Expected<Network> network_of_mil(const mil::Program& program, const MilOptions& opts = {});

// What a path holds, by content (not by name).
enum class ModelKind {
  Plist,         // an XML network plist (or bplist00, refused by the plist reader)
  Mil,           // MIL text
  MlModelC,      // a directory with model.mil (a compiled Core ML bundle)
  MlPackage,     // a directory with Manifest.json (protobuf: refused)
  Unknown,
};
const char* model_kind_name(ModelKind k);
Expected<ModelKind> detect_model_kind(const std::string& path);

struct ModelOptions {
  std::string weights;  // plist: the weights directory; MIL: MilOptions::weights
};

// Any accepted input form as a network: a plist, MIL text or an .mlmodelc
// bundle (model.mil + weights/, input and output order from metadata.json
// when present). An .mlpackage is refused with a one-line pointer. `kind`,
// when given, receives the form the path held.
Expected<Network> load_model(const std::string& path, const ModelOptions& opts = {}, ModelKind* kind = nullptr);

// hwx-build's defaults for an input: the profile (macos26 for Core ML input,
// v4.2.1 for plists, so Apple's plist pairs stay byte-exact) and the output
// file name ("<stem>.hwx"; "Model.mlmodelc/" gives "Model.hwx").
CompilerProfile default_compiler_profile(ModelKind kind);
std::string default_output_name(const std::string& model_path);

}  // namespace ane
