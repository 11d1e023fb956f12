#include <fstream>
#include <gtest/gtest.h>
#include "ane/compiler.h"
#include "ane/mil_network.h"
#include "ane/program.h"
#include "ane/registers.h"
#include "ane/sha256.h"
#include "oracle_fixture.h"
#include "oracle_build_fields.h"
#include "support.h"
namespace ane {
TEST(ScratchRd, Diff) {
  const char* mil = std::getenv("RD_MIL");
  const char* fx = std::getenv("RD_FX");
  if (!mil || !fx) GTEST_SKIP();
  auto f = oracle::load_fixture(fx);
  ASSERT_TRUE(f.ok()) << f.error().message;
  test::TempDir dir;
  std::ifstream in(mil);
  test::write_text(dir.file("model.mil"), std::string(std::istreambuf_iterator<char>(in), {}));
  auto net = load_model(dir.file("model.mil"));
  ASSERT_TRUE(net.ok()) << net.error().str();
  CompileOptions o; o.ident = "x"; o.profile = std::getenv("RD_V421") ? CompilerProfile::V421 : CompilerProfile::Macos26;
  auto built = compile_network(*net, o);
  ASSERT_TRUE(built.ok()) << built.error().str();
  auto apple = parse_program(oracle::anec_image(*f, Bytes(f->constant_size, 0)), f->name + ".anec");
  ASSERT_TRUE(apple.ok()) << apple.error().str();
  printf("tasks ours %zu apple %zu\n", built->tasks.size(), apple->tasks.size());
  const bool all = std::getenv("RD_ALL");
  for (size_t t = 0; t < std::min(built->tasks.size(), apple->tasks.size()); ++t)
    for (const FieldInfo& fi : RegisterDatabase::h13().fields()) {
      const uint32_t ours = built->tasks[t].regs.get(fi), theirs = apple->tasks[t].regs.get(fi);
      if (ours != theirs || (all && (ours || theirs))) printf("task %zu %-40s ours 0x%x apple 0x%x%s%s\n", t, fi.name.c_str(), ours, theirs, oracle::version_field(fi.name) ? " (version)" : "", ours != theirs ? " <<" : "");
    }
}
}
