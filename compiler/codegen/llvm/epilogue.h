// The epilogue, from the accumulator registers to global memory:
//   D[row, col] = convert(act(alpha * acc + beta * C[row, col] + bias[row or col]))
// computed in f32 (f64 for f64), guarded by row < M && col < N. Conversions: f16/bf16 round to
// nearest even (cvt.rn), integers round to nearest even and saturate (cvt.rni.sat; s8 clamps to
// [-128, 127]). s32 accumulators with an identity epilogue stay integers (exact). The activations
// are the formulas of plan/formulas.h (f32 from the hardware approximations, f64 from libdevice,
// linked later by nvptx_emit).
//
// Two ways to memory (KernelPlan::stage_epilogue, decided by plan_kernel):
// - Direct (f32/s32/f64 output, SIMT, split-K workspace): each thread stores its fragment elements
//   (row g, columns 2q, 2q+1 of each m16n8 tile), pairs as one vector when D is row-major with
//   alignment >= 2. For 4-byte elements a warp's row segment fills a whole 32-byte sector.
// - Staged (f16/bf16/s8 output of the m16n8 tensor-core forms): stored straight, a warp would
//   write 8 rows x 16 B (f16) or 8 B (s8) per instruction: 50% / 25% sector efficiency. After the
//   main loop (cp.async drained), one bar.sync: no warp still reads the pipeline's buffers. Then
//   each warp, in passes, writes one slab of accumulators (4-byte, as computed) to its own region
//   of shared memory: row-major D, one mma row-block (16 rows x wn, st.shared.v2 of column pairs);
//   col-major D, one mma column-block (8 columns x wm, st.shared.b32), so that a slab "line" runs
//   along D's contiguous dimension. bar.warp.sync; each lane reads back stage_vec (<= 8)
//   contiguous accumulators of one line (16-byte ld.shared.v4), loads stage_vec elements of C as
//   one vector (beta != 0), computes, and stores one vector of D (16 B for 8 x f16/bf16, 8 B for
//   8 x s8) under one guard (stage_vec divides D's contiguous extent: the first element in range
//   means all are); bar.warp.sync before the next pass reuses the slab. Conflict-free by the
//   staging swizzle (plan/formulas.h staging_offset()): byte offset
//   o = line * len * 4 + pos * 4, seg = o >> 7, r = line >> (row-major ? 0 : 1) for lines of
//   >= 128 B else seg, o ^= (2 * (r % 4) + seg % 2) << 4. An 8-byte fragment-store phase (4 rows x
//   32 B) gets 4 disjoint chunk pairs from 2 * (r % 4); so does a 4-byte col-major store (4
//   columns 2 apart, hence r = line >> 1); a 16-byte read-back phase covers 8 items x 1 chunk of
//   at most two 128-byte segments, which seg % 2 puts on opposite chunk parities.
#pragma once

#include "compiler/codegen/llvm/emit_context.h"

#include <vector>

namespace tcjit::codegen {

struct EpilogueArgs {
  llvm::Value *c = nullptr, *d = nullptr;        // ptr addrspace(1), batch offset applied
  llvm::Value *bias = nullptr;                   // ptr addrspace(1)
  llvm::Value *m = nullptr, *n = nullptr;        // i32 extents
  llvm::Value *ldc = nullptr;                    // i64
  llvm::Value *alpha = nullptr, *beta = nullptr; // epilogue type (f32 or f64)
  llvm::Value *m0 = nullptr, *n0 = nullptr;      // i32: the CTA's first row / column
};

// acc[mi][ni][i]: accumulators of mma tile (mi, ni), c_regs each.
void emit_epilogue(EmitContext &, const EpilogueArgs &,
                   const std::vector<std::vector<std::vector<llvm::Value *>>> &acc);

// One element's value: act(alpha * acc + beta * C[off] + bias[row or col]) converted to the output
// dtype. Loads C and the bias, so it must be emitted under the element's bounds guard. `off`: the
// element's byte offset in C/D (i64), row/col: i32.
// `c_value`: C[off] already loaded (the staged epilogue loads C in vectors), of the output dtype
// or already in the epilogue type; else loaded here.
llvm::Value *emit_epilogue_value(EmitContext &, const EpilogueArgs &, llvm::Value *acc,
                                 llvm::Value *row, llvm::Value *col, llvm::Value *off,
                                 llvm::Value *c_value = nullptr);

// act(x) in the epilogue type (exposed for tests of single activations).
llvm::Value *emit_activation(EmitContext &, Activation, llvm::Value *x);

} // namespace tcjit::codegen
