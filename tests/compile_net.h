// Test helper: a network plist compiled as hwx-build compiles it, read back
// as a Program.
#pragma once

#include "ane/compiler.h"
#include "ane/program.h"
#include "plist_builder.h"
#include "support.h"

namespace ane::test {

// Writes net.plist into `dir` (weight files, if any, go there first),
// compiles it and parses the bytes.
inline Expected<Program> compile_net(const pl::Net& net, TempDir& dir) {
  write_text(dir.file("net.plist"), net.xml());
  auto n = load_network(dir.file("net.plist"));
  if (!n) return n.error();
  auto c = compile_network(*n);
  if (!c) return c.error();
  return parse_program(c->bytes, "net.hwx");
}

// A network compiled under `profile` with a fixed ident (the file's bytes
// then depend on the network alone).
inline Expected<CompiledProgram> compile_as(const Network& net, CompilerProfile profile, const std::string& ident) {
  CompileOptions o;
  o.ident = ident;
  o.profile = profile;
  return compile_network(net, o);
}

}  // namespace ane::test
