// Lowering rules on networks of our own. Expected values come from the
// register values the docs quote for Apple-compiled files that are not in
// the corpus (plist-to-hwx.md: "hist golden-net", "hist gemm64", ...) and
// from hand computation, never from the compiler itself.
#include <cstring>
#include <filesystem>

#include <gtest/gtest.h>

#include "ane/compiler.h"
#include "ane/dump.h"
#include "plist_builder.h"
#include "support.h"

namespace ane {
namespace {

using namespace test::pl;

Bytes fp16_bytes(std::initializer_list<uint16_t> bits) {
  return test::fp16_le_bytes(std::span<const uint16_t>(bits.begin(), bits.size()));
}
Bytes fp32_bytes(std::initializer_list<float> values) {
  Bytes b;
  for (float f : values) {
    uint8_t raw[4];
    std::memcpy(raw, &f, 4);
    b.insert(b.end(), raw, raw + 4);
  }
  return b;
}

// Writes the network and its weight files into a scratch directory and compiles it.
struct Built {
  test::TempDir dir;
  Expected<CompiledProgram> program = make_error("not compiled");
  uint32_t reg(size_t task, const char* field) const {
    auto v = program->tasks.at(task).regs.get(field);
    EXPECT_TRUE(v) << field;
    return v ? *v : 0xdeadbeef;
  }
  uint32_t word(size_t task, uint32_t address) const { return program->tasks.at(task).regs.word(address); }
};

std::unique_ptr<Built> build(const Net& net, const std::vector<std::pair<std::string, Bytes>>& files = {},
                             CompileOptions opts = {}) {
  auto b = std::make_unique<Built>();
  test::write_text(b->dir.file("net.plist"), net.xml());
  for (const auto& [name, bytes] : files) test::write_bytes(b->dir.file(name), bytes);
  auto n = load_network(b->dir.file("net.plist"));
  if (!n) {
    b->program = n.error();
    return b;
  }
  b->program = compile_network(*n, opts);
  return b;
}

const macho::Section64& const_section(const CompiledProgram& p) { return *p.file.find_section("__TEXT", "__const"); }
Bytes const_bytes(const CompiledProgram& p) {
  auto s = p.file.section_data(const_section(p));
  return Bytes(s.begin(), s.end());
}

Net conv_net(int cin, int cout, const std::string& ktype = "Float16") {
  Net n;
  n.inputs = {{"image", input(cin, 1)}};
  n.units = {{"conv", conv("image", cout, conv_params(0, 0, ktype))}};
  n.outputs = {{"probs@output", output("conv")}};
  n.weights = {"w.weights"};
  return n;
}

// hist golden-net: Conv 3->2 with Float32 weights 3.0 and a GOC bias of 1.0
// (Float16, second weight file) fuses into one task whose lanes start with
// the bias: 00 3c 00 42 00 42 00 42, MACCfg 0x00101C10.
TEST(CompilerRules, ConvWithFusedGocBiasMatchesGoldenNet) {
  Net n = conv_net(3, 2, "Float32");
  n.units.push_back({"probs", unit("conv", "GOC", {{"BiasScaleGroupData",
                                                    dict({{"BiasCount", integer(2)},
                                                          {"BiasIndex", integer(1)},
                                                          {"BiasOffset", integer(0)},
                                                          {"BiasType", str("Float16")}})}})});
  n.outputs = {{"probs@output", output("probs")}};
  n.weights = {"w.weights", "b.weights"};
  auto b = build(n, {{"w.weights", fp32_bytes({3, 3, 3, 3, 3, 3})}, {"b.weights", fp16_bytes({0x3c00, 0x3c00})}});
  ASSERT_TRUE(b->program) << b->program.error().str();
  const auto& p = *b->program;
  ASSERT_EQ(p.tasks.size(), 1u);
  EXPECT_EQ(b->word(0, 0x0C804), 0x00101C10u);  // NE.MACCfg with BiasMode
  EXPECT_EQ(b->reg(0, "Header[8].ENE"), 2u);
  const Bytes k = const_bytes(p);
  ASSERT_EQ(k.size(), 0x80u);
  const Bytes lane = fp16_bytes({0x3c00, 0x4200, 0x4200, 0x4200});
  for (int l = 0; l < 2; ++l) {
    EXPECT_TRUE(std::equal(lane.begin(), lane.end(), k.begin() + 64 * l)) << "lane " << l;
    EXPECT_TRUE(std::all_of(k.begin() + 64 * l + 8, k.begin() + 64 * (l + 1), [](uint8_t x) { return x == 0; }));
  }
  // The output buffer is the GOC's, with the Conv's shape.
  const auto bufs = p.file.buffers();
  ASSERT_EQ(bufs.size(), 2u);
  EXPECT_EQ(bufs[1].name, "probs@output");
  EXPECT_EQ(bufs[1].shape()->nchw[1], 2u);
  // --explain names both units.
  ASSERT_EQ(p.lowering.size(), 2u);
  EXPECT_EQ(p.lowering[1].unit, "probs");
  EXPECT_TRUE(p.lowering[1].tasks.empty());
}

// hist conv-ramp: weights are the 16-bit ramp 0, 1, 2, ...: lane 0 holds
// 0, 1, 2 and lane 1 holds 3, 4, 5 (fp16 subnormals copied bit for bit).
TEST(CompilerRules, Float16WeightsAreCopiedRowByRow) {
  auto b = build(conv_net(3, 3), {{"w.weights", fp16_bytes({0, 1, 2, 3, 4, 5, 6, 7, 8})}});
  ASSERT_TRUE(b->program) << b->program.error().str();
  const Bytes k = const_bytes(*b->program);
  for (int lane = 0; lane < 3; ++lane)
    for (int i = 0; i < 3; ++i) EXPECT_EQ(k[64 * lane + 2 * i], 3 * lane + i) << lane << "," << i;
  EXPECT_EQ(b->reg(0, "Header[8].ENE"), 3u);
  EXPECT_EQ(b->word(0, 0x00034), 0x04144405u);  // Common.Cfg as in pair conv
}

TEST(CompilerRules, Float32WeightsRoundToNearestEven) {
  // 0.1f -> fp16 0x2e66; 1 + 2^-11 (a tie) -> 1.0 (even); 1 + 3*2^-11 -> 0x3c02.
  auto b = build(conv_net(3, 1, "Float32"), {{"w.weights", fp32_bytes({0.1f, 1.00048828125f, 1.00146484375f})}});
  ASSERT_TRUE(b->program) << b->program.error().str();
  const Bytes k = const_bytes(*b->program);
  EXPECT_EQ(Bytes(k.begin(), k.begin() + 6), fp16_bytes({0x2e66, 0x3c00, 0x3c02}));
}

// hist gemm64: 64 -> 64, OCGSize 2, 16 lanes of 0x200 bytes; the L2 rows
// reach 0x400 bytes and get their padding (source 0x30, result 0x20).
TEST(CompilerRules, WideConvUsesSixteenLanesAndPadsL2Rows) {
  auto b = build(conv_net(64, 64), {{"w.weights", Bytes(64 * 64 * 2, 0)}});
  ASSERT_TRUE(b->program) << b->program.error().str();
  EXPECT_EQ(b->reg(0, "Common.ConvCfg.OCGSize"), 2u);
  EXPECT_EQ(b->reg(0, "Header[8].ENE"), 5u);
  EXPECT_EQ(b->reg(0, "Common.Cfg.AccDoubleBufEn"), 1u);
  for (int lane = 0; lane < 16; ++lane) {
    EXPECT_EQ(b->word(0, 0x1F848 + 4 * lane), 0x200u * lane);
    EXPECT_EQ(b->word(0, 0x1F888 + 4 * lane), 0x200u);
  }
  EXPECT_EQ(b->word(0, 0x04810), 0x430u);  // SourceRowStride = 64 x 0x10 + 0x30
  EXPECT_EQ(b->word(0, 0x04834), 0x430u);  // ResultBase
  EXPECT_EQ(b->word(0, 0x0483C), 0x420u);  // ConvResultRowStride = 0x400 + 0x20
  EXPECT_EQ(const_section(*b->program).size, 0x2000u);
  EXPECT_EQ(b->program->file.find_section("__TEXT", "__text")->nreloc, 16u);
}

TEST(CompilerRules, UnequalWeightsBeyondSixteenChannelsInterleaveInTheLanes) {
  // The records' layout (docs/convolution.md): 32 outputs at 1x1 are 16 lanes
  // of 2 interleaved channels, weight (oc, ic) of lane g at byte
  // 2 * (ic * 2 + oc - 2g).
  Bytes w(32 * 32 * 2, 0);
  w[3] = 0x3c;     // weight (oc 0, ic 1) = 1.0
  w[2 * (1 * 32 + 5) + 1] = 0x40;  // weight (oc 1, ic 5) = 2.0
  auto b = build(conv_net(32, 32), {{"w.weights", w}});
  ASSERT_TRUE(b->program) << b->program.error().str();
  EXPECT_EQ(b->reg(0, "Common.ConvCfg.OCGSize"), 1u);
  const Bytes k = const_bytes(*b->program);
  EXPECT_EQ(k[2 * (1 * 2 + 0) + 1], 0x3c);
  EXPECT_EQ(k[2 * (5 * 2 + 1) + 1], 0x40);
  size_t nonzero = 0;
  for (uint8_t v : k) nonzero += v != 0;
  EXPECT_EQ(nonzero, 2u);
}

// hist relu16: ShMin is 1 at width 16 (0 at 77, pair relu).
TEST(CompilerRules, NeuronPassThroughRegisters) {
  Net n;
  n.inputs = {{"image", input(1, 16)}};
  n.units = {{"r", unit("image", "Neuron", {{"Type", str("ReLU")}})}};
  n.outputs = {{"r@output", output("r")}};
  auto b = build(n);
  ASSERT_TRUE(b->program) << b->program.error().str();
  EXPECT_EQ(b->reg(0, "Common.Cfg.ShMin"), 1u);
  EXPECT_EQ(b->word(0, 0x0C804), 0x0011000Cu);
  EXPECT_EQ(b->reg(0, "Header[4].DebugLogEvents"), 0xfff86au);
  EXPECT_EQ(b->word(0, 0x1380C), 0x40u);  // row stride roundup(32, 64)
}

TEST(CompilerRules, ChainedTasksThroughScratchMemory) {
  Net n;
  n.inputs = {{"x", input(4, 8)}, {"y", input(4, 8)}};
  n.units = {{"r", unit("x", "Neuron", {{"Type", str("ReLU")}})},
             {"s", unit2("r", "y", "ScaledElementWise", {{"Type", str("Add")}, {"Scale", integer(15360)}})},
             {"t", unit("s", "Neuron", {{"Type", str("Sigmoid")}})}};
  n.outputs = {{"t@output", output("t")}, {"r@output", output("r")}};
  auto b = build(n);
  ASSERT_TRUE(b->program) << b->program.error().str();
  const auto& p = *b->program;
  ASSERT_EQ(p.tasks.size(), 3u);
  // Chain: 0x300 apart, NextSize 0x9c, TBE on all but the last, EON + LNID on the last.
  for (size_t i = 0; i < 3; ++i) {
    const bool last = i == 2;
    EXPECT_EQ(p.tasks[i].text_offset, 0x300u * i);
    EXPECT_EQ(b->reg(i, "Header[0].TID"), i);
    EXPECT_EQ(b->reg(i, "Header[0].EON"), last);
    EXPECT_EQ(b->reg(i, "Header[0].LNID"), last);
    EXPECT_EQ(b->reg(i, "Header[1].NextSize"), last ? 0u : 0x9cu);
    EXPECT_EQ(b->reg(i, "Header[7].NextPointer"), last ? 0u : 0x300u * (i + 1));
    EXPECT_EQ(b->reg(i, "Header[8].TBE"), !last);
    EXPECT_EQ(b->reg(i, "Header[2].LogEvents"), last ? 0x422u : 0x400u);
  }
  // Outputs in slots 4, 5 (Outputs order), inputs after them; s lives in scratch slot 3.
  EXPECT_EQ(b->reg(0, "Header[8].RBase0"), 6u);  // x
  EXPECT_EQ(b->reg(0, "Header[8].WBase"), 5u);   // r@output
  EXPECT_EQ(b->reg(1, "Header[8].RBase0"), 5u);  // reads r back from its output buffer
  EXPECT_EQ(b->reg(1, "Header[8].RBase1"), 7u);  // y
  EXPECT_EQ(b->reg(1, "Header[8].WBase"), 3u);   // s: scratch
  EXPECT_EQ(b->reg(2, "Header[8].RBase0"), 3u);
  EXPECT_EQ(b->reg(2, "Header[8].WBase"), 4u);   // t@output
  const auto prog = p.file.program();
  ASSERT_TRUE(prog);
  const auto* bss = p.file.find_section("__DATA", "__bss");
  ASSERT_NE(bss, nullptr);
  EXPECT_EQ(prog->slots[3], bss->addr);
  EXPECT_EQ(bss->size, 4u * 0x40);
  EXPECT_EQ(prog->task_count, 3u);
  // Sigmoid table of the last task sits at the start of __const, lane 0.
  EXPECT_EQ(b->reg(2, "KernelDMASrc.CoeffBfrSize[0].MemBfrSize") << 6, 0x80u);
  // Σ popcount(DebugLogEvents) and Σ popcount(LogEvents), format §3.5.
  EXPECT_EQ(prog->debug_log_event_bits, 16u + 16u + 17u);
  EXPECT_EQ(prog->log_event_bits, 1u + 1u + 3u);
}

TEST(CompilerRules, ConcatPiecesAtTheirChannelOffsets) {
  Net n;
  n.inputs = {{"a", input(3, 5)}, {"b", input(2, 5)}};
  n.units = {{"cat", unit2("a", "b", "Concat", {})}};
  n.outputs = {{"cat@output", output("cat")}};
  auto b = build(n);
  ASSERT_TRUE(b->program) << b->program.error().str();
  EXPECT_EQ(b->word(0, 0x17804), 0u);
  EXPECT_EQ(b->word(1, 0x17804), 3u * 0x40);  // 3 channels of 64-byte planes
  EXPECT_EQ(b->word(0, 0x04804), 0x500172u);   // alias bits on all but the last piece
  EXPECT_EQ(b->word(1, 0x04804), 0x172u);
  EXPECT_EQ(b->reg(0, "Header[4].DebugLogEvents"), 0x68u);
  EXPECT_EQ(b->word(1, 0x17810), 5u * 0x40);  // destination depth stride: all 5 channels
}

TEST(CompilerRules, PlanarMultiplyUsesOpMode1) {
  Net n;
  n.inputs = {{"a", input(8, 2)}, {"b", input(8, 2)}};
  n.units = {{"m", unit2("a", "b", "ElementWise", {{"Type", str("Mul")}})}};
  n.outputs = {{"m@output", output("m")}};
  auto b = build(n);
  ASSERT_TRUE(b->program) << b->program.error().str();
  EXPECT_EQ(b->word(0, 0x08800), 0x80004u);
  EXPECT_EQ(b->word(0, 0x0C804), 0u);  // NE idle
}

TEST(CompilerRules, DefaultIdentNamesTheTool) {
  auto b = build(conv_net(3, 3), {{"w.weights", Bytes(18, 0)}});
  ASSERT_TRUE(b->program) << b->program.error().str();
  const auto* id = b->program->file.ident();
  ASSERT_NE(id, nullptr);
  EXPECT_EQ(id->text.rfind("libane hwx-build v", 0), 0u) << id->text;
  EXPECT_NE(id->text.find("\t-i "), std::string::npos);
}

TEST(CompilerRules, EveryExampleNetworkBuildsDumpsAndRoundTrips) {
  const std::string root = std::string(LIBANE_SOURCE_DIR) + "/examples/networks";
  int count = 0;
  for (const auto& e : std::filesystem::directory_iterator(root)) {
    if (!e.is_directory()) continue;
    SCOPED_TRACE(e.path().string());
    auto n = load_network((e.path() / "net.plist").string());
    ASSERT_TRUE(n) << n.error().str();
    auto p = compile_network(*n);
    ASSERT_TRUE(p) << p.error().str();
    auto back = parse_program(p->bytes, "built");
    ASSERT_TRUE(back) << back.error().str();
    EXPECT_EQ(write_hwx(*back->hwx), p->bytes);
    EXPECT_FALSE(dump_json(*back).empty());
    ++count;
  }
  EXPECT_GE(count, 9);
}

}  // namespace
}  // namespace ane
