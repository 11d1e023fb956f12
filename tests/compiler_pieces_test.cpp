// Width pieces (src/compiler/plan_pieces.cpp): a task whose one L2 row would
// not fit the 17-bit row-stride fields becomes several tasks on column ranges
// of the same tensors. Register values are computed by hand from the rule
// (pieces of equal width, a multiple of 32 columns, the fewest that fit);
// results are checked against tests/reference, written apart from the
// simulator, and the shared kernel against a compile of one piece's width.
#include <cmath>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "ane/compiler.h"
#include "ane/fp16.h"
#include "ane/program.h"
#include "ane/registers.h"
#include "ane/sim.h"
#include "compile_net.h"
#include "plist_builder.h"
#include "reference/ane_ref.h"
#include "reference/lut_ref.h"
#include "support.h"

namespace ane {
namespace {

using namespace test::pl;
namespace ref = ane_ref;

// A 1x1 convolution 2048 -> 16 on one row of `width` positions: one L2 row
// of all 1024 columns is 2048 x 0x800 bytes = 4 MiB (+0x30), over 0x1ffff0.
constexpr int kCin = 2048, kCout = 16, kWidth = 1024;

Net conv_row(int width) {
  Net n;
  n.inputs = {{"x", input(kCin, width)}};
  n.units = {{"y", conv("x", kCout)}};
  n.outputs = {{"y@output", output("y")}};
  n.weights = {"w.weights"};
  return n;
}

Expected<CompiledProgram> compile_in(test::TempDir& dir, const Net& net, const Bytes& weights) {
  test::write_text(dir.file("net.plist"), net.xml());
  if (!weights.empty()) test::write_bytes(dir.file("w.weights"), weights);
  auto n = load_network(dir.file("net.plist"));
  if (!n) return n.error();
  return compile_network(*n);
}

uint32_t reg(const CompiledProgram& p, size_t task, const char* field) {
  auto v = p.tasks.at(task).regs.get(field);
  EXPECT_TRUE(v) << field;
  return v ? *v : 0xdeadbeef;
}

TEST(WidthPieces, ConvTooWideForOneL2RowBecomesThreePiecesSharingOneKernel) {
  test::TempDir dir;
  auto p = compile_in(dir, conv_row(kWidth), Bytes(size_t{kCin} * kCout * 2, 0));
  ASSERT_TRUE(p) << p.error().str();
  // Two pieces of 512 columns need 2048 x 0x400 + 0x30 bytes: too many. Three
  // of ceil(1024 / 3) = 342 -> 352 columns (the last 320) need 0x160030.
  ASSERT_EQ(p->tasks.size(), 3u);
  const uint32_t cols[] = {352, 352, 320};
  for (size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(fmt::format("piece {}", i));
    EXPECT_EQ(reg(*p, i, "Common.InDim.Win"), cols[i]);
    EXPECT_EQ(reg(*p, i, "Common.OutDim.Wout"), cols[i]);
    // 352 columns = 704 bytes = 11 DMA units of 64 bytes.
    EXPECT_EQ(reg(*p, i, "TileDMASrc.BaseAddr.Addr"), 11 * i);
    EXPECT_EQ(reg(*p, i, "TileDMADst.BaseAddr.Addr"), 11 * i);
    EXPECT_EQ(reg(*p, i, "TileDMASrc.RowStride.Stride"), 2048u / 64);  // the whole tensor's strides
    EXPECT_EQ(reg(*p, i, "L2.SourceRowStride.Stride"), (uint64_t{kCin} * ((cols[i] * 2 + 15) / 16 * 16) + 0x30) / 16);
    EXPECT_EQ(reg(*p, i, "KernelDMASrc.CoeffBaseAddr[0].Addr"), reg(*p, 0, "KernelDMASrc.CoeffBaseAddr[0].Addr"));
    EXPECT_EQ(reg(*p, i, "Header[9].KBE0"), 1u);
  }
  // One copy of the kernel: __const and the relocations as in a compile of
  // one piece's width, the relocations once per piece.
  test::TempDir one;
  auto narrow = compile_in(one, conv_row(352), Bytes(size_t{kCin} * kCout * 2, 0));
  ASSERT_TRUE(narrow) << narrow.error().str();
  ASSERT_EQ(narrow->tasks.size(), 1u);
  const auto* c = p->file.find_section("__TEXT", "__const");
  const auto* cn = narrow->file.find_section("__TEXT", "__const");
  ASSERT_TRUE(c && cn);
  EXPECT_EQ(c->size, cn->size);
  EXPECT_EQ(p->file.find_section("__TEXT", "__text")->nreloc,
            3 * narrow->file.find_section("__TEXT", "__text")->nreloc);
}

TEST(WidthPieces, SplitConvComputesEveryColumn) {
  const auto w = test::uniform_fp16(size_t{kCin} * kCout, -0.05, 0.05, 11);
  const auto x = test::uniform_fp16(size_t{kCin} * kWidth, -1, 1, 12);
  test::TempDir dir;
  test::write_bytes(dir.file("w.weights"), test::fp16_le_bytes(w));
  auto p = test::compile_net(conv_row(kWidth), dir);
  ASSERT_TRUE(p.ok()) << p.error().str();
  ASSERT_EQ(p->tasks.size(), 3u);
  auto s = sim::Simulator::create(*p);
  ASSERT_TRUE(s.ok()) << s.error().str();
  sim::Tensor in;
  in.nchw = {1, kCin, 1, kWidth};
  in.data = x;
  ASSERT_TRUE(s->set_input("x", in).ok());
  ASSERT_TRUE(s->run().ok());
  auto out = s->read_buffer("y@output");
  ASSERT_TRUE(out.ok()) << out.error().str();
  ASSERT_EQ(out->data.size(), size_t{kCout} * kWidth);
  ref::Tensor3 xt{kCin, 1, kWidth, x};
  int bad = 0;
  // Every column (each piece and its edges), four of the output channels
  // (the reference sums in software: all 16 would cost seconds under ASan).
  for (int oc : {0, 5, 10, 15})
    for (int px = 0; px < kWidth; ++px) {
      const uint16_t* row = &w[size_t{static_cast<size_t>(oc)} * kCin];
      const double exact = ref::conv_sum(xt, px, row, 0, ref::Acc::Double);
      // fp32 accumulation of 2048 exact products, then one fp16 rounding.
      const double bound = ref::conv_abs_sum(xt, px, row, 0) * kCin * std::ldexp(1.0, -24) +
                           std::ldexp(std::fabs(exact), -11) + std::ldexp(1.0, -24);
      const double got = fp16_to_float(out->data[static_cast<size_t>(oc) * kWidth + px]);
      if (!(std::fabs(got - exact) <= bound) && bad++ < 3)
        ADD_FAILURE() << fmt::format("channel {} column {}: {}, reference {}", oc, px, got, exact);
    }
}

TEST(WidthPieces, TablePassThroughPiecesShareTheTable) {
  // 1024 channels x 1100 columns: one row is 1024 x 0x8a0 bytes = 0x228000.
  constexpr int c = 1024, width = 1100;
  Net n;
  n.inputs = {{"x", input(c, width)}};
  n.units = {{"y", unit("x", "Neuron", {{"Type", str("Sigmoid")}})}};
  n.outputs = {{"y@output", output("y")}};
  test::TempDir dir;
  auto p = test::compile_net(n, dir);
  ASSERT_TRUE(p.ok()) << p.error().str();
  ASSERT_EQ(p->tasks.size(), 2u);  // 2 x 576 columns: 1024 x 0x480 = 0x120000 (the last 524)
  const auto k = p->kernel_bytes();
  ASSERT_GE(k.size(), 0x80u);
  ref::lut::Table table{};
  for (int i = 0; i < 64; ++i) table[i] = static_cast<uint16_t>(k[2 * i] | k[2 * i + 1] << 8);
  std::vector<uint16_t> x(size_t{c} * width);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint16_t>(i * 7919);  // every pattern, scattered
  auto s = sim::Simulator::create(*p);
  ASSERT_TRUE(s.ok()) << s.error().str();
  sim::Tensor in;
  in.nchw = {1, c, 1, width};
  in.data = x;
  ASSERT_TRUE(s->set_input("x", in).ok());
  ASSERT_TRUE(s->run().ok());
  auto out = s->read_buffer("y@output");
  ASSERT_TRUE(out.ok());
  int bad = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (fp16_is_nan(x[i])) continue;
    const uint16_t want = ref::lut::double_to_half(ref::lut::eval(table, fp16_to_float(x[i])));
    if (out->data[i] != want && bad++ < 3)
      ADD_FAILURE() << fmt::format("element {} (column {}): {:#06x}, want {:#06x}", i, i % width, out->data[i], want);
  }
}

TEST(WidthPieces, TasksWhoseColumnsInteractAreRefusedByName) {
  // A 3x3 window would need overlapping pieces.
  Net n = conv_row(kWidth);
  n.units = {{"y", conv("x", kCout, with(with(conv_params(), "KernelWidth", integer(3)), "KernelHeight",
                                          integer(3)))}};
  test::TempDir dir;
  n.inputs = {{"x", input(kCin, kWidth, 3)}};
  auto p = compile_in(dir, n, Bytes(size_t{kCin} * kCout * 9 * 2, 0));
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message.find("only 1x1 stride-1 convolutions and neural-engine pass-throughs are split"),
            std::string::npos)
      << p.error().str();
}

// The planar engine's second source has no base register to offset, so an
// element-wise task is not split by width. One whose rows of all channels
// do not fit L2 (two sources and the result, TileHeight rows each) gets a
// smaller planar block instead, its height halved first, then its width
// (docs/compiler.md, "Taller tensors"), and computes the sum exactly.
TEST(WidthPieces, LargeElementWiseTasksTakeSmallerBlocks) {
  struct Case {
    uint32_t c, h, w;
    uint32_t block, strip, tile_height;  // by hand from the rule
  };
  // [1,1024,1,1100]: one row; eiln's block 512 x 1 needs 3 x 1024 strips of
  // 0x400 bytes, past 0x1ffff0: 256 x 1 (strips of 0x200). [1,512,32,32]:
  // 32 x 32 needs 3 x 32 rows of 512 x 0x40 bytes: 32 x 16, 16 rows a tile.
  for (const Case k : {Case{1024, 1, 1100, 0x08, 0x200, 1}, Case{512, 32, 32, 0x45, 0x40, 16}}) {
    SCOPED_TRACE(fmt::format("[1,{},{},{}]", k.c, k.h, k.w));
    Net add;
    add.inputs = {{"a", input(static_cast<int>(k.c), static_cast<int>(k.w), static_cast<int>(k.h))},
                  {"b", input(static_cast<int>(k.c), static_cast<int>(k.w), static_cast<int>(k.h))}};
    add.units = {{"y", unit2("a", "b", "ElementWise", {{"Type", str("Add")}})}};
    add.outputs = {{"y@output", output("y")}};
    test::TempDir dir;
    auto q = compile_in(dir, add, {});
    ASSERT_TRUE(q.ok()) << q.error().str();
    ASSERT_EQ(q->tasks.size(), 1u);
    const auto& db = RegisterDatabase::h13();
    const RegisterImage& r = q->tasks[0].regs;
    EXPECT_EQ(r.get(*db.find("Common.Unk0002C.Value")), k.block);
    EXPECT_EQ(r.get(*db.find("L2.SourceChannelStride.Stride")), k.strip / 16);
    EXPECT_EQ(r.get(*db.find("Common.TileCfg.TileHeight")), k.tile_height);
    auto program = parse_program(q->bytes, "add.hwx");
    ASSERT_TRUE(program.ok());
    auto s = sim::Simulator::create(*program);
    ASSERT_TRUE(s.ok()) << s.error().str();
    sim::Tensor a, b;
    a.nchw = b.nchw = {1, k.c, k.h, k.w};
    a.data = test::uniform_fp16(k.c * k.h * k.w, -4, 4, 1);
    b.data = test::uniform_fp16(k.c * k.h * k.w, -4, 4, 2);
    ASSERT_TRUE(s->set_input("a", a).ok() && s->set_input("b", b).ok());
    ASSERT_TRUE(s->run().ok());
    auto y = s->read_buffer("y@output");
    ASSERT_TRUE(y.ok());
    for (size_t i = 0; i < a.data.size(); ++i)
      ASSERT_EQ(y->data[i], float_to_fp16(fp16_to_float(a.data[i]) + fp16_to_float(b.data[i]))) << "element " << i;
  }
}

}  // namespace
}  // namespace ane
