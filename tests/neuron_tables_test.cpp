// The Neuron table generator (ane/neuron_tables.h) against every Apple table
// it claims to reproduce, byte for byte: the tables in eiln's kernels (the
// corpus anec programs) and the v4.2.1 sigmoid table of the corpus pair; and
// against the independent reference tables of tests/reference/lut_ref where
// the corpus has none.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "ane/fp16.h"
#include "ane/neuron_tables.h"
#include "ane/program.h"
#include "reference/lut_ref.h"
#include "support.h"

namespace ane {
namespace {

using Table = std::array<uint16_t, 64>;

// The idx-th 0x80-byte table in a program's kernel data.
Table table_in(const std::string& file, size_t idx) {
  Table t{};
  auto p = open_program(test::corpus_dir() + "/" + file);
  EXPECT_TRUE(p.ok()) << file;
  if (!p) return t;
  const auto k = p->kernel_bytes();
  EXPECT_GE(k.size(), (idx + 1) * 0x80) << file;
  if (k.size() < (idx + 1) * 0x80) return t;
  for (int i = 0; i < 64; ++i) t[i] = static_cast<uint16_t>(k[idx * 0x80 + 2 * i] | k[idx * 0x80 + 2 * i + 1] << 8);
  return t;
}

std::string slot_diff(const Table& got, const Table& want) {
  std::string s;
  for (int i = 0; i < 64; ++i)
    if (got[i] != want[i]) s += fmt::format(" slot {}: generated {:04x}, Apple {:04x};", i, got[i], want[i]);
  return s;
}

struct Case {
  const char* type;
  const char* file;
  size_t table;
};

TEST(NeuronTables, EachReproducesEveryAppleTableOfItsFunction) {
  ANE_REQUIRE_CORPUS();
  const Case cases[] = {
      {"Tanh", "anec/unary/tanh.bin", 0},
      {"Exp2", "anec/unary/exp.bin", 0},
      {"Exp2", "anec/activation/softmax.bin", 0},
      {"Exp2", "anec/activation/logsoftmax.bin", 0},
      {"Log2", "anec/unary/log2.bin", 0},
      {"Log2", "anec/unary/log.bin", 0},
      {"Log2", "anec/activation/logsoftmax.bin", 1},
      {"Inv", "anec/unary/inv.bin", 0},
      {"Inv", "anec/binary/div.bin", 0},
      {"Inv", "anec/unary/norm.bin", 0},
      {"Sqrt", "anec/unary/sqrt.bin", 0},
      {"Sqrt", "anec/unary/norm.bin", 2},
      {"Sign", "anec/unary/sign.bin", 0},
      {"ReLU6", "anec/activation/relu6.bin", 0},
      {"LeakyReLU", "anec/activation/leakyrelu.bin", 0},
      {"Frac", "anec/unary/ceil.bin", 0},
      {"Int", "anec/unary/ceil.bin", 1},
      {"GELU", "anec/activation/gelu.bin", 0},
      {"Sigmoid", "hwx/sigmoid.hwx", 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(fmt::format("{} against {} table {}", c.type, c.file, c.table));
    auto t = neuron_table(c.type);
    ASSERT_TRUE(t.has_value());
    const Table want = table_in(c.file, c.table);
    EXPECT_EQ(t->slots, want) << slot_diff(t->slots, want);
  }
}

// Exp is the Exp2 table after x log2(e): eiln's exp kernel scales by PostScale
// 0x3dc5 (fp16 log2 e); the generator says so.
TEST(NeuronTables, ExpIsExp2AfterAnInputScale) {
  auto exp = neuron_table("Exp"), exp2 = neuron_table("Exp2");
  ASSERT_TRUE(exp && exp2);
  EXPECT_EQ(exp->slots, exp2->slots);
  EXPECT_EQ(exp->post_scale, double_to_fp16(1.4426950408889634));
  EXPECT_EQ(exp2->post_scale, 0x3c00);
}

// Rsqrt has no corpus table: the independent reference's (written from the
// table specification, tests/reference) is the check.
TEST(NeuronTables, RsqrtAndTheOtherTranscendentalsAgreeWithTheReference) {
  const std::pair<const char*, ane_ref::lut::Table> refs[] = {
      {"Rsqrt", ane_ref::lut::rsqrt_table()}, {"Sqrt", ane_ref::lut::sqrt_table()},
      {"Inv", ane_ref::lut::recip_table()},   {"Log2", ane_ref::lut::log2_table()},
      {"Exp2", ane_ref::lut::exp2_table()},   {"Tanh", ane_ref::lut::tanh_table()},
  };
  for (const auto& [type, want] : refs) {
    SCOPED_TRACE(type);
    auto t = neuron_table(type);
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->slots, want) << slot_diff(t->slots, want);
  }
}

TEST(NeuronTables, LeakyReLUTakesItsSlope) {
  auto t = neuron_table("LeakyReLU", NeuronArgs{0.2});
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->slots[37], double_to_fp16(0.2));
  EXPECT_EQ(t->slots[39], 0x3c00);
}

// Clip is ReLU6's table with its own range: Clip 0..6 is eiln's relu6 table.
TEST(NeuronTables, ClipIsReLU6WithItsRange) {
  NeuronArgs six;
  six.min = 0, six.max = 6;
  auto clip6 = neuron_table("Clip", six), relu6 = neuron_table("ReLU6");
  ASSERT_TRUE(clip6 && relu6);
  EXPECT_EQ(clip6->slots, relu6->slots);
  auto hardtanh = neuron_table("Clip");
  ASSERT_TRUE(hardtanh.has_value());
  EXPECT_EQ(hardtanh->slots[0], 0xbc00);  // lo -1
  EXPECT_EQ(hardtanh->slots[1], 0x3c00);  // hi 1
  EXPECT_EQ(hardtanh->slots[2], 0xbc00);  // below: -1
  EXPECT_EQ(hardtanh->slots[3], 0x3c00);  // above: 1
}

TEST(NeuronTables, OnlyGeluAndSiluAreCopiedAndUnknownTypesHaveNoTable) {
  for (const auto& type : neuron_table_types()) {
    auto t = neuron_table(type);
    ASSERT_TRUE(t.has_value()) << type;
    EXPECT_EQ(t->generated, type != "GELU" && type != "SiLU") << type;
    EXPECT_FALSE(t->rule.empty()) << type;
  }
  EXPECT_FALSE(neuron_table("ReLU").has_value());  // NonlinearMode 1, no table
  EXPECT_FALSE(neuron_table("Elu").has_value());
  EXPECT_FALSE(neuron_table("").has_value());
}

}  // namespace
}  // namespace ane
