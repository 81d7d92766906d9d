#include "compiler/codegen/llvm/cp_async.h"

#include "compiler/codegen/llvm/expr_lowering.h"
#include "compiler/codegen/plan/formulas.h"
#include "compiler/codegen/plan/incremental_gather.h"

#include <algorithm>

#include <llvm/IR/IntrinsicsNVPTX.h>

#include <stdexcept>

namespace tcjit::codegen {

using llvm::Value;

llvm::Type *element_type(EmitContext &e, DType t) {
  switch (t) {
  case DType::f16: return e.b.getHalfTy();
  case DType::bf16: return e.b.getBFloatTy();
  case DType::tf32:
  case DType::f32: return e.b.getFloatTy();
  case DType::f64: return e.b.getDoubleTy();
  case DType::s8:
  case DType::u8: return e.b.getInt8Ty();
  case DType::e4m3:
  case DType::e5m2: return e.b.getInt8Ty(); // fp8 bit patterns: only the mma reads them
  case DType::s32: return e.b.getInt32Ty();
  case DType::s4: // packed: moved as the bytes that hold them (KernelPlan::k_pack)
  case DType::u4:
  case DType::b1: return e.b.getInt8Ty();
  }
  throw std::logic_error("element_type: reserved dtype reached codegen (check_codegen_support)");
}

Value *smem_address(EmitContext &e, const OperandPlan &op, Value *stage, Value *row, Value *col) {
  auto &b = e.b;
  ExprGraph g;
  Value *o = emit_expr(
      e, swizzled_offset(op, input(g, ExprType::i32, "row"), input(g, ExprType::i32, "col")),
      {{"row", row}, {"col", col}});
  Value *base = b.CreateAdd(e.c32(op.smem_offset), b.CreateMul(stage, e.c32(op.stage_bytes)));
  return b.CreateInBoundsGEP(e.i8(), e.smem, b.CreateAdd(base, o));
}

namespace {

// The position (c, s, r, t) as formula inputs, and their IR values.
IncrementalPosition position_inputs(ExprGraph &graph) {
  auto i32 = [&](const char *name) { return input(graph, ExprType::i32, name); };
  return {i32("c"), i32("s"), i32("r"), i32("t")};
}

ExprIrInputs position_values(const IncrementalGatherState &state) {
  return {{"c", state.position[0]},
          {"s", state.position[1]},
          {"r", state.position[2]},
          {"t", state.position[3]}};
}

} // namespace

std::optional<IncrementalGatherState> begin_incremental_gather(EmitContext &e,
                                                               const OperandPlan &op,
                                                               const GlobalOperand &g,
                                                               Value *kt_begin) {
  if (!incremental_gather_applies(e.plan, op))
    return std::nullopt;
  auto &b = e.b;
  const int vecs_per_row = op.cols / op.vec;
  const int rows_per_pass = e.plan.threads / vecs_per_row;
  Value *row0 = b.CreateAdd(g.mn0, b.CreateUDiv(e.tid, e.c32(vecs_per_row)));
  Value *col = b.CreateMul(b.CreateURem(e.tid, e.c32(vecs_per_row)), e.c32(op.vec));
  IncrementalGatherState state;
  for (int it = 0; it < op.copies_per_thread; ++it) {
    Value *outer = b.CreateAdd(row0, e.c32(static_cast<int64_t>(it) * rows_per_pass));
    ExprGraph graph;
    const IncrementalRow row = incremental_row(e.plan, op, input(graph, ExprType::i32, "outer"),
                                               input(graph, ExprType::i32, "outer_extent"));
    EmittedExpr emitted;
    const std::vector<Value *> v = emit_expr(
        e, {row.mask, row.offset}, {{"outer", outer}, {"outer_extent", g.outer_extent}}, emitted);
    state.mask.push_back(v[0]);
    state.row_ptr.push_back(b.CreateGEP(e.i8(), g.base, v[1]));
  }
  Value *contig = b.CreateAdd(b.CreateMul(kt_begin, e.c32(op.cols)), col);
  ExprGraph graph;
  const IncrementalPosition at =
      incremental_position(e.plan, op, input(graph, ExprType::i32, "contig"));
  EmittedExpr emitted;
  const std::vector<Value *> v =
      emit_expr(e, {at.c, at.s, at.r, at.t}, {{"contig", contig}}, emitted);
  state.position = {v[0], v[1], v[2], v[3]};
  return state;
}

std::vector<llvm::PHINode *> incremental_gather_phis(EmitContext &e, IncrementalGatherState *state,
                                                     llvm::BasicBlock *pre) {
  std::vector<llvm::PHINode *> phis;
  if (!state)
    return phis;
  for (Value *&v : state->position) {
    phis.push_back(e.b.CreatePHI(e.i32(), 2));
    phis.back()->addIncoming(v, pre);
    v = phis.back();
  }
  return phis;
}

void close_incremental_gather_phis(const std::vector<llvm::PHINode *> &phis,
                                   const IncrementalGatherState *state, llvm::BasicBlock *latch) {
  for (size_t i = 0; i < phis.size(); ++i)
    phis[i]->addIncoming(state->position[i], latch);
}

void emit_tile_copy(EmitContext &e, const OperandPlan &op, const GlobalOperand &g, Value *stage,
                    Value *ktile, IncrementalGatherState *incremental) {
  auto &b = e.b;
  const int bk = op.k_contiguous ? op.cols : op.rows; // the tile's K: bk (bk / 2: 2:4-sparse A)
  Value *k0 = b.CreateMul(ktile, e.c32(bk));
  Value *outer0 = op.k_contiguous ? g.mn0 : k0;
  Value *contig0 = op.k_contiguous ? k0 : g.mn0;
  const int vecs_per_row = op.cols / op.vec;
  // Incremental addressing: this K-tile's bits and offset from the position, which then advances.
  Value *step_bits = nullptr, *step_offset = nullptr;
  if (incremental) {
    ExprGraph graph;
    const IncrementalPosition at = position_inputs(graph);
    const IncrementalStep step = incremental_step(e.plan, op, at);
    const IncrementalPosition next = advance_position(e.plan, op, at);
    EmittedExpr emitted;
    const std::vector<Value *> v =
        emit_expr(e, {step.bits, step.offset, next.c, next.s, next.r, next.t},
                  position_values(*incremental), emitted);
    step_bits = v[0];
    step_offset = v[1];
    incremental->position = {v[2], v[3], v[4], v[5]};
  }
  emit_thread_copies(
      e, op.copies_per_thread, op.copies, "copy.tail", "copy.next", [&](int it, Value *idx) {
        Value *row = b.CreateUDiv(idx, e.c32(vecs_per_row));
        Value *col = b.CreateMul(b.CreateURem(idx, e.c32(vecs_per_row)), e.c32(op.vec));
        Value *in = nullptr, *src_in = nullptr;
        if (incremental) {
          ExprGraph graph;
          const IncrementalRow at{input(graph, ExprType::i32, "mask"), Expr{}};
          const IncrementalStep step{input(graph, ExprType::i32, "bits"), Expr{}};
          in = emit_expr(
              e, incremental_in(at, step),
              {{"mask", incremental->mask[static_cast<size_t>(it)]}, {"bits", step_bits}});
          src_in = b.CreateGEP(e.i8(), incremental->row_ptr[static_cast<size_t>(it)], step_offset);
        } else {
          Value *grow = b.CreateAdd(outer0, row);
          Value *gcol = b.CreateAdd(contig0, col);
          ExprGraph graph;
          auto i32 = [&](const char *name) { return input(graph, ExprType::i32, name); };
          const GlobalElement x =
              global_element(e.plan, op, i32("outer"), i32("contig"), i32("outer_extent"),
                             i32("contig_extent"), input(graph, ExprType::i64, "ld"));
          EmittedExpr emitted;
          ExprIrInputs inputs{{"outer", grow},
                              {"contig", gcol},
                              {"outer_extent", g.outer_extent},
                              {"contig_extent", g.contig_extent},
                              {"ld", g.ld}};
          if (e.dgrad_phase)
            inputs["phase"] = e.dgrad_phase;
          const std::vector<Value *> v = emit_expr(e, {x.in, x.elem}, inputs, emitted);
          in = v[0];
          src_in = b.CreateGEP(e.i8(), g.base, b.CreateMul(v[1], e.c64(op.esize)));
        }
        Value *src = b.CreateSelect(in, src_in, g.base);
        Value *dst = smem_address(e, op, stage, row, col);
        if (op.copy_bytes >= 4) {
          llvm::Intrinsic::ID id =
              op.copy_bytes == 16  ? llvm::Intrinsic::nvvm_cp_async_cg_shared_global_16_s
              : op.copy_bytes == 8 ? llvm::Intrinsic::nvvm_cp_async_ca_shared_global_8_s
                                   : llvm::Intrinsic::nvvm_cp_async_ca_shared_global_4_s;
          Value *src_size = b.CreateSelect(in, e.c32(op.copy_bytes), e.c32(0));
          b.CreateCall(e.intrinsic(id), {dst, src, src_size});
        } else {
          llvm::Type *t = b.getIntNTy(op.copy_bytes * 8);
          llvm::LoadInst *v = b.CreateAlignedLoad(t, src, llvm::Align(op.copy_bytes));
          b.CreateAlignedStore(b.CreateSelect(in, v, llvm::ConstantInt::get(t, 0)), dst,
                               llvm::Align(op.copy_bytes));
        }
      });
}

void emit_thread_copies(EmitContext &e, int copies_per_thread, int copies, const char *body_block,
                        const char *next_block,
                        const std::function<void(int it, Value *idx)> &body) {
  auto &b = e.b;
  for (int it = 0; it < copies_per_thread; ++it) {
    Value *idx = b.CreateAdd(e.tid, e.c32(static_cast<int64_t>(it) * e.plan.threads));
    // idx < copies always holds when copies is a multiple of the thread count
    const bool guarded = (it + 1) * e.plan.threads > copies;
    llvm::BasicBlock *after = nullptr;
    if (guarded) {
      llvm::Function *f = b.GetInsertBlock()->getParent();
      auto *tail = llvm::BasicBlock::Create(e.ctx, body_block, f);
      after = llvm::BasicBlock::Create(e.ctx, next_block, f);
      b.CreateCondBr(b.CreateICmpULT(idx, e.c32(copies)), tail, after);
      b.SetInsertPoint(tail);
    }
    body(it, idx);
    if (guarded) {
      b.CreateBr(after);
      b.SetInsertPoint(after);
    }
  }
}

void emit_commit_group(EmitContext &e) {
  e.b.CreateCall(e.intrinsic(llvm::Intrinsic::nvvm_cp_async_commit_group));
}

void emit_wait_group(EmitContext &e, int pending) {
  e.b.CreateCall(e.intrinsic(llvm::Intrinsic::nvvm_cp_async_wait_group), {e.c32(pending)});
}

void emit_barrier(EmitContext &e) {
  e.b.CreateCall(e.intrinsic(llvm::Intrinsic::nvvm_barrier0));
}

} // namespace tcjit::codegen
