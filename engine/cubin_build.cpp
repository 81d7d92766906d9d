#include "engine/cubin_build.h"

#include "runtime/device/device.h"
#include "runtime/jit/cuda_toolkit.h"
#include "runtime/jit/ptx_compiler.h"
#include "runtime/jit/ptxas_compiler.h"
#include "support/string_printf.h"

#include <chrono>

namespace tcjit::engine {

CubinBuild build_cubin(const codegen::CompiledKernel &k, CubinRoute route) {
  CubinBuild b;
  jit::PtxCompileOptions options;
  options.sm_arch = k.plan.sm;
  options.resource_usage = true;
  const std::string name = k.plan.kernel_name + ".ptx";
  jit::CompiledPtx compiled;
  std::string ptxas_problem; // why ptxas could not be used (the environment, not the PTX)
  if (route == CubinRoute::nvjitlink) {
    ptxas_problem = "not asked for";
  } else if (jit::ptxas_available()) {
    try {
      compiled = jit::compile_ptx_with_ptxas(k.ptx, name, options);
      b.stage = "ptxas";
    } catch (const device::DeviceError &e) {
      if (e.kind() == device::ErrorKind::ModuleLoad) { // ptxas rejected the PTX: a tcjit bug
        b.error = std::string(e.what());
        return b;
      }
      ptxas_problem = e.what();
    }
  } else {
    ptxas_problem = "cannot run ptxas at " + jit::ptxas_executable() + ", set TCJIT_PTXAS";
  }
  if (b.stage.empty() && route == CubinRoute::ptxas) {
    b.note = "no cubin: " + ptxas_problem;
    return b;
  }
  if (b.stage.empty()) {
    const jit::NvJitLinkLibrary &library = jit::nvjitlink_library();
    if (!library.loaded) {
      if (route == CubinRoute::nvjitlink) {
        b.note = "no cubin: nvJitLink cannot be loaded: " + library.error;
        return b;
      }
      b.note = "no cubin: neither ptxas (" + ptxas_problem + ") nor nvJitLink (" + library.error +
               ") is available; a GPU's driver compiles the PTX when it loads it";
      return b;
    }
    try {
      compiled = jit::compile_ptx(k.ptx, name, options, library);
      b.stage = "nvJitLink";
    } catch (const device::DeviceError &e) {
      b.error = std::string(e.what());
      return b;
    }
  }
  b.cubin.assign(compiled.cubin.begin(), compiled.cubin.end());
  b.resources = std::move(compiled.resources);
  b.ms = compiled.compile_milliseconds;
  b.options = b.stage == "ptxas" ? compiled.options : "nvJitLink " + compiled.options;
  b.note = "cubin " + std::to_string(b.cubin.size()) + " B by " + b.options + " in " +
           support::string_printf("%.1f ms", b.ms);
  return b;
}

int spill_and_stack_bytes(const CubinBuild &build) {
  int bytes = 0;
  for (const jit::EntryResources &r : build.resources)
    bytes += r.spill_bytes() + (build.stage == "ptxas" ? r.stack_frame : 0);
  return bytes;
}

} // namespace tcjit::engine
