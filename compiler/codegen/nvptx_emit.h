// LLVM module -> PTX through the NVPTX backend: target machine per arch (sm_80/86/89/90 with the
// PTX ISA version of kernel_plan.h's ptx_version_for), libdevice linking for the epilogue's
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
std::unique_ptr<llvm::TargetMachine> make_nvptx_target(int sm, int ptx_version);

// Links the libdevice functions the module calls (__nv_*) from the CUDA toolkit's
// libdevice.10.bc, only those needed, and makes every non-kernel function internal. Returns false
// (and does nothing) when the module calls none. Throws std::runtime_error when libdevice cannot
// be read.
bool link_libdevice(llvm::Module &);
// The libdevice path compiled in (TCJIT_LIBDEVICE), overridable with $TCJIT_LIBDEVICE.
std::string libdevice_path();

// The LLVM pass pipeline: early-cse (kFastPipeline), or with libdevice linked NVVMReflect +
// inlining
// + cleanup; $TCJIT_LLVM_PIPELINE overrides it (a new-PM pipeline string, or "O3").
void optimize_module(llvm::Module &, llvm::TargetMachine &);

// The PTX text of the module.
std::string emit_ptx_text(llvm::Module &, llvm::TargetMachine &);

} // namespace tcjit::codegen
