// Splitting work over the machine's cores.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace ane::sim::detail {

// The cores this process may run on (at least 1).
unsigned usable_cores();

// Workers for `tasks` independent pieces of work: one per usable core, at
// most 8 (each holds its own buffers) and at most one per piece.
inline uint64_t worker_count(uint64_t tasks) {
  const uint64_t cores = usable_cores();
  return std::max<uint64_t>(1, std::min<uint64_t>({cores, 8, tasks}));
}

// call(ctx, worker) for every worker in [0, workers), returning when all have
// returned: worker 0 on the caller, the others on helper threads that live
// from their first use to the end of the process, kept off the caller's core
// (helper_threads.cpp). Starting and ending a thread for each task cost up to
// milliseconds on small virtual machines; a woken helper costs microseconds.
// Where the helpers are taken (a nested or concurrent call) or cannot start,
// the workers run one after another on the caller, so `call` must not depend
// on its workers running at the same time.
void run_together(uint64_t workers, void (*call)(void* ctx, uint64_t worker), void* ctx);

template <typename Body>
void run_together(uint64_t workers, Body& body) {
  run_together(workers, [](void* b, uint64_t worker) { (*static_cast<Body*>(b))(worker); }, &body);
}

// fn(piece, worker) for every piece in [0, pieces), the pieces claimed in
// order by `workers` workers as each finishes its last (the caller is worker
// 0). Which worker runs a piece changes nothing but where it runs: fn must
// make a piece's result from the piece alone.
template <typename Fn>
void on_workers(uint64_t pieces, uint64_t workers, Fn fn) {
  std::atomic<uint64_t> next{0};
  auto work = [&](uint64_t worker) {
    for (uint64_t k; (k = next.fetch_add(1, std::memory_order_relaxed)) < pieces;) fn(k, worker);
  };
  if (workers <= 1) return work(0);
  run_together(workers, work);
}

// fn(begin, end) over [0, n), in two halves on two workers once n reaches
// `min`. Only for work where each value is computed alone, so that the split
// cannot change a result.
template <typename Fn>
void on_two_threads(uint64_t n, Fn fn, uint64_t min = uint64_t{1} << 16) {
  if (n < min || n < 2) {
    fn(0, n);
    return;
  }
  auto half = [&](uint64_t worker) { worker == 0 ? fn(n / 2, n) : fn(0, n / 2); };
  run_together(2, half);
}

}  // namespace ane::sim::detail
