#include "compiler/codegen/llvm/mma_emit.h"

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

std::vector<Value *> emit_mma(EmitContext &e, const std::vector<Value *> &a,
                              const std::vector<Value *> &b, const std::vector<Value *> &acc) {
  const MmaForm &form = e.plan.mma;
  if (form.kind == MmaKind::simt_f32) { // fma.rn.f32: exact fp32
    llvm::Type *f32 = e.b.getFloatTy();
    return {e.b.CreateCall(e.intrinsic(llvm::Intrinsic::fma, {f32}),
                           {e.b.CreateBitCast(a[0], f32), e.b.CreateBitCast(b[0], f32), acc[0]})};
  }
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
