// Incremental im2col addressing: the tile copy of a convolution fprop's A (the im2col gather,
// conv_lowering.h) without a division in the main loop.
//
// global_element (formulas.h) finds an im2col element from its view coordinates alone: it splits
// the output pixel (n, o, p, q) and the K index (tap, c) -> (t, r, s, c) by divisions, every
// K-tile. Here the work is split by how often it changes:
//  - per copy row (once per thread, before the main loop): the output pixel's element offset at
//    tap (0, 0, 0), in bytes, and a mask of the filter positions that read inside the input, one
//    bit per t (bits 0 .. T-1), per r (T .. T+R-1) and per s (T+R .. T+R+S-1); zero for a row
//    past M (the M tail);
//  - per K-tile (once per thread: every copy of a thread reads the same tile column, see
//    incremental_gather_applies): the column's K position (c, s, r, t), advanced by bk with carries
//    (c wraps at Cg into the tap, s at S into r, r at R into t; t grows past T-1 after the last
//    tap), the bits the position must find in a row's mask (t's bit, or bit 31, which no row has,
//    once t >= T: the K tail), and the tap's byte offset from the row's, plus c;
//  - per copy: in = (mask & bits) == bits, address = the row's pointer + the K-tile's offset.
// The first position (of K-tile kt_begin) is split by divisions once.
#pragma once

#include "compiler/codegen/plan/expr.h"
#include "compiler/codegen/plan/kernel_plan.h"

namespace tcjit::codegen {

// True when `op`'s tile copy uses incremental addressing: the im2col gather along K (fprop's A),
// every copy of a thread in one tile column (threads a multiple of the vectors per row), T+R+S at
// most 31 (the mask bits and bit 31), and at most kMaxIncrementalRows copies per thread (each row
// holds three registers across the main loop).
bool incremental_gather_applies(const KernelPlan &, const OperandPlan &);
inline constexpr int kMaxIncrementalRows = 8;

// The copy row of a thread's copy `it`: row = tid / vecs_per_row + it * (threads / vecs_per_row),
// column = (tid % vecs_per_row) * vec (the same for every it).
struct IncrementalRow {
  Expr mask;   // i32: the filter positions inside the input (see above), 0 past the M tail
  Expr offset; // i64: bytes from the operand's base to (n, o*sd - pd, p*sh - ph, q*sw - pw, 0)
};
// `outer` (i32): the output pixel of the row; `outer_extent` (i32): M.
IncrementalRow incremental_row(const KernelPlan &, const OperandPlan &, Expr outer,
                               Expr outer_extent);

// The K position of a thread's column: contig = ((t * R + r) * S + s) * Cg + c (i32 each).
struct IncrementalPosition {
  Expr c, s, r, t;
};
// The position of K index `contig` (i32), by divisions (once, before the main loop).
IncrementalPosition incremental_position(const KernelPlan &, const OperandPlan &, Expr contig);
// The position bk further along K, with carries.
IncrementalPosition advance_position(const KernelPlan &, const OperandPlan &,
                                     const IncrementalPosition &);

// What a K-tile's position gives every row: `bits` (i32) to find in a row's mask, `offset` (i64)
// the bytes from the row's offset: ((t*dd*H + r*dh)*W + s*dw)*C + c elements.
struct IncrementalStep {
  Expr bits, offset;
};
IncrementalStep incremental_step(const KernelPlan &, const OperandPlan &,
                                 const IncrementalPosition &);

// A copy's `in` (b1): its vector lies inside the matrix and the input tensor. Its address is the
// row's pointer (the operand's base + row.offset, formed once) + step.offset.
Expr incremental_in(const IncrementalRow &, const IncrementalStep &);

} // namespace tcjit::codegen
