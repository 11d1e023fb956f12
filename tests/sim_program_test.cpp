// Whole programs: every corpus file runs, with hand-computed outputs; slots
// come from the file's own table (also in another compiler's slot order);
// chains pass intermediates through slot memory; program-level errors.
#include <cmath>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ane/dump.h"
#include "ane/fp16.h"
#include "ane/sim.h"
#include "sim_support.h"
#include "support.h"

namespace ane {
namespace {

using sim::Simulator;
using sim::Tensor;
using test::error_of;

Program load(const std::string& name) {
  auto p = open_program(test::corpus_hwx_path(name));
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().str());
  return p.ok() ? std::move(p).value() : Program{};
}

Tensor tensor(std::array<uint32_t, 4> nchw, const std::vector<float>& v) {
  Tensor t;
  t.nchw = nchw;
  for (float f : v) t.data.push_back(float_to_fp16(f));
  return t;
}

std::vector<float> values(const Tensor& t) {
  std::vector<float> out;
  for (uint16_t h : t.data) out.push_back(fp16_to_float(h));
  return out;
}

std::vector<float> run_one(const std::string& name, const std::vector<std::pair<std::string, std::vector<float>>>& in,
                           std::vector<sim::TraceRecord>* trace = nullptr, sim::Options o = {}) {
  const Program p = load(name);
  auto sim = Simulator::create(p, o);
  EXPECT_TRUE(sim.ok()) << (sim.ok() ? "" : sim.error().str());
  if (!sim.ok()) return {};
  for (const auto& [buf, v] : in) {
    const Buffer* b = nullptr;
    for (const auto& i : sim->inputs())
      if (i.name == buf) b = &i;
    EXPECT_NE(b, nullptr) << buf;
    if (!b) return {};
    const auto s = b->shape();
    EXPECT_EQ(error_of(sim->set_input(buf, tensor({uint32_t(s->nchw[0]), uint32_t(s->nchw[1]), uint32_t(s->nchw[2]),
                                                   uint32_t(s->nchw[3])},
                                                  v))),
              "");
  }
  EXPECT_EQ(error_of(sim->run([&](const sim::TraceRecord& r) {
              if (trace) trace->push_back(r);
            })),
            "");
  EXPECT_EQ(sim->outputs().size(), 1u);
  auto out = sim->read_buffer(sim->outputs()[0].name);
  EXPECT_TRUE(out.ok());
  return out.ok() ? values(*out) : std::vector<float>{};
}

TEST(SimProgram, EveryCorpusProgramRunsWithOnesAsInputs) {
  ANE_REQUIRE_CORPUS();
  const auto names = test::corpus_hwx_names();
  EXPECT_EQ(names, (std::vector<std::string>{"concat", "conv", "gemm", "relu", "sigmoid", "sum"}));
  for (const auto& name : names) {
    SCOPED_TRACE(name);
    const Program p = load(name);
    auto sim = Simulator::create(p);
    ASSERT_TRUE(sim.ok()) << sim.error().str();
    for (const auto& b : sim->inputs()) {
      const auto s = b.shape();
      ASSERT_TRUE(s.has_value());
      Tensor t;
      t.nchw = {uint32_t(s->nchw[0]), uint32_t(s->nchw[1]), uint32_t(s->nchw[2]), uint32_t(s->nchw[3])};
      t.data.assign(t.elements(), kFp16One);
      ASSERT_EQ(error_of(sim->set_input(b.name, t)), "");
    }
    size_t records = 0;
    ASSERT_EQ(error_of(sim->run([&](const sim::TraceRecord&) { ++records; })), "");
    EXPECT_EQ(records, p.tasks.size());
    for (const auto& b : sim->outputs()) {
      auto out = sim->read_buffer(b.name);
      ASSERT_TRUE(out.ok()) << out.error().str();
      for (uint16_t h : out->data) EXPECT_FALSE(fp16_is_nan(h));
    }
    EXPECT_GE(sim->machine().peak_bytes(), sim->machine().slot_bytes());
  }
}

TEST(SimProgram, Relu) {
  ANE_REQUIRE_CORPUS();
  std::vector<float> x(77), want(77);
  for (int i = 0; i < 77; ++i) {
    x[i] = float(i % 7) - 3.5f;
    want[i] = std::max(0.0f, x[i]);
  }
  EXPECT_EQ(run_one("relu", {{"image", x}}), want);
}

TEST(SimProgram, SigmoidAtTableNodes) {
  ANE_REQUIRE_CORPUS();
  std::vector<float> x(77);
  for (int i = 0; i < 77; ++i) x[i] = -8.0f + 0.5f * float(i % 33);
  const auto y = run_one("sigmoid", {{"image", x}});
  ASSERT_EQ(y.size(), 77u);
  for (int i = 0; i < 77; ++i)
    EXPECT_EQ(float_to_fp16(y[i]), double_to_fp16(1 / (1 + std::exp(-double(x[i]))))) << x[i];
}

TEST(SimProgram, SumAddsTheTwoInputsChannelByChannel) {
  ANE_REQUIRE_CORPUS();
  std::vector<float> a(64), b(64), want(64);
  for (int i = 0; i < 64; ++i) {
    a[i] = float(i);
    b[i] = -0.25f * float(i);
    want[i] = 0.75f * float(i);
  }
  std::vector<sim::TraceRecord> trace;
  EXPECT_EQ(run_one("sum", {{"image", a}, {"image2", b}}, &trace), want);
  ASSERT_EQ(trace.size(), 1u);
  EXPECT_EQ(trace[0].op, "add");
  // RBase0 = 6 (image), RBase1 = 5 (image2), WBase = 4: through the file's table.
  EXPECT_EQ(trace[0].dma[0].slot, 6);
  EXPECT_EQ(trace[0].dma[1].slot, 5);
  EXPECT_EQ(trace[0].dma[2].slot, 4);
}

TEST(SimProgram, ConvWithWeightsTwo) {
  ANE_REQUIRE_CORPUS();
  EXPECT_EQ(run_one("conv", {{"image", {1, 2, 3}}}), (std::vector<float>{12, 12, 12}));  // H12
  EXPECT_EQ(run_one("conv", {{"image", {3, 3, 3}}}), (std::vector<float>{18, 18, 18}));  // H11
}

TEST(SimProgram, GemmWithZeroWeights) {
  ANE_REQUIRE_CORPUS();
  std::vector<float> x(512);
  for (int i = 0; i < 512; ++i) x[i] = float(i % 13) - 6;
  EXPECT_EQ(run_one("gemm", {{"image", x}}), std::vector<float>(512, 0.0f));  // H13
}

TEST(SimProgram, ConcatRunsBothTasksIntoOneBuffer) {
  ANE_REQUIRE_CORPUS();
  std::vector<float> a(16384), b(16), want;
  for (int i = 0; i < 16384; ++i) a[i] = float(i % 1000);
  for (int i = 0; i < 16; ++i) b[i] = -1.0f - float(i);
  want = a;
  want.insert(want.end(), b.begin(), b.end());
  std::vector<sim::TraceRecord> trace;
  EXPECT_EQ(run_one("concat", {{"input_0", a}, {"input_1", b}}, &trace), want);  // H14
  ASSERT_EQ(trace.size(), 2u);
  EXPECT_EQ(trace[1].text_offset, 0x300u);
  EXPECT_EQ(trace[1].dma.back().begin, 0x100000u);
}

// gemm.hwx with every weight patched to w (as allbilly/ane gemm_nz.hwx with
// w = 0.5): 512 * w * x whatever the lane order (section 10 prediction).
// One weight changed lands on one output channel by the records' layout.
TEST(SimProgram, GemmWithUniformAndNonUniformWeights) {
  ANE_REQUIRE_CORPUS();
  Bytes bytes = test::read_or_die(test::corpus_hwx_path("gemm"));
  const Program orig = load("gemm");
  const auto* konst = orig.hwx->find_section("__TEXT", "__const");
  ASSERT_NE(konst, nullptr);
  for (uint64_t i = 0; i < konst->size; i += 2) put_u16(bytes, konst->offset + i, float_to_fp16(0.5f));
  auto p = parse_program(bytes, "gemm_nz");
  ASSERT_TRUE(p.ok());
  auto sim = Simulator::create(*p);
  ASSERT_TRUE(sim.ok());
  ASSERT_EQ(error_of(sim->set_input("image", tensor({1, 512, 1, 1}, std::vector<float>(512, 3)))), "");
  ASSERT_EQ(error_of(sim->run()), "");
  EXPECT_EQ(values(*sim->read_buffer("probs@output")), std::vector<float>(512, 768.0f));
  // Releasing the working memory keeps the outputs; a second run allocates
  // again and computes the same.
  sim->machine().release_working_memory();
  EXPECT_EQ(values(*sim->read_buffer("probs@output")), std::vector<float>(512, 768.0f));
  ASSERT_EQ(error_of(sim->run()), "");
  EXPECT_EQ(values(*sim->read_buffer("probs@output")), std::vector<float>(512, 768.0f));

  put_u16(bytes, konst->offset + 2 * 1000, float_to_fp16(0.25f));
  p = parse_program(bytes, "gemm_nz_one_off");
  ASSERT_TRUE(p.ok());
  sim = Simulator::create(*p);
  ASSERT_TRUE(sim.ok());
  ASSERT_EQ(error_of(sim->set_input("image", tensor({1, 512, 1, 1}, std::vector<float>(512, 2)))), "");
  ASSERT_EQ(error_of(sim->run()), "");
  // The records' layout: word 1000 of lane 0 is (oc_local, ic) = (1000 % 32, 1000 / 32) = (8, 31):
  // output channel 8 loses 0.25 * 2 = 0.5 from 512 * 0.5 * 2 = 512.
  const auto y = values(*sim->read_buffer("probs@output"));
  for (int oc = 0; oc < 512; ++oc) EXPECT_EQ(y[oc], oc == 8 ? 511.5f : 512.0f) << oc;
}

// sum.hwx rewritten to the newer compilers' slot order: inputs in slots 4
// and 5, output in 6 (as allbilly/ane mul_macos14.hwx). Byte patches: the
// slot table of the flavor-1 command and the task's Header[8].
TEST(SimProgram, BindsThroughTheFilesOwnSlotTable) {
  ANE_REQUIRE_CORPUS();
  Bytes bytes = test::read_or_die(test::corpus_hwx_path("sum"));
  const Program orig = load("sum");
  const auto prog = orig.hwx->program();
  ASSERT_TRUE(prog.has_value());
  const uint64_t table = orig.hwx->commands[prog->command_index].offset + 0x10;
  const uint64_t out = prog->slots[4], image2 = prog->slots[5], image = prog->slots[6];
  put_u64(bytes, table + 8 * 4, image2);
  put_u64(bytes, table + 8 * 5, image);
  put_u64(bytes, table + 8 * 6, out);
  RegisterImage h = orig.tasks[0].regs;
  ASSERT_TRUE(h.set("Header[8].RBase0", 5).ok());  // image
  ASSERT_TRUE(h.set("Header[8].RBase1", 4).ok());  // image2
  ASSERT_TRUE(h.set("Header[8].WBase", 6).ok());
  put_u32(bytes, orig.tasks[0].file_offset + 0x20, h.header[8]);
  auto p = parse_program(bytes, "sum-v7-order");
  ASSERT_TRUE(p.ok()) << p.error().str();
  auto sim = Simulator::create(*p);
  ASSERT_TRUE(sim.ok());
  EXPECT_EQ(sim->outputs()[0].slot, 6);
  ASSERT_EQ(error_of(sim->set_input("image", tensor({1, 64, 1, 1}, std::vector<float>(64, 3)))), "");
  ASSERT_EQ(error_of(sim->set_input("image2", tensor({1, 64, 1, 1}, std::vector<float>(64, 2)))), "");
  ASSERT_EQ(error_of(sim->run()), "");
  auto y = sim->read_buffer("probs@output");
  ASSERT_TRUE(y.ok());
  EXPECT_EQ(values(*y), std::vector<float>(64, 5.0f));
}

TEST(SimProgram, ARegisterTheStreamsSkipMustNotMatter) {
  ANE_REQUIRE_CORPUS();
  Program p = load("sigmoid");
  // The compact layout skips lane addresses and sizes; lane 0 is on here
  // (the table), so what its skipped address would hold matters: refused.
  RegisterImage r;
  r.header = p.tasks[0].regs.header;
  for (const auto& [a, v] : p.tasks[0].regs.written_words())
    if (a != 0x1F848) r.set_word(a, v);
  p.tasks[0].regs = r;
  auto sim = Simulator::create(p);
  ASSERT_TRUE(sim.ok());
  EXPECT_EQ(error_of(sim->run()),
            "unsupported: TD layout: KernelDMASrc.CoeffBaseAddr[0] is not written in task 0 (what an unwritten "
            "register holds is unknown)");
}

TEST(SimProgram, AZeroSlotIsUnbound) {
  ANE_REQUIRE_CORPUS();
  Bytes bytes = test::read_or_die(test::corpus_hwx_path("relu"));
  const Program orig = load("relu");
  put_u64(bytes, orig.hwx->commands[orig.hwx->program()->command_index].offset + 0x10 + 8 * 5, 0);
  auto p = parse_program(bytes, "relu-no-input-slot");
  ASSERT_TRUE(p.ok());
  auto sim = Simulator::create(*p);
  ASSERT_TRUE(sim.ok());
  EXPECT_EQ(error_of(sim->run()), "task 0: Header[8].RBase0=5 names slot 5, which is unbound");
  EXPECT_EQ(error_of(sim->set_input("image", tensor({1, 1, 1, 77}, std::vector<float>(77, 1)))),
            "buffer 'image' (address 0x30008000) is in no bound slot");
}

TEST(SimProgram, SlotMemoryIsCapped) {
  ANE_REQUIRE_CORPUS();
  sim::Options o;
  o.memory_limit = 0x8000;
  auto sim = Simulator::create(load("gemm"), o);  // __const alone is 0x80000 bytes
  ASSERT_FALSE(sim.ok());
  EXPECT_EQ(sim.error().str(),
            "slot memories need more than 0x8000 bytes (the memory limit); slot 1 alone asks for 0x80000");
}

TEST(SimProgram, WorkingMemoryIsCapped) {
  ANE_REQUIRE_CORPUS();
  sim::Options o;
  o.memory_limit = 0x100000;  // the slots fit (0x90274 bytes); fp32 copies of the weights do not
  auto sim = Simulator::create(load("gemm"), o);
  ASSERT_TRUE(sim.ok());
  EXPECT_EQ(error_of(sim->run()),
            "task 0: the weight matrix needs 0x100000 bytes of working memory; the slots hold 0x90274 and the limit "
            "is 0x100000");
}

TEST(SimProgram, InputErrors) {
  ANE_REQUIRE_CORPUS();
  auto sim = Simulator::create(load("sum"));
  ASSERT_TRUE(sim.ok());
  EXPECT_EQ(error_of(sim->check_inputs()), "missing input 'image2'");
  EXPECT_EQ(error_of(sim->set_input("imag", tensor({1, 64, 1, 1}, std::vector<float>(64, 1)))),
            "unknown input 'imag' (inputs: 'image2', 'image')");
  EXPECT_EQ(error_of(sim->set_input("image", tensor({1, 63, 1, 1}, std::vector<float>(63, 1)))),
            "input 'image' [1,64,1,1] needs 64 elements, the tensor has 63");
  EXPECT_EQ(error_of(sim->set_input("probs@output", tensor({1, 64, 1, 1}, std::vector<float>(64, 1)))),
            "unknown input 'probs@output' (inputs: 'image2', 'image')");
  // Any shape with the right element count.
  EXPECT_EQ(error_of(sim->set_input("image", tensor({64, 1, 1, 1}, std::vector<float>(64, 1)))), "");
  auto r = sim->read_buffer("image");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->nchw, (std::array<uint32_t, 4>{1, 64, 1, 1}));
  EXPECT_FALSE(sim->read_buffer("nothing").ok());
  // A failed set_input gives nothing: image2 is still missing, image is not.
  EXPECT_EQ(error_of(sim->check_inputs()), "missing input 'image2'");
  EXPECT_EQ(error_of(sim->set_input("image2", tensor({1, 64, 1, 1}, std::vector<float>(64, 2)))), "");
  EXPECT_EQ(error_of(sim->check_inputs()), "");
}

// A buffer whose layout holds no values (a fuzzed file declared width 0):
// reading, setting and saving it move nothing and touch no memory (the
// empty tensor has no storage; memcpy from null was undefined behaviour).
TEST(SimProgram, EmptyBuffersMoveNothing) {
  ANE_REQUIRE_CORPUS();
  Program p = load("relu");
  for (auto& b : p.buffers)
    if (b.layout) b.layout->nchw[3] = 0;
  auto sim = Simulator::create(p);
  ASSERT_TRUE(sim.ok()) << sim.error().str();
  for (const auto& b : sim->inputs()) {
    Tensor empty;
    empty.nchw = {1, 1, 1, 0};
    EXPECT_EQ(error_of(sim->set_input(b.name, empty)), "");
  }
  for (const auto& b : sim->outputs()) {
    auto t = sim->read_buffer(b.name);
    ASSERT_TRUE(t.ok()) << t.error().str();
    EXPECT_TRUE(t->data.empty());
    EXPECT_EQ(t->nchw[3], 0u);
    const std::string path = testing::TempDir() + "empty-buffer.npy";
    ASSERT_EQ(error_of(sim->save_npy(b.name, path)), "");
    auto saved = test::read_or_die(path);
    EXPECT_EQ(saved.size() % 64, 0u);  // the header alone, padded to 64 bytes
  }
}

// Two hand-made tasks on one machine: task 0 copies x (slot 5) into the
// scratch slot 3 at +0x1000 with ReLU; task 1 adds y (slot 6) to it and
// writes slot 4. The intermediate is rounded to fp16 in between.
TEST(SimProgram, ChainsPassIntermediatesThroughScratchSlots) {
  RegisterImage t0 = test::pass_task(2, 1, 3, 1);
  test::set(t0, "Header[8].WBase", 3);
  test::set(t0, "TileDMADst.BaseAddr.Addr", 0x1000 >> 6);
  RegisterImage t1 = test::pe_task(2, 1, 3, 0);
  test::set(t1, "Header[8].RBase0", 3);
  test::set(t1, "TileDMASrc.BaseAddr.Addr", 0x1000 >> 6);
  sim::Machine m;
  m.set_slot(3, 0x2000);
  m.set_slot(5, test::tensor_bytes(2, 1, 3, {-1, 2, 3, -4, 0.5f, 1 + 0x1p-11f}));
  m.set_slot(6, test::tensor_bytes(2, 1, 3, {10, 20, 30, 40, 50, 60}));
  m.set_slot(4, 128);
  std::vector<sim::TraceRecord> trace;
  auto hook = [&](const sim::TraceRecord& r) { trace.push_back(r); };
  ASSERT_EQ(error_of(m.run_task(t0, 0, 0, hook)), "");
  ASSERT_EQ(error_of(m.run_task(t1, 1, 0x300, hook)), "");
  // 1 + 2^-11 was already rounded to 1 by the fp16 input; 60 + 1 = 61.
  EXPECT_EQ(test::tensor_values(*m.slot(4), 2, 1, 3), (std::vector<float>{10, 22, 33, 40, 50.5f, 61}));
  ASSERT_EQ(trace.size(), 2u);
  EXPECT_EQ(trace[0].dma.back().slot, 3);
  EXPECT_EQ(trace[1].dma.front().slot, 3);
  EXPECT_EQ(trace[1].dma.front().begin, 0x1000u);

  // The same chain with the scratch slot too small names the failing task.
  sim::Machine small;
  small.set_slot(3, 0x1000);
  small.set_slot(5, 0x80);
  small.set_slot(6, 0x80);
  small.set_slot(4, 0x80);
  EXPECT_EQ(error_of(small.run_task(t0, 0)), "task 0: TileDMADst writes [0x1000, 0x1046) beyond slot 3 (size 0x1000)");
}

}  // namespace
}  // namespace ane

// The JSON form of a trace record (hwx-run --json, libane.run(trace=True)):
// every field, NaN as null, the lane only for kernel DMA.
TEST(SimProgram, TraceRecordAsJson) {
  ane::sim::TraceRecord r;
  r.task = 2;
  r.text_offset = 0x300;
  r.engine = "NE";
  r.op = "conv";
  r.in_shape = {1, 2, 3, 4};
  r.out_shape = {1, 5, 3, 4};
  r.dma = {{"TileDMASrc", 5, 0x0, 0x40, -1}, {"KernelDMA", 1, 0x80, 0xc0, 3}};
  r.notes = {"acc=fp64"};
  r.min = NAN;
  r.max = 2.5f;
  r.nan = 7;
  r.checksum = 0xabc;
  const auto j = nlohmann::json::parse(r.json());
  EXPECT_EQ(j["task"], 2);
  EXPECT_EQ(j["text_offset"], 0x300);
  EXPECT_EQ(j["engine"], "NE");
  EXPECT_EQ(j["op"], "conv");
  EXPECT_EQ(j["in_shape"], nlohmann::json({1, 2, 3, 4}));
  EXPECT_EQ(j["out_shape"], nlohmann::json({1, 5, 3, 4}));
  ASSERT_EQ(j["dma"].size(), 2u);
  EXPECT_FALSE(j["dma"][0].contains("lane"));
  EXPECT_EQ(j["dma"][1]["lane"], 3);
  EXPECT_EQ(j["dma"][1]["begin"], 0x80);
  EXPECT_EQ(j["notes"], nlohmann::json({"acc=fp64"}));
  EXPECT_TRUE(j["min"].is_null());
  EXPECT_EQ(j["max"], 2.5);
  EXPECT_EQ(j["nan"], 7);
  EXPECT_EQ(j["checksum"], "0x0000000000000abc");
}
