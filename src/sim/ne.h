// Neural engine (section 6): pass-through or 1x1 convolution (MAC on BLAS),
// then bias, post-scale and the nonlinearity. Results stay unrounded; the
// destination DMA rounds them to fp16 once.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ane/sim.h"
#include "lut.h"
#include "plan.h"
#include "state.h"

namespace ane::sim::detail {

// Unrounded engine output in [C][H][W] order: fp32 while every step is
// exact in fp32 (or the model is fp32), fp64 otherwise.
struct Values {
  bool wide = false;
  Buf<float>* f = nullptr;   // when !wide
  Buf<double>* d = nullptr;  // when wide
};

// Section 6.1: x (fp32, from the source) through the post stage; with
// Mac::AccumulatePass the accumulator bias is added first.
Status ne_pass(Buf<float>* x, const TaskPlan& p, const LutReading* lut, const Options& opts, Workspace& ws,
               uint32_t task, Values& out, std::vector<std::string>& notes);

// OpMode 3 without a kernel: y[c] = max of x[c*n .. c*n+n-1] at every pixel
// (NaN propagates), x [C*n][hw], y [C][hw].
void ne_channel_max(const float* x, uint64_t channels, uint32_t n, uint64_t hw, float* y);
// The product of each n consecutive input channels (MACCfg OpMode 2 with
// KernelMode 1 and UnicastCin n). fp16 products are exact in fp32 for n = 2.
void ne_channel_product(const float* x, uint64_t channels, uint32_t n, uint64_t hw, float* y);
// y[c] = x[c*n] + ... + x[c*n+n-1] in fp32, in channel order.
void ne_channel_sum(const float* x, uint64_t channels, uint32_t n, uint64_t hw, float* y);

// Section 6.2: y[oc] = sum_ic w[oc][ic] * x[ic] (+ bias[oc]) at every pixel,
// then the post stage. x is [Cin][H*W], w is [Cout][Cin], bias null
// without BiasMode.
Status ne_conv(const Buf<float>& x, const Buf<float>& w, const float* bias, const TaskPlan& p,
               const LutReading* lut, const Options& opts, Workspace& ws, uint32_t task, Values& out,
               std::vector<std::string>& notes);

}  // namespace ane::sim::detail
