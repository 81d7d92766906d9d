// The CUDA C++ backend's incremental copies (internal to compiler/codegen): the main loop's copies
// of a linear operand from pointers that the K-tile loop advances (plan/formulas.h, linear_copy;
// the LLVM backend's llvm/copy_cursor.h). For an operand with incremental_copies only.
#pragma once

#include "compiler/codegen/plan/kernel_plan.h"

#include <sstream>
#include <string>

namespace tcjit::codegen::cuda_detail {

// `<x>_cursor(ptr, k, k_limit, base, ld, outer_extent, contig_extent, mn0, kt, tid)`: each copy's
// pointer at K-tile kt, its k and k_limit; `<x>_cursor_copy(smem, ptr, k, k_limit, step, stage,
// kt, tiles, tid)`: K-tile kt (= the cursor's + tiles) into stage `stage`. After <x>_offset.
void emit_copy_cursor_functions(std::ostringstream &s, const KernelPlan &p, const OperandPlan &op);

// The kernel's lines before the main loop: the cursor of operand x (a or b) at K-tile `kt0` and
// its step in bytes (`<x>_step`), from the kernel's locals (`a`/`b`, `lda`/`ldb`, `<x>_outer`,
// `<x>_contig`, `m0`/`n0`, `tid`).
std::string copy_cursor_setup(const OperandPlan &op, const std::string &kt0);

// The loop body's copy of K-tile `next` into `next_stage`, `tiles` K-tiles past the cursor.
std::string copy_cursor_copy(const OperandPlan &op, const std::string &tiles);

// After the unrolled bodies: the cursor moved on by `tiles` K-tiles.
std::string copy_cursor_advance(const OperandPlan &op, int tiles);

} // namespace tcjit::codegen::cuda_detail
