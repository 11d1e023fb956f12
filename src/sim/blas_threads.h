// Running several single-threaded BLAS calls side by side instead of one
// threaded call at a time.
#pragma once

namespace ane::sim::detail {

// While one lives, OpenBLAS runs each call on its caller's thread alone, so
// that the simulator's own workers can each call it on a block of their own
// (no worker wake-ups or spinning between calls). Nested and concurrent
// guards share one setting; the last one to end restores OpenBLAS's thread
// count. With another BLAS (no OpenBLAS thread control linked), active() is
// false and the caller keeps to one calling thread.
class SingleThreadedBlas {
 public:
  SingleThreadedBlas();
  ~SingleThreadedBlas();
  SingleThreadedBlas(const SingleThreadedBlas&) = delete;
  SingleThreadedBlas& operator=(const SingleThreadedBlas&) = delete;
  bool active() const { return active_; }
  // Whether a guard would be active: OpenBLAS's thread control is linked.
  static bool available();

 private:
  bool active_ = false;
};

}  // namespace ane::sim::detail
