#include "compiler/codegen/llvm/sparse_metadata.h"

#include "compiler/codegen/llvm/cp_async.h"
#include "compiler/codegen/llvm/expr_lowering.h"
#include "compiler/codegen/plan/sparse_metadata.h"

#include <llvm/IR/IntrinsicsNVPTX.h>

namespace tcjit::codegen {

using llvm::Value;

namespace {

// The byte address in shared memory of `offset` (i32) in stage slot `stage`.
Value *slot_address(EmitContext &e, Value *stage, Value *offset) {
  auto &b = e.b;
  const SparseMetadataPlan &meta = e.plan.meta;
  Value *base = b.CreateAdd(e.c32(meta.smem_offset), b.CreateMul(stage, e.c32(meta.stage_bytes)));
  return b.CreateInBoundsGEP(e.i8(), e.smem, b.CreateAdd(base, offset));
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

void emit_sparse_metadata_copy(EmitContext &e, const SparseMetadataArgs &args, Value *stage,
                               Value *ktile) {
  auto &b = e.b;
  const SparseMetadataPlan &meta = e.plan.meta;
  emit_thread_copies(
      e, meta.copies_per_thread, meta.copies, "meta.copy", "meta.next", [&](int, Value *idx) {
        ExprGraph g;
        auto i32 = [&](const char *name) { return input(g, ExprType::i32, name); };
        const SparseMetadataCopy c =
            sparse_metadata_copy(e.plan, i32("idx"), i32("m0"), i32("ktile"), i32("M"), i32("K"));
        EmittedExpr emitted;
        const std::vector<Value *> v = emit_expr(
            e, {c.in, c.global_offset, c.smem_offset},
            {{"idx", idx}, {"m0", args.m0}, {"ktile", ktile}, {"M", args.m}, {"K", args.k}},
            emitted);
        Value *src = b.CreateSelect(v[0], b.CreateGEP(e.i8(), args.base, v[1]), args.base);
        Value *dst = slot_address(e, stage, v[2]);
        if (meta.unit_bytes >= 4) {
          const llvm::Intrinsic::ID id = meta.unit_bytes == 8
                                             ? llvm::Intrinsic::nvvm_cp_async_ca_shared_global_8
                                             : llvm::Intrinsic::nvvm_cp_async_ca_shared_global_4;
          b.CreateCall(e.intrinsic(id), {dst, src});
        } else {
          llvm::Type *t = b.getIntNTy(meta.unit_bytes * 8);
          b.CreateAlignedStore(b.CreateAlignedLoad(t, src, llvm::Align(meta.unit_bytes)), dst,
                               llvm::Align(meta.unit_bytes));
        }
      });
}

std::vector<Value *> emit_load_sparse_metadata(EmitContext &e, Value *stage, int ks) {
  auto &b = e.b;
  const KernelPlan &p = e.plan;
  const int words = sparse_metadata_words(p);
  llvm::Type *t = words == 1 ? e.i32() : llvm::FixedVectorType::get(e.i32(), words);
  std::vector<Value *> out;
  for (int mi = 0; mi < p.tiles_m; ++mi) {
    ExprGraph g;
    Expr q = input(g, ExprType::i32, "q");
    Expr offset = sparse_metadata_read_offset(
        p, input(g, ExprType::i32, "warp_m0"), input(g, ExprType::i32, "g"), q,
        constant(g, ExprType::i32, mi), constant(g, ExprType::i32, ks));
    Value *addr = slot_address(
        e, stage, emit_expr(e, offset, {{"warp_m0", e.warp_m0}, {"g", e.g}, {"q", e.q}}));
    Value *loaded = b.CreateAlignedLoad(t, addr, llvm::Align(4 * words));
    std::vector<Expr> word_inputs;
    ExprIrInputs bound{{"q", e.q}};
    for (int w = 0; w < words; ++w) {
      const std::string name = "w" + std::to_string(w);
      word_inputs.push_back(input(g, ExprType::i32, name));
      bound[name] = words == 1 ? loaded : b.CreateExtractElement(loaded, uint64_t(w));
    }
    out.push_back(emit_expr(e, sparse_metadata_register(p, word_inputs, q), bound));
  }
  return out;
}

} // namespace tcjit::codegen
