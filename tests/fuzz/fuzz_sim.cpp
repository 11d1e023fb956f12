// libFuzzer target: hostile programs and register images through the simulator.
//
// The input chooses its mode by its first bytes:
//   * the HWX magic (CE FA EF BE), or what looks like an anec image (a
//     kernel-DMA stream header at +0x28, or the packed anecc header): a
//     whole program. Each task is described (the plan hwx-dump prints);
//     programs whose slots fit 1 MiB each then run: parse_program, then
//     Simulator::create (slot memory capped at 64 MiB) and run with the zero
//     inputs the slots start with; then each decoded task's register image
//     once more on the fixed machine below, with other options.
//   * anything else: one task descriptor (header + register streams, as in
//     __text), decoded with decode_task and run on a machine whose slots are
//     sized like the corpus programs': 0x4000 bytes of task code (slot 0),
//     512 KiB of kernel data starting with the sigmoid table (slot 1), a
//     256 KiB scratch (slot 3) and 1 MiB tensors (slots 4-6) of small fp16
//     values.
// The numerics options and assumptions come from the input's first and last
// bytes, so every option path is reached. Slot sizes bound every DMA, so
// work per input stays small.
//
// Invariants whose violation is a library bug abort():
//   * every error is one non-empty line;
//   * peak memory stays within Options::memory_limit;
//   * every DMA a trace reports lies inside its slot (L2 records name L2
//     addresses and slot -1).
//
// Build: cmake -DCMAKE_CXX_COMPILER=clang++ -DLIBANE_FUZZ=ON ... (see .ci/run)
// Run:   fuzz_sim SEED_DIR -max_total_time=60
//        seeds: the corpus .hwx files, and their tasks cut out of __text.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>

#include "ane/dump.h"
#include "ane/fp16.h"
#include "ane/sim.h"
#include "ane/task.h"

namespace {

constexpr uint64_t kMemoryLimit = uint64_t{64} << 20;

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_sim: invariant violated: %s: %s\n", what, detail.c_str());
  std::abort();
}

ane::sim::Options options(uint8_t bits) {
  ane::sim::Options o;
  using N = ane::sim::Numerics;
  if (bits & 0x01) o.numerics.accumulator = N::Accumulator::Fp64;
  if (bits & 0x02) o.numerics.products = N::Products::Fp16;
  if (bits & 0x04) o.numerics.bias = N::BiasPoint::AfterRound;
  if (bits & 0x08) o.numerics.overflow = N::Overflow::Saturate;
  if (bits & 0x10) o.numerics.subnormals = N::Subnormals::FlushToZero;
  if (bits & 0x20) o.numerics.lut = N::Lut::Ideal;
  if (bits & 0x40) o.assume = {true, true, true, true};
  if (bits & 0x80) o.numerics.round = N::Round::HalfAway;  // else by generation
  o.memory_limit = kMemoryLimit;
  return o;
}

void check_error(const ane::Status& s) {
  if (s.ok()) return;
  const std::string e = s.error().str();
  if (e.empty() || e.find('\n') != std::string::npos) fail("error is not one line", e);
}

// Checks the records a run reports against the machine's slots.
struct TraceCheck {
  const ane::sim::Machine* m = nullptr;
  void operator()(const ane::sim::TraceRecord& r) const {
    for (const auto& d : r.dma) {
      if (d.begin > d.end) fail("trace DMA range reversed", r.line());
      if (d.unit == "L2") {  // L2 addresses, not slot bytes
        if (d.slot != -1) fail("trace L2 record names a slot", r.line());
        continue;
      }
      const auto* s = m->slot(d.slot);
      if (!s || d.end > s->size()) fail("trace DMA outside its slot", r.line());
    }
    if (r.line().find('\n') != std::string::npos) fail("trace line has a newline", r.line());
  }
};

// Slot contents every task-mode run starts from (built once, copied per run
// so that each input runs on the same state).
struct SlotTemplate {
  std::vector<uint8_t> kernel, tensor[3];
  SlotTemplate() {
    kernel.resize(0x80000);  // gemm.hwx's 16 lanes of 0x8000
    for (size_t i = 0; i < 64; ++i) {
      kernel[2 * i] = static_cast<uint8_t>(ane::sim::sigmoid_lut()[i]);
      kernel[2 * i + 1] = static_cast<uint8_t>(ane::sim::sigmoid_lut()[i] >> 8);
    }
    for (size_t i = 0x80; i + 1 < kernel.size(); i += 2) {  // small weights, equal within runs of 7
      const uint16_t h = ane::float_to_fp16(static_cast<float>((i / 14) % 7) * 0.25f - 0.5f);
      kernel[i] = static_cast<uint8_t>(h);
      kernel[i + 1] = static_cast<uint8_t>(h >> 8);
    }
    for (int k = 0; k < 3; ++k) {
      tensor[k].resize(0x100400);  // concat.hwx's output buffer
      for (size_t i = 0; i + 1 < tensor[k].size(); i += 2) {
        const uint16_t h = ane::float_to_fp16(static_cast<float>((i / 2 + k) % 11) - 5.0f);
        tensor[k][i] = static_cast<uint8_t>(h);
        tensor[k][i + 1] = static_cast<uint8_t>(h >> 8);
      }
    }
  }
};

// A machine with slots sized like the corpus programs' (task code, kernel
// data, a scratch slot, three tensors) and deterministic contents.
ane::sim::Machine make_machine(const ane::sim::Options& o) {
  static const SlotTemplate t;
  ane::sim::Machine m(o);
  m.set_slot(0, 0x4000);
  m.set_slot(1, t.kernel);
  m.set_slot(3, 256 << 10);
  for (int k = 4; k <= 6; ++k) m.set_slot(k, t.tensor[k - 4]);
  return m;
}

void run_on_machine(const ane::RegisterImage& regs, uint8_t bits, uint32_t index) {
  const auto o = options(bits);
  ane::sim::Machine m = make_machine(o);
  const TraceCheck check{&m};
  const ane::Status s = (bits & 0x80) ? m.run_task(regs, index) : m.run_task(regs, index, 0, check);
  check_error(s);
  if (m.peak_bytes() > kMemoryLimit) fail("peak memory above the limit", std::to_string(m.peak_bytes()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  const std::span<const uint8_t> input(data, size);
  const uint8_t bits = data[0] ^ data[size - 1];
  if (ane::looks_like_hwx(input) || ane::looks_like_anec(input)) {
    auto program = ane::parse_program(input, "fuzz");
    if (!program) return 0;
    for (const auto& t : program->tasks) {
      const std::string line = ane::sim::describe_task(*program, t, options(bits));
      if (line.empty() || line.find('\n') != std::string::npos) fail("task summary is not one line", line);
    }
    // eiln's kernels map 8 MB tensors: keep each execution small.
    for (const auto& slot : program->slots)
      if (slot.size > (uint64_t{1} << 20)) return 0;
    auto sim = ane::sim::Simulator::create(*program, options(0));
    if (!sim) {
      check_error(sim.error());
      return 0;
    }
    const TraceCheck check{&sim->machine()};
    check_error(sim->run(check));
    for (const auto& b : sim->outputs()) {
      auto t = sim->read_buffer(b.name);
      if (!t) check_error(t.error());
    }
    if (sim->machine().peak_bytes() > kMemoryLimit) fail("peak memory above the limit", "");
    for (const auto& t : program->tasks) run_on_machine(t.regs, static_cast<uint8_t>(bits ^ t.index), t.index);
    return 0;
  }
  auto task = ane::decode_task(input.first(size & ~size_t{3}), 0);
  if (!task) return 0;
  run_on_machine(task->regs, bits, 0);
  return 0;
}
