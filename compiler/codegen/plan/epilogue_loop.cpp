#include "compiler/codegen/plan/epilogue_loop.h"

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tcjit::codegen {

bool epilogue_unroll_requested() {
  const char *env = std::getenv("TCJIT_EPILOGUE_UNROLL");
  const std::string_view unroll = env ? env : "";
  if (unroll != "" && unroll != "0" && unroll != "1")
    throw std::runtime_error("TCJIT_EPILOGUE_UNROLL='" + std::string(unroll) +
                             "' in the environment: give 1 (unroll the epilogue's passes, to "
                             "measure) or 0, or unset it (the epilogue loops)");
  return unroll == "1";
}

void plan_epilogue_loop(KernelPlan &p) {
  p.epilogue_loop = !epilogue_unroll_requested();
}

} // namespace tcjit::codegen
