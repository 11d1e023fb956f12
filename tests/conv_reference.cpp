#include "conv_reference.h"

#include <algorithm>
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "ane/fp16.h"

namespace ane::test {

uint32_t reference_row_step(const oracle::ConvRecord& c) {
  const uint64_t work = uint64_t{c.cout} * c.hout * c.wout * (c.cin / c.groups) * c.kh * c.kw;
  return static_cast<uint32_t>(std::max<uint64_t>(1, work >> 27));
}

bool checked_row(const oracle::ConvRecord& c, uint32_t oy) {
  const uint32_t step = reference_row_step(c);
  return oy % step == 0 || oy + 1 == c.hout;
}

LIBANE_REFERENCE_LOOP void reference_conv(const oracle::ConvRecord& c, const std::vector<uint16_t>& w, const std::vector<uint16_t>& bias,
                    const std::vector<uint16_t>& x, std::vector<double>& y, std::vector<double>& mag) {
  const uint32_t cin_g = c.cin / c.groups, cout_g = c.cout / c.groups;
  y.assign(uint64_t{c.cout} * c.hout * c.wout, 0);
  mag = y;
  // Every weight and input as a double once; the sums below read each many times.
  std::vector<double> wd(w.size()), xd(x.size());
  for (size_t i = 0; i < w.size(); ++i) wd[i] = fp16_to_float(w[i]);
  for (size_t i = 0; i < x.size(); ++i) xd[i] = fp16_to_float(x[i]);
  // Output-row by output-row sums, one weight at a time along each row (the
  // rows' values are sums of exact products, so the order is immaterial at
  // the tolerance checked).
  for (uint32_t oc = 0; oc < c.cout; ++oc) {
    const uint32_t g = oc / cout_g;
    const double b = c.bias ? fp16_to_float(bias[oc]) : 0.0;
    for (uint32_t oy = 0; oy < c.hout; ++oy) {
      if (!checked_row(c, oy)) continue;
      double* yrow = &y[(uint64_t{oc} * c.hout + oy) * c.wout];
      double* mrow = &mag[(uint64_t{oc} * c.hout + oy) * c.wout];
      std::fill_n(yrow, c.wout, b);
      std::fill_n(mrow, c.wout, std::fabs(b));
      for (uint32_t i = 0; i < cin_g; ++i) {
        const uint32_t ic = g * cin_g + i;
        for (uint32_t ky = 0; ky < c.kh; ++ky) {
          const int64_t iy = int64_t{oy} * c.stride + ky - c.pad_top;
          if (iy < 0 || iy >= c.hin) continue;
          const double* xrow = &xd[(uint64_t{ic} * c.hin + uint64_t(iy)) * c.win];
          for (uint32_t kx = 0; kx < c.kw; ++kx) {
            const double wv = wd[((uint64_t{oc} * cin_g + i) * c.kh + ky) * c.kw + kx];
            // Output columns [ox0, ox1) whose input column ox * stride - pad_left + kx is inside.
            const int64_t shift = int64_t{kx} - c.pad_left;
            uint32_t ox0 = 0, ox1 = c.wout;
            while (ox0 < ox1 && int64_t{ox0} * c.stride + shift < 0) ++ox0;
            while (ox1 > ox0 && int64_t{ox1 - 1} * c.stride + shift >= int64_t{c.win}) --ox1;
            const double* xs = xrow + (int64_t{ox0} * c.stride + shift);
            for (uint32_t ox = ox0; ox < ox1; ++ox, xs += c.stride) {
              yrow[ox] += wv * *xs;
              mrow[ox] += std::fabs(wv * *xs);
            }
          }
        }
      }
    }
  }
}

double expect_conv_outputs(const oracle::ConvRecord& c, const std::vector<double>& ref,
                           const std::vector<double>& mag, const std::vector<uint16_t>& y, const std::string& name) {
  EXPECT_EQ(y.size(), ref.size()) << name;
  if (y.size() != ref.size()) return 0;
  const double terms = double(c.cin / c.groups) * c.kh * c.kw + 1;
  double worst = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!checked_row(c, static_cast<uint32_t>(i / c.wout % c.hout))) continue;
    const double got = fp16_to_float(y[i]);
    const double tol = std::ldexp(std::fabs(ref[i]), -11) + terms * std::ldexp(mag[i], -24) + std::ldexp(1.0, -25);
    // Index weights wrap through fp16's infinities and NaNs: those outputs
    // must come out as the same special value (or either side of the
    // overflow threshold when the sum is within tolerance of it).
    const uint16_t want = double_to_fp16(ref[i]);
    if (fp16_is_nan(want) || std::isnan(ref[i])) {
      EXPECT_TRUE(fp16_is_nan(y[i])) << name << " output " << i << ": got " << got << ", reference NaN";
      if (!fp16_is_nan(y[i])) return worst;
      continue;
    }
    if (fp16_is_inf(want) || fp16_is_inf(y[i])) {
      const bool near = std::fabs(std::fabs(ref[i]) - 65520.0) <= tol;
      EXPECT_TRUE(y[i] == want || near) << name << " output " << i << ": got " << got << ", reference " << ref[i];
      if (!(y[i] == want || near)) return worst;
      continue;
    }
    worst = std::max(worst, std::fabs(got - ref[i]) / tol);
    EXPECT_LE(std::fabs(got - ref[i]), tol) << name << " output " << i << ": got " << got << ", reference " << ref[i];
    if (std::fabs(got - ref[i]) > tol) return worst;
  }
  return worst;
}

sim::Tensor conv_input(const oracle::ConvRecord& c) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> u(-1, 1);
  sim::Tensor x;
  x.nchw = {1, c.cin, c.hin, c.win};
  x.data.resize(x.elements());
  for (auto& v : x.data) v = float_to_fp16(u(rng));
  return x;
}

uint32_t expect_conv_task_matches(const oracle::ConvRecord& c, const ConvFieldReader& get, bool single_task) {
  EXPECT_EQ(get("Common.ConvCfg.Kw"), c.kw);
  EXPECT_EQ(get("Common.ConvCfg.Kh"), c.kh);
  EXPECT_EQ(get("Common.ConvCfg.Px"), c.pad_left);
  EXPECT_EQ(get("Common.ConvCfg.Py"), c.pad_top);
  EXPECT_EQ(get("Common.ConvCfg.Sx"), c.stride);
  EXPECT_EQ(get("Common.ConvCfg.Sy"), c.stride);
  EXPECT_EQ(get("Common.InDim.Win"), c.win);
  EXPECT_EQ(get("Common.InDim.Hin"), c.hin);
  EXPECT_EQ(get("Common.OutDim.Wout"), c.wout);
  EXPECT_EQ(get("Common.OutDim.Hout"), c.hout);
  EXPECT_EQ(get("NE.MACCfg.BiasMode"), c.bias ? 1u : 0u);
  EXPECT_EQ(get("NE.KernelCfg.SparseFmt"), c.stride == 2 ? 1u : 0u);
  const uint32_t groups = get("Common.GroupConvCfg.NumGroups");
  if (c.depthwise()) {
    EXPECT_EQ(get("Common.GroupConvCfg.UnicastEn"), 1u);
    EXPECT_EQ(groups, 1u);
    EXPECT_EQ(get("Common.Cin.Cin"), get("Common.Cout.Cout"));
  } else {
    EXPECT_EQ(get("Common.GroupConvCfg.UnicastEn"), 0u);
    EXPECT_EQ(get("Common.Cin.Cin"), c.cin / c.groups);
    if (single_task) {
      EXPECT_EQ(groups, c.groups);
    }
  }
  return get("Common.Cout.Cout") * (c.depthwise() ? 1 : groups);
}

ConvKernelShape conv_kernel_shape(const ConvFieldReader& get) {
  ConvKernelShape s;
  s.depthwise = get("Common.GroupConvCfg.UnicastEn") != 0;
  s.groups = get("Common.GroupConvCfg.NumGroups");
  s.cin = get("Common.Cin.Cin");
  s.cout = get("Common.Cout.Cout");
  s.kh = get("Common.ConvCfg.Kh");
  s.kw = get("Common.ConvCfg.Kw");
  s.bias = get("NE.MACCfg.BiasMode") != 0;
  s.ocg = get("Common.ConvCfg.OCGSize");
  s.sparse = get("NE.KernelCfg.SparseFmt") != 0;
  s.small_source = get("Common.Cfg.SmallSourceMode") != 0;
  return s;
}

Expected<PackedConvKernel> pack_task_weights(const oracle::Constants& k, const oracle::ConvRecord& c,
                                             const ConvFieldReader& get, uint32_t mask_group_slots) {
  ConvKernelShape s = conv_kernel_shape(get);
  s.mask_group_slots = mask_group_slots;
  const uint64_t first =
      uint64_t{get("TileDMADst.BaseAddr.Addr")} / std::max<uint32_t>(1, get("TileDMADst.PlaneStride.PlaneStride"));
  const uint64_t red = uint64_t{c.cin / c.groups} * c.kh * c.kw;
  if (first + s.outputs() > c.cout || s.reduction() != red) {
    ADD_FAILURE() << "channels " << first << "+" << s.outputs() << " of " << c.cout << ", reduction "
                  << s.reduction() << " of " << red;
    return make_error("the task's channels do not fit the record");
  }
  ConvWeights w;
  w.weights.assign(k.weights.begin() + first * red, k.weights.begin() + (first + s.outputs()) * red);
  if (c.bias) w.bias.assign(k.bias.begin() + first, k.bias.begin() + first + s.outputs());
  return pack_conv_kernel(s, w);
}

}  // namespace ane::test
