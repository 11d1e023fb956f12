// hwx-build's compiler: an ANECompiler network (network.h) lowered to an H13
// HWX program the way Apple's zin_ane_compiler v4.2.1 lays it out.
//
// Each supported layer becomes tasks through one small rule that fills a
// RegisterImage by field name (the register database); encode_task turns the
// images into streams and the HwxFile model + write_hwx emit the container.
// The rules and their evidence: docs/compiler.md. Anything outside them is
// refused with "<plist>:<line>: unit 'x': key 'K': unsupported ...".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ane/bytes.h"
#include "ane/error.h"
#include "ane/hwx.h"
#include "ane/network.h"
#include "ane/task.h"

namespace ane {

// Whose layout hwx-build writes. v4.2.1: zin_ane_compiler v4.2.1, byte for
// byte on Apple's plist pairs. macos26: the words the macOS 26 compiler
// writes differently (docs/mil.md, "Compiler profiles"), as far as its
// records show a rule; the rest stays v4.2.1's.
enum class CompilerProfile { V421, Macos26 };
const char* compiler_profile_name(CompilerProfile p);  // "v4.2.1", "macos26"
std::optional<CompilerProfile> compiler_profile_of_name(std::string_view name);

struct CompileOptions {
  CompilerProfile profile = CompilerProfile::V421;
  // LC_IDENT text, written exactly (a NUL and zero padding follow). Empty:
  // default_ident() of the plist path and output path below.
  std::string ident;
  std::string output_path = "model.hwx";  // only used in the default ident
  // Retired: the lane layout of more than 16 output channels is known
  // (docs/convolution.md). Kept so that existing callers compile; no effect.
  bool assume_ocg_layout = false;
};

// How one unit was lowered (hwx-build --explain).
struct UnitLowering {
  std::string unit;
  std::string type;
  std::string rule;                 // what the unit became
  std::vector<uint32_t> tasks;      // task indices it produced (empty: fused)
  std::vector<std::string> notes;   // inferred choices that applied (docs/compiler.md)
};

struct CompiledProgram {
  HwxFile file;
  Bytes bytes;                 // write_hwx(file), verified
  std::vector<Task> tasks;     // decoded back from bytes
  std::vector<UnitLowering> lowering;
};

// The text written when CompileOptions::ident is empty.
std::string default_ident(const std::string& plist_path, const std::string& output_path);

// Compiles a parsed network. Weight files are read from Network::weight_paths.
// The written bytes are re-read with read_hwx/decode_tasks and checked before
// they are returned; a failed check is an error.
Expected<CompiledProgram> compile_network(const Network& net, const CompileOptions& opts = {});

// Human-readable --explain text.
std::string explain_text(const Network& net, const CompiledProgram& program);

// The 64 hex digits hwx-build writes after 'K' in kernel symbol names:
// SHA-256 of the task's kernel bytes (as stored in __const), uppercase hex.
// Apple's own digits come from an unknown hash.
std::string kernel_symbol_digits(std::span<const uint8_t> kernel_bytes);

}  // namespace ane
