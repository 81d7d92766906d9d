#include "compiler/codegen/llvm/depthwise.h"

#include "compiler/codegen/llvm/emit_context.h"
#include "compiler/codegen/llvm/epilogue.h"
#include "compiler/codegen/llvm/expr_lowering.h"
#include "compiler/codegen/llvm/mma_emit.h"
#include "compiler/codegen/plan/formulas.h"
#include "compiler/codegen/plan/kernel_abi.h"

#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <stdexcept>

namespace tcjit::codegen {

using llvm::Value;

namespace {

// An input element widened to the accumulator type (tf32-rounded under math=tf32).
Value *to_acc(EmitContext &e, Value *v, DType t, llvm::Type *acc_t) {
  auto &b = e.b;
  if (acc_t->isIntegerTy())
    return t == DType::u8 ? b.CreateZExt(v, acc_t) : b.CreateSExt(v, acc_t);
  if (v->getType() != acc_t)
    v = b.CreateFPExt(v, acc_t);
  if (e.plan.math == MathMode::tf32 && t == DType::f32)
    v = b.CreateBitCast(emit_round_tf32(e, {v}).front(), acc_t);
  return v;
}

} // namespace

std::unique_ptr<llvm::Module> build_depthwise_module(llvm::LLVMContext &ctx, const KernelPlan &p) {
  if (!p.conv)
    throw std::logic_error("build_depthwise_module: no convolution constants");
  const ConvConstants &k = *p.conv;
  auto module = std::make_unique<llvm::Module>(p.kernel_name, ctx);
  module->setTargetTriple("nvptx64-nvidia-cuda");
  llvm::IRBuilder<> b(ctx);
  EmitContext e{ctx, *module, b, p};

  llvm::Function *f = create_gemm_abi_kernel(e); // the GEMM's ABI (kernel_abi.h)
  auto arg = [&](GemmParam x) -> Value * { return f->getArg(static_cast<int>(x)); };

  auto *entry = llvm::BasicBlock::Create(ctx, "entry", f);
  b.SetInsertPoint(entry);
  Value *tid = b.CreateCall(e.intrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x));
  Value *m0 = b.CreateMul(b.CreateCall(e.intrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x)),
                          e.c32(p.config.bm));
  Value *n0 = b.CreateMul(b.CreateCall(e.intrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y)),
                          e.c32(p.config.bn));
  Value *M = arg(GemmParam::m), *N = arg(GemmParam::n);
  EpilogueArgs ea;
  ea.c = arg(GemmParam::c);
  ea.d = arg(GemmParam::d);
  ea.bias = arg(GemmParam::bias);
  ea.m = M;
  ea.n = N;
  ea.ldc = arg(GemmParam::ldc);
  ea.alpha = arg(GemmParam::alpha);
  ea.beta = arg(GemmParam::beta);
  llvm::Type *acc_t = acc_type(e);
  llvm::Type *in_t = element_type(e, p.a.dtype);
  llvm::Type *w_t = element_type(e, p.b.dtype);
  const int out_esize = dtype_bits(p.out) / 8;

  // One loop iteration per output of the thread (a loop, not unrolled: the taps already are).
  const int per_thread = p.config.bm * p.config.bn / p.threads;
  auto *loop = llvm::BasicBlock::Create(ctx, "outputs", f);
  auto *done = llvm::BasicBlock::Create(ctx, "done", f);
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  llvm::PHINode *i = b.CreatePHI(e.i32(), 2, "i");
  i->addIncoming(e.c32(0), entry);
  {
    Value *idx = b.CreateAdd(tid, b.CreateMul(i, e.c32(p.threads)));
    Value *row = b.CreateAdd(m0, b.CreateUDiv(idx, e.c32(p.config.bn)));
    Value *col = b.CreateAdd(n0, b.CreateURem(idx, e.c32(p.config.bn)));
    auto *body = llvm::BasicBlock::Create(ctx, "output", f);
    auto *next = llvm::BasicBlock::Create(ctx, "next", f);
    b.CreateCondBr(b.CreateAnd(b.CreateICmpSLT(row, M), b.CreateICmpSLT(col, N)), body, next);
    b.SetInsertPoint(body);
    // row: the output pixel (fprop) or input pixel (dgrad); col: the channel (plan/formulas.h)
    ExprGraph graph;
    const DepthwisePoint at =
        depthwise_point(k, input(graph, ExprType::i32, "row"), input(graph, ExprType::i32, "col"));
    const ExprIrInputs inputs{{"row", row}, {"col", col}};
    EmittedExpr emitted;
    Value *acc = llvm::Constant::getNullValue(acc_t);
    for (int64_t t = 0; t < k.t; ++t)
      for (int64_t r = 0; r < k.r; ++r)
        for (int64_t s = 0; s < k.s; ++s) {
          auto tap_index = [&](int64_t v) { return constant(graph, ExprType::i32, v); };
          const DepthwiseTap tap = depthwise_tap(k, at, tap_index(t), tap_index(r), tap_index(s));
          const std::vector<Value *> source = emit_expr(e, {tap.in, tap.elem}, inputs, emitted);
          Value *ok = source[0], *off = source[1];
          Value *addr = b.CreateGEP(in_t, arg(GemmParam::a), b.CreateSelect(ok, off, e.c64(0)));
          Value *in = b.CreateSelect(ok, b.CreateAlignedLoad(in_t, addr, llvm::Align(p.a.esize)),
                                     llvm::Constant::getNullValue(in_t));
          Value *waddr = b.CreateGEP(w_t, arg(GemmParam::b),
                                     emit_expr(e, {tap.filter_elem}, inputs, emitted).front());
          Value *w = b.CreateAlignedLoad(w_t, waddr, llvm::Align(p.b.esize));
          Value *x = to_acc(e, in, p.a.dtype, acc_t), *y = to_acc(e, w, p.b.dtype, acc_t);
          acc = acc_t->isIntegerTy()
                    ? b.CreateAdd(acc, b.CreateMul(x, y))
                    : b.CreateCall(e.intrinsic(llvm::Intrinsic::fma, {acc_t}), {x, y, acc});
        }
    Value *col64 = emit_expr(e, {at.channel64}, inputs, emitted).front();
    Value *elem = b.CreateAdd(b.CreateMul(b.CreateZExt(row, e.i64()), ea.ldc), col64);
    Value *off = b.CreateMul(elem, e.c64(out_esize));
    Value *value = emit_epilogue_value(e, ea, acc, row, col, off);
    b.CreateAlignedStore(value, b.CreateGEP(e.i8(), ea.d, off), llvm::Align(out_esize));
    b.CreateBr(next);
    b.SetInsertPoint(next);
    Value *i1 = b.CreateAdd(i, e.c32(1));
    i->addIncoming(i1, next);
    b.CreateCondBr(b.CreateICmpULT(i1, e.c32(per_thread)), loop, done);
  }
  b.SetInsertPoint(done);
  b.CreateRetVoid();

  std::string err;
  llvm::raw_string_ostream os(err);
  if (llvm::verifyModule(*module, &os))
    throw std::logic_error("build_depthwise_module: invalid LLVM IR for " + p.kernel_name + ": " +
                           os.str());
  return module;
}

} // namespace tcjit::codegen
