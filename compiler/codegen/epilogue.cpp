#include "compiler/codegen/epilogue.h"

#include <llvm/IR/IntrinsicsNVPTX.h>

#include <array>
#include <cmath>
#include <string>

namespace tcjit::codegen {

using llvm::Value;

namespace {

// libdevice: __nv_<name>f for f32, __nv_<name> for f64.
Value *libdevice_call(EmitContext &e, const std::string &name, Value *x) {
  const bool f32 = x->getType()->isFloatTy();
  llvm::FunctionCallee f =
      e.module.getOrInsertFunction("__nv_" + name + (f32 ? "f" : ""),
                                   llvm::FunctionType::get(x->getType(), {x->getType()}, false));
  return e.b.CreateCall(f, {x});
}

Value *fconst(Value *like, double v) {
  return llvm::ConstantFP::get(like->getType(), v);
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
  case DType::e5m2: break;
  }
  throw std::logic_error("epilogue: output dtype not supported (check_codegen_support)");
}

} // namespace

Value *emit_activation(EmitContext &e, Activation act, Value *x) {
  auto &b = e.b;
  Value *zero = fconst(x, 0.0), *one = fconst(x, 1.0), *half = fconst(x, 0.5);
  switch (act) {
  case Activation::none: return x;
  case Activation::relu: return b.CreateSelect(b.CreateFCmpUGT(x, zero), x, zero); // NaN stays
  case Activation::tanh: return libdevice_call(e, "tanh", x);
  case Activation::sigmoid:
    return b.CreateFDiv(one, b.CreateFAdd(one, libdevice_call(e, "exp", b.CreateFNeg(x))));
  case Activation::elu:
    return b.CreateSelect(b.CreateFCmpOGT(x, zero), x, libdevice_call(e, "expm1", x));
  case Activation::gelu: // 0.5 x erfc(-x / sqrt 2)
    return b.CreateFMul(b.CreateFMul(half, x),
                        libdevice_call(e, "erfc", b.CreateFMul(x, fconst(x, -M_SQRT1_2))));
  case Activation::gelu_tanh: {
    Value *x3 = b.CreateFMul(b.CreateFMul(x, x), x);
    Value *inner = b.CreateFMul(fconst(x, std::sqrt(2.0 / M_PI)),
                                b.CreateFAdd(x, b.CreateFMul(fconst(x, 0.044715), x3)));
    return b.CreateFMul(b.CreateFMul(half, x), b.CreateFAdd(one, libdevice_call(e, "tanh", inner)));
  }
  case Activation::softplus: { // x > 0 ? x + log1p(exp(-x)) : log1p(exp(x))
    Value *pos = b.CreateFCmpOGT(x, zero);
    Value *ax = b.CreateSelect(pos, b.CreateFNeg(x), x);
    Value *l = libdevice_call(e, "log1p", libdevice_call(e, "exp", ax));
    return b.CreateSelect(pos, b.CreateFAdd(x, l), l);
  }
  case Activation::swish:
    return b.CreateFDiv(x, b.CreateFAdd(one, libdevice_call(e, "exp", b.CreateFNeg(x))));
  }
  return x;
}

Value *emit_epilogue_value(EmitContext &e, const EpilogueArgs &a, Value *v, Value *row, Value *col,
                           Value *off) {
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
  Value *x = b.CreateFMul(a.alpha, to_epi(e, v, epi_t));
  if (p.epilogue.beta != 0.0) {
    Value *cv = b.CreateAlignedLoad(out_t, b.CreateGEP(e.i8(), a.c, off), llvm::Align(esize));
    x = b.CreateFAdd(x, b.CreateFMul(a.beta, to_epi(e, cv, epi_t)));
  }
  if (p.epilogue.bias != BiasKind::none) {
    Value *bi = b.CreateZExt(p.epilogue.bias == BiasKind::row ? row : col, e.i64());
    Value *bv = b.CreateAlignedLoad(
        out_t, b.CreateGEP(e.i8(), a.bias, b.CreateMul(bi, e.c64(esize))), llvm::Align(esize));
    x = b.CreateFAdd(x, to_epi(e, bv, epi_t));
  }
  return from_epi(e, emit_activation(e, p.epilogue.act, x), p.out);
}

void emit_epilogue(EmitContext &e, const EpilogueArgs &a,
                   const std::vector<std::vector<std::vector<Value *>>> &acc) {
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
  const bool pairs = p.out_layout == MatrixLayout::row && p.c_vec >= 2 && p.mma.c_regs >= 2;
  auto value_at = [&](Value *v, Value *row, Value *col, Value *off) {
    return emit_epilogue_value(e, a, v, row, col, off);
  };
  for (int mi = 0; mi < p.tiles_m; ++mi)
    for (int ni = 0; ni < p.tiles_n; ++ni)
      for (int i = 0; i < p.mma.c_regs; i += pairs ? 2 : 1) {
        const FragOffset o = c_offset(p.mma, i);
        Value *row = b.CreateAdd(b.CreateAdd(a.m0, e.warp_m0),
                                 b.CreateAdd(e.frag_row0, e.c32(mi * p.mma.m + o.row)));
        Value *col = b.CreateAdd(b.CreateAdd(a.n0, e.warp_n0),
                                 b.CreateAdd(e.frag_col0, e.c32(ni * p.mma.n + o.col)));
        auto *store_bb = llvm::BasicBlock::Create(e.ctx, "epi.store", f);
        auto *next_bb = llvm::BasicBlock::Create(e.ctx, "epi.next", f);
        b.CreateCondBr(b.CreateAnd(b.CreateICmpSLT(row, a.m), b.CreateICmpSLT(col, a.n)), store_bb,
                       next_bb);
        b.SetInsertPoint(store_bb);
        Value *r64 = b.CreateZExt(row, e.i64()), *c64 = b.CreateZExt(col, e.i64());
        Value *elem = p.out_layout == MatrixLayout::row ? b.CreateAdd(b.CreateMul(r64, a.ldc), c64)
                                                        : b.CreateAdd(b.CreateMul(c64, a.ldc), r64);
        Value *off = b.CreateMul(elem, e.c64(esize));
        Value *dst = b.CreateGEP(e.i8(), a.d, off);
        if (!pairs) {
          b.CreateAlignedStore(value_at(acc[mi][ni][i], row, col, off), dst, llvm::Align(esize));
        } else {
          Value *col1 = b.CreateAdd(col, e.c32(1));
          Value *off1 = b.CreateAdd(off, e.c64(esize));
          Value *v0 = value_at(acc[mi][ni][i], row, col, off);
          Value *v1 = value_at(acc[mi][ni][i + 1], row, col1, off1);
          Value *vec = llvm::PoisonValue::get(llvm::FixedVectorType::get(out_t, 2));
          vec = b.CreateInsertElement(vec, v0, uint64_t{0});
          vec = b.CreateInsertElement(vec, v1, uint64_t{1});
          b.CreateAlignedStore(vec, dst, llvm::Align(2 * esize));
        }
        b.CreateBr(next_bb);
        b.SetInsertPoint(next_bb);
      }
}

} // namespace tcjit::codegen
