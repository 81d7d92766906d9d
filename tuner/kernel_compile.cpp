#include "tuner/kernel_compile.h"

#include "runtime/jit/nvrtc_compiler.h"

#include <stdexcept>

namespace tcjit::tuner {

std::optional<Backend> parse_backend(std::string_view text) {
  if (text == "llvm")
    return Backend::llvm;
  if (text == "nvrtc")
    return Backend::nvrtc;
  return std::nullopt;
}

const char *to_string(Backend backend) {
  return backend == Backend::llvm ? "llvm" : "nvrtc";
}

codegen::CompiledKernel compile_kernel(const OpSpec &spec, codegen::CompileOptions options,
                                       Backend backend) {
  if (backend == Backend::llvm) {
    options.backend = codegen::Backend::llvm;
    return codegen::compile_gemm(spec, options);
  }
  options.backend = codegen::Backend::cuda_source;
  codegen::CompiledKernel k = codegen::compile_gemm(spec, options);
  if (!k.ok())
    return k;
  const jit::CudaCompileResult r =
      jit::compile_cuda_source(k.cuda_source, k.plan.kernel_name + ".cu", k.plan.sm);
  if (!r.ok)
    throw std::logic_error("NVRTC rejected the generated CUDA C++ of " + k.plan.kernel_name +
                           " (a bug in tcjit; `tcjit compile --backend nvrtc --emit cuda` shows "
                           "the source):\n" +
                           r.log);
  k.ptx = r.ptx;
  k.times.push_back({"nvrtc", r.milliseconds});
  return k;
}

} // namespace tcjit::tuner
