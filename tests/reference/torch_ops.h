// Independent reference for PyTorch element-wise and row ops, used by tests to judge a simulator.
//
// Every op is written from its mathematical definition (PyTorch default parameters) and computed
// in double, so the only rounding a test should expect is the final conversion to fp16. Nothing
// here shares code with the simulator: agreement between the two is evidence, not tautology.
//
// Signs of zero are not part of the contract where PyTorch itself differs between backends
// (e.g. relu(-0)); tests should compare zeros by value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ane::ref::torch {

// One op's reference: its name as PyTorch/eiln spell it, its arity, and how to compute it.
struct OpRef {
  std::string name;  // "tanh", "gelu", "add", "softmax", ...
  int inputs;        // 1 or 2
  bool row_op;       // true: computed per row of the last axis (softmax family, normalize)
  // Element-wise ops: y = f(x) or f(x, y). Row ops: f is unused.
  std::function<double(double)> unary;
  std::function<double(double, double)> binary;
  // Row ops: out[i] from the whole row (size n).
  std::function<void(const double* row, double* out, size_t n)> row;
  // The useful input domain for random tests [lo, hi] per input, and edge values that must be
  // tested (0, -0, +-1, domain boundaries, values whose results overflow fp16; all finite and
  // exactly fp16-representable). For row ops the edges are values to place inside rows.
  double lo, hi;              // for input 0
  double lo2, hi2;            // for input 1 (binary ops)
  std::vector<double> edges;  // input-0 edge values (binary ops: each paired with input 1 = 1.5)

  // Additions beyond the minimal contract, all defaulted so older readers may ignore them:
  // a single [lo, hi] cannot express a hole around a pole, so random draws with
  // |x| < min_abs (input 0) or |y| < min_abs2 (input 1) should be redrawn.
  double min_abs = 0.0;
  double min_abs2 = 0.0;
  // Input-1 edge values for binary ops (each paired with input 0 = 1.5): div needs small divisors.
  std::vector<double> edges2 = {};
};

// Second input paired with every input-0 edge of a binary op (and first input paired with edges2).
inline constexpr double kEdgePartner = 1.5;

const std::vector<OpRef>& all_ops();            // every op below
const OpRef* find_op(const std::string& name);  // nullptr if unknown

// IEEE binary16 round-to-nearest-even of a double, and back (independent of any project code).
// NaN maps to a quiet NaN with the input's sign; magnitudes >= 65520 round to infinity.
uint16_t to_fp16(double x);
double from_fp16(uint16_t h);

}  // namespace ane::ref::torch
