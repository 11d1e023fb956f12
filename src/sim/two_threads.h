// Splitting work over the machine's cores.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace ane::sim::detail {

// Moves a helper thread off the caller's core once spread_helper_threads
// (ane/sim.h) has been called; otherwise leaves it to the scheduler.
void place_helper(std::thread& t);

// The cores this process may run on (at least 1).
unsigned usable_cores();

// Workers for `tasks` independent pieces of work: one per usable core, at
// most 8 (each holds its own buffers) and at most one per piece.
inline uint64_t worker_count(uint64_t tasks) {
  const uint64_t cores = usable_cores();
  return std::max<uint64_t>(1, std::min<uint64_t>({cores, 8, tasks}));
}

// fn(piece, worker) for every piece in [0, pieces), the pieces claimed in
// order by `workers` threads as each finishes its last (the caller is
// worker 0; the others are placed with place_helper). Which worker runs a
// piece changes nothing but where it runs: fn must make a piece's result
// from the piece alone.
template <typename Fn>
void on_workers(uint64_t pieces, uint64_t workers, Fn fn) {
  std::atomic<uint64_t> next{0};
  auto work = [&](uint64_t worker) {
    for (uint64_t k; (k = next.fetch_add(1, std::memory_order_relaxed)) < pieces;) fn(k, worker);
  };
  std::vector<std::thread> helpers;
  for (uint64_t i = 1; i < workers; ++i) {
    helpers.emplace_back(work, i);
    place_helper(helpers.back());
  }
  work(0);
  for (std::thread& t : helpers) t.join();
}

// fn(begin, end) over [0, n), on two threads once n reaches `min`. Only for
// work where each value is computed alone, so that the split cannot change a
// result.
template <typename Fn>
void on_two_threads(uint64_t n, Fn fn, uint64_t min = uint64_t{1} << 16) {
  if (n < min || n < 2) {
    fn(0, n);
    return;
  }
  std::thread t([&] { fn(0, n / 2); });
  place_helper(t);
  fn(n / 2, n);
  t.join();
}

}  // namespace ane::sim::detail
