#include "compiler/codegen/llvm/mma_emit.h"

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <stdexcept>
#include <string>

namespace tcjit::codegen {

using llvm::Value;

llvm::Type *acc_type(EmitContext &e) {
  if (e.plan.acc == DType::f64)
    return e.b.getDoubleTy();
  if (e.plan.acc == DType::s32)
    return e.b.getInt32Ty();
  return e.b.getFloatTy();
}

llvm::Type *main_acc_type(EmitContext &e) {
  if (e.plan.mma.acc == DType::f16)
    return llvm::FixedVectorType::get(e.b.getHalfTy(), 2);
  return acc_type(e);
}

std::vector<Value *> emit_widen_f16_accumulators(EmitContext &e,
                                                 const std::vector<Value *> &pairs) {
  llvm::Type *f32x2 = llvm::FixedVectorType::get(e.b.getFloatTy(), 2);
  std::vector<Value *> out;
  for (Value *pair : pairs) {
    Value *wide = e.b.CreateFPExt(pair, f32x2);
    out.push_back(e.b.CreateExtractElement(wide, uint64_t{0}));
    out.push_back(e.b.CreateExtractElement(wide, uint64_t{1}));
  }
  return out;
}

std::vector<Value *> emit_round_tf32(EmitContext &e, const std::vector<Value *> &regs) {
  std::vector<Value *> out;
  for (Value *r : regs)
    out.push_back(e.b.CreateCall(e.intrinsic(llvm::Intrinsic::nvvm_f2tf32_rna),
                                 {e.b.CreateBitCast(r, e.b.getFloatTy())}));
  return out;
}

namespace {

// A form LLVM 19 has no intrinsic for (fp8: mma ... .e4m3/.e5m2, PTX 8.4): the table's PTX as
// inline asm, m16n8k32 fragments of 32-bit registers ("r") and f32 accumulators ("f"), C tied to
// D. The module's PTX version (kernel_ptx_version) admits the instruction.
std::vector<Value *> emit_mma_inline_asm(EmitContext &e, const std::vector<Value *> &a,
                                         const std::vector<Value *> &b,
                                         const std::vector<Value *> &acc) {
  const MmaForm &form = e.plan.mma;
  if (form.acc != DType::f32 || a.size() != 4 || b.size() != 2 || acc.size() != 4)
    throw std::logic_error("emit_mma: no inline-asm lowering for " + std::string(form.ptx));
  llvm::Type *f32 = e.b.getFloatTy(), *i32 = e.b.getInt32Ty();
  std::vector<Value *> args;
  std::vector<llvm::Type *> params;
  for (const std::vector<Value *> *operand : {&a, &b})
    for (Value *v : *operand) {
      args.push_back(v->getType() == i32 ? v : e.b.CreateBitCast(v, i32));
      params.push_back(i32);
    }
  for (Value *v : acc) {
    args.push_back(v);
    params.push_back(f32);
  }
  llvm::StructType *result = llvm::StructType::get(e.b.getContext(), {f32, f32, f32, f32});
  llvm::FunctionType *type = llvm::FunctionType::get(result, params, false);
  const std::string text = std::string(form.ptx) +
                           " {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};";
  llvm::InlineAsm *asm_call =
      llvm::InlineAsm::get(type, text, "=f,=f,=f,=f,r,r,r,r,r,r,0,1,2,3", /*hasSideEffects=*/false);
  Value *r = e.b.CreateCall(asm_call, args);
  std::vector<Value *> out;
  for (unsigned i = 0; i < 4; ++i)
    out.push_back(e.b.CreateExtractValue(r, {i}));
  return out;
}

// mma.sp as inline PTX (LLVM 19 has no mma.sp intrinsic): D tied to C, A, B, the metadata, and
// the sparsity selector as an immediate.
std::vector<Value *> emit_sparse_mma(EmitContext &e, const std::vector<Value *> &a,
                                     const std::vector<Value *> &b, const std::vector<Value *> &acc,
                                     Value *metadata) {
  const MmaForm &form = e.plan.mma;
  if (!metadata || a.size() != static_cast<size_t>(form.a_regs) ||
      b.size() != static_cast<size_t>(form.b_regs) ||
      acc.size() != static_cast<size_t>(form.c_regs))
    throw std::logic_error("emit_mma: " + std::string(form.ptx) +
                           " needs its registers and the metadata");
  std::string constraints;
  int n = 0;
  auto list = [&](size_t count, const char *constraint) {
    std::string out = "{";
    for (size_t i = 0; i < count; ++i, ++n) {
      out += (i ? ", $" : "$") + std::to_string(n);
      constraints += (constraints.empty() ? "" : ",") + std::string(constraint);
    }
    return out + "}";
  };
  const bool integer = form.acc == DType::s32;
  llvm::Type *acc_t = integer ? e.i32() : e.b.getFloatTy();
  const std::string d = list(acc.size(), integer ? "=r" : "=f");
  const std::string as = list(a.size(), "r"), bs = list(b.size(), "r");
  std::string cs = "{";
  for (size_t i = 0; i < acc.size(); ++i) { // C tied to D
    cs += (i ? ", $" : "$") + std::to_string(i);
    constraints += "," + std::to_string(i);
  }
  cs += "}";
  const std::string md = "$" + std::to_string(n + static_cast<int>(acc.size()));
  constraints += ",r";
  const std::string text = std::string(form.ptx) + " " + d + ", " + as + ", " + bs + ", " + cs +
                           ", " + md + ", " + std::to_string(kSparsitySelector) + ";";
  std::vector<llvm::Type *> out_types(acc.size(), acc_t);
  llvm::Type *ret = llvm::StructType::get(e.ctx, out_types);
  std::vector<llvm::Type *> params;
  std::vector<Value *> args;
  for (const std::vector<Value *> *operand : {&a, &b})
    for (Value *v : *operand) {
      params.push_back(e.i32());
      args.push_back(v->getType() == e.i32() ? v : e.b.CreateBitCast(v, e.i32()));
    }
  for (Value *v : acc) {
    params.push_back(acc_t);
    args.push_back(v);
  }
  params.push_back(e.i32());
  args.push_back(metadata);
  auto *asm_fn = llvm::InlineAsm::get(llvm::FunctionType::get(ret, params, false), text,
                                      constraints, /*hasSideEffects=*/false);
  Value *r = e.b.CreateCall(asm_fn, args);
  std::vector<Value *> out;
  for (unsigned i = 0; i < acc.size(); ++i)
    out.push_back(e.b.CreateExtractValue(r, {i}));
  return out;
}

} // namespace

SparseMetadataArgs sparse_metadata_args(EmitContext &e, Value *a_base, Value *lda, Value *m,
                                        Value *k, Value *m0) {
  auto &b = e.b;
  // round_up(M * lda * esize, 16) bytes after the batch's A
  Value *bytes = b.CreateMul(b.CreateMul(b.CreateZExt(m, e.i64()), lda), e.c64(e.plan.a.esize));
  Value *offset = b.CreateAnd(b.CreateAdd(bytes, e.c64(15)), e.c64(~int64_t{15}));
  return {b.CreateGEP(e.i8(), a_base, offset), m, k, m0};
}

Value *emit_sparse_metadata(EmitContext &e, const SparseMetadataArgs &args, Value *ktile, int ks,
                            int mi) {
  auto &b = e.b;
  const MmaForm &form = e.plan.mma;
  // 16-bit elements: two 16-bit words (rows g, g + 8; dense columns 16 (q & 1) ..); 8-bit: one
  // 32-bit word (row g + 8 (q & 1), columns 32 (q >> 1) ..)
  // 32-bit (tf32, 1:2 pairs): one byte per row (rows g, g + 8; columns 8 (q & 1) ..), its 2
  // groups expanded to the hardware's 4 pair nibbles (0b0100 or 0b1110)
  const bool tf32 = form.elem_bits == 32;
  const bool halves = form.elem_bits == 16 || tf32;
  Value *col = halves ? b.CreateMul(b.CreateAnd(e.q, e.c32(1)), e.c32(tf32 ? 8 : 16))
                      : b.CreateMul(b.CreateLShr(e.q, e.c32(1)), e.c32(32));
  Value *k = b.CreateAdd(b.CreateMul(ktile, e.c32(k_tile_extent(e.plan))), // packed: bytes
                         b.CreateAdd(e.c32(static_cast<int64_t>(ks) * form.k), col));
  Value *row0 = b.CreateAdd(b.CreateAdd(args.m0, e.warp_m0),
                            b.CreateAdd(e.g, e.c32(static_cast<int64_t>(mi) * form.m)));
  if (!halves)
    row0 = b.CreateAdd(row0, b.CreateMul(b.CreateAnd(e.q, e.c32(1)), e.c32(8)));
  Value *row_bytes = b.CreateZExt(b.CreateLShr(args.k, e.c32(3)), e.i64());
  Value *k_in = b.CreateICmpULT(k, args.k);
  auto word = [&](Value *row, llvm::Type *t, int64_t outside) {
    Value *in = b.CreateAnd(k_in, b.CreateICmpULT(row, args.m));
    Value *off = b.CreateAdd(b.CreateMul(b.CreateZExt(row, e.i64()), row_bytes),
                             b.CreateZExt(b.CreateLShr(k, e.c32(3)), e.i64()));
    // outside the matrix: read the first word (always inside) and use indices 0 and 1
    Value *p = b.CreateGEP(e.i8(), args.base, b.CreateSelect(in, off, e.c64(0)));
    Value *v = b.CreateZExtOrBitCast(
        b.CreateAlignedLoad(t, p, llvm::Align(t->getPrimitiveSizeInBits() / 8)), e.i32());
    return b.CreateSelect(in, v, e.c32(outside));
  };
  if (!halves)
    return word(row0, e.i32(), 0x44444444);
  if (tf32) {
    auto pairs = [&](Value *row) {
      Value *m = word(row, e.i8(), 0);
      Value *out = e.c32(0x4444);
      for (int p = 0; p < 4; ++p) {
        Value *bit = b.CreateAnd(b.CreateLShr(m, e.c32(2 * p)), e.c32(1));
        out = b.CreateOr(out, b.CreateMul(bit, e.c32(int64_t{0xA} << (4 * p))));
      }
      return out;
    };
    return b.CreateOr(pairs(row0), b.CreateShl(pairs(b.CreateAdd(row0, e.c32(8))), e.c32(16)));
  }
  Value *lo = word(row0, b.getInt16Ty(), 0x4444);
  Value *hi = word(b.CreateAdd(row0, e.c32(8)), b.getInt16Ty(), 0x4444);
  return b.CreateOr(lo, b.CreateShl(hi, e.c32(16)));
}

std::vector<Value *> emit_mma(EmitContext &e, const std::vector<Value *> &a,
                              const std::vector<Value *> &b, const std::vector<Value *> &acc,
                              Value *metadata) {
  const MmaForm &form = e.plan.mma;
  if (form.sparse)
    return emit_sparse_mma(e, a, b, acc, metadata);
  if (form.kind == MmaKind::simt_f32) { // fma.rn.f32: exact fp32
    llvm::Type *f32 = e.b.getFloatTy();
    return {e.b.CreateCall(e.intrinsic(llvm::Intrinsic::fma, {f32}),
                           {e.b.CreateBitCast(a[0], f32), e.b.CreateBitCast(b[0], f32), acc[0]})};
  }
  if (form.intrinsic.empty() && form.not_generated.empty())
    return emit_mma_inline_asm(e, a, b, acc);
  // The table's intrinsic (compiler/target/mma_table.h); its declaration gives the operand types
  // (f16 A/B fragments are <2 x half>, the other 32-bit fragments i32).
  const llvm::Intrinsic::ID id = llvm::Function::lookupIntrinsicID(form.intrinsic);
  if (id == llvm::Intrinsic::not_intrinsic || !form.not_generated.empty())
    throw std::logic_error("emit_mma: LLVM has no intrinsic '" + std::string(form.intrinsic) +
                           "' for " + std::string(form.ptx) + " (compiler/target/mma_table.cpp)");
  llvm::Function *fn = e.intrinsic(id);
  llvm::FunctionType *type = fn->getFunctionType();
  if (type->getNumParams() != a.size() + b.size() + acc.size())
    throw std::logic_error("emit_mma: " + std::string(form.intrinsic) + " takes " +
                           std::to_string(type->getNumParams()) + " operands, the table's " +
                           std::string(form.ptx) + " has " +
                           std::to_string(a.size() + b.size() + acc.size()));
  std::vector<Value *> args;
  for (const std::vector<Value *> *operand : {&a, &b, &acc})
    for (Value *v : *operand) {
      llvm::Type *param = type->getParamType(static_cast<unsigned>(args.size()));
      args.push_back(v->getType() == param ? v : e.b.CreateBitCast(v, param));
    }
  Value *r = e.b.CreateCall(fn, args);
  std::vector<Value *> out;
  for (unsigned i = 0; i < acc.size(); ++i)
    out.push_back(e.b.CreateExtractValue(r, {i}));
  return out;
}

} // namespace tcjit::codegen
