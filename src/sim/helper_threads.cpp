// The simulator's helper threads: where they run (ane/sim.h,
// spread_helper_threads) and how work reaches them (two_threads.h,
// run_together).
#include "two_threads.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "ane/sim.h"

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <memory>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ANE_SPIN_PAUSE() _mm_pause()
#else
#define ANE_SPIN_PAUSE() ((void)0)
#endif

// OpenBLAS's pthread server (0.3.x) exports this; weak, so that another BLAS
// links too and the placement is then left to the scheduler.
extern "C" int openblas_setaffinity(int thread_idx, size_t cpusetsize, cpu_set_t* cpu_set) __attribute__((weak));
extern "C" int openblas_get_num_threads(void) __attribute__((weak));

namespace ane::sim {

namespace {

cpu_set_t g_helper_cpus;
std::atomic<bool> g_spread{false};

// The cores a helper should run on while the caller runs where it is now:
// the ones spread_helper_threads chose, else every allowed core but the
// caller's. False when there is no such core.
bool helper_cpus(cpu_set_t& cpus) {
  if (g_spread.load(std::memory_order_acquire)) {
    cpus = g_helper_cpus;
    return true;
  }
  const int me = sched_getcpu();
  if (me < 0 || sched_getaffinity(0, sizeof cpus, &cpus) != 0) return false;
  CPU_CLR(me, &cpus);
  return CPU_COUNT(&cpus) > 0;
}

// Spinning this long before sleeping (about 0.1 ms on an AMD EPYC, where a
// pause takes 23 ns) lets a helper take the next task's work, and the caller
// see the helpers finish, without a wake-up through the kernel; sleeping
// after it leaves the core to others.
constexpr int kSpins = 4096;

// Helper threads kept for the life of the process. One caller at a time
// holds them (busy_); every helper has its own wake-up counter, and the last
// one to finish a round wakes the caller.
class HelperPool {
 public:
  // False when the helpers are taken or cannot start: the caller then runs
  // the workers itself.
  bool run(uint64_t workers, void (*call)(void*, uint64_t), void* ctx) {
    if (busy_.exchange(true, std::memory_order_acquire)) return false;
    const bool ok = start(workers - 1);
    if (ok) {
      call_ = call;
      ctx_ = ctx;
      pending_.store(static_cast<uint32_t>(workers - 1), std::memory_order_relaxed);
      for (uint64_t i = 0; i + 1 < workers; ++i) {
        helpers_[i]->go.fetch_add(1, std::memory_order_release);
        helpers_[i]->go.notify_one();
      }
      call(ctx, 0);
      for (int i = 0; i < kSpins && pending_.load(std::memory_order_acquire) != 0; ++i) ANE_SPIN_PAUSE();
      for (uint32_t left; (left = pending_.load(std::memory_order_acquire)) != 0;)
        pending_.wait(left, std::memory_order_acquire);
    }
    busy_.store(false, std::memory_order_release);
    return ok;
  }

 private:
  struct Helper {
    pthread_t thread;
    HelperPool* pool;
    uint64_t index;  // its worker number
    std::atomic<uint32_t> go{0};
  };

  // At least n helpers, placed off the caller's core; false if one cannot start.
  bool start(uint64_t n) {
    // A forked child has none of its parent's threads: it starts its own
    // (the parent's records are left, unused).
    if (pid_ != getpid()) {
      for (auto& h : helpers_) h.release();  // NOLINT: their threads are not in this process
      helpers_.clear();
      pid_ = getpid();
      placed_for_ = -1;
    }
    cpu_set_t cpus;
    const bool place = helper_cpus(cpus);
    // A caller that moved to a helper's core moves the helpers off it (not
    // needed once spread: the helpers' cores are fixed then).
    const int me = sched_getcpu();
    if (place && !g_spread.load(std::memory_order_acquire) && me != placed_for_)
      for (auto& h : helpers_) pthread_setaffinity_np(h->thread, sizeof cpus, &cpus);
    placed_for_ = me;
    while (helpers_.size() < n) {
      auto h = std::make_unique<Helper>();
      h->pool = this;
      h->index = helpers_.size() + 1;
      // Placed before it first runs, so that it never starts on the caller's
      // core and takes it from the caller until the scheduler moves one.
      pthread_attr_t attr;
      pthread_attr_init(&attr);
      if (place) pthread_attr_setaffinity_np(&attr, sizeof cpus, &cpus);
      // Signals go to the process's own threads, never a helper.
      sigset_t all, old;
      sigfillset(&all);
      pthread_sigmask(SIG_SETMASK, &all, &old);
      const int rc = pthread_create(&h->thread, &attr, &HelperPool::loop, h.get());
      pthread_sigmask(SIG_SETMASK, &old, nullptr);
      pthread_attr_destroy(&attr);
      if (rc != 0) return false;
      pthread_detach(h->thread);
      helpers_.push_back(std::move(h));
    }
    return true;
  }

  static void* loop(void* arg) {
    Helper& h = *static_cast<Helper*>(arg);
    HelperPool& pool = *h.pool;
    uint32_t seen = 0;
    for (;;) {
      for (int i = 0; i < kSpins && h.go.load(std::memory_order_acquire) == seen; ++i) ANE_SPIN_PAUSE();
      while (h.go.load(std::memory_order_acquire) == seen) h.go.wait(seen, std::memory_order_acquire);
      seen = h.go.load(std::memory_order_acquire);
      pool.call_(pool.ctx_, h.index);
      if (pool.pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pool.pending_.notify_one();
    }
    return nullptr;
  }

  std::atomic<bool> busy_{false};
  std::vector<std::unique_ptr<Helper>> helpers_;
  pid_t pid_ = getpid();
  int placed_for_ = -1;  // the caller's core when the helpers were last placed
  void (*call_)(void*, uint64_t) = nullptr;
  void* ctx_ = nullptr;
  std::atomic<uint32_t> pending_{0};
};

}  // namespace

bool spread_helper_threads() {
  const int me = sched_getcpu();
  cpu_set_t allowed;
  if (me < 0 || sched_getaffinity(0, sizeof allowed, &allowed) != 0) return false;
  cpu_set_t others;
  CPU_ZERO(&others);
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (c != me && CPU_ISSET(c, &allowed)) CPU_SET(c, &others);
  if (CPU_COUNT(&others) == 0) return false;
  g_helper_cpus = others;
  g_spread.store(true, std::memory_order_release);
  // OpenBLAS's workers are 0 .. n - 2; n - 1 is the calling thread itself.
  if (openblas_setaffinity && openblas_get_num_threads)
    for (int i = 0; i + 1 < openblas_get_num_threads(); ++i) openblas_setaffinity(i, sizeof others, &others);
  return true;
}

namespace detail {

void run_together(uint64_t workers, void (*call)(void*, uint64_t), void* ctx) {
  // Never destroyed: its threads sleep in it until the process ends.
  static HelperPool* const pool = new HelperPool;
  if (workers <= 1 || !pool->run(workers, call, ctx))
    for (uint64_t w = 0; w < workers; ++w) call(ctx, w);
}

unsigned usable_cores() {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return 1;
  return std::max(1, CPU_COUNT(&allowed));
}

}  // namespace detail
}  // namespace ane::sim

#else

namespace ane::sim {
bool spread_helper_threads() { return false; }
namespace detail {
// A thread per worker and call, left to the scheduler.
void run_together(uint64_t workers, void (*call)(void*, uint64_t), void* ctx) {
  std::vector<std::thread> helpers;
  for (uint64_t w = 1; w < workers; ++w) helpers.emplace_back(call, ctx, w);
  call(ctx, 0);
  for (std::thread& t : helpers) t.join();
}
unsigned usable_cores() { return std::max(1u, std::thread::hardware_concurrency()); }
}  // namespace detail
}  // namespace ane::sim

#endif
