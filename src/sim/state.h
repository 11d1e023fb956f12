// Explicit machine state: one bounds-checked memory per base-address slot,
// the options, and the memory budget every working buffer is charged to.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ane/conv_kernel.h"
#include "ane/error.h"
#include "ane/memory.h"
#include "ane/sim.h"
#include "buffer.h"
#include "l2.h"

namespace ane::sim::detail {

constexpr int kSlots = 32;

// A byte range a DMA touches inside one slot.
struct Span {
  int slot = -1;
  uint64_t begin = 0, end = 0;
};


// Buffers kept from the previous task, so that a chain (or a benchmark loop)
// does not fault in and zero fresh pages for every task.
struct BufferPool {
  std::vector<std::unique_ptr<Buf<float>>> f;
  std::vector<std::unique_ptr<Buf<double>>> d;
  uint64_t bytes() const;
  void clear() {
    f.clear();
    d.clear();
  }
};

// The fp32 weight matrix and bias of the last convolution task, kept while
// the tasks after it read the same kernel bytes in the same layout: a large
// convolution is cut into tasks that share one kernel (512 -> 512 over 8192
// pixels into 5), and unpacking it again cost each of them about 0.6 ms.
// Whether the bytes are the same is decided by comparing them with a copy,
// never by where they are: a task may have written the kernel's slot.
struct KeptConvWeights {
  bool valid = false;
  ConvKernelShape shape;
  bool table_in_lanes = false, ftz = false;
  std::array<bool, kKernelLanes> enabled{};
  std::array<uint64_t, kKernelLanes> lane_size{};
  Buf<uint8_t> lane_bytes;  // the enabled lanes' bytes, one after another
  Buf<float> w, bias;
  uint64_t subnormals = 0;  // subnormal weights, for the trace notes

  uint64_t bytes() const;
  void clear() { *this = KeptConvWeights{}; }
};

struct MachineState;

// Working memory of one task, charged against Options::memory_limit on top
// of the slot memories (and pooled buffers). Refuses with an error instead of
// allocating past it. Buffers go back to the pool when the Workspace ends.
class Workspace {
 public:
  explicit Workspace(MachineState& st);
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  // A buffer of `count` uninitialised elements.
  Expected<Buf<float>*> floats(uint64_t count, const char* what, uint32_t task) {
    return take(pool_f(), lent_f_, count, what, task);
  }
  Expected<Buf<double>*> doubles(uint64_t count, const char* what, uint32_t task) {
    return take(pool_d(), lent_d_, count, what, task);
  }
  // Bytes a task adds to what the machine holds after it (a result kept in
  // L2), checked against the limit before they are allocated.
  Status reserve(uint64_t bytes, const char* what, uint32_t task) { return charge(bytes, what, task); }

 private:
  template <typename T>
  Expected<Buf<T>*> take(std::vector<std::unique_ptr<Buf<T>>>& pool, std::vector<std::unique_ptr<Buf<T>>>& lent,
                         uint64_t count, const char* what, uint32_t task);
  std::vector<std::unique_ptr<Buf<float>>>& pool_f();
  std::vector<std::unique_ptr<Buf<double>>>& pool_d();
  Status charge(uint64_t bytes, const char* what, uint32_t task);

  MachineState& st_;
  std::vector<std::unique_ptr<Buf<float>>> lent_f_;
  std::vector<std::unique_ptr<Buf<double>>> lent_d_;
  uint64_t lent_bytes_ = 0;
};

// The machine's state proper; Machine::State (private in sim.h) is this.
// The register image of the running task is passed to the units explicitly
// (Machine::run_task's argument). L2 staging of tile DMA is transparent
// (section 5); what L2 holds between tasks is the L2Store.
struct MachineState {
  Options opts;
  // Slot memories; two slots with one address share one vector.
  std::array<std::shared_ptr<Memory>, kSlots> slots;
  BufferPool pool;
  L2Store l2;  // results chained tasks leave in L2
  KeptConvWeights kept_weights;
  uint64_t peak = 0;

  uint64_t slot_bytes() const;
  // Everything held between tasks: slot memories, L2 results, pooled
  // buffers, kept convolution weights.
  uint64_t held_bytes() const { return slot_bytes() + l2.bytes() + pool.bytes() + kept_weights.bytes(); }
  void note_peak() { peak = std::max(peak, held_bytes()); }

  // The memory of slot k, or an error naming the header field that selects it.
  Expected<Memory*> memory(int k, const char* field, uint32_t task);
  // Checks that [begin, end) lies inside slot k. `what` is e.g. "TileDMASrc reads".
  Status check_range(int k, uint64_t begin, uint64_t end, const std::string& what, uint32_t task) const;
};

}  // namespace ane::sim::detail

namespace ane::sim {

struct Machine::State : detail::MachineState {};

}  // namespace ane::sim
