#include "compiler/codegen/llvm/ldmatrix.h"

#include "compiler/codegen/llvm/expr_lowering.h"
#include "compiler/codegen/plan/formulas.h"

#include <llvm/IR/IntrinsicsNVPTX.h>

namespace tcjit::codegen {

using llvm::Value;

namespace {

std::vector<Value *> ldmatrix_x4(EmitContext &e, Value *addr, bool trans) {
  auto id = trans ? llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_trans_b16
                  : llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16;
  Value *r = e.b.CreateCall(e.intrinsic(id, {addr->getType()}), {addr});
  std::vector<Value *> regs;
  for (unsigned i = 0; i < 4; ++i)
    regs.push_back(e.b.CreateExtractValue(r, {i}));
  return regs;
}

// Loads the elements of one register (or f64 value) one by one and packs them.
Value *scalar_register(EmitContext &e, const OperandPlan &op, Value *stage,
                       const std::vector<std::pair<Value *, Value *>> &rowcols) {
  auto &b = e.b;
  if (op.esize == 8 || op.esize == 4) {
    llvm::Type *t = op.esize == 8 ? b.getDoubleTy() : b.getInt32Ty();
    Value *p = smem_address(e, op, stage, rowcols[0].first, rowcols[0].second);
    return b.CreateAlignedLoad(t, p, llvm::Align(op.esize));
  }
  Value *reg = e.c32(0);
  const int bits = op.esize * 8;
  for (size_t i = 0; i < rowcols.size(); ++i) {
    Value *p = smem_address(e, op, stage, rowcols[i].first, rowcols[i].second);
    Value *v =
        b.CreateZExt(b.CreateAlignedLoad(b.getIntNTy(bits), p, llvm::Align(op.esize)), e.i32());
    reg = b.CreateOr(reg, b.CreateShl(v, e.c32(static_cast<int64_t>(i) * bits)));
  }
  return reg;
}

} // namespace

std::vector<std::vector<Value *>> emit_load_a_fragments(EmitContext &e, Value *stage, int ks) {
  const KernelPlan &p = e.plan;
  const OperandPlan &op = p.a;
  auto &b = e.b;
  std::vector<std::vector<Value *>> out(p.tiles_m);
  ExprGraph g;
  const LdmatrixLane lane = ldmatrix_lane(input(g, ExprType::i32, "lane"));
  EmittedExpr emitted;
  emit_expr(e, {lane.j, lane.r}, {{"lane", e.lane}}, emitted);
  if (p.mma.kind == MmaKind::simt_f32) { // one f32 of column k = ks per row the thread owns
    for (int mi = 0; mi < p.tiles_m; ++mi) {
      Value *m = b.CreateAdd(e.warp_m0, b.CreateAdd(e.frag_row0, e.c32(mi * p.mma.m)));
      Value *k = e.c32(ks);
      out[mi].push_back(
          scalar_register(e, op, stage, {op.k_contiguous ? std::pair{m, k} : std::pair{k, m}}));
    }
    return out;
  }
  for (int mi = 0; mi < p.tiles_m; ++mi) {
    if (op.load != FragmentLoad::scalar) {
      const TileElement at =
          ldmatrix_element(p, op, lane, input(g, ExprType::i32, "warp0"),
                           constant(g, ExprType::i32, mi), constant(g, ExprType::i32, ks));
      const std::vector<Value *> rc =
          emit_expr(e, {at.row, at.col}, {{"warp0", e.warp_m0}}, emitted);
      out[mi] = ldmatrix_x4(e, smem_address(e, op, stage, rc[0], rc[1]),
                            op.load == FragmentLoad::ldmatrix_trans);
      continue;
    }
    const int per = elements_per_reg(p.mma);
    for (int reg = 0; reg < p.mma.a_regs; ++reg) {
      std::vector<std::pair<Value *, Value *>> rc;
      for (int x = 0; x < per; ++x) {
        const FragOffset o = a_offset(p.mma, reg * per + x);
        const TileElement at =
            fragment_element(p, op, input(g, ExprType::i32, "warp0"), input(g, ExprType::i32, "g"),
                             input(g, ExprType::i32, "q"), constant(g, ExprType::i32, mi),
                             constant(g, ExprType::i32, ks), constant(g, ExprType::i32, o.row),
                             constant(g, ExprType::i32, o.col));
        const std::vector<Value *> v =
            emit_expr(e, {at.row, at.col}, {{"warp0", e.warp_m0}, {"g", e.g}, {"q", e.q}}, emitted);
        rc.push_back({v[0], v[1]});
      }
      out[mi].push_back(scalar_register(e, op, stage, rc));
    }
  }
  return out;
}

std::pair<std::vector<std::vector<Value *>>, std::vector<std::vector<Value *>>>
emit_load_sparse_fragments(EmitContext &e, Value *stage, int ks) {
  const KernelPlan twin = fragment_plan(e.plan);
  EmitContext te{e.ctx, e.module, e.b, twin};
  te.smem = e.smem;
  te.tid = e.tid;
  te.lane = e.lane;
  te.g = e.g;
  te.q = e.q;
  te.frag_row0 = e.frag_row0;
  te.frag_col0 = e.frag_col0;
  te.warp_m0 = e.warp_m0;
  te.warp_n0 = e.warp_n0;
  std::vector<std::vector<Value *>> a = emit_load_a_fragments(te, stage, ks);
  if (e.plan.b.load != FragmentLoad::scalar) {
    // one ldmatrix.x4 per n tile: its four registers in the order mma.sp takes them
    const KernelPlan &p = e.plan;
    ExprGraph g;
    const LdmatrixLane lane = ldmatrix_lane(input(g, ExprType::i32, "lane"));
    EmittedExpr emitted;
    emit_expr(e, {lane.j, lane.r}, {{"lane", e.lane}}, emitted);
    std::vector<std::vector<Value *>> bf(p.tiles_n);
    for (int ni = 0; ni < p.tiles_n; ++ni) {
      const TileElement at =
          sparse_b_ldmatrix_element(p, lane, input(g, ExprType::i32, "warp0"),
                                    constant(g, ExprType::i32, ni), constant(g, ExprType::i32, ks));
      const std::vector<Value *> rc =
          emit_expr(e, {at.row, at.col}, {{"warp0", e.warp_n0}}, emitted);
      bf[ni] = ldmatrix_x4(e, smem_address(e, p.b, stage, rc[0], rc[1]),
                           p.b.load == FragmentLoad::ldmatrix_trans);
    }
    return {a, bf};
  }
  std::vector<std::vector<Value *>> b0 = emit_load_b_fragments(te, stage, 2 * ks);
  const std::vector<std::vector<Value *>> b1 = emit_load_b_fragments(te, stage, 2 * ks + 1);
  for (size_t n = 0; n < b0.size(); ++n)
    b0[n].insert(b0[n].end(), b1[n].begin(), b1[n].end());
  return {a, b0};
}

std::vector<std::vector<Value *>> emit_load_b_fragments(EmitContext &e, Value *stage, int ks) {
  const KernelPlan &p = e.plan;
  const OperandPlan &op = p.b;
  auto &b = e.b;
  std::vector<std::vector<Value *>> out(p.tiles_n);
  ExprGraph g;
  const LdmatrixLane lane = ldmatrix_lane(input(g, ExprType::i32, "lane"));
  EmittedExpr emitted;
  emit_expr(e, {lane.j, lane.r}, {{"lane", e.lane}}, emitted);
  if (p.mma.kind == MmaKind::simt_f32) {
    for (int ni = 0; ni < p.tiles_n; ++ni) {
      Value *n = b.CreateAdd(e.warp_n0, b.CreateAdd(e.frag_col0, e.c32(ni * p.mma.n)));
      Value *k = e.c32(ks);
      out[ni].push_back(
          scalar_register(e, op, stage, {op.k_contiguous ? std::pair{n, k} : std::pair{k, n}}));
    }
    return out;
  }
  if (op.load != FragmentLoad::scalar) {
    for (int pair = 0; pair < p.tiles_n / 2; ++pair) {
      const TileElement at =
          ldmatrix_element(p, op, lane, input(g, ExprType::i32, "warp0"),
                           constant(g, ExprType::i32, pair), constant(g, ExprType::i32, ks));
      const std::vector<Value *> rc =
          emit_expr(e, {at.row, at.col}, {{"warp0", e.warp_n0}}, emitted);
      std::vector<Value *> regs = ldmatrix_x4(e, smem_address(e, op, stage, rc[0], rc[1]),
                                              op.load == FragmentLoad::ldmatrix_trans);
      out[2 * pair] = {regs[0], regs[1]};
      out[2 * pair + 1] = {regs[2], regs[3]};
    }
    return out;
  }
  const int per = elements_per_reg(p.mma);
  for (int ni = 0; ni < p.tiles_n; ++ni) {
    for (int reg = 0; reg < p.mma.b_regs; ++reg) {
      std::vector<std::pair<Value *, Value *>> rc;
      for (int x = 0; x < per; ++x) {
        const TileElement at =
            fragment_element(p, op, input(g, ExprType::i32, "warp0"), input(g, ExprType::i32, "g"),
                             input(g, ExprType::i32, "q"), constant(g, ExprType::i32, ni),
                             constant(g, ExprType::i32, ks), constant(g, ExprType::i32, 0),
                             constant(g, ExprType::i32, b_k_offset(p.mma, reg * per + x)));
        const std::vector<Value *> v =
            emit_expr(e, {at.row, at.col}, {{"warp0", e.warp_n0}, {"g", e.g}, {"q", e.q}}, emitted);
        rc.push_back({v[0], v[1]});
      }
      out[ni].push_back(scalar_register(e, op, stage, rc));
    }
  }
  return out;
}

} // namespace tcjit::codegen
