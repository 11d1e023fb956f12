// The simulator's kept helper threads (src/sim/helper_threads.cpp): every
// worker runs once per call, on the caller's thread for worker 0 and on
// another thread for the others when they are free; nested, concurrent and
// forked callers still get every worker run.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "../src/sim/two_threads.h"

namespace ane::sim::detail {
namespace {

struct Seen {
  std::mutex m;
  std::vector<int> runs;  // per worker
  std::set<std::thread::id> threads;
  std::thread::id worker0;
  explicit Seen(uint64_t workers) : runs(workers, 0) {}
  void note(uint64_t w) {
    std::lock_guard lock(m);
    ++runs[w];
    threads.insert(std::this_thread::get_id());
    if (w == 0) worker0 = std::this_thread::get_id();
  }
};

TEST(SimHelperThreads, EveryWorkerRunsOnceAndWorkerZeroIsTheCaller) {
  for (uint64_t workers : {1, 2, 3, 8}) {
    for (int round = 0; round < 50; ++round) {
      Seen seen(workers);
      auto body = [&](uint64_t w) { seen.note(w); };
      run_together(workers, body);
      for (uint64_t w = 0; w < workers; ++w) EXPECT_EQ(seen.runs[w], 1) << "workers " << workers << " worker " << w;
      EXPECT_EQ(seen.worker0, std::this_thread::get_id());
      // Free helpers take the other workers: one thread each.
      EXPECT_EQ(seen.threads.size(), workers) << "workers " << workers;
    }
  }
}

TEST(SimHelperThreads, AWorkersWritesAreSeenByTheCallerAfterwards) {
  std::vector<uint64_t> out(1 << 16);
  for (int round = 0; round < 200; ++round) {
    on_two_threads(out.size(), [&](uint64_t b, uint64_t e) {
      for (uint64_t i = b; i < e; ++i) out[i] = i * 3 + round;
    });
    for (uint64_t i = 0; i < out.size(); i += 4099) ASSERT_EQ(out[i], i * 3 + round);
    ASSERT_EQ(out.back(), (out.size() - 1) * 3 + round);
  }
}

TEST(SimHelperThreads, ANestedCallRunsItsWorkersOnItsCaller) {
  std::atomic<int> inner_runs{0};
  std::vector<std::set<std::thread::id>> inner_threads(2);
  std::mutex m;
  auto outer = [&](uint64_t ow) {
    auto inner = [&](uint64_t) {
      ++inner_runs;
      std::lock_guard lock(m);
      inner_threads[ow].insert(std::this_thread::get_id());
    };
    run_together(2, inner);
  };
  run_together(2, outer);
  EXPECT_EQ(inner_runs.load(), 4);
  // The helpers are taken by the outer call: each inner call ran on one thread.
  EXPECT_EQ(inner_threads[0].size(), 1u);
  EXPECT_EQ(inner_threads[1].size(), 1u);
}

TEST(SimHelperThreads, ConcurrentCallersEachGetEveryWorker) {
  std::atomic<int> total{0};
  auto caller = [&] {
    for (int round = 0; round < 200; ++round) {
      std::atomic<int> runs{0};
      auto body = [&](uint64_t) { ++runs; };
      run_together(2, body);
      if (runs.load() == 2) ++total;
    }
  };
  std::thread a(caller), b(caller);
  a.join();
  b.join();
  EXPECT_EQ(total.load(), 400);
}

TEST(SimHelperThreads, AForkedChildStartsHelpersOfItsOwn) {
  Seen before(2);
  auto note = [&](uint64_t w) { before.note(w); };
  run_together(2, note);  // the helpers exist in the parent now
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // The parent's helper threads are not in this process.
    std::atomic<int> runs{0};
    std::atomic<bool> other{false};
    const auto me = std::this_thread::get_id();
    auto body = [&](uint64_t) {
      ++runs;
      if (std::this_thread::get_id() != me) other = true;
    };
    run_together(2, body);
    _exit(runs.load() == 2 && other.load() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace ane::sim::detail
