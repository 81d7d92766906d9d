#include "compiler/codegen/pipeline.h"

#include "compiler/codegen/cuda/cuda_source.h"
#include "compiler/codegen/llvm/llvm_module.h"
#include "compiler/codegen/llvm/nvptx_emit.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <stdexcept>

namespace tcjit::codegen {

namespace {

int debug_level() {
  const char *env = std::getenv("TCJIT_DEBUG");
  return env ? std::atoi(env) : 0;
}

// Runs one named pass, times it, logs it, and names it in internal errors.
class PassRunner {
public:
  explicit PassRunner(CompiledKernel &out) : out_(out), level_(debug_level()) {}
  int level() const { return level_; }
  template <typename F> void run(const char *name, F &&f) {
    const auto t0 = std::chrono::steady_clock::now();
    try {
      f();
    } catch (const std::logic_error &e) {
      throw std::logic_error(std::string("internal error in pass ") + name + ": " + e.what());
    }
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    out_.times.push_back({name, ms});
    if (level_ >= 1) { // one write, so that lines of concurrent compiles do not interleave
      std::ostringstream line;
      line << "[tcjit codegen] " << name << ": " << ms << " ms\n";
      std::cerr << line.str();
    }
  }

private:
  CompiledKernel &out_;
  int level_;
};

// Printed to a string first and written with one call: llvm::errs() is a process-wide stream
// that concurrent compiles must not share.
void dump_ir(const char *after, llvm::Module &m) {
  std::string text = "[tcjit codegen] LLVM IR after " + std::string(after) + ":\n";
  llvm::raw_string_ostream os(text);
  m.print(os, nullptr);
  os.flush();
  std::cerr << text;
}

} // namespace

double CompiledKernel::total_ms() const {
  double t = 0;
  for (const StageTime &s : times)
    t += s.ms;
  return t;
}

std::optional<Backend> parse_backend(std::string_view text) {
  if (text == "llvm")
    return Backend::llvm;
  if (text == "nvrtc")
    return Backend::cuda_source;
  return std::nullopt;
}

const char *to_string(Backend backend) {
  switch (backend) {
  case Backend::llvm: return "llvm";
  case Backend::cuda_source: return "nvrtc";
  }
  return "?";
}

const std::vector<std::string> &pass_names() {
  static const std::vector<std::string> names{"check_support", "choose_config", "validate_config",
                                              "plan_kernel",   "build_llvm_ir", "link_libdevice",
                                              "optimize_llvm", "emit_ptx"};
  return names;
}

CompiledKernel compile_gemm(const OpSpec &spec, const CompileOptions &opt) {
  CompiledKernel out;
  PassRunner pass(out);

  pass.run("check_support", [&] {
    out.errors = check_codegen_support(spec, opt.arch, opt.tf32_off);
    if (spec.epilogue.act == Activation::custom && opt.backend == Backend::llvm)
      out.errors.push_back(
          {"backend", "act=custom:" + spec.epilogue.custom.path +
                          " is a CUDA C++ function: only the CUDA C++ backend compiles it; use "
                          "--backend nvrtc (RuntimeOptions::backend = nvrtc)"});
  });
  if (!out.ok())
    return out;

  pass.run("choose_config", [&] {
    out.config = opt.config ? resolve_vectors(spec, *opt.config)
                            : default_tile_config(spec, opt.arch, opt.tf32_off);
  });

  pass.run("validate_config",
           [&] { out.errors = validate_tile_config(spec, out.config, opt.arch, opt.tf32_off); });
  if (!out.ok())
    return out;

  pass.run("plan_kernel",
           [&] { out.plan = plan_kernel(spec, out.config, opt.arch, opt.tf32_off); });
  if (pass.level() >= 2)
    std::cerr << describe(out.plan);
  if (opt.backend == Backend::cuda_source) {
    if (const std::string why = cuda_source_unsupported(out.plan); !why.empty()) {
      out.errors.push_back({"backend", why});
      return out;
    }
    pass.run("emit_cuda_source", [&] { out.cuda_source = emit_cuda_source(out.plan); });
    return out;
  }

  // One context, module and target machine per compilation: nothing LLVM below is shared with
  // another thread's compile (see "Thread safety" in pipeline.h).
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> module;
  pass.run("build_llvm_ir", [&] { module = build_gemm_module(ctx, out.plan); });
  if (pass.level() >= 3)
    dump_ir("build_llvm_ir", *module);

  std::unique_ptr<llvm::TargetMachine> tm;
  pass.run("link_libdevice", [&] {
    tm = make_nvptx_target(out.plan.sm, out.plan.ptx_version,
                           out.plan.mma.kind != MmaKind::simt_f32, out.plan.llc_opt);
    module->setDataLayout(tm->createDataLayout());
    link_libdevice(*module, opt.libdevice);
  });

  // NVVMReflect (for libdevice) runs inside the target's pipeline: after link_libdevice.
  // Element-wise fragment loads of 8-bit operands: too many addresses to hoist (kernel_plan.h).
  const bool hoist = !bytewise_fragments(out.plan);
  pass.run("optimize_llvm", [&] { optimize_module(*module, *tm, hoist, out.plan.llvm_pipeline); });
  if (pass.level() >= 3)
    dump_ir("optimize_llvm", *module);

  // LLVM's loop strength reduction gives a convolution's wgrad main loop induction variables
  // that ptxas must keep in registers: without it, ptxas sm_80, f16/bf16 wgrads at their default
  // configs: 3x3 and 1x1 at 56x56 162-168 -> 128 registers, 3x3 at 28x28 250 -> 238, and 3-9%
  // fewer main-loop instructions per HMMA; tf32 185 -> 162, s8 the same. fprop and dgrad gain
  // nothing consistent (within +-2%, some worse), so they keep it. A TCJIT_LLC_OPT or
  // TCJIT_LLVM_PIPELINE override runs every pass: the skips were measured without one.
  const bool overridden = !out.plan.llvm_pipeline.empty() || out.plan.llc_opt >= 0;
  CodegenPasses passes;
  passes.every_pass = opt.every_codegen_pass || overridden;
  passes.loop_strength_reduction = opt.wgrad_loop_strength_reduction || overridden ||
                                   !(out.plan.conv && out.plan.conv->pass == ConvPass::wgrad);
  pass.run("emit_ptx", [&] { out.ptx = emit_ptx_text(*module, *tm, passes); });
  return out;
}

} // namespace tcjit::codegen
