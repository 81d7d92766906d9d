// Global -> shared copies of one K-tile of an operand: cp.async (16 B .cg, 8/4 B .ca) with
// src-size zero-fill for out-of-range vectors, or ld.global + st.shared for vectors under 4 bytes.
// Plus the group commit/wait of the multistage pipeline.
#pragma once

#include "compiler/codegen/llvm/emit_context.h"

#include <array>
#include <functional>
#include <optional>
#include <vector>

namespace tcjit::codegen {

// The incremental im2col addressing of an operand (plan/incremental_gather.h): per copy, its row's
// mask (i32) and pointer (the operand's base + the row's offset); the K position (c, s, r, t) of
// the thread's column at the next K-tile to copy, which each copy advances (the main loop carries
// it in PHIs).
struct IncrementalGatherState {
  std::vector<llvm::Value *> mask, row_ptr;
  std::array<llvm::Value *, 4> position{};
};
// The state at K-tile `kt_begin` (i32), or nullopt when `op` does not take incremental addressing.
std::optional<IncrementalGatherState> begin_incremental_gather(EmitContext &, const OperandPlan &op,
                                                               const GlobalOperand &g,
                                                               llvm::Value *kt_begin);

// PHIs at the builder's insertion point (the loop's header) for the position of `state` (none
// when null), incoming from `pre`; the state then reads them. close_incremental_gather_phis adds
// the back edge from `latch` with the position there.
std::vector<llvm::PHINode *> incremental_gather_phis(EmitContext &, IncrementalGatherState *state,
                                                     llvm::BasicBlock *pre);
void close_incremental_gather_phis(const std::vector<llvm::PHINode *> &phis,
                                   const IncrementalGatherState *state, llvm::BasicBlock *latch);

// Emits `body(it, idx)` for each copy of a CTA's `copies` that this thread makes: idx = tid + it *
// threads for it < copies_per_thread. When copies is not a multiple of the thread count, the last
// round branches around its body (blocks `body_block`, `next_block`) for idx >= copies.
void emit_thread_copies(EmitContext &, int copies_per_thread, int copies, const char *body_block,
                        const char *next_block,
                        const std::function<void(int it, llvm::Value *idx)> &body);

// Copies K-tile `ktile` (i32) of `op` into stage `stage` (i32). Every element outside the matrix
// (M/N/K tails, K-tiles past the end) is written as zero. With `incremental`, the K-tile is the
// state's position (copies go in K order), which the copy advances by one K-tile.
void emit_tile_copy(EmitContext &, const OperandPlan &op, const GlobalOperand &g,
                    llvm::Value *stage, llvm::Value *ktile,
                    IncrementalGatherState *incremental = nullptr);
void emit_commit_group(EmitContext &);
void emit_wait_group(EmitContext &, int pending);
void emit_barrier(EmitContext &);

} // namespace tcjit::codegen
