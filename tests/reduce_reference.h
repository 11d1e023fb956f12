// The reduction the reduce record tests judge the simulator against (H13 and
// H14 records alike), and its tolerance: sum, mean or max over the record's
// axes, in double, written from the MIL definition.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace ane::test {

// The reduction `op` ("reduce_sum", "reduce_mean", "reduce_max") over `axes`
// of x [N,C,H,W], the kept axes in row-major order; also sum |x| per output
// for the tolerance, and n, the values each output reduces.
void reference_reduce(const std::string& op, const std::array<uint64_t, 4>& shape, const std::vector<uint64_t>& axes,
                      const std::vector<uint16_t>& x, std::vector<double>& y, std::vector<double>& mag, uint64_t& n);

// Checks the simulator's fp16 outputs (gtest assertions naming `name`);
// returns the worst error as a fraction of the tolerance: fp32 sums of n fp16
// values err by n * 2^-24 * sum|x|, then one fp16 rounding.
double expect_reduce_outputs(const std::string& op, uint64_t n, const std::vector<double>& ref,
                             const std::vector<double>& mag, const std::vector<uint16_t>& y, const std::string& name);

}  // namespace ane::test
