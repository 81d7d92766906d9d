// The direct depthwise convolution kernel (groups = c = k; fprop and dgrad), chosen over the
// grouped implicit GEMM, whose N = 1 per group would leave 7 of each m16n8 mma's 8 columns idle
// (conv_lowering.h). Same ABI as every GEMM kernel (kernel_abi.h) with the view's roles: A = x
// (fprop) or dy (dgrad), B = filter (channel x tap), C/D = y or dx; M = output pixels, N =
// channels, K = taps; grid (ceil(M / bm), ceil(N / bn), 1), plan.threads threads, no shared
// memory.
//
// Thread t of a CTA computes outputs t, t + threads, ... of its bm x bn tile (pixel-major, channel
// fastest: a warp reads 32 consecutive channels of one pixel), each as the sum over the taps of
// input * filter in the accumulator type (f32 for f16/bf16/tf32/f32, with tf32 rounding of the
// inputs under math=tf32; f64; s32 for s8), in tap order (t, r, s) as reference_conv sums, then
// the GEMM epilogue (epilogue.h). fprop reads x through the filter taps with zero padding; dgrad
// reads dy where the stride divides (d + pad - t * dilation) exactly.
#pragma once

#include "compiler/codegen/plan/kernel_plan.h"

#include <memory>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace tcjit::codegen {

std::unique_ptr<llvm::Module> build_depthwise_module(llvm::LLVMContext &, const KernelPlan &);

} // namespace tcjit::codegen
