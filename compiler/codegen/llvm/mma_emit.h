// One mma.sync of the form in the plan's MmaForm, as its NVVM intrinsic. tf32 operands are rounded
// here (cvt.rna.tf32.f32) from the raw f32 bits the fragment loads return.
#pragma once

#include "compiler/codegen/llvm/emit_context.h"

#include <vector>

namespace tcjit::codegen {

// acc: c_regs accumulator values (float, i32 or double); returns the new ones. `metadata` (i32):
// a sparse form's metadata register (emit_sparse_metadata), nullptr for dense forms. Sparse forms
// (no LLVM 19 intrinsic) are emitted as inline PTX with the sparsity selector kSparsitySelector.
std::vector<llvm::Value *> emit_mma(EmitContext &, const std::vector<llvm::Value *> &a,
                                    const std::vector<llvm::Value *> &b,
                                    const std::vector<llvm::Value *> &acc,
                                    llvm::Value *metadata = nullptr);

// Where a 2:4-sparse A's metadata lies (docs/dsl.md): `base` (ptr addrspace(1)) is the batch's
// metadata, after its M x lda compressed values at the next 16-byte boundary; row m's K / 8 bytes
// start at m * (K / 8).
struct SparseMetadataArgs {
  llvm::Value *base = nullptr;
  llvm::Value *m = nullptr, *k = nullptr; // i32 M and K (dense)
  llvm::Value *m0 = nullptr;              // i32: the CTA's first row
};
SparseMetadataArgs sparse_metadata_args(EmitContext &, llvm::Value *a_base, llvm::Value *lda,
                                        llvm::Value *m, llvm::Value *k, llvm::Value *m0);
// The metadata register of m-tile `mi` at k-step `ks` of K-tile `ktile` (i32), sparsity selector
// 0 (PTX ISA, mma.sp metadata figures): m16n8k32 f16/bf16 (threads q = 0, 1 of each group of four
// supply it): bits 0-15 row g's four groups of dense columns 16 (q & 1) .. + 15 of the step, bits
// 16-31 row g + 8's; m16n8k64 s8/u8 (all four threads): row g + 8 (q & 1)'s eight groups of
// columns 32 (q >> 1) .. + 31. Indices 0 and 1 (0x4 per group) outside the matrix, where A is
// zero-filled.
llvm::Value *emit_sparse_metadata(EmitContext &, const SparseMetadataArgs &, llvm::Value *ktile,
                                  int ks, int mi);
// Rounds f32 bits to tf32 (cvt.rna.tf32.f32), for every register of a tf32 fragment.
std::vector<llvm::Value *> emit_round_tf32(EmitContext &, const std::vector<llvm::Value *> &regs);
// The LLVM type of an accumulator after the main loop (KernelPlan::acc: float, i32 or double).
llvm::Type *acc_type(EmitContext &);
// The LLVM type of one main-loop accumulator register (the form's: <2 x half> for f16
// accumulation, else acc_type).
llvm::Type *main_acc_type(EmitContext &);
// f16 accumulation: each tile's f16x2 registers (c0 c1 | c2 c3), fpext to four floats.
std::vector<llvm::Value *> emit_widen_f16_accumulators(EmitContext &,
                                                       const std::vector<llvm::Value *> &pairs);

} // namespace tcjit::codegen
