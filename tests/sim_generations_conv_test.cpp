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
#include "oracle_fixture.h"
#include "packed_fixture.h"
#include "support.h"

namespace ane {
namespace {

std::string name_of(const ::testing::TestParamInfo<std::string>& info) { return packed::test_name(info.param); }

// The H13 helpers read parameters and weight formulas from their own
// fixture type; the H14 record's are the same keys and spellings.
oracle::Fixture as_oracle(const packed::Fixture& f) {
  oracle::Fixture o;
  o.file = f.file;
  o.name = f.name;
  o.family = f.family;
  o.params = f.params;
  o.weights = f.weights;
  return o;
}

uint32_t field(const RegisterImage& r, const char* name) {
  const FieldInfo* f = r.database().find(name);
  EXPECT_NE(f, nullptr) << name;
  return f ? r.get(*f) : 0;
}

// What H14 records leave unwritten where H13 writes the value of the
// operation (docs/simulator.md): a 1x1 window at stride 1 (rule U1), 16
// channels (rule U2), OCGSize 3 (rule U9). A register no rule covers reads 0.
uint32_t value(const RegisterImage& r, const char* name) {
  if (auto v = r.written_value(name)) return *v;
  const std::string_view n = name;
  if (n == "Common.ConvCfg.Kw" || n == "Common.ConvCfg.Kh" || n == "Common.ConvCfg.Sx" || n == "Common.ConvCfg.Sy" ||
      n == "Common.GroupConvCfg.NumGroups")
    return 1;
  if (n == "Common.Cin.Cin" || n == "Common.Cout.Cout") return 16;
  if (n == "Common.OCGCfg.OCGSize") return 3;  // rule U9
  return field(r, name);
}

// H14's kernel DMA words (no H14 names yet): lane i's config, offset and
// size, and the base the offsets add to.
constexpr uint32_t kLaneCfg = 0x1918, kLaneOffset = 0x1958, kLaneSize = 0x1998, kKernelBase = 0x1908;

// The tasks that convolve: MACCfg written with OpMode 0 and KernelMode 0.
std::vector<const Task*> conv_tasks(const Program& p) {
  std::vector<const Task*> out;
  for (const Task& t : p.tasks) {
    const FieldInfo* op = t.regs.database().find("NE.MACCfg.OpMode");
    if (op && t.regs.written(op->address) && (t.regs.word(op->address) & 0xf) == 0) out.push_back(&t);
  }
  return out;
}

struct Loaded {
  packed::Fixture fx;
  oracle::ConvRecord conv;
  Program program;
};

Loaded load(const std::string& path) {
  Loaded l;
  auto fx = packed::load(path);
  EXPECT_TRUE(fx.ok()) << fx.error().str();
  if (!fx) return l;
  l.fx = std::move(*fx);
  l.conv = oracle::ConvRecord::of(as_oracle(l.fx));
  auto p = parse_program(packed::assemble_hwx(l.fx), l.fx.file);
  EXPECT_TRUE(p.ok()) << p.error().str();
  if (p) l.program = std::move(*p);
  return l;
}

// The registers by H13 name: H14 keeps OCGSize in a word of its own.
test::ConvFieldReader h13_reader(const RegisterImage& r) {
  return [&r](const char* n) {
    return value(r, std::string_view(n) == "Common.ConvCfg.OCGSize" ? "Common.OCGCfg.OCGSize" : n);
  };
}

class H14Conv : public ::testing::TestWithParam<std::string> {};

TEST_P(H14Conv, RegistersDecodeToTheRecordsParameters) {
  const Loaded l = load(GetParam());
  ASSERT_FALSE(l.program.tasks.empty());
  EXPECT_EQ(l.fx.target, "h14");
  const oracle::ConvRecord& c = l.conv;
  const auto convs = conv_tasks(l.program);
  ASSERT_FALSE(convs.empty());
  uint32_t couts = 0;
  for (const Task* t : convs) {
    const RegisterImage& r = t->regs;
    SCOPED_TRACE("task " + std::to_string(t->index));
    couts += test::expect_conv_task_matches(c, h13_reader(r), convs.size() == 1);
    // The compiler's OCGSize rule (hwx-build's, from H13's records) gives H14's word.
    EXPECT_EQ(compiler_conv_ocg(value(r, "Common.Cout.Cout"), c.depthwise(), c.hin, c.win),
              value(r, "Common.OCGCfg.OCGSize"));
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
  auto k = oracle::rebuild_constants(as_oracle(l.fx), uint64_t{c.cout} * red, c.bias ? c.cout : 0);
  EXPECT_TRUE(k.ok()) << k.error().message;
  if (!k) return out;
  out.constants = *k;
  Bytes section(l.fx.constant.size, 0);
  for (const Task* t : conv_tasks(l.program)) {
    const RegisterImage& r = t->regs;
    SCOPED_TRACE(l.fx.name + " task " + std::to_string(t->index));
    // H14's zero-skipping form groups the masks of 16 slots (the stride-2
    // records' hashes; H13's 8 gives none of them).
    auto p = test::pack_task_weights(*k, c, h13_reader(r), 16);
    if (!p) {
      out.refusal = p.error().message;
      return out;
    }
    const uint64_t base = r.word(kKernelBase);
    for (int lane = 0; lane < kKernelLanes; ++lane) {
      const bool en = r.written(kLaneCfg + 4 * lane) && (r.word(kLaneCfg + 4 * lane) & 1);
      EXPECT_EQ(en, p->lane_size[lane] != 0) << l.fx.name << " task " << t->index << " lane " << lane;
      if (!en || !p->lane_size[lane]) continue;
      const uint64_t at = base + r.word(kLaneOffset + 4 * lane), size = r.word(kLaneSize + 4 * lane);
      // Rule U10: a lane whose size is unwritten holds 64 bytes.
      EXPECT_EQ(r.written(kLaneSize + 4 * lane) ? size : 64u, p->lane_size[lane])
          << l.fx.name << " task " << t->index << " lane " << lane;
      if (at + p->lane_size[lane] > section.size()) {
        ADD_FAILURE() << l.fx.name << " task " << t->index << " lane " << lane << " ends past the section";
        return out;
      }
      std::copy_n(p->bytes.begin() + static_cast<ptrdiff_t>(p->lane_offset[lane]), p->lane_size[lane],
                  section.begin() + static_cast<ptrdiff_t>(at));
    }
  }
  out.section = std::move(section);
  return out;
}

TEST_P(H14Conv, H13sPackingOfTheWeightsHashesToTheRecord) {
  const Loaded l = load(GetParam());
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
  const Loaded l = load(GetParam());
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

INSTANTIATE_TEST_SUITE_P(Records, H14Conv, ::testing::ValuesIn(packed::operation_fixture_files("conv")), name_of);

}  // namespace
}  // namespace ane
