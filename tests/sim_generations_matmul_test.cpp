// Matmuls from Apple's compiler (mil-hwx-compiler research/oracles/h14 -
// h18: on H14 the base campaign's matmul_m1_k256_n256_ty1, every third
// h14mv_ probe, whose weights carry known patterns, and an env_mm_ sample;
// on H15 - H18 a sample of the base campaign; tests/fixtures/oracles/h1x/
// matmul, README there). Apple runs `product = matmul(x, w, transpose_y =
// true)` as two tasks on every generation: a pass that lays x's rows
// channels innermost in L2, then a 1x1 convolution with K input and N output
// channels over the M rows, written channels innermost. For every record:
//  * H13's convolution packing of the weights the record's formula gives
//    (the blob header quirk included) hashes to its kernel section (H14 -
//    H15: __const; H16+: __kern_0);
//  * the simulator runs it on random inputs and agrees with the product in
//    double, within the fp32-accumulation tolerance of the conv records; or
//    refuses it by name.
#include <cmath>
#include <iostream>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ane/fp16.h"
#include "ane/program.h"
#include "ane/sha256.h"
#include "ane/sim.h"
#include "packed_conv_kernel.h"
#include "oracle_fixture.h"
#include "packed_fixture.h"
#include "reference_loop.h"
#include "support.h"

namespace ane {
namespace {

// Apple's envelope campaign also multiplies two function inputs, or a
// constant x by an input w: other programs (a kernel read from a tile-DMA
// tensor, interleaved formats), refused by name.
bool runtime_weights(const packed::Fixture& f) {
  const auto w = f.params.find("w_storage"), x = f.params.find("x_storage");
  return (w != f.params.end() && w->second == "runtime") || (x != f.params.end() && x->second == "blob");
}

struct Matmul {
  packed::Fixture fx;
  Program program;
  uint64_t m = 0, k = 0, n = 0;
  oracle::ConvRecord conv;  // the 1x1 convolution it runs as
  oracle::Constants weights;
};

Matmul load_matmul(const std::string& path) {
  Matmul mm;
  auto fx = packed::load(path);
  EXPECT_TRUE(fx.ok()) << fx.error().str();
  if (!fx) return mm;
  mm.fx = std::move(*fx);
  auto p = parse_program(packed::assemble_hwx(mm.fx), mm.fx.file);
  EXPECT_TRUE(p.ok()) << p.error().str();
  if (p) mm.program = std::move(*p);
  mm.m = std::stoull(mm.fx.params.at("rows"));
  mm.k = std::stoull(mm.fx.params.at("reduction"));
  mm.n = std::stoull(mm.fx.params.at("columns"));
  if (runtime_weights(mm.fx)) return mm;
  oracle::ConvRecord& c = mm.conv;
  c.cin = static_cast<uint32_t>(mm.k);
  c.cout = static_cast<uint32_t>(mm.n);
  c.hin = c.hout = 1;
  c.win = c.wout = static_cast<uint32_t>(mm.m);
  auto w = oracle::rebuild_constants(test::as_oracle(mm.fx), mm.n * mm.k, 0);
  EXPECT_TRUE(w.ok()) << w.error().message;
  if (w) mm.weights = std::move(*w);
  return mm;
}

// H16+ keep the weights in __kern_0, H14 - H15 in __const.
const packed::Section& kernel_section(const packed::Fixture& f) { return f.kernel.present ? f.kernel : f.constant; }

Expected<Program> with_weights(const packed::Fixture& f, const Bytes& section) {
  return parse_program(f.kernel.present ? packed::assemble_hwx(f, nullptr, &section) : packed::assemble_hwx(f, &section),
                       f.file);
}

// y[m][n] = sum over k of x[m][k] w[n][k] in double (each fp16 product is
// exact), with the two error bounds below: K 2^-24 sum |w x| comes from
// `mag`; `fixed` is the q15.16 accumulator's: 2^-17 per product whose
// operands' exponents add to -16 or more, else |w x| (the product is dropped).
struct Sums {
  double want = 0, mag = 0, fixed = 0;
};
LIBANE_REFERENCE_LOOP std::vector<Sums> reference_sums(const std::vector<uint16_t>& x, const std::vector<uint16_t>& w,
                                                       uint64_t m, uint64_t n, uint64_t k) {
  if (x.size() < m * k || w.size() < n * k) return {};
  auto exponent = [](double v) { return std::max(std::ilogb(v), -14); };  // subnormals: -14
  // Each operand's value and exponent once (the sums read them m, n times).
  auto values_of = [&](const std::vector<uint16_t>& h, std::vector<double>& v, std::vector<int>& e) {
    v.resize(h.size());
    e.resize(h.size());
    for (size_t i = 0; i < h.size(); ++i) {
      v[i] = fp16_to_float(h[i]);
      e[i] = exponent(v[i]);
    }
  };
  std::vector<double> xs, ws;
  std::vector<int> xe, we;
  values_of(x, xs, xe);
  values_of(w, ws, we);
  std::vector<Sums> out(m * n);
  for (uint64_t r = 0; r < m; ++r)
    for (uint64_t col = 0; col < n; ++col) {
      Sums& s = out[r * n + col];
      // Plain pointers: the sanitizer build does not inline operator[].
      const double *xv = xs.data() + r * k, *wv = ws.data() + col * k;
      const int *xx = xe.data() + r * k, *wx = we.data() + col * k;
      for (uint64_t i = 0; i < k; ++i) {
        const double p = xv[i] * wv[i];
        s.want += p;
        s.mag += std::fabs(p);
        if (p != 0) s.fixed += xx[i] + wx[i] >= -16 ? 0x1p-17 : std::fabs(p);
      }
    }
  return out;
}

class GenerationMatmul : public ::testing::TestWithParam<std::string> {};

TEST_P(GenerationMatmul, H13sConvolutionPackingOfTheWeightsHashesToTheRecord) {
  const Matmul mm = load_matmul(GetParam());
  if (runtime_weights(mm.fx)) return;  // no constant weights
  ASSERT_EQ(test::packed_conv_tasks(mm.program).size(), 1u);
  const packed::Section& k = kernel_section(mm.fx);
  const auto s = test::pack_conv_section(mm.program, mm.conv, mm.weights, k.size, mm.fx.name);
  ASSERT_TRUE(s.section) << s.refusal;
  EXPECT_EQ(sha256_hex(*s.section), k.sha256) << "H13's packing differs from Apple's bytes";
}

TEST_P(GenerationMatmul, SimulatorRunsTheProductOrRefusesByName) {
  const Matmul mm = load_matmul(GetParam());
  if (runtime_weights(mm.fx)) {
    auto s = sim::Simulator::create(mm.program);
    Status st = s ? s->run() : Status(s.error());
    ASSERT_FALSE(st.ok()) << mm.fx.name << " ran, but the simulator does not claim it";
    EXPECT_EQ(st.error().message.rfind("unsupported: ", 0), 0u) << st.error().message;
    std::cout << "[ refused  ] " << mm.fx.name << ": " << st.error().message << "\n";
    return;
  }
  const auto s = test::pack_conv_section(mm.program, mm.conv, mm.weights, kernel_section(mm.fx).size, mm.fx.name);
  ASSERT_TRUE(s.section) << s.refusal;
  auto program = with_weights(mm.fx, *s.section);
  ASSERT_TRUE(program.ok()) << program.error().str();
  ASSERT_FALSE(mm.fx.tensors.empty());
  sim::Tensor x;
  const auto& in = mm.fx.tensors.front().shape;
  ASSERT_EQ(in.size(), 4u);
  for (int d = 0; d < 4; ++d) x.nchw[d] = static_cast<uint32_t>(in[d]);
  ASSERT_EQ(x.elements(), mm.m * mm.k);
  x.data = test::uniform_fp16(x.elements(), -1, 1, 41);
  auto run = test::run_one_input(*program, x);
  ASSERT_TRUE(run.ok()) << run.error().str();
  ASSERT_EQ(run->data.size(), mm.m * mm.n);
  // y[m][n] = sum over k of x[m][k] w[n][k]. H14 - H15 (acc=fp32): fp32
  // accumulation of K fp16 products (each exact in fp32) errs by at most
  // K 2^-24 sum |w x|. H16 - H18 (acc=q15.16): each product is rounded to
  // 2^-16 (at most 2^-17 off) where its operands' exponents add to -16 or
  // more, else dropped (|w x| off); the sums are exact (far below 32768).
  // The rounding to fp16 adds half an ulp.
  const bool fixed = program->generation >= Generation::H16;
  const std::vector<Sums> sums = reference_sums(x.data, mm.weights.weights, mm.m, mm.n, mm.k);
  ASSERT_EQ(sums.size(), mm.m * mm.n);
  double worst = 0;
  for (uint64_t r = 0; r < mm.m; ++r)
    for (uint64_t col = 0; col < mm.n; ++col) {
      const auto [want, mag, fixed_bound] = sums[r * mm.n + col];
      const double got = fp16_to_float(run->data[r * mm.n + col]);
      const double ulp = std::ldexp(1.0, std::max(std::ilogb(std::max(std::fabs(want), 0x1p-14)), -14) - 10);
      const double bound = (fixed ? fixed_bound : double(mm.k) * 0x1p-24 * mag) + ulp / 2;
      worst = std::max(worst, std::fabs(got - want) / bound);
      ASSERT_LE(std::fabs(got - want), bound) << mm.fx.name << " y[" << r << "][" << col << "]";
    }
  std::cout << "[ ran      ] " << mm.fx.name << ": worst error " << fmt::format("{:.2f}", worst) << " of tolerance\n";
}

INSTANTIATE_TEST_SUITE_P(Records, GenerationMatmul, ::testing::ValuesIn(packed::operation_fixture_files("matmul")), packed::ParamName());

}  // namespace
}  // namespace ane
