// Kernel plan -> LLVM IR module for nvptx64-nvidia-cuda, built with llvm::IRBuilder. The kernel
// follows kernel_abi.h. Structure (one barrier per K-tile):
//
//   prologue: for s in [0, stages-1): copy K-tile s -> stage s; commit
//   for kt in [0, ktiles):
//     wait_group(stages-2); bar.sync            // tile kt landed; everyone is done with kt-1
//     copy K-tile kt+stages-1 -> its stage      // the stage kt-1 used
//     commit
//     for ks in k-steps: ldmatrix A, B; mma.sync over the warp tile
//   epilogue
#pragma once

#include "compiler/codegen/plan/kernel_plan.h"

#include <memory>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace tcjit::codegen {

// The module holds one kernel named plan.kernel_name (plus declarations of the libdevice
// functions its epilogue calls). Throws std::logic_error when the IR fails verification.
std::unique_ptr<llvm::Module> build_gemm_module(llvm::LLVMContext &, const KernelPlan &);

} // namespace tcjit::codegen
