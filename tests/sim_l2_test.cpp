// The L2 store's readings of a result kept in L2 (src/sim/l2.h): a reader
// whose strides visit the result in its own order reads it plainly, with no
// table of addresses (eiln's softmax re-reads its 2,560 row maxima that way,
// and a table of 4 million indices made that run twice as slow and 65 MiB
// larger); a reader whose strides visit it in another order goes by address.
#include <gtest/gtest.h>

#include "../src/sim/l2.h"

namespace ane::sim::detail {
namespace {

// A reduction's result: one value per group, groups 0x40 bytes apart.
L2Result row_maxima(uint32_t groups) {
  L2Result r;
  r.dims = {groups, 1, 1, 1};
  r.group_stride = r.channel_stride = r.row_stride = 0x40;
  r.data.resize(groups);
  for (uint32_t g = 0; g < groups; ++g) r.data[g] = static_cast<uint16_t>(0x3c00 + g);
  return r;
}

// The value the view gives at the start of each of `rows` rows of `width`
// (an address table has one entry per element the operand reads, a plain
// view one per value stored).
std::vector<uint16_t> row_starts(const L2View& v, uint64_t rows, uint64_t width) {
  std::vector<uint16_t> out;
  for (uint64_t i = 0; i < rows; ++i) {
    if (!v.gathered.empty()) out.push_back(v.gathered[i * width]);
    else out.push_back(v.result->data[v.index.empty() ? i : v.index[i * width]]);
  }
  return out;
}

// An operand repeated along W (16 wide) that reads channels and rows of
// the given strides from L2.
Operand repeated_reader(uint32_t channels, uint32_t rows, uint64_t channel_stride, uint64_t row_stride) {
  Operand op;
  op.from = Operand::From::L2;
  op.dims = {1, channels, rows, 16};
  op.broadcast_w = true;
  op.l2_channel = channel_stride;
  op.l2_row = row_stride;
  op.l2_group = 0x100;
  return op;
}

TEST(L2Store, ReaderInTheResultsOrderReadsItPlainly) {
  L2Store l2;
  l2.put(0x100, row_maxima(4));
  const Operand op = repeated_reader(1, 4, 0x100, 0x40);  // one channel of 4 rows
  auto v = l2.get(0x100, op, "second source", 1);
  ASSERT_TRUE(v) << v.error().str();
  EXPECT_TRUE(v->index.empty());
  EXPECT_TRUE(v->gathered.empty());
  EXPECT_EQ(row_starts(*v, 4, 16), (std::vector<uint16_t>{0x3c00, 0x3c01, 0x3c02, 0x3c03}));
}

TEST(L2Store, ReaderInAnotherOrderGoesByAddress) {
  L2Store l2;
  l2.put(0x100, row_maxima(4));
  // 2 channels of 2 rows: (c, h) at 0x40 c + 0x80 h, transposed
  const Operand op = repeated_reader(2, 2, 0x40, 0x80);
  auto v = l2.get(0x100, op, "second source", 1);
  ASSERT_TRUE(v) << v.error().str();
  EXPECT_FALSE(v->index.empty());
  EXPECT_EQ(row_starts(*v, 4, 16), (std::vector<uint16_t>{0x3c00, 0x3c02, 0x3c01, 0x3c03}));
}

TEST(L2Store, ReaderOfPartOfTheResultGoesByAddress) {
  L2Store l2;
  l2.put(0x100, row_maxima(4));
  // rows 1 - 3 of the same order: not the result's own start
  const Operand op = repeated_reader(1, 3, 0x100, 0x40);
  auto v = l2.get(0x140, op, "second source", 1);
  ASSERT_TRUE(v) << v.error().str();
  EXPECT_EQ(row_starts(*v, 3, 16), (std::vector<uint16_t>{0x3c01, 0x3c02, 0x3c03}));
}

}  // namespace
}  // namespace ane::sim::detail
