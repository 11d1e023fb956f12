// Apple-compiled convolutions (macOS 26 ANECompiler, H13) from the public
// records of joshuaswarren/mil-hwx-compiler, transcribed into
// tests/fixtures/oracles/h13/conv (README there: the records, the fixed rule
// that chose them, the format). For every record:
//  * the transcription is consistent: stream headers, task size, tensor
//    descriptors, and the task's registers decode to the record's own
//    parameters (kernel, stride, groups, padding, shapes, bias);
//  * the constant section rebuilt from the record's weight formula and
//    packed by libane (ane/conv_kernel.h) hashes to the record's SHA-256 and
//    sits where the task's kernel-DMA lanes point, or the packer refuses
//    with the reason docs/convolution.md gives;
//  * hwx-run's simulator runs the task on those bytes and agrees with a
//    direct-loop convolution written here, or refuses by name.
#include <cmath>
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ane/anec.h"
#include "ane/conv_kernel.h"
#include "ane/fp16.h"
#include "ane/registers.h"
#include "ane/sha256.h"
#include "ane/sim.h"
#include "compile_net.h"
#include "conv_reference.h"
#include "oracle_fixture.h"
#include "oracle_plists.h"

namespace ane {
namespace {

const std::string kConvDir = std::string(LIBANE_SOURCE_DIR) + "/tests/fixtures/oracles/h13/conv";

uint32_t field(const RegisterImage& r, const char* name) {
  const FieldInfo* f = RegisterDatabase::h13().find(name);
  EXPECT_NE(f, nullptr) << name;
  return f ? r.get(*f) : 0;
}

// The compiler's tensor layout: rows padded to 64 bytes, planes of H rows.
std::array<uint64_t, 4> tensor_strides(const std::array<uint64_t, 4>& shape) {
  const uint64_t row = (2 * shape[3] + 63) / 64 * 64, plane = row * shape[2];
  return {plane * shape[1], plane, row, 2};
}

class OracleConv : public ::testing::TestWithParam<std::string> {};

// The tasks that read kernel data (Header[9].KBE0): the convolutions. A
// record may split one convolution over several tasks (output channel slices).
std::vector<size_t> conv_tasks(const RegisterImage* const* regs, size_t n) {
  std::vector<size_t> out;
  for (size_t i = 0; i < n; ++i)
    if (field(*regs[i], "Header[9].KBE0")) out.push_back(i);
  return out;
}

struct Decoded {
  Program program;
  std::vector<const RegisterImage*> regs;
  std::vector<size_t> convs;
};

Decoded decode(const oracle::Fixture& f, const Bytes& kernel) {
  Decoded d;
  auto p = parse_program(oracle::anec_image(f, kernel), f.name + ".anec");
  EXPECT_TRUE(p.ok()) << p.error().str();
  if (!p) return d;
  d.program = std::move(*p);
  for (const auto& t : d.program.tasks) d.regs.push_back(&t.regs);
  d.convs = conv_tasks(d.regs.data(), d.regs.size());
  return d;
}

TEST_P(OracleConv, TranscriptionAgreesWithTheRecord) {
  auto f = oracle::load_fixture(GetParam());
  ASSERT_TRUE(f.ok()) << f.error().message;
  ASSERT_NO_FATAL_FAILURE(oracle::expect_tasks_match_record(*f));
  // Tensor descriptors: binding 1 is the input, 2 the output, laid out by
  // the compiler's row/plane rule.
  ASSERT_EQ(f->tensors.size(), 2u);
  const oracle::ConvRecord c = oracle::ConvRecord::of(*f);
  const std::vector<uint64_t> in = {1, c.cin, c.hin, c.win}, out = {1, c.cout, c.hout, c.wout};
  for (const auto& x : f->tensors) {
    const auto& want = x.binding == 1 ? in : out;
    EXPECT_EQ(std::vector<uint64_t>(x.shape.begin(), x.shape.end()), want) << "binding " << x.binding;
    EXPECT_EQ(x.strides, tensor_strides(x.shape)) << "binding " << x.binding;
    EXPECT_EQ(x.total, x.strides[0]);
  }
}

TEST_P(OracleConv, RegistersDecodeToTheRecordsParameters) {
  auto f = oracle::load_fixture(GetParam());
  ASSERT_TRUE(f.ok()) << f.error().message;
  const Decoded d = decode(*f, Bytes(f->constant_size, 0));
  ASSERT_FALSE(d.convs.empty());
  const oracle::ConvRecord c = oracle::ConvRecord::of(*f);
  uint32_t couts = 0;
  for (size_t i : d.convs) {
    const RegisterImage& r = *d.regs[i];
    SCOPED_TRACE("task " + std::to_string(i));
    couts += test::expect_conv_task_matches(c, [&](const char* n) { return field(r, n); }, d.convs.size() == 1);
  }
  // The tasks' output channels add up to the convolution's.
  EXPECT_EQ(couts, c.cout);
}

// What the compiler packed, if libane knows the layout: the kernel section
// (each task's lanes at the offsets its registers give) and the rebuilt
// weights; else the packer's reason.
struct Packed {
  std::optional<Bytes> kernel;
  oracle::Constants constants;
  std::string refusal;
};

Packed pack(const oracle::Fixture& f, const oracle::ConvRecord& c, const Decoded& d) {
  Packed out;
  const uint64_t red = uint64_t{c.cin / c.groups} * c.kh * c.kw;
  auto k = oracle::rebuild_constants(f, uint64_t{c.cout} * red, c.bias ? c.cout : 0);
  EXPECT_TRUE(k.ok()) << k.error().message;
  if (!k) return out;
  out.constants = *k;
  Bytes section(f.constant_size, 0);
  for (size_t i : d.convs) {
    const RegisterImage& r = *d.regs[i];
    SCOPED_TRACE(f.name + " task " + std::to_string(i));
    auto p = test::pack_task_weights(*k, c, [&](const char* n) { return field(r, n); });
    if (!p) {
      out.refusal = p.error().message;
      return out;
    }
    for (int lane = 0; lane < kKernelLanes; ++lane) {
      const bool en = field(r, fmt::format("KernelDMASrc.CoeffDMAConfig[{}].En", lane).c_str()) != 0;
      EXPECT_EQ(en, p->lane_size[lane] != 0) << f.name << " task " << i << " lane " << lane;
      if (!en || !p->lane_size[lane]) continue;
      const uint64_t at = r.word(0x1f848 + 4 * lane), size = r.word(0x1f888 + 4 * lane);
      EXPECT_EQ(size, p->lane_size[lane]) << f.name << " task " << i << " lane " << lane;
      if (at + p->lane_size[lane] > section.size()) {
        ADD_FAILURE() << f.name << " task " << i << " lane " << lane << " ends past the section";
        return out;
      }
      std::copy_n(p->bytes.begin() + p->lane_offset[lane], p->lane_size[lane], section.begin() + at);
    }
  }
  out.kernel = std::move(section);
  return out;
}

TEST_P(OracleConv, RebuiltConstantsHashToTheRecord) {
  auto f = oracle::load_fixture(GetParam());
  ASSERT_TRUE(f.ok()) << f.error().message;
  const Decoded d = decode(*f, Bytes(f->constant_size, 0));
  const oracle::ConvRecord c = oracle::ConvRecord::of(*f);
  if (oracle::too_large_for_sanitizers(c)) GTEST_SKIP() << "under AddressSanitizer: checked in the release build";
  // The compiler's OCGSize rule (hwx-build uses it) gives the record's, of
  // each task's output channels; where Apple splits a stride-2 layer over
  // tasks, of the layer's (the five such records: 256 outputs as 64 + 192,
  // OCGSize 4 in both; at stride 1 the 224 + 32 splits take each task's own).
  // Their streams are Cout / 16 wide (4 and 12; conv_sparse.cpp), which the
  // hash below checks. hwx-build does not split layers.
  const bool split_stride2 = d.convs.size() > 1 && c.stride == 2;
  for (size_t i : d.convs) {
    const uint32_t cout = split_stride2 ? c.cout / c.groups : field(*d.regs[i], "Common.Cout.Cout");
    EXPECT_EQ(compiler_conv_ocg(cout, c.depthwise(), c.hout, c.wout), field(*d.regs[i], "Common.ConvCfg.OCGSize"))
        << "task " << i;
  }
  const Packed p = pack(*f, c, d);
  if (!p.kernel) {
    EXPECT_EQ(p.refusal.rfind("unsupported: ", 0), 0u) << p.refusal;
    std::cout << "[ refused  ] " << f->name << ": " << p.refusal << "\n";
    return;
  }
  EXPECT_EQ(sha256_hex(*p.kernel), f->constant_sha256) << "the packed kernel differs from Apple's";
  for (const auto& [offset, sha] : f->chunks) {
    const uint64_t end = std::min<uint64_t>(offset + 2048, p.kernel->size());
    if (offset >= end) continue;
    EXPECT_EQ(sha256_hex(std::span(*p.kernel).subspan(offset, end - offset)), sha) << "chunk at " << offset;
  }
}

TEST_P(OracleConv, SimulatorRunsTheTaskOrRefusesByName) {
  auto f = oracle::load_fixture(GetParam());
  ASSERT_TRUE(f.ok()) << f.error().message;
  const oracle::ConvRecord c = oracle::ConvRecord::of(*f);
  if (oracle::too_large_for_sanitizers(c)) GTEST_SKIP() << "under AddressSanitizer: checked in the release build";
  const Decoded layout = decode(*f, Bytes(f->constant_size, 0));
  const Packed pk = pack(*f, c, layout);
  // Apple's bytes where they are rebuilt (the hash test proves it), else
  // zeros: a task whose layout is unknown must be refused before reading them.
  const Bytes kernel = pk.kernel ? *pk.kernel : Bytes(f->constant_size, 0);
  const Bytes image = oracle::anec_image(*f, kernel);
  auto decoded = parse_program(image, f->name + ".anec");
  ASSERT_TRUE(decoded.ok()) << decoded.error().str();
  const RegisterImage& regs = decoded->tasks.front().regs;
  const RegisterImage& last = decoded->tasks.back().regs;
  const AnecDescriptor d =
      oracle::io_descriptor(*f, field(regs, "Header[8].RBase0"), field(last, "Header[8].WBase"));
  auto p = read_anec(image, f->name + ".anec", &d);
  ASSERT_TRUE(p.ok()) << p.error().str();
  auto sim = sim::Simulator::create(*p);
  ASSERT_TRUE(sim.ok()) << sim.error().str();

  const sim::Tensor x = test::conv_input(c);
  ASSERT_TRUE(sim->set_input("x", x).ok());
  auto run = sim->run();
  if (!pk.kernel) {
    ASSERT_FALSE(run.ok()) << f->name << ": a task whose kernel layout libane does not know ran";
    EXPECT_NE(run.error().message.find("unsupported: "), std::string::npos) << run.error().message;
    std::cout << "[ refused  ] " << f->name << ": " << run.error().message << "\n";
    return;
  }
  ASSERT_TRUE(run.ok()) << run.error().str();
  auto y = sim->read_buffer("y");
  ASSERT_TRUE(y.ok()) << y.error().str();
  std::vector<double> ref, mag;
  test::reference_conv(c, pk.constants.weights, pk.constants.bias, x.data, ref, mag);
  if (c.relu)
    for (double& v : ref) v = std::max(v, 0.0);
  ASSERT_EQ(y->data.size(), ref.size());
  const double worst = test::expect_conv_outputs(c, ref, mag, y->data, f->name);
  std::cout << "[ ran      ] " << f->name << ": worst error " << fmt::format("{:.2f}", worst) << " of tolerance\n";
}

INSTANTIATE_TEST_SUITE_P(Records, OracleConv, ::testing::ValuesIn(oracle::fixture_files(kConvDir)), oracle::test_name);

TEST(StrideTwoStreamWidths, HwxBuildsNarrowStreamsRunAsTheConvolution) {
  // The zero-skipping form's stream width, min(2^OCGSize, Cout / 16), below
  // 16 (docs/convolution.md): 64 and 192 outputs as the split layer's tasks
  // show it; 160 and 224 as the rule infers. hwx-build writes the kernel and
  // hwx-run reads it back; a direct loop judges the result.
  for (const uint32_t cout : {64u, 160u, 192u, 224u}) {
    SCOPED_TRACE(cout);
    oracle::ConvRecord c;
    c.cin = 32;
    c.cout = cout;
    c.stride = 2;
    c.kh = c.kw = 3;
    c.hin = c.win = 16;
    c.hout = c.wout = 8;
    c.pad_bottom = c.pad_right = 1;  // "same" at stride 2: the extra row and column after
    c.bias = cout % 64 != 0;
    const auto w = test::uniform_fp16(size_t{cout} * c.cin * 9, -0.1, 0.1, cout);
    const auto b = c.bias ? test::uniform_fp16(cout, -1, 1, cout + 1) : std::vector<uint16_t>{};
    test::TempDir dir;
    test::write_bytes(dir.file("w.weights"), test::fp16_le_bytes(w));
    if (c.bias) test::write_bytes(dir.file("b.weights"), test::fp16_le_bytes(b));
    auto p = test::compile_net(oracle::conv_record_network(c), dir);
    ASSERT_TRUE(p.ok()) << p.error().str();
    ASSERT_EQ(p->tasks.size(), 1u);
    EXPECT_EQ(field(p->tasks[0].regs, "NE.KernelCfg.SparseFmt"), 1u);
    EXPECT_EQ(field(p->tasks[0].regs, "Common.ConvCfg.OCGSize"), cout > 128 ? 4u : 2u);
    auto sim = sim::Simulator::create(*p);
    ASSERT_TRUE(sim.ok()) << sim.error().str();
    const sim::Tensor x = test::conv_input(c);
    ASSERT_TRUE(sim->set_input("x", x).ok());
    auto run = sim->run();
    ASSERT_TRUE(run.ok()) << run.error().str();
    auto y = sim->read_buffer("y@output");
    ASSERT_TRUE(y.ok()) << y.error().str();
    std::vector<double> ref, mag;
    test::reference_conv(c, w, b, x.data, ref, mag);
    test::expect_conv_outputs(c, ref, mag, y->data, fmt::format("{} outputs", cout));
  }
}

TEST(OracleConvFixtures, TheSampleIsComplete) {
  // Three records per (kernel, stride, group kind) of the grid (README), the
  // index-weight records, two tiled records and the smallest 3x3.
  EXPECT_GE(oracle::fixture_files(kConvDir).size(), 36u + 8 + 2 + 1 + 24);
}

}  // namespace
}  // namespace ane
