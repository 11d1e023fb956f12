// hwx-build: compile an ANECompiler network plist, MIL text or an .mlmodelc
// bundle into an H13 .hwx program.
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "ane/compiler.h"
#include "ane/mil_network.h"

namespace {

int fail(const std::string& message) {
  fmt::print(stderr, "hwx-build: {}\n", message);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "hwx-build: compile a network into the .hwx program Apple's compiler (zin_ane_compiler\n"
      "v4.2.1, H13 / M1) would write. The input is recognised by its content:\n"
      "  an ANECompiler network plist (net.plist + the weight files it names);\n"
      "  Core ML MIL text (model.mil; BLOBFILE weights in MILBlob v2 files, '@model_path' being\n"
      "  the MIL file's directory unless --weights says otherwise);\n"
      "  a compiled Core ML bundle (Model.mlmodelc: model.mil, weights/, metadata.json).\n"
      "An .mlpackage is refused: compile it to .mlmodelc first. MIL ops: conv (+ bias), relu,\n"
      "sigmoid, tanh, exp, exp2, sqrt, rsqrt, inverse, gelu, silu, sign, relu6, clip, leaky_relu,\n"
      "abs, add, sub, mul, maximum, minimum (of two tensors, a tensor and a scalar, or a [1,C,1,1]\n"
      "tensor and a weight-blob constant of its shape), real_div, concat (channels), reshape\n"
      "(same surface), reduce_sum/mean/max/min (docs/mil.md).\n\n"
      "Known layers: Conv 1x1 and 3x3 (stride 1 or 2, zero padding, grouped or depthwise) and the\n"
      "1x9 column, Float16/Float32 weights, a fused GOC bias and ReLU; Neuron ReLU and the table\n"
      "functions (Sigmoid, Tanh, Exp, Exp2, Log2, Inv, Sqrt, Rsqrt, Sign, ReLU6, Clip, LeakyReLU,\n"
      "Frac, Int, GELU); channel Concat; Reshape that keeps the shape; ScaledElementWise /\n"
      "ElementWise Add, Sub, Mul, Max, Min; Reduction Sum/Avg/Max over a plane. A 1x1 Conv or a\n"
      "Neuron whose one-row L2 layout is wider than its row-stride fields becomes width pieces\n"
      "(--explain says so). Everything else is refused with the plist line, unit and key\n"
      "(docs/compiler.md).\n\n"
      "Examples:\n"
      "  hwx-build net.plist -o model.hwx\n"
      "  hwx-build Model.mlmodelc -o model.hwx\n"
      "  hwx-build model.mil --weights weights/weight.bin -o model.hwx\n"
      "  hwx-build net.plist -o model.hwx --ident \"$(cat ident.txt; printf x)\"   (see --ident)\n"
      "  hwx-build --explain net.plist       which rule lowered each unit, and its tasks\n\n"
      "Exit status: 0 written, 2 bad input (one line on stderr names file, line, unit and key,\n"
      "or for MIL: file, line, op and argument).",
      "hwx-build"};
  std::string model, output, ident, ident_file, weights_dir;
  bool explain = false, assume_ocg = false, quiet = false;
  app.add_option("model", model, "The network: a plist (XML), MIL text, or an .mlmodelc directory")->required();
  app.add_option("-o,--output", output, "Where to write the .hwx (default: the input's name with .hwx, here)")
      ->type_name("FILE");
  app.add_option("--ident", ident,
                 "LC_IDENT text, written exactly (default: names hwx-build, its version and the paths). To rebuild "
                 "an Apple file byte for byte, pass its ident text; --ident-file keeps a trailing newline intact")
      ->type_name("TEXT");
  app.add_option("--ident-file", ident_file, "Read the LC_IDENT text from FILE (bytes taken exactly)")
      ->type_name("FILE")
      ->excludes("--ident");
  app.add_option("--weights,--weights-dir", weights_dir,
                 "Plist: resolve relative weight paths against DIR (default: the plist's directory). MIL: "
                 "'@model_path' is DIR, or every BLOBFILE reads FILE (default: the MIL file's directory)")
      ->type_name("FILE|DIR");
  std::string compiler;
  app.add_option("--compiler", compiler,
                 "Whose layout to write: v4.2.1 (zin_ane_compiler v4.2.1, byte for byte on Apple's plist pairs) or "
                 "macos26 (the macOS 26 compiler's words where its records show the rule; docs/mil.md). Default: "
                 "macos26 for MIL and .mlmodelc input, v4.2.1 for plists")
      ->type_name("v4.2.1|macos26");
  app.add_flag("--explain", explain, "Print, for each unit, the rule that lowered it and the tasks it made");
  app.add_flag("--assume-ocg-layout", assume_ocg,
               "Accepted for old command lines; no effect (the lane layout of >16 output channels is known)");
  app.add_flag("-q,--quiet", quiet, "Print nothing on success");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  ane::ModelKind kind = ane::ModelKind::Unknown;
  auto net = ane::load_model(model, ane::ModelOptions{weights_dir}, &kind);
  if (!net) return fail(net.error().str());

  ane::CompileOptions copts;
  copts.profile = ane::default_compiler_profile(kind);
  if (!compiler.empty()) {
    auto p = ane::compiler_profile_of_name(compiler);
    if (!p) return fail(fmt::format("--compiler '{}': expected v4.2.1 or macos26", compiler));
    copts.profile = *p;
  }
  copts.assume_ocg_layout = assume_ocg;
  if (output.empty()) output = ane::default_output_name(model);
  copts.output_path = output;
  if (!ident_file.empty()) {
    auto text = ane::read_file(ident_file);
    if (!text) return fail(fmt::format("{}: {}", ident_file, text.error().str()));
    ident.assign(text->begin(), text->end());
  }
  if (ident.find('\0') != std::string::npos) return fail("--ident text contains a NUL byte");
  copts.ident = ident;

  auto program = ane::compile_network(*net, copts);
  if (!program) return fail(program.error().str());
  if (explain) fmt::print("{}", ane::explain_text(*net, *program));
  const bool write = !explain || app.count("--output") > 0;
  if (!write) return 0;
  if (auto s = ane::write_file(output, program->bytes); !s) return fail(fmt::format("{}: {}", output, s.error().str()));
  if (!quiet)
    fmt::print("{}: {} task{}, {} bytes\n", output, program->tasks.size(), program->tasks.size() == 1 ? "" : "s",
               program->bytes.size());
  return 0;
}
