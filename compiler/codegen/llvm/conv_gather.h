// The global addresses of a convolution operand's tile elements: the implicit-GEMM gathers of
// conv_lowering.h (im2col, strided, tap_rows) in LLVM IR. Used by the tile copy (cp_async.h).
#pragma once

#include "compiler/codegen/llvm/emit_context.h"

namespace tcjit::codegen {

struct GatheredElement {
  llvm::Value *in = nullptr;   // i1: inside the tensor (false in the padding, past the extents)
  llvm::Value *elem = nullptr; // i64: element offset from the operand's (group) base
};

// Element (outer, contig) of `op`'s matrix (i32 values, the tile copy's global row and column;
// `op.gather` != linear), with the plan's ConvConstants. The `vec` elements from there lie in one
// channel run (vec divides the channels per group), so `in` holds for all or none of them.
GatheredElement emit_gathered_element(EmitContext &, const OperandPlan &op, const GlobalOperand &g,
                                      llvm::Value *outer, llvm::Value *contig);

} // namespace tcjit::codegen
