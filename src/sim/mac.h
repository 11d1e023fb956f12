// The multiply-accumulate stage of a 1x1 convolution: y[oc][p] = (bias[oc])
// + sum over ic of w[oc][ic] * x[ic][p]. Products of fp16 values are exact in
// fp32, so the models differ only in how (and in what order) they add.
#pragma once

#include <cstdint>

namespace ane::sim::detail {

// acc=fp32: the sums as the BLAS's one-thread sgemm forms them. The product
// is cut into at most kSgemmPieces pieces by a rule of the shape alone (along
// the pixels, the sgemm's N, where there are enough of them, else along the
// output channels), which the cores take one at a time, each piece one
// one-thread call (blas_threads.h). Never one call on OpenBLAS's threads: its
// threaded driver cuts the reduction (K) elsewhere than its one-thread driver
// does, so the sums would depend on the core count and differ from the
// streamed convolutions' blocks (stream_conv.h), which make one-thread calls.
// Pieces are multiples of 16 and of at least kMinSgemmMacs MACs; a product
// too small for two is one one-thread call. With another BLAS (no OpenBLAS
// thread control) it is one call, threaded as that BLAS decides.
void mac_sgemm(const float* x, const float* w, const float* bias, uint32_t cout, uint32_t cin, uint64_t hw, float* y);
// The same for the pixels [p0, p0 + n) of x and y (rows hw apart), as one
// call on the calling thread: for a caller holding a SingleThreadedBlas and
// running pieces of its own.
void mac_sgemm_piece(const float* x, const float* w, const float* bias, uint32_t cout, uint32_t cin, uint64_t hw,
                     uint64_t p0, uint64_t n, float* y);
// Below this many MACs (M x N x K) OpenBLAS's small-matrix kernel (M x N x K
// <= 10^6 on its AVX-512 kernels) may sum otherwise: pieces stay above it.
constexpr double kMinSgemmMacs = double(uint64_t{1} << 21);
constexpr uint64_t kSgemmPieces = 8;
// acc=fp64: cblas_dgemm on fp64 copies xd, wd (filled here), cut and called
// as mac_sgemm cuts and calls sgemm.
void mac_dgemm(const float* x, const float* w, const float* bias, uint32_t cout, uint32_t cin, uint64_t hw,
               double* xd, double* wd, double* y);
// acc=fp32-ordered and products=fp16: each output starts at its bias (or 0)
// and adds its products one at a time in input-channel order, rounding each
// addition to Acc (and each product to fp16 when round_products). Exactly the
// sequence section 9 describes, identical on every host; cache-blocked loops,
// several times slower than the BLAS.
template <typename Acc>
void mac_ordered(const float* x, const float* w, const float* bias, uint32_t cout, uint32_t cin, uint64_t hw,
                 bool round_products, Acc* y);

// acc=q15.16, the MAC M4 and M6 were measured to have (751K/Apple-Neural-
// Engine-Microarchitecture-Study-M6 notes/numerics.md, identical on both):
// a fixed-point accumulator of 16 fraction bits that starts at the bias
// (rounded half away from zero to 2^-16) and adds each product in input-
// channel order, rounded half away from zero to 2^-16 where the operands'
// exponents add to -16 or more and dropped whole below; once its magnitude
// reaches 32768 the sum is an infinity of that sign for good. Exponent 31
// decodes as an ordinary exponent (infinity 2^16). The sums are exact in
// fp64: y holds them.
void mac_fixed_q16(const float* x, const float* w, const float* bias, uint32_t cout, uint32_t cin, uint64_t hw,
                   double* y);

// The vector code the ordered paths run: the widest the CPU has (Best), or
// one named (tests check that every one gives the same bits). Returns false,
// changing nothing, when the CPU lacks it. Not thread-safe: tests only.
enum class OrderedIsa { Best, Generic, Avx2, Avx512 };
bool force_ordered_isa(OrderedIsa isa);

}  // namespace ane::sim::detail
