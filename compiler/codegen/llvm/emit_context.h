// What every per-family emitter shares while the kernel's LLVM IR is built (llvm_module.cpp owns
// it). Internal header: includes LLVM, so only compiler/codegen/*.cpp include it.
#pragma once

#include "compiler/codegen/plan/kernel_plan.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

namespace tcjit::codegen {

// One matrix operand in global memory as the kernel sees it (per CTA, batch offset applied).
struct GlobalOperand {
  llvm::Value *base = nullptr;          // ptr addrspace(1), element 0 of this batch
  llvm::Value *ld = nullptr;            // i64 leading dimension (elements)
  llvm::Value *outer_extent = nullptr;  // i32: extent of the tile's row dimension
  llvm::Value *contig_extent = nullptr; // i32: extent of the contiguous dimension
  llvm::Value *mn0 = nullptr;           // i32: the CTA's first m (A) or n (B)
};

struct EmitContext {
  llvm::LLVMContext &ctx;
  llvm::Module &module;
  llvm::IRBuilder<> &b;
  const KernelPlan &plan;
  llvm::Value *smem = nullptr; // ptr addrspace(3): the dynamic shared memory
  llvm::Value *tid = nullptr;  // i32 threadIdx.x
  llvm::Value *lane = nullptr; // i32
  llvm::Value *g = nullptr;    // i32 lane >> 2
  llvm::Value *q = nullptr;    // i32 lane & 3
  // The thread's first row / column in its warp's accumulator tiles: (g, 2q) for mma forms,
  // (lane / 8, lane % 8) for the SIMT form.
  llvm::Value *frag_row0 = nullptr;
  llvm::Value *frag_col0 = nullptr;
  llvm::Value *warp_m0 = nullptr; // i32: the warp's first row inside the CTA tile
  llvm::Value *warp_n0 = nullptr; // i32: the warp's first column inside the CTA tile
  // i32: the CTA's stride phase of a strided dgrad by phases (plan/dgrad_phases.h), else nullptr
  llvm::Value *dgrad_phase = nullptr;

  llvm::Type *i8() { return b.getInt8Ty(); }
  llvm::Type *i32() { return b.getInt32Ty(); }
  llvm::Type *i64() { return b.getInt64Ty(); }
  llvm::Value *c32(int64_t v) { return b.getInt32(static_cast<uint32_t>(v)); }
  llvm::Value *c64(int64_t v) { return b.getInt64(static_cast<uint64_t>(v)); }
  llvm::Function *intrinsic(llvm::Intrinsic::ID id, llvm::ArrayRef<llvm::Type *> types = {}) {
    return llvm::Intrinsic::getDeclaration(&module, id, types);
  }
};

// Marks `f` a kernel (nvvm.annotations) with at most `threads` threads per CTA.
void annotate_kernel(llvm::Module &, llvm::Function *f, int threads);

// The kernel function of kernel_abi.h's parameters (alpha and beta in the plan's epilogue type),
// named plan.kernel_name, its arguments named, annotated with plan.threads: the signature of the
// tiled GEMM (and convolution) kernel and of the depthwise kernel.
llvm::Function *create_gemm_abi_kernel(EmitContext &);

// The LLVM type of a dtype's element in memory (half, bfloat, float, double, i8, i32).
llvm::Type *element_type(EmitContext &, DType);

// Byte address in shared memory of element (row, col) of `op`'s tile in stage `stage` (i32,
// runtime), with the XOR swizzle of kernel_plan.h. row/col are i32 values.
llvm::Value *smem_address(EmitContext &, const OperandPlan &op, llvm::Value *stage,
                          llvm::Value *row, llvm::Value *col);

} // namespace tcjit::codegen
