// A 2:4-sparse A's metadata (docs/dsl.md: row r's K / 8 bytes at `meta + r * K / 8`; packed s4/u4:
// K in bytes) staged
// through shared memory with the A and B tiles: per K-tile, the CTA's metadata for its bm rows is
// copied into a stage slot of the same multistage pipeline (cp.async, committed with A and B), and
// each warp reads its metadata registers from there, one shared-memory load per m-tile and k-step.
//
// The copy unit is one row's metadata of one k-step: mma.k / 8 bytes (f16/bf16: 4, s8/u8: 8,
// tf32: 2), contiguous in global memory and aligned to its size (K is a multiple of mma.k). The
// stage slot stores the units in the order the mma.sp fragments read them:
//   chunk (t, g) = m16 tile t of the CTA, rows 16t + g and 16t + g + 8 (g < 8), chunk_bytes long;
//   unit (row r, k-step ks) at ((r / 16) * 8 + r % 8) * chunk_bytes + ks * 2 * unit + (r / 8 % 2)
//   * unit
// so that the two rows one metadata register pairs (g and g + 8) lie side by side. A thread (g, q)
// of a warp reads, for m-tile mi at k-step ks (t = warp_m0 / 16 + mi):
//   f16/bf16: 8 bytes at chunk (t, g) + ks * 8 (rows g and g + 8, dense columns 0..31 of the step)
//             and the register is prmt(word 0, word 1, q & 1 ? 0x7632 : 0x5410): row g's 16 bits
//             of columns 16 (q & 1) .. in bits 0-15, row g + 8's in bits 16-31;
//   s8/u8:    4 bytes at chunk (t, g) + ks * 16 + (q & 1) * 8 + (q >> 1) * 4: row g + 8 (q & 1)'s
//             groups of columns 32 (q >> 1) .. + 31, the register itself;
//   tf32:     4 bytes at chunk (t, g) + ks * 4 (row g's 2 bytes, then row g + 8's): byte q & 1 of
//             each half, its 4 pairs (bits 0, 2, 4, 6) spread to the hardware's pair nibbles
//             0b0100 / 0b1110.
// A unit outside the matrix (row >= M, k >= K, K-tiles past the end) is copied from the batch's
// first unit (row 0, always inside): valid indices, where A is zero-filled, so the products there
// are zero (a zero-filled unit would be the undefined indices 0, 0).
#pragma once

#include "compiler/codegen/plan/expr.h"
#include "compiler/codegen/plan/kernel_plan.h"

namespace tcjit::codegen {

// The stage slots of the metadata in shared memory and the copy of one K-tile (KernelPlan::meta);
// all zero for dense plans.
SparseMetadataPlan plan_sparse_metadata(const KernelPlan &);

// One copy (unit) `idx` (i32, < meta.copies) of K-tile `ktile`: whether it lies inside the matrix,
// its byte offset from the batch's metadata (i64; row (m0 + r)'s byte (ktile * bk + ks * mma.k) / 8
// with K / 8 bytes per row) and its byte offset in the stage slot (i32). Inputs i32: the CTA's
// first row m0, M and K.
struct SparseMetadataCopy {
  Expr in, global_offset, smem_offset;
};
SparseMetadataCopy sparse_metadata_copy(const KernelPlan &, Expr idx, Expr m0, Expr ktile, Expr m,
                                        Expr k);

// The byte offset in the stage slot (i32) of what thread (g, q) loads for m-tile `mi` at k-step
// `ks` (all i32) of its warp (warp_m0: the warp's first row in the CTA tile), and how many 32-bit
// words it loads there (sparse_metadata_words).
Expr sparse_metadata_read_offset(const KernelPlan &, Expr warp_m0, Expr g, Expr q, Expr mi,
                                 Expr ks);
int sparse_metadata_words(const KernelPlan &);

// The metadata register (i32) of thread q from the words it loaded (`words`:
// sparse_metadata_words of them, i32).
Expr sparse_metadata_register(const KernelPlan &, const std::vector<Expr> &words, Expr q);

} // namespace tcjit::codegen
