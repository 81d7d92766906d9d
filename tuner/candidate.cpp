#include "tuner/candidate.h"
#include "runtime/jit/cuda_toolkit.h"

#include "engine/kernel_compile.h"
#include "runtime/device/device.h"
#include "runtime/jit/ptx_compiler.h"
#include "runtime/jit/ptxas_compiler.h"

#include <chrono>
#include <cstdio>

namespace tcjit::tuner {

BuiltCandidate build_candidate(const OpSpec &spec, const codegen::TileConfig &config,
                               std::string_view arch, bool tf32_off, codegen::Backend backend) {
  const auto start = std::chrono::steady_clock::now();
  BuiltCandidate c;
  c.config = codegen::resolve_vectors(spec, config);
  codegen::CompileOptions options;
  options.arch = std::string(arch);
  options.tf32_off = tf32_off;
  options.config = c.config;
  options.libdevice = jit::current_cuda_toolkit().libdevice.path;
  options.backend = backend;
  try {
    c.kernel = engine::compile_kernel(spec, options);
  } catch (const std::exception &e) { // NVRTC missing, or its compile failed (a tcjit bug)
    c.kernel = codegen::CompiledKernel{};
    c.kernel.errors.push_back({"backend", e.what()});
  }
  auto elapsed = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
  };
  if (!c.kernel.ok()) {
    c.failure_rule = "compile";
    for (const codegen::ConfigError &e : c.kernel.errors)
      c.failure += (c.failure.empty() ? "" : "; ") + e.field + ": " + e.message;
    c.build_ms = elapsed();
    return c;
  }
  c.cubin = engine::build_cubin(c.kernel);
  c.build_ms = elapsed();
  if (!c.cubin.error.empty()) {
    c.failure_rule = "ptxas";
    c.failure = "the generated PTX does not compile (a tcjit bug): " + c.cubin.error;
    return c;
  }
  if (const jit::EntryResources *r =
          jit::find_entry_resources(c.cubin.resources, c.kernel.plan.kernel_name)) {
    c.facts.registers = r->registers;
    c.facts.spill_bytes = r->spill_bytes();
    c.facts.stack_bytes = c.cubin.stage == "ptxas" ? r->stack_frame : 0;
    c.facts.static_shared_bytes = r->static_shared_bytes;
  }
  if (const int bad = engine::spill_and_stack_bytes(c.cubin); bad > 0) {
    c.failure_rule = "spills";
    c.failure = "the cubin spills or needs a stack frame (" + std::to_string(bad) +
                " bytes per thread; " + std::to_string(c.facts.registers) + " registers)";
  }
  return c;
}

} // namespace tcjit::tuner
