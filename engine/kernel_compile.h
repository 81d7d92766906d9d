// Spec + config -> PTX by either backend: the LLVM code generator, or the CUDA C++ source
// generator followed by NVRTC (runtime/jit/nvrtc_compiler.h). The one place the two meet, below
// every user of a compiled kernel (the runtime's served kernels, the tuner's candidates, `tcjit
// compile`).
#pragma once

#include "compiler/codegen/pipeline.h"
#include "tcjit/op_spec.h"

namespace tcjit::engine {

// codegen::compile_gemm with options.backend. For Backend::cuda_source (`--backend nvrtc`) the
// result has the source (cuda_source), the PTX
// NVRTC made of it, and the stage "nvrtc" in times; a spec or plan the source backend does not
// cover comes back in errors (field "backend"). Throws std::runtime_error when NVRTC cannot be
// loaded (what is missing, every path tried), std::logic_error when the generated source does not
// compile (a tcjit bug; NVRTC's log in the message).
codegen::CompiledKernel compile_kernel(const OpSpec &spec, const codegen::CompileOptions &options);

} // namespace tcjit::engine
