// Global -> shared copies of one K-tile of an operand: cp.async (16 B .cg, 8/4 B .ca) with
// src-size zero-fill for out-of-range vectors, or ld.global + st.shared for vectors under 4 bytes.
// Plus the group commit/wait of the multistage pipeline.
#pragma once

#include "compiler/codegen/llvm/emit_context.h"

namespace tcjit::codegen {

// Copies K-tile `ktile` (i32) of `op` into stage `stage` (i32). Every element outside the matrix
// (M/N/K tails, K-tiles past the end) is written as zero.
void emit_tile_copy(EmitContext &, const OperandPlan &op, const GlobalOperand &g,
                    llvm::Value *stage, llvm::Value *ktile);
void emit_commit_group(EmitContext &);
void emit_wait_group(EmitContext &, int pending);
void emit_barrier(EmitContext &);

} // namespace tcjit::codegen
