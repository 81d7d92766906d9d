// LLVM module -> PTX through the NVPTX backend: target machine per arch (sm_80/86/89/90 with the
// PTX ISA version of the arch table, compiler/target/arch.h), libdevice linking for the epilogue's
// transcendental functions, LLVM's optimisation pipeline, and PTX emission.
#pragma once

#include <memory>
#include <string>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace tcjit::codegen {

// "nvptx64-nvidia-cuda", CPU sm_<sm>, features +ptx<ptx_version>. Initialises the NVPTX target on
// first use (thread-safe). Throws std::runtime_error when LLVM lacks the NVPTX target.
// `tensor_core`: the kernel's main loop is mma.sync (else SIMT FFMA), which selects the NVPTX
// code generator's optimisation level (nvptx_emit.cpp); `llc_opt` 0-3 overrides it (the plan's,
// from $TCJIT_LLC_OPT: plan/llvm_overrides.h).
std::unique_ptr<llvm::TargetMachine> make_nvptx_target(int sm, int ptx_version,
                                                       bool tensor_core = true, int llc_opt = -1);

// Links the libdevice functions the module calls (__nv_*) from the CUDA toolkit's
// libdevice.10.bc, only those needed, and makes every non-kernel function internal. Returns false
// (and does nothing) when the module calls none. Throws std::runtime_error when libdevice cannot
// be read.
// `path`: libdevice.10.bc, or "" for libdevice_path("").
bool link_libdevice(llvm::Module &, const std::string &path = "");
// `given` when not empty (the caller found the toolkit at run time: runtime/jit/cuda_toolkit.h),
// else $TCJIT_LIBDEVICE, else the path compiled in (TCJIT_LIBDEVICE).
std::string libdevice_path(const std::string &given = "");

// The LLVM pass pipeline: early-cse and LICM (kFastPipeline), or with libdevice linked
// NVVMReflect + inlining + cleanup + LICM; `pipeline_override` (the plan's, from
// $TCJIT_LLVM_PIPELINE: plan/llvm_overrides.h) replaces it when not empty (a new-PM pipeline
// string, or "O3"; one LLVM cannot parse is a std::runtime_error naming the variable).
// `hoist_invariants`: move what does not change across K-tiles out of the main loop (LICM; see
// nvptx_emit.cpp for when it costs more registers than it saves).
void optimize_module(llvm::Module &, llvm::TargetMachine &, bool hoist_invariants = true,
                     const std::string &pipeline_override = "");

// Which passes of NVPTX's code generator run. By default it skips the ones that change nothing in
// tcjit's kernels (kPassesWithoutEffect, nvptx_emit.cpp).
struct CodegenPasses {
  bool every_pass = false;             // run those too: to measure, and for tests
  bool loop_strength_reduction = true; // LSR (pipeline.cpp turns it off for conv wgrad kernels)
};

// The PTX text of the module.
std::string emit_ptx_text(llvm::Module &, llvm::TargetMachine &, CodegenPasses passes = {});

} // namespace tcjit::codegen
