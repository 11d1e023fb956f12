// For each of eiln's Apple-compiled kernels (corpus anec) whose op one plist
// layer expresses, that plist at the kernel's shape ([1,1,2560,1600] fp16)
// compiles to a task whose registers equal the kernel's, field for field,
// except the fields kVersionFields lists (choices of the compiler version,
// each with its reason; docs/compiler.md "Taller tensors" and "eiln's
// kernels"), and whose table is the kernel's table byte for byte. A failure
// prints every differing field.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "ane/program.h"
#include "ane/registers.h"
#include "compile_net.h"
#include "plist_builder.h"
#include "support.h"

namespace ane {
namespace {

using namespace test::pl;

struct VersionField {
  const char* prefix;
  const char* why;
};
const VersionField kVersionFields[] = {
    {"Header[1].ExeCycles", "eiln's compiler writes a cycle estimate; v4.2.1 writes 0"},
    {"TileDMASrc.GroupStride", "eiln's compiler (and macOS 26) write the whole tensor as an ungrouped task's group "
                               "stride, v4.2.1 writes 0"},
    {"TileDMASrc.Src2GroupStride", "as TileDMASrc.GroupStride"},
    {"TileDMADst.GroupStride", "as TileDMASrc.GroupStride"},
    {"NE.KernelCfg.KernelFmt", "eiln's compiler writes the fp16 kernel format and binary point 28 in pass-through "
                               "tasks too; v4.2.1's relu and sigmoid pairs write 0"},
    {"NE.MACCfg.BinaryPoint", "as NE.KernelCfg.KernelFmt"},
    {"TileDMADst.Fmt.ZeroPad", "eiln's compiler (and macOS 26) set both zero-pad bits on planar-engine results; "
                               "v4.2.1's sum pair does not"},
};

bool version_field(const std::string& name) {
  for (const auto& v : kVersionFields)
    if (name.rfind(v.prefix, 0) == 0) return true;
  return false;
}

struct KernelCase {
  const char* file;  // under corpus/anec
  const char* layer;
  const char* op;
  std::vector<std::pair<std::string, std::string>> extra;  // further Params
};

Net network_for(const KernelCase& k) {
  Net n;
  Dict params = {{"Type", str(k.op)}};
  for (const auto& kv : k.extra) params.push_back(kv);
  if (std::string(k.layer) == "Neuron") {
    n.inputs = {{"x", input(1, 1600, 2560)}};
    n.units = {{"y", unit("x", "Neuron", params)}};
  } else {
    n.inputs = {{"x", input(1, 1600, 2560)}, {"z", input(1, 1600, 2560)}};
    n.units = {{"y", unit2("x", "z", k.layer, params)}};
  }
  n.outputs = {{"y@output", output("y")}};
  return n;
}

class KernelBuild : public ::testing::TestWithParam<KernelCase> {};

TEST_P(KernelBuild, OnePlistLayerBuildsTheKernelsTask) {
  ANE_REQUIRE_CORPUS();
  const KernelCase& k = GetParam();
  auto apple = open_program(test::corpus_dir() + "/anec/" + k.file);
  ASSERT_TRUE(apple.ok()) << apple.error().str();
  ASSERT_EQ(apple->tasks.size(), 1u);

  test::TempDir dir;
  auto ours = test::compile_net(network_for(k), dir);
  ASSERT_TRUE(ours.ok()) << ours.error().str();
  ASSERT_EQ(ours->tasks.size(), 1u);

  size_t compared = 0, version = 0;
  std::string diff;
  for (const FieldInfo& fi : RegisterDatabase::h13().fields()) {
    const uint32_t a = ours->tasks[0].regs.get(fi), b = apple->tasks[0].regs.get(fi);
    if (version_field(fi.name)) {
      version += a != b;
      continue;
    }
    ++compared;
    if (a != b) diff += fmt::format("\n  {}: hwx-build {:#x}, Apple {:#x}", fi.name, a, b);
  }
  EXPECT_TRUE(diff.empty()) << k.file << " differs in" << diff;
  // The table (kernel lane 0), byte for byte.
  const auto theirs = apple->kernel_bytes(), mine = ours->kernel_bytes();
  ASSERT_EQ(mine.size() >= 0x80, theirs.size() >= 0x80);
  const auto lane0 = apple->tasks[0].regs.get("KernelDMASrc.CoeffDMAConfig[0].En");
  if (theirs.size() >= 0x80 && lane0 && *lane0) {
    EXPECT_TRUE(std::equal(mine.begin(), mine.begin() + 0x80, theirs.begin())) << "the table differs";
  }
  std::cout << "[ built    ] " << k.file << ": " << compared << " fields equal, " << version
            << " version-dependent fields differ\n";
}

// Every single-task eiln kernel a plist layer can express. Left out, each for
// its reason (docs/compiler.md): sigmoid (two tasks: eiln's compiler computes
// 0.5 tanh(x/2) + 0.5; hwx-build keeps v4.2.1's one-task table), inv (Core
// ML's inverse adds an AccBias epsilon), square (no plist op), div,
// log, silu, softmax, logsoftmax, atan, ceil, norm (several layers).
const KernelCase kCases[] = {
    {"activation/relu.bin", "Neuron", "ReLU", {}},
    {"activation/relu6.bin", "Neuron", "ReLU6", {}},
    {"activation/leakyrelu.bin", "Neuron", "LeakyReLU", {}},
    {"activation/gelu.bin", "Neuron", "GELU", {}},
    {"unary/tanh.bin", "Neuron", "Tanh", {}},
    {"unary/exp.bin", "Neuron", "Exp", {}},
    {"unary/log2.bin", "Neuron", "Log2", {}},
    {"unary/sign.bin", "Neuron", "Sign", {}},
    {"unary/sqrt.bin", "Neuron", "Sqrt", {}},
    {"unary/abs.bin", "Neuron", "Abs", {}},  // libane's plist name
    {"binary/add.bin", "ElementWise", "Add", {}},
    {"binary/sub.bin", "ElementWise", "Sub", {}},
    {"binary/mul.bin", "ElementWise", "Mul", {}},
    {"binary/max.bin", "ElementWise", "Max", {}},
};

INSTANTIATE_TEST_SUITE_P(Eiln, KernelBuild, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<KernelCase>& i) {
                           std::string s = i.param.op;
                           return s + "_" + std::to_string(i.index);
                         });

}  // namespace
}  // namespace ane
