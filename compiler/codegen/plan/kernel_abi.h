// The ABI of every GEMM kernel tcjit generates: what the runtime passes and how it launches.
// The runtime builds the parameter buffer from this header (and device::KernelInfo's offsets).
//
// Parameters, in order (PTX .param, natural alignment):
//   0  A      .u64  global pointer to A (batch 0)
//   1  B      .u64  global pointer to B
//   2  C      .u64  global pointer to C, read only when the spec has beta != 0 (may equal D)
//   3  D      .u64  global pointer to D, the output (C's dtype and layout)
//   4  bias   .u64  global pointer to the bias (C's dtype; M values for bias=row, N for bias=col;
//                   may be 0 when the spec has no bias)
//   5  M      .s32
//   6  N      .s32
//   7  K      .s32
//   8  lda    .s64  leading dimensions in elements (row-major: row stride; col-major: col stride)
//   9  ldb    .s64
//   10 ldc    .s64  (C and D)
//   11 batch_stride_a  .s64  elements between consecutive batches of A
//   12 batch_stride_b  .s64
//   13 batch_stride_c  .s64  (C and D)
//   14 alpha  .f32 (.f64 for f64 GEMMs)
//   15 beta   .f32 (.f64 for f64 GEMMs)
// Launch: block = (threads, 1, 1); grid = (ceil(M / bm), ceil(N / bn), batch * split_k); dynamic
// shared memory = smem_bytes (above 48 KiB the runtime must raise the function's
// MAX_DYNAMIC_SHARED_SIZE_BYTES attribute). Pointers need only the element alignment times the
// config's vector widths (vec_a, vec_b elements) and, for C/D, 2 elements when the spec's C
// alignment is >= 2 and C is row-major (paired stores); sizes may be any value >= 1 (tails are
// predicated), but the alignment the kernel was compiled for must hold for M/N/K/ld.
#pragma once

#include <cstdint>

namespace tcjit::codegen {

enum class GemmParam : int {
  a = 0,
  b,
  c,
  d,
  bias,
  m,
  n,
  k,
  lda,
  ldb,
  ldc,
  batch_stride_a,
  batch_stride_b,
  batch_stride_c,
  alpha,
  beta,
};
inline constexpr int kGemmParamCount = 16;
// The parameters' names in the PTX, in GemmParam order.
inline constexpr const char *kGemmParamNames[kGemmParamCount] = {"A",
                                                                 "B",
                                                                 "C",
                                                                 "D",
                                                                 "bias",
                                                                 "M",
                                                                 "N",
                                                                 "K",
                                                                 "lda",
                                                                 "ldb",
                                                                 "ldc",
                                                                 "batch_stride_a",
                                                                 "batch_stride_b",
                                                                 "batch_stride_c",
                                                                 "alpha",
                                                                 "beta"};

// Split-K (TileConfig::split_k = S > 1), deterministic, in two kernels of the same module:
//   1. <kernel_name>: grid (ceil(M/bm), ceil(N/bn), batch * S); the D parameter is the
//      workspace, receiving each slice's raw accumulators (f32/s32/f64), dense row-major
//      [batch * S + slice][M][N]. C, bias, alpha, beta are ignored by this kernel.
//   2. <kernel_name>_splitk_reduce: the same 16 parameters (D = the real output) plus
//      17th .u64 workspace; grid (ceil(M*N / 256), batch), block 256; sums the S slices in slice
//      order, then applies the epilogue.
// Why a workspace and not atomics or a semaphore: a fixed summation order gives bitwise
// reproducible results whatever the CTA schedule, and needs no inter-CTA waiting (which the
// emulator, running CTAs one after another, could not serve).
inline constexpr int kSplitKReduceThreads = 256;
inline constexpr int kSplitKWorkspaceParam = kGemmParamCount;

inline uint64_t splitk_workspace_bytes(int64_t m, int64_t n, int64_t batch, int split_k,
                                       int acc_bytes) {
  return static_cast<uint64_t>(m * n * batch * split_k * acc_bytes);
}

// Channel padding (KernelPlan::pad_from != 0: a convolution whose c is padded to conv->c), a
// third kernel in the module: <kernel_name>_pad_channels(src .u64, dst .u64, rows .u64) writes
// dst[row][c] = c < pad_from ? src[row][c] : 0 for c < conv->c, one thread per destination
// element; grid (ceil(rows * conv->c / 256)), block 256. The launcher pads x (rows = n*d*h*w) and
// the filter (rows = k*t*r*s) into its workspace, then runs the main kernel on the copies.
inline constexpr int kPadChannelsThreads = 256;

struct LaunchDims {
  uint32_t grid_x = 1, grid_y = 1, grid_z = 1;
  uint32_t block_x = 1;
  uint32_t dynamic_shared_bytes = 0;
};

// grid/block/smem for a problem of m x n (x batch) with a kernel of the given CTA tile.
inline LaunchDims gemm_launch_dims(int64_t m, int64_t n, int64_t batch, int bm, int bn, int threads,
                                   int smem_bytes, int split_k = 1) {
  LaunchDims d;
  d.grid_x = static_cast<uint32_t>((m + bm - 1) / bm);
  d.grid_y = static_cast<uint32_t>((n + bn - 1) / bn);
  d.grid_z = static_cast<uint32_t>(batch * split_k);
  d.block_x = static_cast<uint32_t>(threads);
  d.dynamic_shared_bytes = static_cast<uint32_t>(smem_bytes);
  return d;
}

// The split-K reduce kernel's launch.
inline LaunchDims splitk_reduce_launch_dims(int64_t m, int64_t n, int64_t batch) {
  LaunchDims d;
  d.grid_x = static_cast<uint32_t>((m * n + kSplitKReduceThreads - 1) / kSplitKReduceThreads);
  d.grid_y = static_cast<uint32_t>(batch);
  d.block_x = kSplitKReduceThreads;
  return d;
}

} // namespace tcjit::codegen
