// The NE lookup-table nonlinearity (section 6.6): 64 fp16 slots arriving in
// kernel lane 0. Reading (INF): nodes in slots 4-36 at x = -8, -7.5, ..., 8;
// left/right slopes in slots 37/39 continue the end nodes; slots 2/3 clamp.
#pragma once

#include <array>
#include <cstdint>

namespace ane::sim::detail {

constexpr int kLutSlots = 64;
constexpr int kLutFirstNode = 4, kLutNodes = 33;
constexpr double kLutX0 = -8.0, kLutStep = 0.5;

// lut=linear: straight lines between nodes, slopes beyond, clamped to
// [slot 2, slot 3]. Exact in double; the output DMA rounds once.
// NaN propagates (nan=propagate).
double lut_linear(const std::array<uint16_t, kLutSlots>& table, double x);
// lut=ideal: the true sigmoid (the output DMA rounds it: RN(sigmoid(x))).
double lut_ideal_sigmoid(double x);
// True when x sits exactly on a node, where every model agrees.
bool lut_at_node(double x);

}  // namespace ane::sim::detail
