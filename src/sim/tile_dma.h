// Tile DMA: fp16 tensors between slot memory and the engines. The source
// converts to fp32 on the way in, the destination rounds to fp16 on the way
// out (section 3: NCHW, W innermost, 64-byte-granular strides).
#pragma once

#include <cstdint>
#include <vector>

#include "ane/sim.h"
#include "numerics.h"
#include "plan.h"
#include "state.h"

namespace ane::sim::detail {

// The slot memory a tensor DMA uses, after checking that every byte it
// touches lies inside: "task 2: TileDMASrc reads [a, b) beyond slot 5 (size s)".
// Appends the DMA to `record` when given.
Expected<Memory*> tile_dma_bind(MachineState& st, const TensorDma& t, bool write, uint32_t task,
                                              std::vector<DmaRecord>* record);

// n fp16 values from `row` (bytes, any alignment) as fp32: tile_dma_in's
// conversion of one row, for callers that walk rows themselves.
void fp16_row_in(const uint8_t* row, uint64_t n, float* out, bool ftz, bool count, uint64_t& subnormals);

// Gathers t into out[g][c][h][w] (dense fp32). Row padding is never read.
// With `count` (tracing) or `ftz`, counts subnormal inputs into `subnormals`;
// under subnormal=ftz they become signed zeros.
void tile_dma_in(const Memory& mem, const TensorDma& t, float* out, bool ftz, bool count,
                 uint64_t& subnormals);

// Output statistics of the fp16 values a destination DMA writes (trace).
struct OutputStats {
  float min = 0, max = 0;
  bool any = false;  // a non-NaN value was seen
  uint64_t nan = 0, inf = 0, subnormal = 0;
  uint64_t checksum = 0xcbf29ce484222325ull;  // FNV-1a 64 offset basis
  void add(uint16_t h);
  void store(TraceRecord& r) const;
};

// Rounds y[g][c][h][w] to fp16 (numerics options) and scatters it to t's
// element bytes; row padding is left as it was. `stats` may be null.
void tile_dma_out(Memory& mem, const TensorDma& t, const float* y, const Numerics& n,
                  RoundCounts& rc, OutputStats* stats);
void tile_dma_out(Memory& mem, const TensorDma& t, const double* y, const Numerics& n,
                  RoundCounts& rc, OutputStats* stats);

// Rounds `count` dense values to fp16 (a result that stays in L2).
void round_to_fp16(const float* y, uint64_t count, uint16_t* out, const Numerics& n, RoundCounts& rc,
                   OutputStats* stats);
void round_to_fp16(const double* y, uint64_t count, uint16_t* out, const Numerics& n, RoundCounts& rc,
                   OutputStats* stats);

}  // namespace ane::sim::detail
