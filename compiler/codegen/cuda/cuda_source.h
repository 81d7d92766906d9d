// The second backend: the kernel plan as readable CUDA C++ (one kernel per config, inline PTX for
// cp.async, ldmatrix and mma.sync; no template library, no header), for NVRTC to compile to PTX
// (runtime/jit/nvrtc_compiler.h). It follows the same plan as the LLVM backend (llvm_module.h):
// the same tiles, warps, stages, swizzled shared-memory layout, fragment loads, mma forms,
// rasterization, split-K workspace and reduction kernel, and the same kernel ABI (kernel_abi.h),
// so the runtime launches either kernel alike and the emulator can compare them.
//
// What it covers: every plan. GEMMs (every mma form and the SIMT f32 path, every fragment-load
// kind, split-K, rasterization, bias, activations, alpha/beta) and convolutions: their implicit
// GEMMs with the im2col / strided / tap_rows gathers (the ConvConstants written in as constants,
// the batch n a run-time value through M or K), per-group bias, channel padding's
// `<kernel_name>_pad_channels` kernel and the direct depthwise kernel (cuda_source_conv.h). The
// epilogue is the plan's: staged through shared memory where KernelPlan::stage_epilogue says so
// (within the shared memory the plan reserves), else straight from the fragments. A user-defined
// activation (act=custom:FILE, custom_activation.h) is embedded in
// namespace tcjit_user with #line directives, so that NVRTC reports its errors at the user's lines.
#pragma once

#include "compiler/codegen/plan/kernel_plan.h"

#include <string>

namespace tcjit::codegen {

// Empty when the source backend covers `plan`; else why not (a sentence). Empty for every plan
// today (kept for what the LLVM backend may gain first).
std::string cuda_source_unsupported(const KernelPlan &plan);

// The CUDA C++ source of the plan's module, every kernel extern "C": `plan.kernel_name` (the tiled
// GEMM or implicit-GEMM kernel, or the depthwise kernel), for split-K
// `<kernel_name>_splitk_reduce`, for channel padding `<kernel_name>_pad_channels`. Throws
// std::invalid_argument when cuda_source_unsupported(plan) is not empty.
std::string emit_cuda_source(const KernelPlan &plan);

} // namespace tcjit::codegen
