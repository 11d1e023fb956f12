// Tile DMA in and out: strides, row padding, base addresses, bounds.
// Each test runs one hand-made pass-through task (NE OpMode 4, no
// nonlinearity), so the output is the input moved by the two tile DMAs.
#include <gtest/gtest.h>

#include "sim_support.h"

namespace ane {
namespace {

using sim::Machine;
using test::error_of;
using test::get16;
using test::put16;
using test::set;

TEST(SimTileDma, StridedGatherIgnoresRowPaddingAndScatterLeavesIt) {
  // C=2, H=2, W=3 with 64-byte rows and a 192-byte plane (one spare row per
  // plane): every byte that is not an element holds garbage (NaN patterns).
  RegisterImage r = test::pass_task(2, 2, 3);
  set(r, "TileDMASrc.PlaneStride.PlaneStride", 3);
  set(r, "TileDMADst.PlaneStride.PlaneStride", 3);
  std::vector<uint8_t> in(2 * 192, 0xff);
  std::vector<float> values = {1, 2, 3, 4, 5, 6, -1, -2, -3, 0.5f, 0.25f, 0.125f};
  size_t k = 0;
  for (int c = 0; c < 2; ++c)
    for (int h = 0; h < 2; ++h)
      for (int w = 0; w < 3; ++w) put16(in, c * 192 + h * 64 + 2 * w, test::h16(values[k++]));
  Machine m;
  m.set_slot(5, in);
  m.set_slot(4, std::vector<uint8_t>(2 * 192, 0xab));
  ASSERT_EQ(error_of(m.run_task(r, 0)), "");
  const auto& out = *m.slot(4);
  k = 0;
  for (int c = 0; c < 2; ++c)
    for (int h = 0; h < 2; ++h) {
      for (int w = 0; w < 3; ++w) EXPECT_EQ(test::f32(get16(out, c * 192 + h * 64 + 2 * w)), values[k++]);
      for (int b = 6; b < 64; ++b) EXPECT_EQ(out[c * 192 + h * 64 + b], 0xab) << "padding byte written";
    }
  for (int b = 128; b < 192; ++b) EXPECT_EQ(out[b], 0xab) << "spare row written";
}

TEST(SimTileDma, BaseAddressesOffsetSourceAndDestination) {
  RegisterImage r = test::pass_task(1, 1, 2);
  set(r, "TileDMASrc.BaseAddr.Addr", 2);  // +0x80
  set(r, "TileDMADst.BaseAddr.Addr", 1);  // +0x40
  Machine m;
  std::vector<uint8_t> in(0x100, 0);
  put16(in, 0x80, test::h16(7));
  put16(in, 0x82, test::h16(-8));
  m.set_slot(5, in);
  m.set_slot(4, 0x80);
  ASSERT_EQ(error_of(m.run_task(r, 0)), "");
  EXPECT_EQ(test::f32(get16(*m.slot(4), 0x40)), 7.0f);
  EXPECT_EQ(test::f32(get16(*m.slot(4), 0x42)), -8.0f);
  EXPECT_EQ(get16(*m.slot(4), 0), 0);
}

TEST(SimTileDma, SourceSlotAndDestinationSlotMayBeTheSame) {
  // Read everything before writing anything: an in-place ReLU.
  RegisterImage r = test::pass_task(2, 1, 2, 1);
  set(r, "Header[8].WBase", 5);
  Machine m;
  m.set_slot(5, test::tensor_bytes(2, 1, 2, {-1, 2, 3, -4}));
  ASSERT_EQ(error_of(m.run_task(r, 0)), "");
  EXPECT_EQ(test::tensor_values(*m.slot(5), 2, 1, 2), (std::vector<float>{0, 2, 3, 0}));
}

TEST(SimTileDma, SourceBeyondItsSlotIsAnError) {
  // 0x40 bytes per channel, 3 channels from 0x3fffc0: the read ends at 0x400082.
  RegisterImage r = test::pass_task(3, 1, 1);
  set(r, "TileDMASrc.BaseAddr.Addr", 0x3fffc0 >> 6);
  Machine m;
  m.set_slot(5, 0x400000);
  m.set_slot(4, 0x100);
  EXPECT_EQ(error_of(m.run_task(r, 2)), "task 2: TileDMASrc reads [0x3fffc0, 0x400042) beyond slot 5 (size 0x400000)");
  EXPECT_EQ(test::get16(*m.slot(4), 0), 0) << "nothing is written after a failed check";
}

TEST(SimTileDma, DestinationBeyondItsSlotIsAnError) {
  RegisterImage r = test::pass_task(1, 1, 77);
  Machine m;
  m.set_slot(5, 0xc0);
  m.set_slot(4, 0x80);
  EXPECT_EQ(error_of(m.run_task(r, 0)), "task 0: TileDMADst writes [0x0, 0x9a) beyond slot 4 (size 0x80)");
}

TEST(SimTileDma, SecondSourceBeyondItsSlotIsAnError) {
  RegisterImage r = test::pe_task(4, 1, 1, 0);
  Machine m;
  m.set_slot(5, 0x100);
  m.set_slot(6, 0xc0);
  m.set_slot(4, 0x100);
  EXPECT_EQ(error_of(m.run_task(r, 1)), "task 1: TileDMASrc2 reads [0x0, 0xc2) beyond slot 6 (size 0xc0)");
}

TEST(SimTileDma, UnboundSlotsAreErrors) {
  RegisterImage r = test::pass_task(1, 1, 1);
  Machine m;
  m.set_slot(4, 0x40);
  EXPECT_EQ(error_of(m.run_task(r, 0)), "task 0: Header[8].RBase0=5 names slot 5, which is unbound");
  m.set_slot(5, 0x40);
  set(r, "Header[8].WBase", 9);
  EXPECT_EQ(error_of(m.run_task(r, 0)), "task 0: Header[8].WBase=9 names slot 9, which is unbound");
}

TEST(SimTileDma, OverlappingRowsOrPlanesAreRefused) {
  // Rows closer than 2W bytes would read one element twice: no public
  // program does that, and it would decouple element counts from slot sizes.
  RegisterImage r = test::pass_task(1, 2, 40);  // 80-byte rows need a 128-byte stride
  set(r, "TileDMASrc.RowStride.Stride", 1);
  Machine m;
  m.set_slot(5, 0x1000);
  m.set_slot(4, 0x1000);
  EXPECT_EQ(error_of(m.run_task(r, 0)), "unsupported: TileDMASrc.RowStride.Stride=1 in task 0");
  r = test::pass_task(2, 1, 1);
  set(r, "TileDMADst.PlaneStride.PlaneStride", 0);
  EXPECT_EQ(error_of(m.run_task(r, 0)), "unsupported: TileDMADst.PlaneStride.PlaneStride=0 in task 0");
}

TEST(SimTileDma, AliasedSlotsShareMemory) {
  RegisterImage r = test::pass_task(1, 1, 1);
  set(r, "Header[8].WBase", 7);
  Machine m;
  m.set_slot(5, test::tensor_bytes(1, 1, 1, {9}));
  m.alias_slot(7, 5);
  set(r, "TileDMADst.BaseAddr.Addr", 0);
  ASSERT_EQ(error_of(m.run_task(r, 0)), "");
  EXPECT_EQ(m.slot(7), m.slot(5));
  EXPECT_EQ(m.slot_bytes(), 64u) << "aliases count once";
}

}  // namespace
}  // namespace ane
