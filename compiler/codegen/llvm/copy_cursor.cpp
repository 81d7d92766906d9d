#include "compiler/codegen/llvm/copy_cursor.h"

#include "compiler/codegen/llvm/cp_async.h"
#include "compiler/codegen/llvm/expr_lowering.h"
#include "compiler/codegen/plan/formulas.h"

#include <llvm/IR/IntrinsicsNVPTX.h>

namespace tcjit::codegen {

using llvm::Value;

namespace {

Value *advanced(EmitContext &e, Value *ptr, Value *step_bytes, int tiles) {
  if (tiles == 0)
    return ptr;
  return e.b.CreateGEP(e.i8(), ptr, e.b.CreateMul(step_bytes, e.c64(tiles)));
}

} // namespace

CopyCursor make_copy_cursor(EmitContext &e, const OperandPlan &op, const GlobalOperand &g,
                            Value *kt0) {
  auto &b = e.b;
  ExprGraph graph;
  auto i32 = [&](const char *name) { return input(graph, ExprType::i32, name); };
  const LinearCopy lc = linear_copy(op, i32("row"), i32("col"), i32("mn0"), i32("outer_extent"),
                                    i32("contig_extent"), input(graph, ExprType::i64, "ld"));
  CopyCursor c;
  c.step_bytes = b.CreateMul(emit_expr(e, lc.step, {{"ld", g.ld}}), e.c64(op.esize));
  Value *kt0_bytes = b.CreateMul(b.CreateZExt(kt0, e.i64()), c.step_bytes);
  const int vecs_per_row = op.cols / op.vec;
  for (int it = 0; it < op.copies_per_thread; ++it) {
    Value *idx = b.CreateAdd(e.tid, e.c32(static_cast<int64_t>(it) * e.plan.threads));
    Value *row = b.CreateUDiv(idx, e.c32(vecs_per_row));
    Value *col = b.CreateMul(b.CreateURem(idx, e.c32(vecs_per_row)), e.c32(op.vec));
    EmittedExpr emitted;
    const std::vector<Value *> v = emit_expr(e, {lc.fixed, lc.k, lc.k_limit},
                                             {{"row", row},
                                              {"col", col},
                                              {"mn0", g.mn0},
                                              {"outer_extent", g.outer_extent},
                                              {"contig_extent", g.contig_extent},
                                              {"ld", g.ld}},
                                             emitted);
    Value *fixed = b.CreateGEP(e.i8(), g.base, b.CreateMul(v[0], e.c64(op.esize)));
    c.ptr.push_back(b.CreateGEP(e.i8(), fixed, kt0_bytes));
    c.k.push_back(v[1]);
    c.k_limit.push_back(v[2]);
    c.row.push_back(row);
    c.col.push_back(col);
  }
  return c;
}

CopyCursor copy_cursor_phis(EmitContext &e, const CopyCursor &c, llvm::BasicBlock *pre) {
  CopyCursor loop = c;
  for (size_t i = 0; i < c.ptr.size(); ++i) {
    llvm::PHINode *phi = e.b.CreatePHI(c.ptr[i]->getType(), 2, "copy.ptr");
    phi->addIncoming(c.ptr[i], pre);
    loop.ptr[i] = phi;
  }
  return loop;
}

void advance_copy_cursor(EmitContext &e, const CopyCursor &loop, int tiles,
                         llvm::BasicBlock *latch) {
  // freeze (a no-op here: the pointers are never poison) hides the step from ScalarEvolution, so
  // that loop strength reduction keeps one pointer per copy as carried; it would otherwise split
  // off the copies' common offset and add it back every K-tile (tf32 128x128x16: 12 more integer
  // instructions and 8 moves per 3 K-tiles in SASS, 12 more registers).
  for (Value *ptr : loop.ptr)
    llvm::cast<llvm::PHINode>(ptr)->addIncoming(
        e.b.CreateFreeze(advanced(e, ptr, loop.step_bytes, tiles)), latch);
}

void emit_cursor_copy(EmitContext &e, const OperandPlan &op, const CopyCursor &c, Value *stage,
                      Value *kt, int tiles) {
  auto &b = e.b;
  ExprGraph graph;
  LinearCopy lc;
  lc.k = input(graph, ExprType::i32, "k");
  lc.k_limit = input(graph, ExprType::i32, "k_limit");
  const Expr in_expr = linear_copy_in(op, lc, input(graph, ExprType::i32, "kt"));
  const llvm::Intrinsic::ID id =
      op.copy_bytes == 16  ? llvm::Intrinsic::nvvm_cp_async_cg_shared_global_16_s
      : op.copy_bytes == 8 ? llvm::Intrinsic::nvvm_cp_async_ca_shared_global_8_s
                           : llvm::Intrinsic::nvvm_cp_async_ca_shared_global_4_s;
  for (size_t i = 0; i < c.ptr.size(); ++i) {
    Value *in = emit_expr(e, in_expr, {{"k", c.k[i]}, {"k_limit", c.k_limit[i]}, {"kt", kt}});
    Value *src = advanced(e, c.ptr[i], c.step_bytes, tiles);
    Value *dst = smem_address(e, op, stage, c.row[i], c.col[i]);
    Value *src_size = b.CreateSelect(in, e.c32(op.copy_bytes), e.c32(0));
    b.CreateCall(e.intrinsic(id), {dst, src, src_size});
  }
}

MainLoopCopies make_main_loop_copies(EmitContext &e, const GlobalOperand &ga,
                                     const GlobalOperand &gb, Value *kt0) {
  MainLoopCopies c;
  c.ga = ga;
  c.gb = gb;
  c.cursor_a = incremental_copies(e.plan, e.plan.a);
  c.cursor_b = incremental_copies(e.plan, e.plan.b);
  if (c.cursor_a)
    c.a = make_copy_cursor(e, e.plan.a, ga, kt0);
  if (c.cursor_b)
    c.b = make_copy_cursor(e, e.plan.b, gb, kt0);
  return c;
}

void main_loop_copy_phis(EmitContext &e, MainLoopCopies &c, llvm::BasicBlock *pre) {
  if (c.cursor_a)
    c.a = copy_cursor_phis(e, c.a, pre);
  if (c.cursor_b)
    c.b = copy_cursor_phis(e, c.b, pre);
}

void emit_main_loop_copies(EmitContext &e, const MainLoopCopies &c, Value *stage, Value *kt,
                           int tiles, IncrementalGatherState *a_gather) {
  if (c.cursor_a)
    emit_cursor_copy(e, e.plan.a, c.a, stage, kt, tiles);
  else
    emit_tile_copy(e, e.plan.a, c.ga, stage, kt, a_gather);
  if (c.cursor_b)
    emit_cursor_copy(e, e.plan.b, c.b, stage, kt, tiles);
  else
    emit_tile_copy(e, e.plan.b, c.gb, stage, kt);
}

void advance_main_loop_copies(EmitContext &e, const MainLoopCopies &c, int tiles,
                              llvm::BasicBlock *latch) {
  if (c.cursor_a)
    advance_copy_cursor(e, c.a, tiles, latch);
  if (c.cursor_b)
    advance_copy_cursor(e, c.b, tiles, latch);
}

} // namespace tcjit::codegen
