#include "compiler/codegen/llvm/epilogue.h"

#include "compiler/codegen/llvm/cp_async.h"
#include "compiler/codegen/llvm/expr_lowering.h"
#include "compiler/codegen/llvm/mma_emit.h"
#include "compiler/codegen/plan/dgrad_phases.h"
#include "compiler/codegen/plan/formulas.h"

#include <llvm/IR/IntrinsicsNVPTX.h>

#include <algorithm>
#include <functional>
#include <string>
#include <tuple>

namespace tcjit::codegen {

using llvm::Value;

namespace {

// A strided dgrad by phases (plan/dgrad_phases.h): D's row `row` (i32) of the phase grid is in
// range when row < M and the pixel is no hole; its element is pixel * ldc + col. {in (i1), pixel
// (i64)}.
std::pair<Value *, Value *> phase_output_row(EmitContext &e, const EpilogueArgs &a, Value *row) {
  ExprGraph graph;
  const PhaseElement r =
      dgrad_output_row(*e.plan.conv, input(graph, ExprType::i32, "phase"),
                       input(graph, ExprType::i32, "row"), input(graph, ExprType::i32, "m"));
  EmittedExpr emitted;
  const std::vector<Value *> v =
      emit_expr(e, {r.in, r.elem}, {{"phase", e.dgrad_phase}, {"row", row}, {"m", a.m}}, emitted);
  return {v[0], v[1]};
}

Value *to_epi(EmitContext &e, Value *v, llvm::Type *epi) {
  llvm::Type *t = v->getType();
  if (t == epi)
    return v;
  if (t->isIntegerTy())
    return e.b.CreateSIToFP(v, epi);
  return e.b.CreateFPExt(v, epi);
}

Value *from_epi(EmitContext &e, Value *x, DType out) {
  auto &b = e.b;
  switch (out) {
  case DType::f16: return b.CreateFPTrunc(x, b.getHalfTy());
  case DType::bf16: return b.CreateFPTrunc(x, b.getBFloatTy());
  case DType::f32:
  case DType::tf32: return x->getType()->isFloatTy() ? x : b.CreateFPTrunc(x, b.getFloatTy());
  case DType::f64: return x;
  case DType::s32:
  case DType::s8: {
    Value *f = x->getType()->isFloatTy() ? x : b.CreateFPTrunc(x, b.getFloatTy());
    Value *i = b.CreateCall(e.intrinsic(llvm::Intrinsic::nvvm_f2i_rn), {f}); // saturating
    if (out == DType::s32)
      return i;
    i = b.CreateSelect(b.CreateICmpSLT(i, e.c32(-128)), e.c32(-128), i);
    i = b.CreateSelect(b.CreateICmpSGT(i, e.c32(127)), e.c32(127), i);
    return b.CreateTrunc(i, b.getInt8Ty());
  }
  case DType::u8:
  case DType::s4:
  case DType::u4:
  case DType::e4m3:
  case DType::e5m2:
  case DType::b1: break;
  }
  throw std::logic_error("epilogue: output dtype not supported (check_codegen_support)");
}

void warp_sync(EmitContext &e) {
  e.b.CreateCall(e.intrinsic(llvm::Intrinsic::nvvm_bar_warp_sync), {e.c32(-1)});
}

// for pass = 0 .. n - 1: body(pass) (i32), as a loop that neither LLVM nor ptxas unrolls
// (llvm.loop.unroll.disable: NVPTX prints `.pragma "nounroll"` in its header).
void emit_pass_loop(EmitContext &e, int n, const std::function<void(Value *)> &body) {
  auto &b = e.b;
  llvm::Function *f = b.GetInsertBlock()->getParent();
  llvm::BasicBlock *pre = b.GetInsertBlock();
  auto *head = llvm::BasicBlock::Create(e.ctx, "epi.pass", f);
  b.CreateBr(head);
  b.SetInsertPoint(head);
  llvm::PHINode *pass = b.CreatePHI(b.getInt32Ty(), 2, "pass");
  pass->addIncoming(e.c32(0), pre);
  body(pass);
  Value *next = b.CreateAdd(pass, e.c32(1));
  auto *exit = llvm::BasicBlock::Create(e.ctx, "epi.done", f); // after the body's blocks
  llvm::BranchInst *latch = b.CreateCondBr(b.CreateICmpSLT(next, e.c32(n)), head, exit);
  pass->addIncoming(next, b.GetInsertBlock());
  llvm::MDNode *disable =
      llvm::MDNode::get(e.ctx, llvm::MDString::get(e.ctx, "llvm.loop.unroll.disable"));
  llvm::MDNode *loop = llvm::MDNode::getDistinct(e.ctx, {nullptr, disable});
  loop->replaceOperandWith(0, loop);
  latch->setMetadata(llvm::LLVMContext::MD_loop, loop);
  b.SetInsertPoint(exit);
}

// The values of pass `pass` (i32 in [0, per_pass.size())): a switch to one block per pass and a
// PHI per value where they join (CUTLASS's acc2smem dispatches the same way), so that the pass's
// code is emitted once while the accumulators stay in registers.
std::vector<Value *> select_pass(EmitContext &e, Value *pass,
                                 const std::vector<std::vector<Value *>> &per_pass) {
  auto &b = e.b;
  llvm::Function *f = b.GetInsertBlock()->getParent();
  const size_t n = per_pass.size();
  auto *join = llvm::BasicBlock::Create(e.ctx, "epi.picked", f);
  std::vector<llvm::BasicBlock *> cases(n);
  for (size_t k = 0; k < n; ++k)
    cases[k] = llvm::BasicBlock::Create(e.ctx, "epi.pick", f);
  llvm::SwitchInst *sw = b.CreateSwitch(pass, cases[n - 1], static_cast<unsigned>(n - 1));
  for (size_t k = 0; k + 1 < n; ++k)
    sw->addCase(b.getInt32(static_cast<uint32_t>(k)), cases[k]);
  for (size_t k = 0; k < n; ++k) {
    b.SetInsertPoint(cases[k]);
    b.CreateBr(join);
  }
  b.SetInsertPoint(join);
  std::vector<Value *> out;
  for (size_t v = 0; v < per_pass[0].size(); ++v) {
    llvm::PHINode *phi = b.CreatePHI(per_pass[0][v]->getType(), static_cast<unsigned>(n));
    for (size_t k = 0; k < n; ++k)
      phi->addIncoming(per_pass[k][v], cases[k]);
    out.push_back(phi);
  }
  return out;
}

// The swizzled byte offset of (line, pos) (i32) in the warp's slab (plan/formulas.h).
Value *staging_offset_ir(EmitContext &e, Value *line, Value *pos) {
  ExprGraph g;
  return emit_expr(
      e, staging_offset(e.plan, input(g, ExprType::i32, "line"), input(g, ExprType::i32, "pos")),
      {{"line", line}, {"pos", pos}});
}

// The staged epilogue (epilogue.h). Row-major D: one pass per mma row-block mi (16 rows x wn
// columns), col-major D: one pass per mma column-block ni (8 columns x wm rows); a slab "line" is
// a row (column) of D, so lines run along D's contiguous dimension.
void emit_staged_epilogue(EmitContext &e, const EpilogueArgs &a,
                          const std::vector<std::vector<std::vector<Value *>>> &acc) {
  const KernelPlan &p = e.plan;
  auto &b = e.b;
  llvm::Function *f = b.GetInsertBlock()->getParent();
  const bool row_major = p.out_layout == MatrixLayout::row;
  llvm::Type *acc_t = acc_type(e);
  llvm::Type *out_t = element_type(e, p.out);
  llvm::Type *epi_t = p.epi == DType::f64 ? b.getDoubleTy() : b.getFloatTy();
  const int esize = dtype_bits(p.out) / 8;
  const int V = p.stage_vec, L = p.stage_line_len;
  const int per_line = L / V;                 // items (V-element vectors) per line
  const int items = p.stage_lines * per_line; // per pass
  const int iters = (items + 31) / 32;        // items per thread and pass
  // Every warp must be done reading its last fragments from the pipeline's buffers (cp.async is
  // drained by the wait_group 0 before this) before any warp overwrites them.
  emit_barrier(e);
  Value *warp = b.CreateLShr(e.tid, e.c32(5));
  Value *slab =
      b.CreateInBoundsGEP(e.i8(), e.smem, b.CreateMul(warp, e.c32(p.stage_lines * L * 4)));
  Value *row0 = b.CreateAdd(a.m0, e.warp_m0), *col0 = b.CreateAdd(a.n0, e.warp_n0);
  const int passes = row_major ? p.tiles_m : p.tiles_n;
  // The read-back's slab addresses are the same in every pass: computed once, here, where they
  // dominate every pass (in the guarded blocks below they would be computed again per pass, and
  // instruction selection, which works per block, re-analyses each swizzle: measured 15% of the
  // kernel's PTX emission).
  const int chunk = std::min(V, 4); // elements per shared load (16 bytes at most)
  // With the passes a loop, the items of a pass are one too (epilogue_loop.h), their slab
  // addresses computed in it.
  const bool loop_items = p.epilogue_loop && passes > 1 && iters > 1;
  std::vector<Value *> item_line(iters), item_pos(iters);
  std::vector<std::vector<Value *>> item_src(iters);
  for (int it = 0; it < iters && !loop_items; ++it) {
    Value *idx = b.CreateAdd(e.lane, e.c32(32 * it));
    item_line[it] = b.CreateUDiv(idx, e.c32(per_line));
    item_pos[it] = b.CreateMul(b.CreateURem(idx, e.c32(per_line)), e.c32(V));
    for (int j = 0; j < V; j += chunk)
      item_src[it].push_back(b.CreateInBoundsGEP(
          e.i8(), slab, staging_offset_ir(e, item_line[it], b.CreateAdd(item_pos[it], e.c32(j)))));
  }
  // pass * step: a constant where the passes are unrolled
  auto pass_offset = [&](Value *pass, int step) -> Value * {
    if (auto *c = llvm::dyn_cast<llvm::ConstantInt>(pass))
      return e.c32(static_cast<int>(c->getSExtValue()) * step);
    return b.CreateMul(pass, e.c32(step));
  };
  // The accumulators of each pass, in the order the slab writes take them.
  std::vector<std::vector<Value *>> per_pass(static_cast<size_t>(passes));
  for (int pass = 0; pass < passes; ++pass)
    for (int x = 0; x < (row_major ? p.tiles_n : p.tiles_m); ++x)
      for (int i = 0; i < 4; ++i)
        per_pass[static_cast<size_t>(pass)].push_back(row_major ? acc[pass][x][i]
                                                                : acc[x][pass][i]);
  // --- fragments -> slab: the same addresses in every pass ---
  auto write_slab = [&](const std::vector<Value *> &vals) {
    if (row_major) {
      for (int ni = 0; ni < p.tiles_n; ++ni)
        for (int i = 0; i < 4; i += 2) { // (i, i+1): adjacent columns of one row
          const FragOffset o = c_offset(p.mma, i);
          Value *line = b.CreateAdd(e.frag_row0, e.c32(o.row));
          Value *pos = b.CreateAdd(e.frag_col0, e.c32(ni * p.mma.n + o.col));
          Value *vec = llvm::PoisonValue::get(llvm::FixedVectorType::get(acc_t, 2));
          vec = b.CreateInsertElement(vec, vals[static_cast<size_t>(ni * 4 + i)], uint64_t{0});
          vec = b.CreateInsertElement(vec, vals[static_cast<size_t>(ni * 4 + i + 1)], uint64_t{1});
          b.CreateAlignedStore(vec,
                               b.CreateInBoundsGEP(e.i8(), slab, staging_offset_ir(e, line, pos)),
                               llvm::Align(8));
        }
    } else {
      for (int mi = 0; mi < p.tiles_m; ++mi)
        for (int i = 0; i < 4; ++i) {
          const FragOffset o = c_offset(p.mma, i);
          Value *line = b.CreateAdd(e.frag_col0, e.c32(o.col));
          Value *pos = b.CreateAdd(e.frag_row0, e.c32(mi * p.mma.m + o.row));
          b.CreateAlignedStore(vals[static_cast<size_t>(mi * 4 + i)],
                               b.CreateInBoundsGEP(e.i8(), slab, staging_offset_ir(e, line, pos)),
                               llvm::Align(4));
        }
    }
  };
  // --- slab -> C/D, V contiguous elements per lane and item ---
  // item idx (lane + 32 * it) of the pass: `line`, `pos` and `src` (its slab addresses) from it
  auto read_item = [&](Value *pass, Value *idx, Value *line, Value *pos,
                       const std::vector<Value *> &src) {
    {
      Value *row, *col;
      if (row_major) {
        row = b.CreateAdd(row0, b.CreateAdd(line, pass_offset(pass, p.mma.m)));
        col = b.CreateAdd(col0, pos);
      } else {
        row = b.CreateAdd(row0, pos);
        col = b.CreateAdd(col0, b.CreateAdd(line, pass_offset(pass, p.mma.n)));
      }
      // V divides D's contiguous extent (c_vec), so the vector's first element in range means
      // all of it is.
      Value *pixel = nullptr; // a phased dgrad's dx pixel of the row
      Value *in;
      if (e.dgrad_phase) {
        Value *row_in;
        std::tie(row_in, pixel) = phase_output_row(e, a, row);
        in = b.CreateAnd(row_in, b.CreateICmpSLT(col, a.n));
      } else {
        in = b.CreateAnd(b.CreateICmpSLT(row, a.m), b.CreateICmpSLT(col, a.n));
      }
      if (items % 32 != 0)
        in = b.CreateAnd(in, b.CreateICmpULT(idx, e.c32(items)));
      auto *store_bb = llvm::BasicBlock::Create(e.ctx, "epi.store", f);
      auto *next_bb = llvm::BasicBlock::Create(e.ctx, "epi.next", f);
      b.CreateCondBr(in, store_bb, next_bb);
      b.SetInsertPoint(store_bb);
      std::vector<Value *> accs;
      for (int j = 0; j < V; j += chunk) {
        Value *from = src[static_cast<size_t>(j / chunk)];
        if (chunk == 1) {
          accs.push_back(b.CreateAlignedLoad(acc_t, from, llvm::Align(4)));
          continue;
        }
        Value *v = b.CreateAlignedLoad(llvm::FixedVectorType::get(acc_t, chunk), from,
                                       llvm::Align(4 * chunk));
        for (int x = 0; x < chunk; ++x)
          accs.push_back(b.CreateExtractElement(v, uint64_t(x)));
      }
      Value *r64 = pixel ? pixel : b.CreateZExt(row, e.i64()), *c64 = b.CreateZExt(col, e.i64());
      Value *elem = row_major ? b.CreateAdd(b.CreateMul(r64, a.ldc), c64)
                              : b.CreateAdd(b.CreateMul(c64, a.ldc), r64);
      Value *off = b.CreateMul(elem, e.c64(esize));
      // One memory access of V elements. 16-bit elements: <V x half/bfloat> (b16, b32, v2.b32,
      // v4.b32). Bytes are packed into b16/b32/v2.b32 words with shifts: NVPTX would split
      // <N x i8> (and an i64 or <2 x i32> bitcast from it) into several narrower accesses.
      const int words = esize == 1 ? std::max(1, V / 4) : 1;
      const int bytes_per_word = esize == 1 ? std::min(V, 4) : 0;
      llvm::Type *word_t = b.getIntNTy(8 * std::max(1, bytes_per_word));
      llvm::Type *mem_t = V == 1       ? out_t
                          : esize != 1 ? llvm::FixedVectorType::get(out_t, V)
                          : words == 1 ? word_t
                                       : llvm::FixedVectorType::get(word_t, words);
      std::vector<Value *> cvals;
      if (p.epilogue.beta != 0.0 && !p.integer_identity) {
        Value *cv =
            b.CreateAlignedLoad(mem_t, b.CreateGEP(e.i8(), a.c, off), llvm::Align(V * esize));
        for (int x = 0; x < V; ++x) {
          if (V == 1) {
            cvals.push_back(cv);
          } else if (esize != 1) {
            cvals.push_back(b.CreateExtractElement(cv, uint64_t(x)));
          } else { // sign-extended in the word, then to the epilogue type
            Value *w = words == 1 ? cv : b.CreateExtractElement(cv, uint64_t(x / 4));
            const int bits = static_cast<int>(w->getType()->getIntegerBitWidth());
            w = b.CreateAShr(b.CreateShl(w, bits - 8 - (x % 4) * 8), bits - 8);
            cvals.push_back(b.CreateSIToFP(w, epi_t));
          }
        }
      }
      Value *out = V == 1 ? nullptr : llvm::PoisonValue::get(mem_t);
      Value *word = nullptr;
      for (int x = 0; x < V; ++x) {
        Value *rx = row_major ? row : b.CreateAdd(row, e.c32(x));
        Value *cx = row_major ? b.CreateAdd(col, e.c32(x)) : col;
        Value *val = emit_epilogue_value(e, a, accs[static_cast<size_t>(x)], rx, cx,
                                         b.CreateAdd(off, e.c64(x * esize)),
                                         cvals.empty() ? nullptr : cvals[static_cast<size_t>(x)]);
        if (V == 1) {
          out = val;
        } else if (esize != 1) {
          out = b.CreateInsertElement(out, val, uint64_t(x));
        } else {
          Value *part = b.CreateShl(b.CreateZExt(val, word_t), (x % 4) * 8);
          word = x % 4 == 0 ? part : b.CreateOr(word, part);
          if (x % 4 == bytes_per_word - 1)
            out = words == 1 ? word : b.CreateInsertElement(out, word, uint64_t(x / 4));
        }
      }
      b.CreateAlignedStore(out, b.CreateGEP(e.i8(), a.d, off), llvm::Align(V * esize));
      b.CreateBr(next_bb);
      b.SetInsertPoint(next_bb);
    }
  };
  auto read_back = [&](Value *pass) {
    if (!loop_items) {
      for (int it = 0; it < iters; ++it)
        read_item(pass, b.CreateAdd(e.lane, e.c32(32 * it)), item_line[it], item_pos[it],
                  item_src[it]);
      return;
    }
    emit_pass_loop(e, iters, [&](Value *it) {
      Value *idx = b.CreateAdd(e.lane, b.CreateMul(it, e.c32(32)));
      Value *line = b.CreateUDiv(idx, e.c32(per_line));
      Value *pos = b.CreateMul(b.CreateURem(idx, e.c32(per_line)), e.c32(V));
      std::vector<Value *> src;
      for (int j = 0; j < V; j += chunk)
        src.push_back(b.CreateInBoundsGEP(e.i8(), slab,
                                          staging_offset_ir(e, line, b.CreateAdd(pos, e.c32(j)))));
      read_item(pass, idx, line, pos, src);
    });
  };
  if (p.epilogue_loop && passes > 1) { // epilogue_loop.h
    emit_pass_loop(e, passes, [&](Value *pass) {
      write_slab(select_pass(e, pass, per_pass));
      warp_sync(e); // the slab is complete before any lane reads it back
      read_back(pass);
      warp_sync(e); // this pass's reads are done before the next pass overwrites the slab
    });
    return;
  }
  for (int pass = 0; pass < passes; ++pass) {
    if (pass > 0)
      warp_sync(e); // the previous pass's reads are done before this pass overwrites the slab
    write_slab(per_pass[static_cast<size_t>(pass)]);
    warp_sync(e); // the slab is complete before any lane reads it back
    read_back(e.c32(pass));
  }
}

} // namespace

Value *emit_activation(EmitContext &e, Activation act, Value *x) {
  if (act == Activation::custom) // refused by compile_gemm before any IR exists
    throw std::logic_error("act=custom reached the LLVM backend");
  ExprGraph g;
  const ExprType t = x->getType()->isFloatTy() ? ExprType::f32 : ExprType::f64;
  return emit_expr(e, activation(act, input(g, t, "x")), {{"x", x}});
}

Value *emit_epilogue_value(EmitContext &e, const EpilogueArgs &a, Value *v, Value *row, Value *col,
                           Value *off, Value *c_value) {
  const KernelPlan &p = e.plan;
  auto &b = e.b;
  llvm::Type *out_t = element_type(e, p.out);
  llvm::Type *epi_t = p.epi == DType::f64 ? b.getDoubleTy() : b.getFloatTy();
  const int esize = dtype_bits(p.out) / 8;
  if (p.integer_identity) {
    if (p.out != DType::s8)
      return v;
    v = b.CreateSelect(b.CreateICmpSLT(v, e.c32(-128)), e.c32(-128), v);
    v = b.CreateSelect(b.CreateICmpSGT(v, e.c32(127)), e.c32(127), v);
    return b.CreateTrunc(v, b.getInt8Ty());
  }
  // the sum's formula (formulas.h), emitted in parts: C and the bias are read between them
  ExprGraph g;
  const ExprType t = p.epi == DType::f64 ? ExprType::f64 : ExprType::f32;
  const EpilogueSum sum = epilogue_sum(p, input(g, t, "alpha"), input(g, t, "acc"),
                                       input(g, t, "beta"), input(g, t, "c"), input(g, t, "bias"));
  EmittedExpr emitted;
  Value *x = emit_expr(e, {sum.scaled}, {{"alpha", a.alpha}, {"acc", to_epi(e, v, epi_t)}}, emitted)
                 .front();
  if (p.epilogue.beta != 0.0) {
    Value *cv = c_value
                    ? c_value
                    : b.CreateAlignedLoad(out_t, b.CreateGEP(e.i8(), a.c, off), llvm::Align(esize));
    x = emit_expr(e, {sum.with_c}, {{"beta", a.beta}, {"c", to_epi(e, cv, epi_t)}}, emitted)
            .front();
  }
  if (p.epilogue.bias != BiasKind::none) {
    Value *bi = b.CreateZExt(p.epilogue.bias == BiasKind::row ? row : col, e.i64());
    Value *bv = b.CreateAlignedLoad(
        out_t, b.CreateGEP(e.i8(), a.bias, b.CreateMul(bi, e.c64(esize))), llvm::Align(esize));
    x = emit_expr(e, {sum.sum}, {{"bias", to_epi(e, bv, epi_t)}}, emitted).front();
  }
  return from_epi(e, emit_activation(e, p.epilogue.act, x), p.out);
}

void emit_epilogue(EmitContext &e, const EpilogueArgs &a,
                   const std::vector<std::vector<std::vector<Value *>>> &acc) {
  if (e.plan.stage_epilogue) {
    emit_staged_epilogue(e, a, acc);
    return;
  }
  const KernelPlan &p = e.plan;
  auto &b = e.b;
  llvm::Function *f = b.GetInsertBlock()->getParent();
  llvm::Type *out_t = element_type(e, p.out);
  const int esize = dtype_bits(p.out) / 8;
  // Everything per element (or pair), inside its guard: precomputing row/column offsets for the
  // whole warp tile keeps ~50 more values live next to the accumulators and makes ptxas spill
  // (measured). With a row-major D whose N and ldc are even (alignment >= 2), the two adjacent
  // columns 2q, 2q+1 of a fragment row share one guard (col < N implies col + 1 < N) and one
  // vector store.
  const bool pairs = p.out_layout == MatrixLayout::row && p.c_vec >= 2 && p.acc_regs >= 2;
  auto value_at = [&](Value *v, Value *row, Value *col, Value *off) {
    return emit_epilogue_value(e, a, v, row, col, off);
  };
  // One pass per mma row-block mi: vals are its accumulators acc[mi][ni][i] at ni * acc_regs + i.
  auto pass_body = [&](Value *mi, const std::vector<Value *> &vals) {
    for (int ni = 0; ni < p.tiles_n; ++ni)
      for (int i = 0; i < p.acc_regs; i += pairs ? 2 : 1) {
        const FragOffset o = c_offset(p.mma, i);
        Value *in_warp = nullptr; // mi * m + o.row, folded where mi is a constant
        if (auto *c = llvm::dyn_cast<llvm::ConstantInt>(mi))
          in_warp = e.c32(static_cast<int>(c->getSExtValue()) * p.mma.m + o.row);
        else
          in_warp = b.CreateAdd(b.CreateMul(mi, e.c32(p.mma.m)), e.c32(o.row));
        Value *row = b.CreateAdd(b.CreateAdd(a.m0, e.warp_m0), b.CreateAdd(e.frag_row0, in_warp));
        Value *col = b.CreateAdd(b.CreateAdd(a.n0, e.warp_n0),
                                 b.CreateAdd(e.frag_col0, e.c32(ni * p.mma.n + o.col)));
        auto *store_bb = llvm::BasicBlock::Create(e.ctx, "epi.store", f);
        auto *next_bb = llvm::BasicBlock::Create(e.ctx, "epi.next", f);
        Value *pixel = nullptr; // a phased dgrad's dx pixel of the row
        if (e.dgrad_phase) {
          auto [row_in, px] = phase_output_row(e, a, row);
          pixel = px;
          b.CreateCondBr(b.CreateAnd(row_in, b.CreateICmpSLT(col, a.n)), store_bb, next_bb);
        } else {
          b.CreateCondBr(b.CreateAnd(b.CreateICmpSLT(row, a.m), b.CreateICmpSLT(col, a.n)),
                         store_bb, next_bb);
        }
        b.SetInsertPoint(store_bb);
        Value *r64 = pixel ? pixel : b.CreateZExt(row, e.i64()), *c64 = b.CreateZExt(col, e.i64());
        Value *elem = p.out_layout == MatrixLayout::row ? b.CreateAdd(b.CreateMul(r64, a.ldc), c64)
                                                        : b.CreateAdd(b.CreateMul(c64, a.ldc), r64);
        Value *off = b.CreateMul(elem, e.c64(esize));
        Value *dst = b.CreateGEP(e.i8(), a.d, off);
        Value *acc0 = vals[static_cast<size_t>(ni * p.acc_regs + i)];
        if (!pairs) {
          b.CreateAlignedStore(value_at(acc0, row, col, off), dst, llvm::Align(esize));
        } else {
          Value *col1 = b.CreateAdd(col, e.c32(1));
          Value *off1 = b.CreateAdd(off, e.c64(esize));
          Value *v0 = value_at(acc0, row, col, off);
          Value *v1 = value_at(vals[static_cast<size_t>(ni * p.acc_regs + i + 1)], row, col1, off1);
          Value *vec = llvm::PoisonValue::get(llvm::FixedVectorType::get(out_t, 2));
          vec = b.CreateInsertElement(vec, v0, uint64_t{0});
          vec = b.CreateInsertElement(vec, v1, uint64_t{1});
          b.CreateAlignedStore(vec, dst, llvm::Align(2 * esize));
        }
        b.CreateBr(next_bb);
        b.SetInsertPoint(next_bb);
      }
  };
  std::vector<std::vector<Value *>> per_pass(static_cast<size_t>(p.tiles_m));
  for (int mi = 0; mi < p.tiles_m; ++mi)
    for (int ni = 0; ni < p.tiles_n; ++ni)
      for (int i = 0; i < p.acc_regs; ++i)
        per_pass[static_cast<size_t>(mi)].push_back(acc[mi][ni][i]);
  if (p.epilogue_loop && p.tiles_m > 1) { // epilogue_loop.h
    emit_pass_loop(e, p.tiles_m, [&](Value *mi) { pass_body(mi, select_pass(e, mi, per_pass)); });
    return;
  }
  for (int mi = 0; mi < p.tiles_m; ++mi)
    pass_body(e.c32(mi), per_pass[static_cast<size_t>(mi)]);
}

} // namespace tcjit::codegen
