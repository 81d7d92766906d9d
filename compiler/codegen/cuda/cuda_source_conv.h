// The convolution parts of the CUDA C++ backend (cuda_source.h), internal to compiler/codegen:
// the implicit-GEMM gathers (im2col, strided, tap_rows; conv_gather.cpp), channel padding's copy
// kernel (llvm_module.cpp, build_pad_channels) and the direct depthwise kernel (depthwise.cpp),
// each written as the LLVM backend builds it, with the plan's ConvConstants as compile-time
// constants of the source. Also declares the few helpers of cuda_source.cpp they share.
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

// The convolution's constants (namespace `cv`) and the gathers' shared helpers (split_pixel,
// split_tap, tensor_offset, strided_coordinate). For a plan with `conv` only.
void emit_conv_constants(std::ostringstream &s, const KernelPlan &p);

// `<op>_gather(outer, contig, outer_extent, contig_extent, elem)`: whether element (outer, contig)
// of the operand's view matrix lies inside its tensor, and its element offset from the group's
// base (conv_gather.cpp, emit_gathered_element). For op.gather != linear.
void emit_gather(std::ostringstream &s, const KernelPlan &p, const OperandPlan &op);

// The statement lines of the tile copy that set `in` and `src` for a gathered operand (the
// copy's loop body, cp_async.cpp emit_tile_copy), indented for it.
std::string gathered_source(const OperandPlan &op);

// `<kernel_name>_pad_channels` (kernel_abi.h): for a plan with pad_from != 0.
void emit_pad_channels(std::ostringstream &s, const KernelPlan &p);

// The direct depthwise kernel `plan.kernel_name` (depthwise.cpp): for a plan with `depthwise`.
// Uses epilogue_value() (cuda_source.cpp), emitted before it.
void emit_depthwise_kernel(std::ostringstream &s, const KernelPlan &p);

} // namespace tcjit::codegen::cuda_detail
