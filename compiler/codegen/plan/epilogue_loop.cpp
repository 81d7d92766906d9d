#include "compiler/codegen/plan/epilogue_loop.h"

#include <cstdlib>

namespace tcjit::codegen {

void plan_epilogue_loop(KernelPlan &p) {
  const char *unroll = std::getenv("TCJIT_EPILOGUE_UNROLL");
  p.epilogue_loop = !(unroll && *unroll && *unroll != '0');
}

} // namespace tcjit::codegen
