#include "compiler/codegen/llvm/llvm_module.h"

#include "compiler/codegen/llvm/copy_cursor.h"
#include "compiler/codegen/llvm/cp_async.h"
#include "compiler/codegen/llvm/depthwise.h"
#include "compiler/codegen/llvm/emit_context.h"
#include "compiler/codegen/llvm/epilogue.h"
#include "compiler/codegen/llvm/expr_lowering.h"
#include "compiler/codegen/llvm/ldmatrix.h"
#include "compiler/codegen/llvm/mma_emit.h"
#include "compiler/codegen/llvm/sparse_metadata.h"
#include "compiler/codegen/plan/dgrad_phases.h"
#include "compiler/codegen/plan/kernel_abi.h"

#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <stdexcept>

namespace tcjit::codegen {

using llvm::Value;

namespace {

Value *sreg(EmitContext &e, llvm::Intrinsic::ID id) {
  return e.b.CreateCall(e.intrinsic(id));
}

// The bias of batch `batch` (i64): shared by all batches of a GEMM; group g's own N values
// (from g * N) for a grouped convolution.
// Packed sub-byte inputs (KernelPlan::k_pack): K, lda, ldb and the A/B batch strides arrive in
// values; the tiles count bytes along K.
Value *in_bytes_along_k(EmitContext &e, Value *v) {
  const int d = e.plan.k_pack;
  if (d == 1)
    return v;
  return v->getType() == e.i32() ? e.b.CreateUDiv(v, e.c32(d)) : e.b.CreateSDiv(v, e.c64(d));
}

Value *bias_base(EmitContext &e, Value *bias, Value *batch, Value *n) {
  if (!e.plan.bias_per_batch)
    return bias;
  auto &b = e.b;
  Value *elems = b.CreateMul(batch, b.CreateZExt(n, e.i64()));
  return b.CreateGEP(e.i8(), bias, b.CreateMul(elems, e.c64(dtype_bits(e.plan.out) / 8)));
}

// The epilogue's pointers and scalars from the GEMM ABI's parameters of kernel `f`: C and D of
// batch `batch` (i64), the bias, M, N (i32), ldc, alpha and beta.
EpilogueArgs gemm_epilogue_args(EmitContext &e, llvm::Function *f, Value *batch, Value *M,
                                Value *N) {
  auto &b = e.b;
  auto arg = [&](GemmParam x) -> Value * { return f->getArg(static_cast<int>(x)); };
  const int out_esize = dtype_bits(e.plan.out) / 8;
  auto batch_base = [&](GemmParam ptr) {
    return b.CreateGEP(
        e.i8(), arg(ptr),
        b.CreateMul(b.CreateMul(batch, arg(GemmParam::batch_stride_c)), e.c64(out_esize)));
  };
  EpilogueArgs ea;
  ea.c = batch_base(GemmParam::c);
  ea.d = batch_base(GemmParam::d);
  ea.bias = bias_base(e, arg(GemmParam::bias), batch, N);
  ea.m = M;
  ea.n = N;
  ea.ldc = arg(GemmParam::ldc);
  ea.alpha = arg(GemmParam::alpha);
  ea.beta = arg(GemmParam::beta);
  return ea;
}

// Split-K, pass 2: one thread per element of D sums the split_k slices of the workspace in slice
// order (deterministic: the same sum in the same order whatever the schedule), then applies the
// epilogue. Parameters: the GEMM's (kernel_abi.h) + the workspace pointer.
void build_splitk_reduce(EmitContext &outer, llvm::FunctionType *gemm_ty,
                         const char *const *names) {
  const KernelPlan &p = outer.plan;
  llvm::LLVMContext &ctx = outer.ctx;
  auto &b = outer.b;
  std::vector<llvm::Type *> params(gemm_ty->param_begin(), gemm_ty->param_end());
  params.push_back(llvm::PointerType::get(ctx, 1));
  auto *fty = llvm::FunctionType::get(b.getVoidTy(), params, false);
  auto *f = llvm::Function::Create(fty, llvm::Function::ExternalLinkage,
                                   p.kernel_name + "_splitk_reduce", outer.module);
  for (int i = 0; i < kGemmParamCount; ++i)
    f->getArg(i)->setName(names[i]);
  f->getArg(kGemmParamCount)->setName("workspace");
  annotate_kernel(outer.module, f, kSplitKReduceThreads);
  auto arg = [&](GemmParam x) -> Value * { return f->getArg(static_cast<int>(x)); };
  EmitContext e{ctx, outer.module, b, p};
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", f));
  Value *tid = sreg(e, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
  Value *cta = sreg(e, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x);
  Value *batch = b.CreateZExt(sreg(e, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y), e.i64());
  Value *idx = b.CreateAdd(b.CreateMul(b.CreateZExt(cta, e.i64()), e.c64(kSplitKReduceThreads)),
                           b.CreateZExt(tid, e.i64()));
  Value *M = arg(GemmParam::m), *N = arg(GemmParam::n);
  Value *n64 = b.CreateZExt(N, e.i64());
  Value *mn = b.CreateMul(b.CreateZExt(M, e.i64()), n64);
  auto *body = llvm::BasicBlock::Create(ctx, "element", f);
  auto *done = llvm::BasicBlock::Create(ctx, "done", f);
  b.CreateCondBr(b.CreateICmpULT(idx, mn), body, done);
  b.SetInsertPoint(body);
  llvm::Type *acc_t = acc_type(e);
  const int acc_bytes = dtype_bits(p.acc) / 8;
  const int SK = p.config.split_k;
  Value *sum = nullptr;
  for (int s = 0; s < SK; ++s) {
    Value *slot =
        b.CreateAdd(b.CreateMul(b.CreateAdd(b.CreateMul(batch, e.c64(SK)), e.c64(s)), mn), idx);
    Value *v = b.CreateAlignedLoad(
        acc_t, b.CreateGEP(e.i8(), f->getArg(kGemmParamCount), b.CreateMul(slot, e.c64(acc_bytes))),
        llvm::Align(acc_bytes));
    if (!sum)
      sum = v;
    else
      sum = acc_t->isIntegerTy() ? b.CreateAdd(sum, v) : b.CreateFAdd(sum, v);
  }
  Value *row = b.CreateTrunc(b.CreateUDiv(idx, n64), e.i32());
  Value *col = b.CreateTrunc(b.CreateURem(idx, n64), e.i32());
  const int out_esize = dtype_bits(p.out) / 8;
  const EpilogueArgs ea = gemm_epilogue_args(e, f, batch, M, N);
  Value *r64 = b.CreateZExt(row, e.i64()), *c64 = b.CreateZExt(col, e.i64());
  Value *elem = p.out_layout == MatrixLayout::row ? b.CreateAdd(b.CreateMul(r64, ea.ldc), c64)
                                                  : b.CreateAdd(b.CreateMul(c64, ea.ldc), r64);
  Value *off = b.CreateMul(elem, e.c64(out_esize));
  Value *result = emit_epilogue_value(e, ea, sum, row, col, off);
  b.CreateAlignedStore(result, b.CreateGEP(e.i8(), ea.d, off), llvm::Align(out_esize));
  b.CreateBr(done);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
}

// Channel padding's copy kernel (kernel_abi.h): one thread per destination element.
void build_pad_channels(EmitContext &outer) {
  const KernelPlan &p = outer.plan;
  llvm::LLVMContext &ctx = outer.ctx;
  auto &b = outer.b;
  llvm::Type *gptr = llvm::PointerType::get(ctx, 1);
  auto *fty = llvm::FunctionType::get(b.getVoidTy(), {gptr, gptr, b.getInt64Ty()}, false);
  auto *f = llvm::Function::Create(fty, llvm::Function::ExternalLinkage,
                                   p.kernel_name + "_pad_channels", outer.module);
  f->getArg(0)->setName("src");
  f->getArg(1)->setName("dst");
  f->getArg(2)->setName("rows");
  annotate_kernel(outer.module, f, kPadChannelsThreads);
  EmitContext e{ctx, outer.module, b, p};
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", f));
  Value *tid = sreg(e, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
  Value *cta = sreg(e, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x);
  Value *idx = b.CreateAdd(b.CreateMul(b.CreateZExt(cta, e.i64()), e.c64(kPadChannelsThreads)),
                           b.CreateZExt(tid, e.i64()));
  const int64_t to = p.conv->c, from = p.pad_from;
  auto *body = llvm::BasicBlock::Create(ctx, "element", f);
  auto *done = llvm::BasicBlock::Create(ctx, "done", f);
  b.CreateCondBr(b.CreateICmpULT(idx, b.CreateMul(f->getArg(2), e.c64(to))), body, done);
  b.SetInsertPoint(body);
  Value *row = b.CreateUDiv(idx, e.c64(to));
  Value *ch = b.CreateURem(idx, e.c64(to));
  const int esize = p.a.esize;
  llvm::Type *t = b.getIntNTy(esize * 8);
  auto *load = llvm::BasicBlock::Create(ctx, "load", f);
  auto *store = llvm::BasicBlock::Create(ctx, "store", f);
  llvm::BasicBlock *zero = b.GetInsertBlock();
  b.CreateCondBr(b.CreateICmpULT(ch, e.c64(from)), load, store);
  b.SetInsertPoint(load);
  Value *src =
      b.CreateGEP(e.i8(), f->getArg(0),
                  b.CreateMul(b.CreateAdd(b.CreateMul(row, e.c64(from)), ch), e.c64(esize)));
  Value *v = b.CreateAlignedLoad(t, src, llvm::Align(esize));
  b.CreateBr(store);
  b.SetInsertPoint(store);
  llvm::PHINode *value = b.CreatePHI(t, 2);
  value->addIncoming(llvm::ConstantInt::get(t, 0), zero);
  value->addIncoming(v, load);
  b.CreateAlignedStore(value, b.CreateGEP(e.i8(), f->getArg(1), b.CreateMul(idx, e.c64(esize))),
                       llvm::Align(esize));
  b.CreateBr(done);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
}

} // namespace

void annotate_kernel(llvm::Module &m, llvm::Function *f, int threads) {
  llvm::LLVMContext &c = m.getContext();
  auto *i32 = llvm::Type::getInt32Ty(c);
  llvm::NamedMDNode *md = m.getOrInsertNamedMetadata("nvvm.annotations");
  md->addOperand(
      llvm::MDNode::get(c, {llvm::ValueAsMetadata::get(f), llvm::MDString::get(c, "kernel"),
                            llvm::ValueAsMetadata::get(llvm::ConstantInt::get(i32, 1))}));
  md->addOperand(
      llvm::MDNode::get(c, {llvm::ValueAsMetadata::get(f), llvm::MDString::get(c, "maxntidx"),
                            llvm::ValueAsMetadata::get(llvm::ConstantInt::get(i32, threads))}));
}

llvm::Function *create_gemm_abi_kernel(EmitContext &e) {
  const KernelPlan &p = e.plan;
  auto &b = e.b;
  llvm::Type *gptr = llvm::PointerType::get(e.ctx, 1);
  llvm::Type *epi_t = p.epi == DType::f64 ? b.getDoubleTy() : b.getFloatTy();
  std::vector<llvm::Type *> params(kGemmParamCount);
  for (GemmParam x : {GemmParam::a, GemmParam::b, GemmParam::c, GemmParam::d, GemmParam::bias})
    params[static_cast<int>(x)] = gptr;
  for (GemmParam x : {GemmParam::m, GemmParam::n, GemmParam::k})
    params[static_cast<int>(x)] = b.getInt32Ty();
  for (GemmParam x : {GemmParam::lda, GemmParam::ldb, GemmParam::ldc, GemmParam::batch_stride_a,
                      GemmParam::batch_stride_b, GemmParam::batch_stride_c})
    params[static_cast<int>(x)] = b.getInt64Ty();
  params[static_cast<int>(GemmParam::alpha)] = epi_t;
  params[static_cast<int>(GemmParam::beta)] = epi_t;
  auto *f = llvm::Function::Create(llvm::FunctionType::get(b.getVoidTy(), params, false),
                                   llvm::Function::ExternalLinkage, p.kernel_name, e.module);
  for (int i = 0; i < kGemmParamCount; ++i)
    f->getArg(i)->setName(kGemmParamNames[i]);
  annotate_kernel(e.module, f, p.threads);
  return f;
}

namespace {

// This CTA's tile (M-tile, N-tile). With raster_group > 1, CTA rasterization for L2 reuse
// (Triton's grouped ordering): CTAs are dispatched in x-fastest order; consecutive ones walk
// `group` M-tiles down before moving one N-tile right, so a wave of CTAs shares A rows and B
// columns.
std::pair<Value *, Value *> cta_tile(EmitContext &e) {
  auto &b = e.b;
  Value *tile_m = sreg(e, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x);
  Value *tile_n = sreg(e, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y);
  if (e.plan.config.raster_group <= 1)
    return {tile_m, tile_n};
  Value *tiles_m = sreg(e, llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x);
  Value *tiles_n = sreg(e, llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y);
  Value *group = e.c32(e.plan.config.raster_group);
  Value *pid = b.CreateAdd(b.CreateMul(tile_n, tiles_m), tile_m);
  Value *per_group = b.CreateMul(group, tiles_n);
  Value *first_m = b.CreateMul(b.CreateUDiv(pid, per_group), group);
  Value *left = b.CreateSub(tiles_m, first_m);
  Value *group_m = b.CreateSelect(b.CreateICmpULT(left, group), left, group);
  Value *in_group = b.CreateURem(pid, per_group);
  return {b.CreateAdd(first_m, b.CreateURem(in_group, group_m)), b.CreateUDiv(in_group, group_m)};
}

// Split-K, pass 1: the raw accumulators of this slice go to the workspace (`workspace`: the D
// parameter), dense row-major [batch * split_k + slice][M][N] (`z`: the CTA's blockIdx.z); the
// reduce kernel applies the epilogue.
void emit_splitk_slice_store(EmitContext &e, const EpilogueArgs &ea,
                             const std::vector<std::vector<std::vector<Value *>>> &accs,
                             Value *workspace, Value *z, Value *M, Value *N, llvm::Type *epi_t) {
  const KernelPlan &p = e.plan;
  auto &b = e.b;
  KernelPlan raw = p;
  raw.out = p.acc;
  raw.out_layout = MatrixLayout::row;
  raw.epilogue = Epilogue{};
  raw.integer_identity = p.acc == DType::s32;
  raw.c_vec = p.out_layout == MatrixLayout::row ? p.c_vec : 1; // N even: pairs
  EmitContext re{e.ctx, e.module, b, raw};
  re.smem = e.smem;
  re.tid = e.tid;
  re.lane = e.lane;
  re.g = e.g;
  re.q = e.q;
  re.frag_row0 = e.frag_row0;
  re.frag_col0 = e.frag_col0;
  re.warp_m0 = e.warp_m0;
  re.warp_n0 = e.warp_n0;
  EpilogueArgs ra = ea;
  Value *n64 = b.CreateZExt(N, e.i64());
  Value *mn = b.CreateMul(b.CreateZExt(M, e.i64()), n64);
  ra.d = b.CreateGEP(
      e.i8(), workspace,
      b.CreateMul(b.CreateMul(b.CreateZExt(z, e.i64()), mn), e.c64(dtype_bits(raw.out) / 8)));
  ra.ldc = n64;
  ra.alpha = llvm::ConstantFP::get(epi_t, 1.0);
  emit_epilogue(re, ra, accs);
}

} // namespace

std::unique_ptr<llvm::Module> build_gemm_module(llvm::LLVMContext &ctx, const KernelPlan &p) {
  if (p.depthwise)
    return build_depthwise_module(ctx, p);
  auto module = std::make_unique<llvm::Module>(p.kernel_name, ctx);
  module->setTargetTriple("nvptx64-nvidia-cuda");
  llvm::IRBuilder<> b(ctx);
  EmitContext e{ctx, *module, b, p};

  // --- signature (kernel_abi.h) ---
  llvm::Type *epi_t = p.epi == DType::f64 ? b.getDoubleTy() : b.getFloatTy();
  llvm::Function *f = create_gemm_abi_kernel(e);
  llvm::FunctionType *fty = f->getFunctionType();
  auto arg = [&](GemmParam x) -> Value * { return f->getArg(static_cast<int>(x)); };

  auto *smem = new llvm::GlobalVariable(*module, llvm::ArrayType::get(b.getInt8Ty(), 0), false,
                                        llvm::GlobalValue::ExternalLinkage, nullptr, "tcjit_smem",
                                        nullptr, llvm::GlobalValue::NotThreadLocal, 3);
  smem->setAlignment(llvm::Align(16));
  e.smem = smem;

  // --- thread geometry ---
  auto *entry = llvm::BasicBlock::Create(ctx, "entry", f);
  b.SetInsertPoint(entry);
  e.tid = sreg(e, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
  e.lane = b.CreateAnd(e.tid, e.c32(31));
  Value *warp = b.CreateLShr(e.tid, e.c32(5));
  e.g = b.CreateLShr(e.lane, e.c32(2));
  e.q = b.CreateAnd(e.lane, e.c32(3));
  const bool simt = p.mma.kind == MmaKind::simt_f32;
  e.frag_row0 = simt ? b.CreateLShr(e.lane, e.c32(3)) : e.g;
  e.frag_col0 = simt ? b.CreateAnd(e.lane, e.c32(7)) : b.CreateMul(e.q, e.c32(2));
  e.warp_m0 = b.CreateMul(b.CreateURem(warp, e.c32(p.warps_m)), e.c32(p.config.wm));
  e.warp_n0 = b.CreateMul(b.CreateUDiv(warp, e.c32(p.warps_m)), e.c32(p.config.wn));
  const auto [tile_m, tile_n] = cta_tile(e);
  Value *m0 = b.CreateMul(tile_m, e.c32(p.config.bm));
  Value *n0 = b.CreateMul(tile_n, e.c32(p.config.bn));
  // gridDim.z = batch * split_k: slice z % split_k of batch z / split_k
  const int SK = p.config.split_k;
  Value *z = sreg(e, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z);
  Value *batch = b.CreateZExt(b.CreateUDiv(z, e.c32(SK)), e.i64());
  Value *slice = b.CreateURem(z, e.c32(SK));
  Value *M = arg(GemmParam::m), *N = arg(GemmParam::n), *K = arg(GemmParam::k);
  if (p.a.gather == Gather::strided_phases) {
    // A strided dgrad by phases (plan/dgrad_phases.h; no split-K): z = phase * groups + group,
    // and the CTA's K is its phase's.
    e.dgrad_phase = b.CreateUDiv(z, e.c32(p.conv->groups));
    batch = b.CreateZExt(b.CreateURem(z, e.c32(p.conv->groups)), e.i64());
    ExprGraph graph;
    K = emit_expr(e, dgrad_phase_k(*p.conv, input(graph, ExprType::i32, "phase")),
                  {{"phase", e.dgrad_phase}});
  }
  Value *Kt = in_bytes_along_k(e, K); // K as the tiles count it
  auto batch_base = [&](Value *ptr, Value *stride, int esize) {
    return b.CreateGEP(e.i8(), ptr, b.CreateMul(b.CreateMul(batch, stride), e.c64(esize)));
  };
  // A 2:4-sparse A is its compressed M x K/2 values, then the metadata (sparse_metadata_args).
  Value *a_contig = p.mma.sparse ? b.CreateLShr(Kt, e.c32(1)) : Kt;
  GlobalOperand ga{
      batch_base(arg(GemmParam::a), in_bytes_along_k(e, arg(GemmParam::batch_stride_a)), p.a.esize),
      in_bytes_along_k(e, arg(GemmParam::lda)), p.a.k_contiguous ? M : Kt,
      p.a.k_contiguous ? a_contig : M, m0};
  const SparseMetadataArgs meta =
      p.mma.sparse ? sparse_metadata_args(e, ga.base, ga.ld, M, Kt, m0) // packed: in bytes
                   : SparseMetadataArgs{};
  GlobalOperand gb{
      batch_base(arg(GemmParam::b), in_bytes_along_k(e, arg(GemmParam::batch_stride_b)), p.b.esize),
      in_bytes_along_k(e, arg(GemmParam::ldb)), p.b.k_contiguous ? N : Kt,
      p.b.k_contiguous ? Kt : N, n0};
  EpilogueArgs ea = gemm_epilogue_args(e, f, batch, M, N);
  ea.m0 = m0;
  ea.n0 = n0;
  Value *ktiles = b.CreateUDiv(b.CreateAdd(K, e.c32(p.config.bk - 1)), e.c32(p.config.bk));
  // This CTA's K-tiles [kt_begin, kt_end): all of them without split-K. An empty slice runs one
  // iteration over a zero-filled tile (past K) and stores zeros.
  Value *per_slice = b.CreateUDiv(b.CreateAdd(ktiles, e.c32(SK - 1)), e.c32(SK));
  Value *kt_begin = b.CreateMul(slice, per_slice);
  Value *kt_end = b.CreateAdd(kt_begin, per_slice);
  kt_end = b.CreateSelect(b.CreateICmpULT(kt_end, ktiles), kt_end, ktiles);

  // --- accumulators: SSA values, one PHI each in the K-tile loop ---
  llvm::Type *acc_t = main_acc_type(e);
  const int acc_count = p.tiles_m * p.tiles_n * p.mma.c_regs;
  std::vector<Value *> accv(static_cast<size_t>(acc_count));
  auto acc_at = [&](int mi, int ni, int i) -> Value *& {
    return accv[static_cast<size_t>((mi * p.tiles_n + ni) * p.mma.c_regs + i)];
  };

  // --- prologue: stages-1 K-tiles in flight ---
  const int S = p.config.stages;
  // A strided dgrad's phase without taps (K = 0) loads nothing and skips the main loop: its zeros
  // go straight to the epilogue (beta * C, bias, activation).
  auto *exit = llvm::BasicBlock::Create(ctx, "epilogue"); // placed after the loop's bodies
  llvm::BasicBlock *empty_phase = nullptr;
  if (e.dgrad_phase) {
    auto *prologue = llvm::BasicBlock::Create(ctx, "prologue", f);
    b.CreateCondBr(b.CreateICmpEQ(K, e.c32(0)), exit, prologue);
    empty_phase = b.GetInsertBlock();
    b.SetInsertPoint(prologue);
  }
  // A's incremental im2col addressing (plan/incremental_gather.h): its K position goes from copy
  // to copy, through PHIs of the loop.
  std::optional<IncrementalGatherState> inc_a = begin_incremental_gather(e, p.a, ga, kt_begin);
  IncrementalGatherState *inc = inc_a ? &*inc_a : nullptr;
  for (int s = 0; s < S - 1; ++s) {
    emit_tile_copy(e, p.a, ga, e.c32(s), b.CreateAdd(kt_begin, e.c32(s)), inc);
    emit_tile_copy(e, p.b, gb, e.c32(s), b.CreateAdd(kt_begin, e.c32(s)));
    if (p.mma.sparse)
      emit_sparse_metadata_copy(e, meta, e.c32(s), b.CreateAdd(kt_begin, e.c32(s)));
    emit_commit_group(e);
  }
  // Linear operands' copies advance loop-carried pointers (copy_cursor.h), the first at the K-tile
  // the loop's first body copies.
  MainLoopCopies copies = make_main_loop_copies(e, ga, gb, b.CreateAdd(kt_begin, e.c32(S - 1)));
  llvm::BasicBlock *pre = b.GetInsertBlock();
  // --- main loop: one barrier per K-tile, unrolled by the stage count ---
  // Copy s of the body reads stage s and refills stage (s + S - 1) % S: every shared-memory
  // address is then a loop-invariant register plus a constant (an immediate offset in SASS), with
  // no stage index to compute per K-tile. Each copy may leave the loop (K-tiles need not be a
  // multiple of S). Main-loop SASS instructions per MMA, f16 128x128x32 3 stages: 2.92 -> 2.49
  // (tf32 6.50 -> 5.74, s8 3.38 -> 2.66), for ~1.4x the ptxas time. A SIMT FFMA loop gains
  // nothing (1.34 -> 1.33) for twice the ptxas time: it keeps one body and computes the stage,
  // and so do kernels with byte-wise fragment loads (kernel_plan.h: unrolled, they spill).
  const int U = p.mma.kind == MmaKind::simt_f32 || bytewise_fragments(p) ? 1 : S;
  std::vector<llvm::BasicBlock *> bodies;
  for (int s = 0; s < U; ++s)
    bodies.push_back(llvm::BasicBlock::Create(ctx, "ktile" + std::to_string(s), f));
  exit->insertInto(f);
  b.CreateBr(bodies[0]);

  b.SetInsertPoint(bodies[0]);
  llvm::PHINode *kt = b.CreatePHI(e.i32(), 2, "kt");
  kt->addIncoming(kt_begin, pre);
  main_loop_copy_phis(e, copies, pre);
  const std::vector<llvm::PHINode *> position_phis = incremental_gather_phis(e, inc, pre);
  std::vector<llvm::PHINode *> acc_phis;
  for (Value *&v : accv) {
    acc_phis.push_back(b.CreatePHI(acc_t, 2));
    acc_phis.back()->addIncoming(llvm::Constant::getNullValue(acc_t), pre);
    v = acc_phis.back();
  }
  // Fragments double-buffered in registers: k-step ks+1's ldmatrix are issued before k-step ks's
  // mma, so shared-memory latency hides behind tensor-core work.
  using Fragments = std::vector<std::vector<Value *>>;
  std::vector<std::pair<llvm::BasicBlock *, std::vector<Value *>>> exits;
  if (empty_phase)
    exits.push_back(
        {empty_phase, std::vector<Value *>(accv.size(), llvm::Constant::getNullValue(acc_t))});
  Value *ktv = kt;
  for (int s = 0; s < U; ++s) {
    if (s > 0)
      b.SetInsertPoint(bodies[static_cast<size_t>(s)]);
    emit_wait_group(e, S - 2);
    emit_barrier(e);
    Value *next = b.CreateAdd(ktv, e.c32(S - 1));
    Value *next_stage =
        U == S ? e.c32((s + S - 1) % S) : b.CreateURem(b.CreateSub(next, kt_begin), e.c32(S));
    emit_main_loop_copies(e, copies, next_stage, next, s, inc);
    if (p.mma.sparse)
      emit_sparse_metadata_copy(e, meta, next_stage, next);
    emit_commit_group(e);
    Value *stage = U == S ? e.c32(s) : b.CreateURem(b.CreateSub(ktv, kt_begin), e.c32(S));
    // A 2:4-sparse form's metadata registers (one per m-tile) are loaded with the fragments.
    std::vector<Value *> metadata, next_metadata;
    auto load_fragments = [&](int ks) {
      if (p.mma.sparse)
        next_metadata = emit_load_sparse_metadata(e, stage, ks);
      auto [af, bf] = p.mma.sparse ? emit_load_sparse_fragments(e, stage, ks)
                                   : std::pair{emit_load_a_fragments(e, stage, ks),
                                               emit_load_b_fragments(e, stage, ks)};
      if (p.mma.kind == MmaKind::tf32_f32 || p.mma.kind == MmaKind::sp_tf32_f32) {
        for (auto &r : af)
          r = emit_round_tf32(e, r);
        for (auto &r : bf)
          r = emit_round_tf32(e, r);
      }
      return std::pair{af, bf};
    };
    auto current = load_fragments(0);
    for (int ks = 0; ks < p.k_steps; ++ks) {
      metadata = next_metadata;
      std::pair<Fragments, Fragments> next_frags;
      if (ks + 1 < p.k_steps)
        next_frags = load_fragments(ks + 1);
      const Fragments &af = current.first, &bf = current.second;
      for (int mi = 0; mi < p.tiles_m; ++mi) {
        Value *md = p.mma.sparse ? metadata[static_cast<size_t>(mi)] : nullptr;
        for (int ni = 0; ni < p.tiles_n; ++ni) {
          std::vector<Value *> c;
          for (int i = 0; i < p.mma.c_regs; ++i)
            c.push_back(acc_at(mi, ni, i));
          std::vector<Value *> d =
              emit_mma(e, af[static_cast<size_t>(mi)], bf[static_cast<size_t>(ni)], c, md);
          for (int i = 0; i < p.mma.c_regs; ++i)
            acc_at(mi, ni, i) = d[static_cast<size_t>(i)];
        }
      }
      current = std::move(next_frags);
    }
    Value *kt1 = b.CreateAdd(ktv, e.c32(1));
    llvm::BasicBlock *latch = b.GetInsertBlock();
    exits.push_back({latch, accv});
    if (s == U - 1) {
      advance_main_loop_copies(e, copies, U, latch);
      kt->addIncoming(kt1, latch);
      close_incremental_gather_phis(position_phis, inc, latch);
      for (size_t i = 0; i < acc_phis.size(); ++i)
        acc_phis[i]->addIncoming(accv[i], latch);
    }
    b.CreateCondBr(b.CreateICmpULT(kt1, kt_end), bodies[static_cast<size_t>((s + 1) % U)], exit);
    ktv = kt1;
  }

  // --- epilogue ---
  b.SetInsertPoint(exit);
  for (size_t i = 0; i < accv.size(); ++i) {
    llvm::PHINode *phi = b.CreatePHI(acc_t, static_cast<unsigned>(exits.size()));
    for (const auto &[from, values] : exits)
      phi->addIncoming(values[i], from);
    accv[i] = phi;
  }
  emit_wait_group(e, 0);
  std::vector<std::vector<std::vector<Value *>>> accs(p.tiles_m,
                                                      std::vector<std::vector<Value *>>(p.tiles_n));
  for (int mi = 0; mi < p.tiles_m; ++mi)
    for (int ni = 0; ni < p.tiles_n; ++ni) {
      for (int i = 0; i < p.mma.c_regs; ++i)
        accs[mi][ni].push_back(acc_at(mi, ni, i)); // merged from the S exits
      if (widens_f16_accumulators(p))              // f16x2 -> f32, once: the epilogue reads p.acc
        accs[mi][ni] = emit_widen_f16_accumulators(e, accs[mi][ni]);
    }
  if (SK == 1)
    emit_epilogue(e, ea, accs);
  else
    emit_splitk_slice_store(e, ea, accs, arg(GemmParam::d), z, M, N, epi_t);
  b.CreateRetVoid();
  if (SK > 1)
    build_splitk_reduce(e, fty, kGemmParamNames);
  if (p.pad_from != 0)
    build_pad_channels(e);

  std::string err;
  llvm::raw_string_ostream os(err);
  if (llvm::verifyModule(*module, &os))
    throw std::logic_error("build_gemm_module: invalid LLVM IR for " + p.kernel_name + ": " +
                           os.str());
  return module;
}

} // namespace tcjit::codegen
