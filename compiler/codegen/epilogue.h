// The epilogue, from the accumulator registers straight to global memory:
//   D[row, col] = convert(act(alpha * acc + beta * C[row, col] + bias[row or col]))
// computed in f32 (f64 for f64), each element guarded by row < M && col < N. Conversions: f16/bf16
// round to nearest even (cvt.rn), integers round to nearest even and saturate (cvt.rni.sat; s8
// clamps to [-128, 127]). s32 accumulators with an identity epilogue stay integers (exact).
// Transcendental activations call libdevice (__nv_expf, __nv_erfcf, ...), linked later by
// nvptx_emit.
#pragma once

#include "compiler/codegen/emit_context.h"

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
llvm::Value *emit_epilogue_value(EmitContext &, const EpilogueArgs &, llvm::Value *acc,
                                 llvm::Value *row, llvm::Value *col, llvm::Value *off);

// act(x) in the epilogue type (exposed for tests of single activations).
llvm::Value *emit_activation(EmitContext &, Activation, llvm::Value *x);

} // namespace tcjit::codegen
