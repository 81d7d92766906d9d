// The convolution parts of the CUDA C++ backend (cuda_source.h), internal to compiler/codegen:
// the plan's ConvConstants as constants of the source, channel padding's copy kernel and the
// direct depthwise kernel (conv_lowering.h; the implicit-GEMM gathers are printed from their
// formulas with the tile copies, cuda_source.cpp). Also declares the few helpers of
// cuda_source.cpp they share.
#pragma once

#include "compiler/codegen/plan/kernel_plan.h"

#include <sstream>
#include <string>

namespace tcjit::codegen::cuda_detail {

// From cuda_source.cpp: the C type of an element of `t` in memory (f16/bf16 as u16), of the
// accumulator, of the epilogue (float or double); the kernel signature of kernel_abi.h named
// `name`, `extra` parameters appended (`threads`: the block size it is launched with).
const char *storage_type(DType t);
const char *acc_type(const KernelPlan &p);
const char *epi_type(const KernelPlan &p);
std::string signature(const KernelPlan &p, const std::string &name, const std::string &extra,
                      int threads);

// The convolution's constants (namespace `cv`). For a plan with `conv` only.
void emit_conv_constants(std::ostringstream &s, const KernelPlan &p);

// `<kernel_name>_pad_channels` (kernel_abi.h): for a plan with pad_from != 0.
void emit_pad_channels(std::ostringstream &s, const KernelPlan &p);

// Incremental im2col addressing of an operand (plan/incremental_gather.h), for an operand whose
// incremental_gather_applies: `<x>_gather_t` (per copy row its mask and pointer, the K position of
// the thread's column) and `<x>_gather_begin(g, base, outer_extent, mn0, kt_begin, tid)`, which
// sets it for K-tile kt_begin. The copy (cuda_source.cpp, <x>_copy(..., g)) prints:
//  - incremental_gather_step: this K-tile's `step_bits` (u32) and `step_offset` (u64), then the
//    position advanced by a K-tile;
//  - incremental_gather_source: per copy `it`, `in` and `src`.
void emit_incremental_gather_begin(std::ostringstream &s, const KernelPlan &p,
                                   const OperandPlan &op);
std::string incremental_gather_step(const KernelPlan &p, const OperandPlan &op);
std::string incremental_gather_source(const KernelPlan &p, const OperandPlan &op);

// The direct depthwise kernel `plan.kernel_name`: for a plan with `depthwise`. Uses
// epilogue_value() (cuda_source.cpp), emitted before it.
void emit_depthwise_kernel(std::ostringstream &s, const KernelPlan &p);

} // namespace tcjit::codegen::cuda_detail
