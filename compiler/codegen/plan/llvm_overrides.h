// The LLVM backend's environment overrides, read where the plan is made: they change the code a
// kernel is made of, so the plan records them and kernel_identity names them, and a kernel built
// under one is never served under another (nor under none).
//
//   TCJIT_LLC_OPT        0-3: the NVPTX code generator's optimisation level (llvm/nvptx_emit.cpp
//                        picks 1 for mma kernels, 0 for SIMT); unset or "": that choice
//   TCJIT_LLVM_PIPELINE  a new-PM pass pipeline string, or "O3"; unset or "": the backend's own
//
// Any other TCJIT_LLC_OPT is an error naming it (std::runtime_error), not silently a level; a
// pipeline LLVM cannot parse fails the compile with the same kind of error.
#pragma once

#include "compiler/codegen/plan/kernel_plan.h"

#include <string>

namespace tcjit::codegen {

struct LlvmOverrides {
  int llc_opt = -1;     // -1: not overridden
  std::string pipeline; // "": not overridden
};

// The overrides in the environment now. Throws std::runtime_error for a bad TCJIT_LLC_OPT.
LlvmOverrides llvm_overrides();

// Records llvm_overrides() in the plan (KernelPlan::llc_opt, KernelPlan::llvm_pipeline).
void plan_llvm_overrides(KernelPlan &p);

} // namespace tcjit::codegen
