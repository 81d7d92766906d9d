#include "runtime/cli/compile_command.h"

#include "compiler/codegen/pipeline.h"
#include "compiler/spec/arch.h"
#include "runtime/cli/exit_codes.h"
#include "runtime/cli/spec_input.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>

namespace tcjit::cli {

namespace {

struct CompileCommandOptions {
  std::string spec;
  std::string arch = "sm_80";
  std::string config;
  std::string output;
  bool no_ptxas = false;
};

int run_compile(const CompileCommandOptions &opt) {
  if (!find_arch(opt.arch)) {
    std::cerr << "tcjit compile: error: unknown arch '" << opt.arch << "' (tcjit targets "
              << known_arch_list() << ")\n";
    return kExitUsage;
  }
  codegen::CompileOptions copt;
  copt.arch = opt.arch;
  copt.tf32_off = tf32_disabled_by_environment();
  copt.run_ptxas = !opt.no_ptxas;
  if (!opt.config.empty()) {
    codegen::TileConfig c;
    std::string error;
    if (!codegen::parse_tile_config(opt.config, c, error)) {
      std::cerr << "tcjit compile: error: --config: " << error << "\n";
      return kExitUsage;
    }
    copt.config = c;
  }
  const auto t0 = std::chrono::steady_clock::now();
  ParseResult parsed;
  if (!load_workload(opt.spec, parsed))
    return kExitBadSpec;
  const double parse_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (parsed.entries.size() != 1) {
    std::cerr << "tcjit compile: error: give one operation (the workload has "
              << parsed.entries.size() << ")\n";
    return kExitUsage;
  }
  const codegen::CompiledKernel k = codegen::compile_gemm(parsed.entries[0].spec, copt);
  if (!k.ok()) {
    for (const codegen::ConfigError &e : k.errors)
      std::cerr << "tcjit compile: error: " << (e.field.empty() ? "" : e.field + ": ") << e.message
                << "\n";
    // a bad --config is a command-line problem; a spec the generator cannot compile a spec one
    return k.errors[0].field == "spec" || k.errors[0].field == "arch" ? kExitBadSpec : kExitUsage;
  }
  std::cout << "config   " << codegen::to_string(k.config)
            << (opt.config.empty() ? "  (default)" : "") << "\n";
  std::cout << codegen::describe(k.plan);
  if (k.ptxas) {
    const codegen::PtxasResult &p = *k.ptxas;
    if (!p.ok) {
      std::cerr << "tcjit compile: error: ptxas rejected the generated PTX (a bug in tcjit):\n"
                << p.log;
      return kExitFailure;
    }
    std::cout << "ptxas    " << p.registers << " registers, " << p.spill_stores
              << " B spill stores, " << p.spill_loads << " B spill loads, " << p.stack_frame
              << " B stack, " << k.plan.smem_bytes << " B dynamic shared memory\n";
  }
  std::cout << "times    parse " << std::fixed << std::setprecision(2) << parse_ms << " ms";
  for (const codegen::StageTime &t : k.times)
    std::cout << ", " << t.name << " " << t.ms << " ms";
  std::cout << "\n";
  if (!opt.output.empty()) {
    std::ofstream out(opt.output, std::ios::binary);
    out << k.ptx;
    if (!out) {
      std::cerr << "tcjit compile: error: cannot write " << opt.output << "\n";
      return kExitFailure;
    }
    std::cout << "wrote    " << opt.output << " (" << k.ptx.size() << " bytes, kernel "
              << k.plan.kernel_name << ")\n";
  }
  return kExitOk;
}

} // namespace

void add_compile_command(CLI::App &app) {
  auto opt = std::make_shared<CompileCommandOptions>();
  CLI::App *cmd = app.add_subcommand(
      "compile", "Compile a GEMM spec to PTX: prints the tile config, kernel plan, ptxas resource "
                 "use and the time of each compiler pass");
  cmd->add_option("spec", opt->spec,
                  "DSL text (\"gemm m=... \"), a workload file with one op, or - for stdin")
      ->required();
  cmd->add_option("--arch", opt->arch, "target architecture: sm_80, sm_86, sm_89, sm_90")
      ->capture_default_str();
  cmd->add_option("--config", opt->config,
                  "tile config words over the defaults, e.g. \"128x128x32 w64x64 s3 va8 vb8\"");
  cmd->add_option("-o,--output", opt->output, "write the PTX to this file");
  cmd->add_flag("--no-ptxas", opt->no_ptxas, "skip the ptxas check");
  cmd->callback([opt]() { throw CLI::RuntimeError(run_compile(*opt)); });
}

} // namespace tcjit::cli
