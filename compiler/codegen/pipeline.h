// The GEMM compiler as a flat list of named passes (in the manner of Halide's Lower.cpp):
//
//   check_support    spec limits of the code generator (GEMM, dtypes)        tile_config.h
//   choose_config    the given TileConfig or default_tile_config(); vectors  tile_config.h
//   validate_config  every rule the config breaks, explained                 tile_config.h
//   plan_kernel      tiling, pipeline, fragments, swizzled smem layout       kernel_plan.h
//   build_llvm_ir    IRBuilder: cp.async, ldmatrix, mma.sync, epilogue       llvm_module.h
//   link_libdevice   __nv_* functions of the epilogue's activations          nvptx_emit.h
//   optimize_llvm    LLVM passes (early-cse; + inlining for libdevice)       nvptx_emit.h
//   emit_ptx         NVPTX backend -> PTX text                               nvptx_emit.h
//
// PTX -> cubin is not the compiler's: the runtime compiles it once with ptxas, and that compile's
// report is the kernel's resources (runtime/jit/ptxas_compiler.h).
//
// TCJIT_DEBUG=1 logs each pass and its time to stderr, 2 adds the kernel plan, 3 the LLVM IR
// after build_llvm_ir and optimize_llvm.
//
// User errors (a spec or config the generator cannot compile) come back in `errors`; broken
// invariants (internal errors) throw std::logic_error naming the pass; an unusable environment
// (no libdevice) throws std::runtime_error.
//
// Thread safety: compile_gemm may be called from any number of threads at once, and gives the
// same PTX, byte for byte, as when it runs alone (tests/codegen/compile_concurrency_test.cpp).
// Each call has its own LLVMContext, module, TargetMachine, pass managers and libdevice module
// (the bitcode is read and parsed into the call's context; nothing is cached between calls).
// The process-wide state it touches: the NVPTX target registration (std::call_once); LLVM's
// cl::opt values (never set by tcjit, only read); NVPTX's call-sequence counter (an atomic in
// LLVM 19 whose values depend on other threads' compiles: emit_ptx renumbers the callseq
// comments from 0); the environment (getenv only: do not setenv while compiling). See
// docs/codegen.md, "Thread safety".
#pragma once

#include "compiler/codegen/plan/kernel_plan.h"
#include "compiler/codegen/plan/tile_config.h"
#include "tcjit/op_spec.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tcjit::codegen {

// Which backend writes the kernel: LLVM's NVPTX backend (PTX), or CUDA C++ source for NVRTC
// (cuda_source.h; the pass emit_cuda_source replaces build_llvm_ir .. emit_ptx, and the
// runtime's JIT compiles the source to PTX). The one Backend of every layer: what `--backend`
// names and binaries are keyed by (engine/kernel_compile.h runs NVRTC for cuda_source).
enum class Backend { llvm, cuda_source };

// The names users give the backends: "llvm", and "nvrtc" for cuda_source (the source is compiled
// by NVRTC). nullopt for any other text.
std::optional<Backend> parse_backend(std::string_view text);
const char *to_string(Backend backend);

struct CompileOptions {
  std::string arch = "sm_80";
  Backend backend = Backend::llvm;
  std::optional<TileConfig> config; // nullopt: default_tile_config()
  bool tf32_off = false;            // NVIDIA_TF32_OVERRIDE=0 (resolves math=auto)
  // libdevice.10.bc as found at run time (runtime/jit/cuda_toolkit.h); "": $TCJIT_LIBDEVICE, else
  // the path tcjit was built with. Read only by kernels whose epilogue calls libdevice.
  std::string libdevice;
  // Run the passes of NVPTX's code generator that tcjit skips (llvm/nvptx_emit.h, CodegenPasses):
  // the ones that change nothing in tcjit's kernels, and LSR in a conv wgrad kernel. To measure
  // them, and for the tests that prove the first change nothing and the second costs registers.
  // Not part of the kernel identity: a kernel compiled so is not for the cache. With
  // TCJIT_LLC_OPT or TCJIT_LLVM_PIPELINE set (plan/llvm_overrides.h) every pass runs: what was
  // measured to change nothing was measured with tcjit's own pipeline and level.
  bool every_codegen_pass = false;            // the ones that change nothing
  bool wgrad_loop_strength_reduction = false; // LSR in conv wgrad kernels too
};

struct StageTime {
  std::string name;
  double ms = 0;
};

struct CompiledKernel {
  std::vector<ConfigError> errors; // user errors; when not empty nothing below is set
  TileConfig config;               // resolved
  KernelPlan plan;
  std::string ptx;              // Backend::llvm
  std::string cuda_source;      // Backend::cuda_source (ptx stays empty)
  std::vector<StageTime> times; // in pass order
  bool ok() const { return errors.empty(); }
  double total_ms() const;
};

CompiledKernel compile_gemm(const OpSpec &spec, const CompileOptions &options);

// The pass names, in order (for documentation and the CLI).
const std::vector<std::string> &pass_names();

} // namespace tcjit::codegen
