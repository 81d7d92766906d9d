#include "compiler/codegen/plan/llvm_overrides.h"

#include "support/escape_controls.h"

#include <cstdlib>
#include <stdexcept>
#include <string_view>

namespace tcjit::codegen {

LlvmOverrides llvm_overrides() {
  LlvmOverrides o;
  const char *opt = std::getenv("TCJIT_LLC_OPT");
  const std::string_view level = opt ? opt : "";
  if (level.size() == 1 && level[0] >= '0' && level[0] <= '3')
    o.llc_opt = level[0] - '0';
  else if (!level.empty())
    throw std::runtime_error("TCJIT_LLC_OPT='" + support::escape_controls(level) +
                             "' in the environment: give 0, 1, 2 or 3 (the NVPTX code "
                             "generator's optimisation level), or unset it (1 for mma kernels, "
                             "0 for SIMT)");
  if (const char *pipeline = std::getenv("TCJIT_LLVM_PIPELINE"))
    o.pipeline = pipeline;
  return o;
}

void plan_llvm_overrides(KernelPlan &p) {
  const LlvmOverrides o = llvm_overrides();
  p.llc_opt = o.llc_opt;
  p.llvm_pipeline = o.pipeline;
}

} // namespace tcjit::codegen
