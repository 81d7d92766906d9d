// The main loop's copies of a linear operand, addressed incrementally (plan/formulas.h,
// linear_copy): each copy of this thread keeps a global pointer that the K-tile loop carries (a
// PHI) and advances by `step` bytes per K-tile, and a k_limit computed once before the loop, so
// that a copy costs one compare per K-tile and the unrolled bodies reach their K-tiles by
// constant (or loop-invariant) offsets from the pointer. Internal header: includes LLVM.
#pragma once

#include "compiler/codegen/llvm/cp_async.h"
#include "compiler/codegen/llvm/emit_context.h"

#include <vector>

namespace tcjit::codegen {

struct CopyCursor {
  std::vector<llvm::Value *> ptr;      // per copy: ptr addrspace(1), at the cursor's K-tile
  std::vector<llvm::Value *> k;        // per copy (i32): linear_copy's k
  std::vector<llvm::Value *> k_limit;  // per copy (i32)
  std::vector<llvm::Value *> row, col; // per copy (i32): the vector's element of the stage tile
  llvm::Value *step_bytes = nullptr;   // i64: bytes per K-tile
};

// The cursor of `op` (incremental_copies holds) at K-tile `kt0` (i32), emitted at the builder's
// insertion point (before the loop).
CopyCursor make_copy_cursor(EmitContext &, const OperandPlan &op, const GlobalOperand &g,
                            llvm::Value *kt0);

// The cursor with each pointer replaced by a PHI in the current block (the loop header), whose
// incoming value from `pre` is the pointer of `c`.
CopyCursor copy_cursor_phis(EmitContext &, const CopyCursor &c, llvm::BasicBlock *pre);

// Adds to the PHIs of `loop` (copy_cursor_phis) their values advanced by `tiles` K-tiles, incoming
// from `latch`; emitted at the builder's insertion point.
void advance_copy_cursor(EmitContext &, const CopyCursor &loop, int tiles, llvm::BasicBlock *latch);

// Copies K-tile `kt` (i32) of `op` into stage `stage` (i32): the cursor's pointers moved on by
// `tiles` K-tiles (kt is the cursor's K-tile + tiles). Every element outside the matrix is
// written as zero (cp.async src-size 0, the pointer as it is: nothing is read).
void emit_cursor_copy(EmitContext &, const OperandPlan &op, const CopyCursor &c, llvm::Value *stage,
                      llvm::Value *kt, int tiles);

// The main loop's copies of A and B: by cursor where incremental_copies holds (formulas.h), else
// by emit_tile_copy (cp_async.h), K-tile by K-tile.
struct MainLoopCopies {
  GlobalOperand ga, gb;
  bool cursor_a = false, cursor_b = false;
  CopyCursor a, b;
};
// The copies, their cursors at K-tile `kt0` (i32), emitted before the loop.
MainLoopCopies make_main_loop_copies(EmitContext &, const GlobalOperand &ga,
                                     const GlobalOperand &gb, llvm::Value *kt0);
// The cursors' PHIs in the loop header (copy_cursor_phis).
void main_loop_copy_phis(EmitContext &, MainLoopCopies &, llvm::BasicBlock *pre);
// K-tile `kt` of A and B into stage `stage`, `tiles` K-tiles past the cursors; `a_gather`: A's
// incremental im2col state when it has one (cp_async.h).
void emit_main_loop_copies(EmitContext &, const MainLoopCopies &, llvm::Value *stage,
                           llvm::Value *kt, int tiles, IncrementalGatherState *a_gather = nullptr);
// At the latch: the cursors moved on by `tiles` K-tiles (advance_copy_cursor).
void advance_main_loop_copies(EmitContext &, const MainLoopCopies &, int tiles,
                              llvm::BasicBlock *latch);

} // namespace tcjit::codegen
