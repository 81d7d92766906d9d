// The codegen tests' view of ptxas: the generated PTX compiled as the runtime compiles it (once,
// whole program, runtime/jit/ptxas_compiler.h), and the main kernel's report.
#pragma once

#include "compiler/codegen/pipeline.h"
#include "runtime/device/device.h"
#include "runtime/jit/ptxas_compiler.h"

#include <string>

namespace tcjit::codegen {

struct PtxasRun {
  bool ok = false;            // ptxas accepted the PTX
  std::string log;            // its -v log, or the error
  jit::EntryResources kernel; // the main kernel's (plan.kernel_name)
};

inline PtxasRun run_ptxas(const CompiledKernel &k) {
  PtxasRun r;
  jit::PtxCompileOptions options;
  options.sm_arch = k.plan.sm;
  try {
    const jit::CompiledPtx c = jit::compile_ptx_with_ptxas(k.ptx, k.plan.kernel_name, options);
    r.log = c.info_log;
    if (const jit::EntryResources *main =
            jit::find_entry_resources(c.resources, k.plan.kernel_name)) {
      r.kernel = *main;
      r.ok = true;
    } else {
      r.log += "\n(no report for " + k.plan.kernel_name + ")";
    }
  } catch (const device::DeviceError &e) {
    r.log = e.what();
  }
  return r;
}

} // namespace tcjit::codegen
