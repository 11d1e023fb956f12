// Machine state: slot memories, their bounds and the memory budget.
#include "state.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>


namespace ane::sim {

namespace detail {

uint64_t BufferPool::bytes() const {
  uint64_t n = 0;
  for (const auto& b : f) n += b->capacity() * sizeof(float);
  for (const auto& b : d) n += b->capacity() * sizeof(double);
  return n;
}

uint64_t KeptConvWeights::bytes() const {
  return (w.capacity() + bias.capacity()) * sizeof(float) + lane_bytes.capacity();
}

Workspace::Workspace(MachineState& st) : st_(st) {}

Workspace::~Workspace() {
  // The pool keeps exactly this task's buffers: bounded by one task's needs.
  st_.pool.clear();
  for (auto& b : lent_f_) st_.pool.f.push_back(std::move(b));
  for (auto& b : lent_d_) st_.pool.d.push_back(std::move(b));
}

std::vector<std::unique_ptr<Buf<float>>>& Workspace::pool_f() { return st_.pool.f; }
std::vector<std::unique_ptr<Buf<double>>>& Workspace::pool_d() { return st_.pool.d; }

Status Workspace::charge(uint64_t bytes, const char* what, uint32_t task) {
  const uint64_t slots = st_.slot_bytes() + st_.l2.bytes() + st_.kept_weights.bytes(), limit = st_.opts.memory_limit;
  auto held = [&] { return slots + st_.pool.bytes() + lent_bytes_; };
  if (held() > limit || bytes > limit - held()) st_.pool.clear();  // idle buffers go first
  if (held() > limit || bytes > limit - held())
    return make_error(fmt::format(
        "task {}: {} needs {:#x} bytes of working memory; the slots hold {:#x} and the limit is {:#x}", task, what,
        bytes, slots, limit));
  st_.peak = std::max(st_.peak, held() + bytes);
  return Ok{};
}

template <typename T>
Expected<Buf<T>*> Workspace::take(std::vector<std::unique_ptr<Buf<T>>>& pool,
                                  std::vector<std::unique_ptr<Buf<T>>>& lent, uint64_t count, const char* what,
                                  uint32_t task) {
  if (count > UINT64_MAX / sizeof(T)) return make_error(fmt::format("task {}: {} is too large", task, what));
  // Best fit from the pool: no allocation, no page faults.
  size_t best = pool.size();
  for (size_t i = 0; i < pool.size(); ++i)
    if (pool[i]->capacity() >= count && (best == pool.size() || pool[i]->capacity() < pool[best]->capacity()))
      best = i;
  if (best < pool.size()) {
    lent.push_back(std::move(pool[best]));
    pool.erase(pool.begin() + static_cast<ptrdiff_t>(best));
    lent_bytes_ += lent.back()->capacity() * sizeof(T);
  } else {
    if (Status s = charge(count * sizeof(T), what, task); !s) return s.error();
    lent.push_back(std::make_unique<Buf<T>>());
    lent.back()->reserve(count);
    lent_bytes_ += lent.back()->capacity() * sizeof(T);
  }
  lent.back()->resize(count);
  return lent.back().get();
}

template Expected<Buf<float>*> Workspace::take(std::vector<std::unique_ptr<Buf<float>>>&,
                                               std::vector<std::unique_ptr<Buf<float>>>&, uint64_t, const char*,
                                               uint32_t);
template Expected<Buf<double>*> Workspace::take(std::vector<std::unique_ptr<Buf<double>>>&,
                                                std::vector<std::unique_ptr<Buf<double>>>&, uint64_t, const char*,
                                                uint32_t);

}  // namespace detail

uint64_t detail::MachineState::slot_bytes() const {
  std::set<const Memory*> seen;
  uint64_t n = 0;
  for (const auto& s : slots)
    if (s && seen.insert(s.get()).second) n += s->size();
  return n;
}

Expected<Memory*> detail::MachineState::memory(int k, const char* field, uint32_t task) {
  if (k < 0 || k >= detail::kSlots || !slots[k])
    return make_error(fmt::format("task {}: {}={} names slot {}, which is unbound", task, field, k, k));
  return slots[k].get();
}

Status detail::MachineState::check_range(int k, uint64_t begin, uint64_t end, const std::string& what,
                                   uint32_t task) const {
  const uint64_t size = slots[k] ? slots[k]->size() : 0;
  if (begin <= end && end <= size) return Ok{};
  return make_error(
      fmt::format("task {}: {} [{:#x}, {:#x}) beyond slot {} (size {:#x})", task, what, begin, end, k, size));
}

// "By generation" settings resolve for the generation the options name.
Machine::Machine(Options opts) : state_(std::make_unique<State>()) { state_->opts = opts.for_generation(opts.generation); }
Machine::~Machine() = default;
Machine::Machine(Machine&&) noexcept = default;
Machine& Machine::operator=(Machine&&) noexcept = default;

void Machine::set_slot(int k, uint64_t size) {
  if (k < 0 || k >= detail::kSlots) return;
  // Zeros until a task writes them: a large slot costs no memory before its
  // first write (the peak of a large job is while its MAC runs).
  set_slot(k, Memory(size));
}

void Machine::set_slot(int k, std::span<const uint8_t> bytes) { set_slot(k, Memory(bytes)); }

void Machine::set_slot(int k, Memory memory) {
  if (k < 0 || k >= detail::kSlots) return;
  state_->slots[k] = std::make_shared<Memory>(std::move(memory));
  state_->note_peak();
}

void Machine::alias_slot(int k, int target) {
  if (k < 0 || k >= detail::kSlots || target < 0 || target >= detail::kSlots) return;
  state_->slots[k] = state_->slots[target];
}

Memory* Machine::slot(int k) {
  return k >= 0 && k < detail::kSlots ? state_->slots[k].get() : nullptr;
}

const Memory* Machine::slot(int k) const {
  return k >= 0 && k < detail::kSlots ? state_->slots[k].get() : nullptr;
}

uint64_t Machine::slot_bytes() const { return state_->slot_bytes(); }
uint64_t Machine::peak_bytes() const { return std::max(state_->peak, state_->held_bytes()); }
void Machine::clear_l2() { state_->l2.clear(); }
void Machine::release_working_memory() {
  state_->l2.clear();
  state_->pool.clear();
  state_->kept_weights.clear();
}
const Options& Machine::options() const { return state_->opts; }

}  // namespace ane::sim
