// A register-level software model of the H13 Apple Neural Engine.
//
// The simulator executes the task-descriptor chain of an HWX program the way
// the hardware does: for each task it reads the register image through the
// register database, runs the tile DMA, kernel DMA, neural engine (NE) or
// planar engine (PE) and the destination DMA, and leaves the results in the
// memory of the program's base-address slots. Semantics and their evidence:
// ../shared/docs/simulator-semantics.md (section numbers below refer to it).
//
// Anything the public record does not pin down is refused with
// "unsupported: <Block.Register.Field>=<value> in task N", unless a named
// assumption (Assumptions) turns it on. Numerics that every observation
// leaves open are switches in Numerics (section 9).
//
// Messages. Values are register field values (DMA addresses and strides in
// 64-byte units, as hwx-dump shows them): integers in decimal, bit patterns
// (fp16/fp32 scales, unnamed words, whole registers) in hex. A refusal that
// depends on a second field names it: "unsupported: NE.MACCfg.BiasMode=1
// with Common.ConvCfg.OCGSize=5 in task 0". Memory errors name the task, the
// DMA unit, the byte range and the slot: "task 2: TileDMASrc reads
// [0x3fffc0, 0x400040) beyond slot 5 (size 0x400000)". Errors never contain
// a newline.
//
// Numerics. acc=fp32 is one cblas_sgemm per task, so fp32 sums are formed in
// the BLAS's order (the hardware's order is unknown too); acc=fp32-ordered
// adds in input-channel order, as section 9 words the fp32 model; acc=fp64
// is one cblas_dgemm. products=fp16 rounds every product and sums in
// input-channel order. The ordered paths are cache-blocked loops: exact to
// their definition, several times slower. Every other step is exact until
// the output DMA rounds once to fp16 (RNE).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ane/program.h"
#include "ane/error.h"
#include "ane/generation.h"
#include "ane/memory.h"
#include "ane/npy.h"
#include "ane/registers.h"

namespace ane::sim {

// ---- options (section 1.1, 9, 11.2) -------------------------------------------
struct Numerics {
  // Fp32: one sgemm, sums in the BLAS's order (fast; bits may differ between
  // BLAS builds). Fp32Ordered: section 9's model to the letter, each output
  // adds its products one by one in input-channel order (slower, the same
  // bits on every host). Fp64: one dgemm. FixedQ16: the Q15.16 fixed-point
  // accumulator measured on M4 and M6 (751K/Apple-Neural-Engine-
  // Microarchitecture-Study-M6 notes/numerics.md). ByGeneration: Fp32 on
  // H13 - H15, FixedQ16 on H16 - H18; resolved by for_generation().
  enum class Accumulator { ByGeneration, Fp32, Fp64, Fp32Ordered, FixedQ16 } accumulator = Accumulator::ByGeneration;
  enum class Products { Exact, Fp16 } products = Products::Exact;
  enum class BiasPoint { InAccumulator, AfterRound } bias = BiasPoint::InAccumulator;
  enum class Overflow { Inf, Saturate } overflow = Overflow::Inf;
  enum class Subnormals { Keep, FlushToZero } subnormals = Subnormals::Keep;
  enum class Lut { Linear, Ideal } lut = Lut::Linear;
  // The rounding of results to fp16. ByGeneration: nearest even (M1) on
  // H13 - H15, ties away from zero on H16 - H18 (M4, 751K/Apple-Neural-
  // Engine-Microarchitecture-Study-M6 notes/numerics.md); resolved by
  // for_generation(). Products rounded by products=fp16 stay nearest even.
  enum class Round { ByGeneration, NearestEven, HalfAway } round = Round::ByGeneration;
};

struct Assumptions {
  bool ocg_layout = false;  // retired (A2): the lane layout is known (docs/convolution.md); no effect
  bool post_chain = false;  // A3: MAC -> bias -> PostScale -> nonlinearity -> round
  // Retired (settled by the eiln kernels and mil-hwx-compiler's records; no
  // effect): A1 PE OpMode 2 = max, 3 = min; A4 the general table reading.
  bool pe_minmax = false;
  bool lut_any = false;
};

struct Options {
  Numerics numerics;
  // The generation of the program the options run (for_generation sets it):
  // where generations differ, the planner follows it.
  Generation generation = Generation::H13;
  // These options with what "by generation" means on generation g.
  Options for_generation(Generation g) const;
  Assumptions assume;
  // Cap on the bytes a simulator may hold at once: slot memories plus the
  // working buffers of one task. Registers and container sizes are hostile
  // input; anything that would need more is an error, never an allocation.
  static constexpr uint64_t kDefaultMemoryLimit = uint64_t{4} << 30;  // 4 GiB
  uint64_t memory_limit = kDefaultMemoryLimit;
};

// Parses "acc=fp64", "lut=ideal", "A1", "pe-minmax", "all-assumptions", ...
// into opts; error names the unknown setting.
Status apply_option(Options& opts, const std::string& setting);
// Every numerics setting as "name=value" (defaults included), then the
// assumptions that are on ("A1 pe-minmax", ...).
std::vector<std::string> describe_options(const Options& opts);

// The sigmoid table of corpus sigmoid.hwx (64 fp16 slots), rebuilt from the
// facts of section 6.6: nodes RN_fp16(sigmoid(x)) for x = -8, -7.5, ..., 8 in
// slots 4-36, the documented clamp, slope and unexplained constants elsewhere.
// Without A4 a LUT task runs only when its lane 0 holds exactly these bytes.
const std::array<uint16_t, 64>& sigmoid_lut();

// For a short-lived process (hwx-run): keeps the simulator's helper threads
// and OpenBLAS's workers off the core the calling thread runs on now. A new
// process's threads start on its first core and the scheduler spreads them
// only after milliseconds, so a job of a few milliseconds otherwise runs its
// two-thread work, the sgemm included, on one core. Values never change (the
// thread counts stay); false when there is no other core to use.
bool spread_helper_threads();

// ---- tensors ------------------------------------------------------------------
// A dense fp16 tensor in NCHW order (W fastest), without any row padding.
struct Tensor {
  std::array<uint32_t, 4> nchw{};
  std::vector<uint16_t> data;  // fp16 bit patterns
  size_t elements() const {
    return size_t{nchw[0]} * nchw[1] * nchw[2] * nchw[3];
  }
};

// ---- trace ----------------------------------------------------------------------
struct DmaRecord {
  std::string unit;  // "TileDMASrc", "TileDMASrc2", "KernelDMA", "TileDMADst", or "L2"
  int slot = -1;     // -1 for "L2": an L2 result read or kept, not slot memory
  uint64_t begin = 0, end = 0;  // byte range inside the slot (L2: L2 addresses)
  int lane = -1;                // kernel DMA lane (KernelDMA records only)
};

struct TraceRecord {
  uint32_t task = 0;
  uint64_t text_offset = 0;
  std::string engine;  // "NE" or "PE"
  std::string op;      // "conv", "pass", "relu", "sigmoid", "add", "mul", ...
  std::array<uint32_t, 4> in_shape{};   // N, C, H, W of the (first) source; N = 1
  std::array<uint32_t, 4> out_shape{};  // N, C, H, W of the destination
  std::vector<DmaRecord> dma;
  std::vector<std::string> notes;  // options/assumptions that affected the result
  // Fields with no known effect on results, traced instead of refused
  // (section 11.3 #12): "Header[8].ENE=3", "Common.Cfg=0x4144405", ...
  std::vector<std::string> traced;
  // Output statistics of the fp16 values TileDMADst wrote (min/max over the
  // non-NaN values, NaN when there is none). Records, and these statistics,
  // are only computed when a trace hook is given.
  float min = 0, max = 0;
  uint64_t nan = 0, inf = 0, subnormal = 0;
  uint64_t checksum = 0;  // FNV-1a 64 over the fp16 values written (little-endian bytes), NCHW order
  std::string line() const;  // one human-readable line
  // The record as one JSON object (hwx-run --json's "tasks" entries): task,
  // text_offset, engine, op, in_shape, out_shape, dma, notes, traced, min,
  // max (null when NaN), nan, inf, subnormal, checksum ("0x" + 16 digits).
  std::string json() const;
};

using TraceHook = std::function<void(const TraceRecord&)>;

// What one task computes, in one line, from the plan the simulator executes
// (or why it refuses the task): "task 0: NE table[odd, grid 0..4, ...],
// fp16 [1,1,2560,1600] -> [1,1,2560,1600], slot 5 -> slot 4".
std::string describe_task(const Program& program, const Task& task, const Options& opts = {});
// H14 - H18: the same line from the generation's named fields and the
// tensors its relocation tags bind ("not understood" where they say too little).
std::string describe_packed_task(const Program& program, const Task& task);
// Why registers or a program of generation g do not run where they were
// given (a packed task's image on a bare Machine; a generation with no
// simulator).
std::string not_simulated_message(Generation g);

// ---- the machine ------------------------------------------------------------------
// Low-level state: bounds-checked memory per base-address slot. Tests and
// benchmarks may fill slots and run hand-made register images directly.
class Machine {
 public:
  explicit Machine(Options opts = {});
  ~Machine();
  Machine(Machine&&) noexcept;
  Machine& operator=(Machine&&) noexcept;

  // Slot k gets `size` zero bytes (or a copy of `bytes`, or `memory`
  // itself), replacing any previous.
  void set_slot(int k, uint64_t size);
  void set_slot(int k, std::span<const uint8_t> bytes);
  void set_slot(int k, Memory memory);
  Memory* slot(int k);  // nullptr when unbound
  const Memory* slot(int k) const;

  // Runs one task. `index`/`text_offset` only label errors and trace records.
  // Results a task leaves in L2 stay for the next task until clear_l2().
  Status run_task(const RegisterImage& regs, uint32_t index, uint64_t text_offset = 0,
                  const TraceHook& trace = {});
  void clear_l2();
  // Frees what the machine keeps between tasks beyond the slot memories: the
  // L2 results and the pooled working buffers (kept so that a chain or a
  // benchmark loop does not fault in fresh pages per task). For after the
  // last task, before the outputs are gathered: it lowers the peak memory.
  void release_working_memory();

  // Slot k shares the memory of slot `target` (two slot-table entries with
  // one address). A later set_slot on either one ends the sharing.
  void alias_slot(int k, int target);
  // Bytes of all slot memories (aliases counted once).
  uint64_t slot_bytes() const;

  // High-water mark of the bytes this machine allocated (slots + working
  // buffers; the buffers of the last task are kept for the next one).
  uint64_t peak_bytes() const;
  const Options& options() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// High level: a loaded program with named inputs and outputs.
class Simulator {
 public:
  // Builds the slot memories from the program's slot table and sections.
  static Expected<Simulator> create(const Program& program, Options opts = {});

  const std::vector<Buffer>& inputs() const;
  const std::vector<Buffer>& outputs() const;

  // Scatters t into the input buffer `name` with that buffer's strides. The
  // element count must equal the buffer's N*C*H*W (any shape with that count).
  Status set_input(const std::string& name, const Tensor& t);
  // The same from little-endian values already in memory (a mapped .npy):
  // fp16 bit patterns, or fp32 rounded to nearest even. `values` holds
  // exactly the buffer's element count.
  Status set_input(const std::string& name, npy::Dtype type, std::span<const std::byte> values);
  // The same from a mapped .npy. When its fp16 values are laid out exactly as
  // the input's slot holds them (the buffer alone in its slot, at offset 0,
  // rows without padding), the slot becomes a copy-on-write view of the
  // file's pages instead of a copy, and `file` gives up its mapping.
  Status set_input(const std::string& name, npy::Mapped& file);
  // Ok when every input was given with set_input; else names the first
  // missing one ("missing input 'x'"). run() does not check: an input never
  // set holds zeros.
  Status check_inputs() const;
  // Walks the task chain; stops at the first error.
  Status run(const TraceHook& trace = {});
  // Gathers an output (or input) buffer into a dense tensor of its own shape.
  Expected<Tensor> read_buffer(const std::string& name) const;
  // The same into `out`, which holds exactly the buffer's N*C*H*W fp16 bit
  // patterns (libane.run gathers straight into its numpy array).
  Status read_buffer(const std::string& name, std::span<uint16_t> out) const;
  // Writes a buffer as a float16 .npy of its own shape, straight from its
  // slot memory (errors do not repeat the path).
  Status save_npy(const std::string& name, const std::string& path) const;

  const Machine& machine() const;
  // The machine itself: fuzzers and benchmarks run extra register images on
  // the program's own slots.
  Machine& machine();

  Simulator(Simulator&&) noexcept;
  Simulator& operator=(Simulator&&) noexcept;
  ~Simulator();

 private:
  Simulator();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ane::sim
