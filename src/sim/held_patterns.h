// Which of the 65,536 fp16 bit patterns a tensor holds. A function of one
// fp16 value (a table, a planar affine) is cheaper evaluated once per pattern
// the tensor holds than once per value, and a tensor of activations holds a
// fraction of the patterns: evaluating one costs tens of nanoseconds where
// marking one costs about one. Past 2^20 values the marking would cost more
// than evaluating every pattern, so all of them are taken.
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "two_threads.h"

namespace ane::sim::detail {

constexpr uint64_t kMarkPatternsUpTo = uint64_t{1} << 20;

// held[h] != 0 for each pattern h among the tensor's n values (every pattern
// when n > kMarkPatternsUpTo). mark(begin, end, held) sets held[h] = 1 for
// the pattern of each value in [begin, end); it runs on both cores, each
// with its own array.
template <typename Mark>
std::vector<uint8_t> held_patterns(uint64_t n, Mark mark) {
  if (n > kMarkPatternsUpTo) return std::vector<uint8_t>(65536, 1);
  std::array<std::vector<uint8_t>, 2> seen;
  on_two_threads(n, [&](uint64_t begin, uint64_t end) {
    std::vector<uint8_t>& held = seen[begin == 0 ? 0 : 1];
    held.assign(65536, 0);
    mark(begin, end, held);
  });
  if (!seen[1].empty())
    for (size_t h = 0; h < 65536; ++h) seen[0][h] |= seen[1][h];
  return std::move(seen[0]);
}

}  // namespace ane::sim::detail
