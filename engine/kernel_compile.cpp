#include "engine/kernel_compile.h"

#include "engine/custom_activation.h"
#include "runtime/jit/nvrtc_compiler.h"

#include <stdexcept>

namespace tcjit::engine {

codegen::CompiledKernel compile_kernel(const OpSpec &spec, const codegen::CompileOptions &options) {
  if (options.backend == codegen::Backend::llvm)
    return codegen::compile_gemm(spec, options);
  codegen::CompiledKernel k = codegen::compile_gemm(spec, options);
  if (!k.ok())
    return k;
  const bool custom = spec.epilogue.act == Activation::custom;
  if (custom) { // the user's function alone first: its errors, not the kernel's
    k.errors = check_custom_activation(spec.epilogue.custom, k.plan.epi, k.plan.sm);
    if (!k.ok())
      return k;
  }
  const jit::CudaCompileResult r =
      jit::compile_cuda_source(k.cuda_source, k.plan.kernel_name + ".cu", k.plan.sm);
  if (!r.ok && custom) {
    const std::string log = user_compile_log(r.log, spec.epilogue.custom);
    if (has_error_at_user_lines(log, spec.epilogue.custom)) {
      k.errors.push_back({"act", "act=custom:" + spec.epilogue.custom.path +
                                     " does not compile inside the kernel:\n" + log});
      return k;
    }
  }
  if (!r.ok)
    throw std::logic_error("NVRTC rejected the generated CUDA C++ of " + k.plan.kernel_name +
                           " (a bug in tcjit; `tcjit compile --backend nvrtc --emit cuda` shows "
                           "the source):\n" +
                           r.log);
  k.ptx = r.ptx;
  k.times.push_back({"nvrtc", r.milliseconds});
  return k;
}

} // namespace tcjit::engine
