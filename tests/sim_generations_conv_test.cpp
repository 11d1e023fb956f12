// H14 convolutions from Apple's compiler (mil-hwx-compiler research/oracles/h14,
// transcribed under tests/fixtures/oracles/h14/conv: the case names of the H13
// sample, README there). For every record:
//  * its registers, decoded through libane's H14 table, give the record's own
//    parameters (kernel, stride, padding, shapes, bias, groups, and the
//    OCGSize hwx-build's rule gives);
//  * H13's packing of the record's weights (ane/conv_kernel.h) for the layout
//    those registers describe, each lane placed where the task's H14 lane
//    words point, hashes to the record's constant section: H14 reads H13's
//    kernel layout;
//  * the simulator runs the record assembled into a .hwx on random inputs
//    and agrees with the direct-loop convolution of conv_reference.h, or
//    refuses by name where the packer does.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ane/conv_kernel.h"
#include "ane/fp16.h"
#include "ane/program.h"
#include "ane/sha256.h"
#include "ane/sim.h"
#include "conv_reference.h"
#include "packed_conv_kernel.h"
#include "oracle_fixture.h"
#include "packed_fixture.h"
#include "support.h"

namespace ane {
namespace {

struct Loaded {
  packed::Fixture fx;
  oracle::ConvRecord conv;
  Program program;
};

Loaded load_conv(const std::string& path) {
  Loaded l;
  auto fx = packed::load(path);
  EXPECT_TRUE(fx.ok()) << fx.error().str();
  if (!fx) return l;
  l.fx = std::move(*fx);
  l.conv = oracle::ConvRecord::of(test::as_oracle(l.fx));
  auto p = parse_program(packed::assemble_hwx(l.fx), l.fx.file);
  EXPECT_TRUE(p.ok()) << p.error().str();
  if (p) l.program = std::move(*p);
  return l;
}

class H14Conv : public ::testing::TestWithParam<std::string> {};

TEST_P(H14Conv, RegistersDecodeToTheRecordsParameters) {
  const Loaded l = load_conv(GetParam());
  ASSERT_FALSE(l.program.tasks.empty());
  EXPECT_EQ(l.fx.target, "h14");
  const oracle::ConvRecord& c = l.conv;
  const auto convs = test::packed_conv_tasks(l.program);
  ASSERT_FALSE(convs.empty());
  uint32_t couts = 0;
  for (const Task* t : convs) {
    const RegisterImage& r = t->regs;
    SCOPED_TRACE("task " + std::to_string(t->index));
    couts += test::expect_conv_task_matches(c, test::packed_conv_reader(r), convs.size() == 1);
    // The compiler's OCGSize rule (hwx-build's, from H13's records) gives H14's
    // word, planes of 32 on outputs of at most 8x8 included (the 1024 outputs of
    // the stride-2 3x3 convolutions from 16x16 to 7x7).
    const uint32_t rule = compiler_conv_ocg(test::packed_conv_value(r, "Common.Cout.Cout"), c.depthwise(), c.hout, c.wout);
    EXPECT_EQ(rule, test::packed_conv_value(r, "Common.OCGCfg.OCGSize"));
  }
  EXPECT_EQ(couts, c.cout);
}

// The constant section the compiler packed, if libane knows the layout (each
// task's lanes at the offsets its H14 words give), with the rebuilt weights;
// else the packer's reason.
struct Packed {
  std::optional<Bytes> section;
  oracle::Constants constants;
  std::string refusal;
};

Packed pack(const Loaded& l) {
  Packed out;
  const oracle::ConvRecord& c = l.conv;
  const uint64_t red = uint64_t{c.cin / c.groups} * c.kh * c.kw;
  auto k = oracle::rebuild_constants(test::as_oracle(l.fx), uint64_t{c.cout} * red, c.bias ? c.cout : 0);
  EXPECT_TRUE(k.ok()) << k.error().message;
  if (!k) return out;
  out.constants = *k;
  auto section = test::pack_conv_section(l.program, c, *k, l.fx.constant.size, l.fx.name);
  out.section = std::move(section.section);
  out.refusal = std::move(section.refusal);
  return out;
}

TEST_P(H14Conv, H13sPackingOfTheWeightsHashesToTheRecord) {
  const Loaded l = load_conv(GetParam());
  ASSERT_FALSE(l.program.tasks.empty());
  const Packed p = pack(l);
  if (!p.section) {
    EXPECT_EQ(p.refusal.rfind("unsupported: ", 0), 0u) << p.refusal;
    std::cout << "[ refused  ] " << l.fx.name << ": " << p.refusal << "\n";
    return;
  }
  EXPECT_EQ(sha256_hex(*p.section), l.fx.constant.sha256) << "H13's packing differs from Apple's H14 bytes";
}

TEST_P(H14Conv, SimulatorRunsTheTaskOrRefusesByName) {
  const Loaded l = load_conv(GetParam());
  ASSERT_FALSE(l.program.tasks.empty());
  const Packed pk = pack(l);
  // Apple's bytes where they are rebuilt (the hash test proves it), else
  // zeros: a task whose layout is unknown must be refused before reading them.
  const Bytes section = pk.section ? *pk.section : Bytes(l.fx.constant.size, 0);
  auto program = parse_program(packed::assemble_hwx(l.fx, &section), l.fx.file);
  ASSERT_TRUE(program.ok()) << program.error().str();
  const oracle::ConvRecord& c = l.conv;
  const sim::Tensor x = test::conv_input(c);
  auto run = test::run_one_input(*program, x);
  // The programs of several tasks run too: the tiled 1024-channel ones by
  // rule U12 (UnicastEn and SourceType back at reset in the tasks after
  // their L2 copy), the split 256-channel one with its first source's reuse
  // hint (TileDMASrc +0x08 0xee).
  if (!pk.section) {
    ASSERT_FALSE(run.ok()) << l.fx.name << ": a task whose kernel layout libane does not know ran";
    EXPECT_EQ(run.error().message.rfind("unsupported: ", 0), 0u) << run.error().message;
    std::cout << "[ refused  ] " << l.fx.name << ": " << run.error().message << "\n";
    return;
  }
  ASSERT_TRUE(run.ok()) << run.error().str();
  const auto& y = run;
  std::vector<double> ref, mag;
  test::reference_conv(c, pk.constants.weights, pk.constants.bias, x.data, ref, mag);
  const double worst = test::expect_conv_outputs(c, ref, mag, y->data, l.fx.name);
  std::cout << "[ ran      ] " << l.fx.name << ": worst error " << fmt::format("{:.2f}", worst) << " of tolerance\n";
  // hwx-dump --summary says what runs.
  const std::string summary = sim::describe_task(*program, program->tasks.back());
  EXPECT_NE(summary.find("conv"), std::string::npos) << summary;
}

INSTANTIATE_TEST_SUITE_P(Records, H14Conv, ::testing::ValuesIn(packed::operation_fixture_files("conv")), packed::ParamName());

}  // namespace
}  // namespace ane
