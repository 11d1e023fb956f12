// Kernel DMA: lanes, their bounds, and the weight layouts a convolution
// reads from them (OCGSize 0: one output channel per lane; OCGSize > 0:
// uniform weights, or A2's input-major order).
#include <gtest/gtest.h>

#include "sim_support.h"

namespace ane {
namespace {

using sim::Machine;
using test::error_of;
using test::set;

// Lanes of `lane_bytes` each, lane i holding values[i] (fp16) from its start.
std::vector<uint8_t> lanes(uint64_t lane_bytes, const std::vector<std::vector<float>>& values) {
  std::vector<uint8_t> m(lane_bytes * values.size(), 0);
  for (size_t i = 0; i < values.size(); ++i)
    for (size_t k = 0; k < values[i].size(); ++k) test::put16(m, i * lane_bytes + 2 * k, test::h16(values[i][k]));
  return m;
}

TEST(SimKernelDma, EachLaneIsOneOutputChannelInInputOrder) {
  // 3 -> 2 channels at one pixel: y0 = 1*1 + 2*10 + 3*100, y1 = -1*1 + 0.5*100.
  RegisterImage r = test::conv_task(3, 2, 1, 1);
  Machine m;
  m.set_slot(1, lanes(64, {{1, 2, 3}, {-1, 0, 0.5f}}));
  m.set_slot(5, test::tensor_bytes(3, 1, 1, {1, 10, 100}));
  m.set_slot(4, 128);
  ASSERT_EQ(error_of(m.run_task(r, 0)), "");
  EXPECT_EQ(test::tensor_values(*m.slot(4), 2, 1, 1), (std::vector<float>{321, 49}));
}

TEST(SimKernelDma, LanesAreReadAtTheirOwnBaseAddresses) {
  // Lane 0 at +0x80 and lane 1 at +0: the order in memory does not matter.
  RegisterImage r = test::conv_task(1, 2, 1, 1);
  set(r, "KernelDMASrc.CoeffBaseAddr[0].Addr", 2);
  set(r, "KernelDMASrc.CoeffBaseAddr[1].Addr", 0);
  Machine m;
  m.set_slot(1, lanes(64, {{5}, {0}, {7}}));
  m.set_slot(5, test::tensor_bytes(1, 1, 1, {2}));
  m.set_slot(4, 128);
  ASSERT_EQ(error_of(m.run_task(r, 0)), "");
  EXPECT_EQ(test::tensor_values(*m.slot(4), 2, 1, 1), (std::vector<float>{14, 10}));
}

TEST(SimKernelDma, LaneBeyondTheKernelSlotIsAnError) {
  RegisterImage r = test::conv_task(3, 4, 1, 1);
  Machine m;
  m.set_slot(1, 0xc0);  // lanes 0-2 fit, lane 3 reads [0xc0, 0x100)
  m.set_slot(5, 0xc0);
  m.set_slot(4, 0x100);
  EXPECT_EQ(error_of(m.run_task(r, 3)), "task 3: KernelDMA lane 3 reads [0xc0, 0x100) beyond slot 1 (size 0xc0)");
}

TEST(SimKernelDma, AnEnabledLaneOutOfRangeIsAnErrorEvenIfUnused) {
  RegisterImage r = test::conv_task(1, 1, 1, 1);
  set(r, "KernelDMASrc.CoeffDMAConfig[9].En", 1);
  set(r, "KernelDMASrc.CoeffBaseAddr[9].Addr", 0x3ffffff);
  set(r, "KernelDMASrc.CoeffBfrSize[9].MemBfrSize", 0x3ffffff);
  Machine m;
  m.set_slot(1, 0x40);
  m.set_slot(5, 0x40);
  m.set_slot(4, 0x40);
  EXPECT_EQ(error_of(m.run_task(r, 0)),
            "task 0: KernelDMA lane 9 reads [0xffffffc0, 0x1ffffff80) beyond slot 1 (size 0x40)");
}

TEST(SimKernelDma, MissingOrShortLanesAreRefused) {
  RegisterImage r = test::conv_task(3, 2, 1, 1);
  set(r, "KernelDMASrc.CoeffDMAConfig[1].En", 0);
  Machine m;
  m.set_slot(1, 0x100);
  m.set_slot(5, 0xc0);
  m.set_slot(4, 0x80);
  EXPECT_EQ(error_of(m.run_task(r, 0)), "unsupported: KernelDMASrc.CoeffDMAConfig[1].En=0 in task 0");
  r = test::conv_task(40, 2, 1, 1);  // 80 bytes of weights per lane
  set(r, "KernelDMASrc.CoeffBfrSize[0].MemBfrSize", 1);
  m.set_slot(5, 40 * 64);
  EXPECT_EQ(error_of(m.run_task(r, 0)), "unsupported: KernelDMASrc.CoeffBfrSize[0].MemBfrSize=1 in task 0");
  r = test::conv_task(1, 1, 1, 1);
  set(r, "Header[9].KBE0", 0);
  EXPECT_EQ(error_of(m.run_task(r, 0)), "unsupported: Header[9].KBE0=0 in task 0");
}

TEST(SimKernelDma, OcgLanesWithUniformWeightsAreComputed) {
  // Cout 32 -> OCGSize 1: 16 lanes of 2 output channels x 2 inputs, all 0.5.
  RegisterImage r = test::conv_task(2, 32, 1, 1);
  Machine m;
  m.set_slot(1, lanes(64, std::vector<std::vector<float>>(16, {0.5f, 0.5f, 0.5f, 0.5f})));
  m.set_slot(5, test::tensor_bytes(2, 1, 1, {3, 5}));
  m.set_slot(4, 32 * 64);
  ASSERT_EQ(error_of(m.run_task(r, 0)), "");
  EXPECT_EQ(test::tensor_values(*m.slot(4), 32, 1, 1), std::vector<float>(32, 4.0f));
}

TEST(SimKernelDma, OcgLanesInterleaveTheirChannels) {
  // The records' layout (docs/convolution.md): lane g serves oc 2g, 2g+1;
  // (oc_local, ic) at word ic*2 + oc_local. Lane words [1, 2, 3, 4]: oc 2g
  // has weights (1, 3), oc 2g+1 has (2, 4). No assumption needed any more.
  RegisterImage r = test::conv_task(2, 32, 1, 1);
  std::vector<std::vector<float>> w(16, {1, 2, 3, 4});
  Machine m;
  m.set_slot(1, lanes(64, w));
  m.set_slot(5, test::tensor_bytes(2, 1, 1, {1, 10}));
  m.set_slot(4, 32 * 64);
  std::vector<std::string> notes;
  ASSERT_EQ(error_of(m.run_task(r, 0, 0, [&](const sim::TraceRecord& t) { notes = t.notes; })), "");
  const auto y = test::tensor_values(*m.slot(4), 32, 1, 1);
  for (int g = 0; g < 16; ++g) {
    EXPECT_EQ(y[2 * g], 31.0f);
    EXPECT_EQ(y[2 * g + 1], 42.0f);
  }
  EXPECT_EQ(std::find(notes.begin(), notes.end(), "A2 ocg-layout"), notes.end());
}

TEST(SimKernelDma, BiasLeadsEachLane) {
  // Section 10's prediction for the 3 -> 2 conv with bias 1.0 and weights 3.0:
  // y = 1 + 3 * sum(x).
  RegisterImage r = test::conv_task(3, 2, 1, 1, true);
  Machine m;
  m.set_slot(1, lanes(64, {{1, 3, 3, 3}, {1, 3, 3, 3}}));
  m.set_slot(5, test::tensor_bytes(3, 1, 1, {1, 2, 0.5f}));
  m.set_slot(4, 128);
  ASSERT_EQ(error_of(m.run_task(r, 0)), "");
  EXPECT_EQ(test::tensor_values(*m.slot(4), 2, 1, 1), (std::vector<float>{11.5f, 11.5f}));
}

}  // namespace
}  // namespace ane
