// Where the simulator's helper threads and OpenBLAS's workers run (ane/sim.h,
// spread_helper_threads; two_threads.h, place_helper).
#include "two_threads.h"

#include <algorithm>

#include "ane/sim.h"

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>

#include <atomic>

// OpenBLAS's pthread server (0.3.x) exports this; weak, so that another BLAS
// links too and the placement is then left to the scheduler.
extern "C" int openblas_setaffinity(int thread_idx, size_t cpusetsize, cpu_set_t* cpu_set) __attribute__((weak));
extern "C" int openblas_get_num_threads(void) __attribute__((weak));

namespace ane::sim {

namespace {

cpu_set_t g_helper_cpus;
std::atomic<bool> g_spread{false};

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

void place_helper(std::thread& t) {
  if (g_spread.load(std::memory_order_acquire)) {
    pthread_setaffinity_np(t.native_handle(), sizeof g_helper_cpus, &g_helper_cpus);
    return;
  }
  // In a longer-lived process (libane.run from Python) a new thread would
  // also start beside its caller: start it on another of the allowed cores.
  const int me = sched_getcpu();
  cpu_set_t others;
  if (me < 0 || sched_getaffinity(0, sizeof others, &others) != 0) return;
  CPU_CLR(me, &others);
  if (CPU_COUNT(&others) > 0) pthread_setaffinity_np(t.native_handle(), sizeof others, &others);
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
void place_helper(std::thread&) {}
unsigned usable_cores() { return std::max(1u, std::thread::hardware_concurrency()); }
}  // namespace detail
}  // namespace ane::sim

#endif
