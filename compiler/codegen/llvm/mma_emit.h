// One mma.sync of the form in the plan's MmaForm, as its NVVM intrinsic. tf32 operands are rounded
// here (cvt.rna.tf32.f32) from the raw f32 bits the fragment loads return.
#pragma once

#include "compiler/codegen/llvm/emit_context.h"

#include <vector>

namespace tcjit::codegen {

// acc: c_regs accumulator values (float, i32 or double); returns the new ones.
std::vector<llvm::Value *> emit_mma(EmitContext &, const std::vector<llvm::Value *> &a,
                                    const std::vector<llvm::Value *> &b,
                                    const std::vector<llvm::Value *> &acc);
// Rounds f32 bits to tf32 (cvt.rna.tf32.f32), for every register of a tf32 fragment.
std::vector<llvm::Value *> emit_round_tf32(EmitContext &, const std::vector<llvm::Value *> &regs);
// The accumulator's LLVM type and its zero.
llvm::Type *acc_type(EmitContext &);

} // namespace tcjit::codegen
