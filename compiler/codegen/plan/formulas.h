// The formulas of the generated kernels, each written once (expr.h): both backends print them
// (llvm/expr_lowering.h, cuda/expr_source.h) and the host evaluates them (kernel_plan.h, tests).
//
// Each is written in the shape of the IR the LLVM backend emits (expr.h: nodes are emitted in the
// order they are made, and C++ evaluates a call's arguments, an operator's operands, in the
// compiler's order — GCC: right to left — as it did for the IRBuilder calls the formula replaced),
// so that the PTX is the one those calls produced. Where a shorter expression computes the same
// value, the formula says why they are equal; tests/codegen/formulas_test.cpp checks the formula
// against the direct definition.
#pragma once

#include "compiler/codegen/plan/expr.h"
#include "compiler/codegen/plan/kernel_plan.h"

namespace tcjit::codegen {

// --- shared memory ---

// The swizzled byte offset of element (row, col) (i32) of an operand tile (kernel_plan.h):
//   o = row * row_bytes + col * esize, R = row (rows of >= 128 bytes) or o >> 7,
//   o ^ ((((R >> swizzle_shift) << swizzle_spread) % 8) << 4)
// with o >> 7 written as row >> log2(128 / row_bytes) (col * esize < row_bytes, and row_bytes
// divides 128).
Expr swizzled_offset(const OperandPlan &, Expr row, Expr col);

// The byte offset of accumulator (line, pos) (i32) in a warp's epilogue staging slab, with the
// staging swizzle of llvm/epilogue.h:
//   o = line * len * 4 + pos * 4, seg = o >> 7, r = line >> (row-major D ? 0 : 1) for lines of
//   >= 128 bytes, else seg; o ^ ((2 * (r % 4) + seg % 2) << 4)
// with seg from line and pos where lines are whole 128-byte segments.
Expr staging_offset(const KernelPlan &, Expr line, Expr pos);

// --- fragment loads ---

// A lane's parts for ldmatrix.x4: j = lane >> 3, the 8x8 matrix (0..3) whose row addresses it
// gives, and r = lane & 7, the row of that matrix (PTX ISA, ldmatrix: threads 8i..8i+7 give the
// rows of matrix i).
struct LdmatrixLane {
  Expr j, r;
};
LdmatrixLane ldmatrix_lane(Expr lane);

// The element (row, col) (i32) of an operand tile in shared memory (kernel_plan.h: rows x cols of
// the stored layout) whose row address lane (j, r) gives to the ldmatrix.x4
// (FragmentLoad::ldmatrix) or ldmatrix.x4.trans (ldmatrix_trans) that loads, at k step `ks` (i32),
// the fragments of
//  - A (op is p.a): m tile `tile` (16 rows: m = warp0 + tile * 16 ..), its four registers
//    a0..a3 the matrices (m 0-7, k 0-7), (m 8-15, k 0-7), (m 0-7, k 8-15), (m 8-15, k 8-15)
//    (k in 16-byte chunks of 16 / esize elements for ldmatrix, 8 rows of k for .trans);
//  - B (op is p.b): n tiles 2 * tile and 2 * tile + 1 (8 columns each: n = warp0 + tile * 16 ..),
//    the matrices (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15).
// ldmatrix reads the row (mn, k0 .. k0 + chunk) of a K-contiguous tile, .trans the row
// (k, mn0 .. mn0 + 7) of an M/N-contiguous one:
//   A:  row = warp0 + tile * 16 + (j & 1) * 8 + r, col = ks * K + (j >> 1) * chunk
//   A': row = ks * 16 + (j >> 1) * 8 + r,          col = warp0 + tile * 16 + (j & 1) * 8
//   B:  row = warp0 + tile * 16 + (j >> 1) * 8 + r, col = ks * K + (j & 1) * chunk
//   B': row = ks * 16 + (j & 1) * 8 + r,           col = warp0 + tile * 16 + (j >> 1) * 8
// (K = the mma's k).
struct TileElement {
  Expr row, col;
};
TileElement ldmatrix_element(const KernelPlan &, const OperandPlan &, const LdmatrixLane &,
                             Expr warp0, Expr tile, Expr ks);

// A 2:4-sparse form's B (p: the sparse plan, K = mma.k its dense K; B loaded by ldmatrix): the
// element (row, col) whose row address lane (j, r) gives to the one ldmatrix.x4 (.trans) that loads
// all four B registers of n tile `tile` (8 columns) at k-step `ks`, matrix j the K / 4 values from
// ks * K + j * K / 4 (the dense twin's fragments at k-steps 2ks and 2ks + 1, side by side):
//   B:  row = warp0 + tile * 8 + r, col = ks * K + j * chunk
//   B': row = ks * K + j * 8 + r,   col = warp0 + tile * 8
TileElement sparse_b_ldmatrix_element(const KernelPlan &p, const LdmatrixLane &, Expr warp0,
                                      Expr tile, Expr ks);

// The element (row, col) (i32) of an operand tile that lane (g = lane >> 2, q = lane & 3) loads by
// ld.shared (FragmentLoad::scalar) for the fragment element at (mn_offset, k_offset) of the
// mma's fragment map (mma_table.h: a_offset for A; 0 and b_k_offset for B) of m/n tile `tile`
// at k step `ks` (all i32):
//   mn = warp0 + tile * (m or n) + mn_offset + g, k = q * a_q_multiplier + ks * K + k_offset
// (row, col) = (mn, k) for a K-contiguous tile, (k, mn) for an M/N-contiguous one.
TileElement fragment_element(const KernelPlan &, const OperandPlan &, Expr warp0, Expr g, Expr q,
                             Expr tile, Expr ks, Expr mn_offset, Expr k_offset);

// --- the epilogue ---

// The epilogue's sum alpha * acc + beta * c + bias (docs/codegen.md) in the epilogue type (f32 or
// f64: acc, c and the bias converted to it), with its partial sums, so that a backend can read C
// and the bias between them: scaled = alpha * acc, with_c = scaled + beta * c (scaled where the
// plan's beta is 0: c is not read), sum = with_c + bias (with_c where the plan has no bias).
struct EpilogueSum {
  Expr scaled, with_c, sum;
};
EpilogueSum epilogue_sum(const KernelPlan &, Expr alpha, Expr acc, Expr beta, Expr c, Expr bias);

// act(x) in x's type (f32 or f64; act != custom). f32 from the hardware approximations, inline:
// ex2.approx, lg2.approx, div.approx, and erfc by Abramowitz & Stegun 7.1.26 (|error| <= 1.5e-7),
// so that no epilogue calls a library function (ptxas keeps such calls, ~128 per thread, with a
// stack frame in relocatable code); their errors are within the activation term of the tolerance
// model (16 ulps of f32 relative to the value and the pre-activation scale, docs/numerics.md).
// f64 from the library functions (libdevice, inlined; there are no f64 approximations).
// To add an activation: a case here and in compiler/reference/activation.cpp.
Expr activation(Activation, Expr x);

// erfc(z) for f32 z: A&S 7.1.26 on |z|, reflected: erfc(-z) = 2 - erfc(z).
Expr erfc_approx(Expr z);

// --- convolutions ---

// Element (outer, contig) (i32) of an operand's matrix in global memory, as the tile copy reads
// it: `in` (b1) when it lies inside the matrix's extents (outer_extent, contig_extent: i32) and,
// for a convolution's gathered operand (conv_lowering.h: im2col, strided, tap_rows, with the
// plan's ConvConstants), inside its tensor; `elem` (i64) its element offset from the operand's
// (group's) base: outer * ld + contig for a linear operand (ld: i64), else the gather's. The `vec`
// elements from there lie in one channel run (vec divides the channels per group), so `in` holds
// for all or none of them. The phase gathers of a strided dgrad (dgrad_phases.h) also read the
// input "phase" (i32: the CTA's phase), which the backends bind.
struct GlobalElement {
  Expr in, elem;
};
GlobalElement global_element(const KernelPlan &, const OperandPlan &, Expr outer, Expr contig,
                             Expr outer_extent, Expr contig_extent, Expr ld);

// A linear operand's copy in the main loop, addressed incrementally (docs/codegen.md, "Copies"):
// global_element's linear case for the vector at (row, col) (i32) of the stage tile, split into
// what stays and what moves with the K-tile kt (i32), so that a loop-carried pointer advances by
// a constant or loop-invariant `step` and only one compare per copy and K-tile remains:
//   K-contiguous:   outer = mn0 + row, contig = kt * bk + col:
//                   fixed = (mn0 + row) * ld + col, step = bk, k = col,
//                   k_limit = mn0 + row < outer_extent ? contig_extent : 0
//   M/N-contiguous: outer = kt * bk + row, contig = mn0 + col:
//                   fixed = row * ld + mn0 + col, step = bk * ld, k = row,
//                   k_limit = mn0 + col < contig_extent ? outer_extent : 0
// (bk: the tile's K extent, op.cols or op.rows). Element fixed + kt * step (i64), inside the
// matrix when linear_copy_in: slt(kt * bk + k, k_limit), global_element's `in` (k >= 0, so a
// k_limit of 0 fails).
struct LinearCopy {
  Expr fixed, step, k, k_limit;
};
LinearCopy linear_copy(const OperandPlan &, Expr row, Expr col, Expr mn0, Expr outer_extent,
                       Expr contig_extent, Expr ld);
Expr linear_copy_in(const OperandPlan &, const LinearCopy &, Expr kt);
// Whether the main loop copies `op` through linear_copy: a linear matrix (no gather), cp.async
// vectors (>= 4 bytes), every thread the same number (at most 4: a pointer and a limit each stay
// in registers; 16 narrow copies of s8 128x128x64 w64x64 va4 took NVRTC from 76 B of spills to
// 536 B) and fragments not loaded byte by byte (those kernels keep their addresses in the loop:
// nvptx_emit.cpp).
bool incremental_copies(const KernelPlan &, const OperandPlan &);

// The direct depthwise kernel (conv_lowering.h, llvm/depthwise.h): output `row` (i32: the output
// pixel for fprop, the input pixel for dgrad) and channel `col` (i32), split once for all taps.
// The LLVM backend's only (the CUDA backend's depthwise kernel keeps its own functions:
// cuda_source_conv.cpp says why).
struct DepthwisePoint {
  Expr n64, z, y, x; // the pixel, n widened to i64
  Expr channel64;
};
DepthwisePoint depthwise_point(const ConvConstants &, Expr row, Expr col);

// Tap (t, r, s) (i32: constants where the kernel unrolls its taps) of a depthwise point: `in` (b1)
// when it reads inside the source tensor (x for fprop, dy for dgrad), `elem` (i64) that element,
// `filter_elem` (i64) the filter's (filter[channel][tap]).
struct DepthwiseTap {
  Expr in, elem, filter_elem;
};
DepthwiseTap depthwise_tap(const ConvConstants &, const DepthwisePoint &, Expr t, Expr r, Expr s);

} // namespace tcjit::codegen
