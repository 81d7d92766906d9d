#include "compiler/codegen/llvm/depthwise.h"

#include "compiler/codegen/llvm/emit_context.h"
#include "compiler/codegen/llvm/epilogue.h"
#include "compiler/codegen/llvm/mma_emit.h"
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
  const bool fprop = k.pass == ConvPass::fprop;
  const int64_t channels = fprop ? k.k : k.c;

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
    // row -> (n, z, y, x): output pixel (fprop) or input pixel (dgrad)
    const int64_t ex = fprop ? k.q : k.w, ey = fprop ? k.p : k.h, ez = fprop ? k.o : k.d;
    Value *xq = b.CreateURem(row, e.c32(ex));
    Value *rest = b.CreateUDiv(row, e.c32(ex));
    Value *yq = b.CreateURem(rest, e.c32(ey));
    rest = b.CreateUDiv(rest, e.c32(ey));
    Value *zq = b.CreateURem(rest, e.c32(ez));
    Value *n = b.CreateZExt(b.CreateUDiv(rest, e.c32(ez)), e.i64());
    Value *col64 = b.CreateZExt(col, e.i64());
    // The source tensor (x for fprop, dy for dgrad) and its extents.
    const int64_t sd = fprop ? k.d : k.o, sh = fprop ? k.h : k.p, sw = fprop ? k.w : k.q;
    Value *acc = llvm::Constant::getNullValue(acc_t);
    for (int64_t t = 0; t < k.t; ++t)
      for (int64_t r = 0; r < k.r; ++r)
        for (int64_t s = 0; s < k.s; ++s) {
          const int64_t taps[3] = {t, r, s};
          Value *coord[3] = {zq, yq, xq};
          Value *src[3] = {nullptr, nullptr, nullptr};
          const int64_t extent[3] = {sd, sh, sw};
          Value *ok = b.getTrue();
          for (int dim = 0; dim < 3; ++dim) {
            if (fprop) {
              // x coordinate: out * stride - pad + tap * dilation
              src[dim] = b.CreateAdd(b.CreateMul(coord[dim], e.c32(k.stride[dim])),
                                     e.c32(taps[dim] * k.dilation[dim] - k.pad[dim]));
              ok = b.CreateAnd(ok, b.CreateICmpULT(src[dim], e.c32(extent[dim])));
            } else {
              // dy coordinate: (in + pad - tap * dilation) / stride, when exact
              Value *v = b.CreateAdd(coord[dim], e.c32(k.pad[dim] - taps[dim] * k.dilation[dim]));
              ok = b.CreateAnd(ok, b.CreateICmpULT(v, e.c32(extent[dim] * k.stride[dim])));
              if (k.stride[dim] > 1) {
                ok = b.CreateAnd(ok,
                                 b.CreateICmpEQ(b.CreateURem(v, e.c32(k.stride[dim])), e.c32(0)));
                v = b.CreateUDiv(v, e.c32(k.stride[dim]));
              }
              src[dim] = v;
            }
          }
          // ((((n * sd + z) * sh + y) * sw + x) * channels + channel)
          Value *off = b.CreateAdd(b.CreateMul(n, e.c64(sd)), b.CreateZExt(src[0], e.i64()));
          off = b.CreateAdd(b.CreateMul(off, e.c64(sh)), b.CreateZExt(src[1], e.i64()));
          off = b.CreateAdd(b.CreateMul(off, e.c64(sw)), b.CreateZExt(src[2], e.i64()));
          off = b.CreateAdd(b.CreateMul(off, e.c64(channels)), col64);
          Value *addr = b.CreateGEP(in_t, arg(GemmParam::a), b.CreateSelect(ok, off, e.c64(0)));
          Value *in = b.CreateSelect(ok, b.CreateAlignedLoad(in_t, addr, llvm::Align(p.a.esize)),
                                     llvm::Constant::getNullValue(in_t));
          const int64_t tap = (t * k.r + r) * k.s + s;
          Value *waddr = b.CreateGEP(w_t, arg(GemmParam::b),
                                     b.CreateAdd(b.CreateMul(col64, e.c64(k.taps())), e.c64(tap)));
          Value *w = b.CreateAlignedLoad(w_t, waddr, llvm::Align(p.b.esize));
          Value *x = to_acc(e, in, p.a.dtype, acc_t), *y = to_acc(e, w, p.b.dtype, acc_t);
          acc = acc_t->isIntegerTy()
                    ? b.CreateAdd(acc, b.CreateMul(x, y))
                    : b.CreateCall(e.intrinsic(llvm::Intrinsic::fma, {acc_t}), {x, y, acc});
        }
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
