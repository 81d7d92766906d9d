// One mma.sync of the form in the plan's MmaForm, as its NVVM intrinsic. tf32 operands are rounded
// here (cvt.rna.tf32.f32) from the raw f32 bits the fragment loads return.
#pragma once

#include "compiler/codegen/llvm/emit_context.h"

#include <vector>

namespace tcjit::codegen {

// acc: c_regs accumulator values (float, i32 or double); returns the new ones. `metadata` (i32):
// a sparse form's metadata register (sparse_metadata.h), nullptr for dense forms. Sparse forms
// (no LLVM 19 intrinsic) are emitted as inline PTX with the sparsity selector kSparsitySelector.
std::vector<llvm::Value *> emit_mma(EmitContext &, const std::vector<llvm::Value *> &a,
                                    const std::vector<llvm::Value *> &b,
                                    const std::vector<llvm::Value *> &acc,
                                    llvm::Value *metadata = nullptr);

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
