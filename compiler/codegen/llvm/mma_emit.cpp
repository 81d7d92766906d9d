#include "compiler/codegen/llvm/mma_emit.h"

#include <llvm/IR/IntrinsicsNVPTX.h>

namespace tcjit::codegen {

using llvm::Value;

llvm::Type *acc_type(EmitContext &e) {
  if (e.plan.mma.acc == DType::f64)
    return e.b.getDoubleTy();
  if (e.plan.mma.acc == DType::s32)
    return e.b.getInt32Ty();
  return e.b.getFloatTy();
}

std::vector<Value *> emit_round_tf32(EmitContext &e, const std::vector<Value *> &regs) {
  std::vector<Value *> out;
  for (Value *r : regs)
    out.push_back(e.b.CreateCall(e.intrinsic(llvm::Intrinsic::nvvm_f2tf32_rna),
                                 {e.b.CreateBitCast(r, e.b.getFloatTy())}));
  return out;
}

std::vector<Value *> emit_mma(EmitContext &e, const std::vector<Value *> &a,
                              const std::vector<Value *> &b, const std::vector<Value *> &acc) {
  llvm::Intrinsic::ID id = llvm::Intrinsic::not_intrinsic;
  bool half2 = false;
  switch (e.plan.mma.kind) {
  case MmaKind::f16_f32:
    id = llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_f32_f32;
    half2 = true;
    break;
  case MmaKind::bf16_f32: id = llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_bf16; break;
  case MmaKind::tf32_f32: id = llvm::Intrinsic::nvvm_mma_m16n8k8_row_col_tf32; break;
  case MmaKind::s8_s32: id = llvm::Intrinsic::nvvm_mma_m16n8k32_row_col_s8; break;
  case MmaKind::f64_f64: id = llvm::Intrinsic::nvvm_mma_m8n8k4_row_col_f64; break;
  case MmaKind::simt_f32: { // fma.rn.f32: exact fp32
    llvm::Type *f32 = e.b.getFloatTy();
    return {e.b.CreateCall(e.intrinsic(llvm::Intrinsic::fma, {f32}),
                           {e.b.CreateBitCast(a[0], f32), e.b.CreateBitCast(b[0], f32), acc[0]})};
  }
  }
  std::vector<Value *> args;
  llvm::Type *h2 = llvm::FixedVectorType::get(e.b.getHalfTy(), 2);
  for (Value *v : a)
    args.push_back(half2 ? e.b.CreateBitCast(v, h2) : v);
  for (Value *v : b)
    args.push_back(half2 ? e.b.CreateBitCast(v, h2) : v);
  for (Value *v : acc)
    args.push_back(v);
  Value *r = e.b.CreateCall(e.intrinsic(id), args);
  std::vector<Value *> out;
  for (unsigned i = 0; i < acc.size(); ++i)
    out.push_back(e.b.CreateExtractValue(r, {i}));
  return out;
}

} // namespace tcjit::codegen
