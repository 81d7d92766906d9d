// What `tcjit explain` says about the kernel a config compiles to: its path (GEMM, or which
// implicit-GEMM gathers a convolution takes), how each operand is loaded (the alignment strategy),
// and how much of the math instruction is useful work.
#pragma once

#include "compiler/codegen/plan/kernel_plan.h"

#include <string>
#include <vector>

namespace tcjit::codegen {

struct KernelPathLine {
  std::string label; // "kernel path", "loads", "efficiency"; "" continues the line before
  std::string text;
};

// For a spec the code generator supports and a validated config.
std::vector<KernelPathLine> describe_kernel_path(const OpSpec &spec, const KernelPlan &plan);

} // namespace tcjit::codegen
