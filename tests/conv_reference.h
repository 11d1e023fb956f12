// The direct-loop convolution the conv record tests judge the simulator
// against (H13 and H14 records alike), and its tolerance. Written from the
// MIL definition, not from libane's units.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ane/conv_kernel.h"
#include "ane/sim.h"
#include "oracle_fixture.h"
#include "reference_loop.h"

namespace ane::test {

// For the largest records only every step-th output row of each channel is
// computed (and checked): rows 0 and the last (the padding) always, so the
// loops stay near 2^27.
uint32_t reference_row_step(const oracle::ConvRecord& c);
bool checked_row(const oracle::ConvRecord& c, uint32_t oy);

// y[oc][oy][ox] = bias[oc] + sum over the group's input channels and the
// kernel window of w * x, zero outside the input. Double precision; also
// returns sum |w * x| per output for the tolerance.
void reference_conv(const oracle::ConvRecord& c, const std::vector<uint16_t>& w, const std::vector<uint16_t>& bias,
                    const std::vector<uint16_t>& x, std::vector<double>& y, std::vector<double>& mag);

// Checks the simulator's fp16 outputs against the reference (gtest
// assertions naming `name`); returns the worst error as a fraction of the
// tolerance. fp32 accumulation of R fp16 products (each exact in fp32) errs
// by at most R * 2^-24 * sum|w x|; the single rounding to fp16 adds half an
// ulp (2^-11 relative, 2^-25 absolute below the normal range).
double expect_conv_outputs(const oracle::ConvRecord& c, const std::vector<double>& ref,
                           const std::vector<double>& mag, const std::vector<uint16_t>& y, const std::string& name);

// The random input the conv record tests run: uniform in [-1, 1], seed 17.
sim::Tensor conv_input(const oracle::ConvRecord& c);

// A convolution task's registers by H13 name, as one generation reads them
// (its own names, and what its tasks leave unwritten).
using ConvFieldReader = std::function<uint32_t(const char* h13_name)>;

// Checks one task's registers against the record's parameters (kernel,
// stride, padding, sizes, bias, the stride-2 form, groups); returns the
// output channels the task computes. `single_task`: the record's only
// convolution, so it holds all the groups.
uint32_t expect_conv_task_matches(const oracle::ConvRecord& c, const ConvFieldReader& get, bool single_task);

// The kernel layout one task's registers describe (ane/conv_kernel.h).
ConvKernelShape conv_kernel_shape(const ConvFieldReader& get);

// H13's packing of one task's share of the record's weights, for the layout
// its registers describe: the output channels from where its destination
// starts (a gtest failure when they do not fit the record); the packer's
// refusal as its error.
// `mask_group_slots`: the zero-skipping form's mask grouping (H13 8, H14 16).
Expected<PackedConvKernel> pack_task_weights(const oracle::Constants& k, const oracle::ConvRecord& c,
                                             const ConvFieldReader& get, uint32_t mask_group_slots = 8);

}  // namespace ane::test
