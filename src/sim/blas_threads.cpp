// SingleThreadedBlas (blas_threads.h).
#include "blas_threads.h"

#include <mutex>

// OpenBLAS (0.3.x, pthread and OpenMP builds) exports these; weak, so that
// another BLAS links too.
extern "C" void openblas_set_num_threads(int n) __attribute__((weak));
extern "C" int openblas_get_num_threads(void) __attribute__((weak));

namespace ane::sim::detail {

namespace {

std::mutex g_mutex;
int g_depth = 0;
int g_saved = 1;

}  // namespace

bool SingleThreadedBlas::available() { return openblas_set_num_threads && openblas_get_num_threads; }

SingleThreadedBlas::SingleThreadedBlas() {
  if (!available()) return;
  std::lock_guard lock(g_mutex);
  if (g_depth++ == 0) {
    g_saved = openblas_get_num_threads();
    if (g_saved != 1) openblas_set_num_threads(1);
  }
  active_ = true;
}

SingleThreadedBlas::~SingleThreadedBlas() {
  if (!active_) return;
  std::lock_guard lock(g_mutex);
  if (--g_depth == 0 && g_saved != 1) openblas_set_num_threads(g_saved);
}

}  // namespace ane::sim::detail
