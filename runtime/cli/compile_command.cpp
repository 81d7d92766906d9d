#include "runtime/cli/compile_command.h"

#include "compiler/codegen/pipeline.h"
#include "compiler/spec/arch.h"
#include "runtime/cli/exit_codes.h"
#include "runtime/cli/spec_input.h"
#include "runtime/cuda/ptx_entry_params.h"
#include "runtime/device/device.h"
#include "runtime/jit/nvjitlink_library.h"
#include "runtime/jit/ptx_compiler.h"

#include <CLI/CLI.hpp>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace tcjit::cli {

namespace {

struct CompileCommandOptions {
  std::string spec;
  std::string arch = "sm_80";
  std::string config;
  std::string output;
  bool no_ptxas = false;
  bool cubin = false;
};

// Writes `bytes` to `path`; on failure prints why and returns false.
bool write_file(const std::string &path, std::string_view bytes) {
  errno = 0;
  std::ofstream out(path, std::ios::binary);
  if (!out.is_open()) {
    const int error = errno;
    std::cerr << "tcjit compile: error: cannot write " << path << ": "
              << (error ? std::strerror(error) : "cannot open the file") << "\n";
    return false;
  }
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) {
    std::cerr << "tcjit compile: error: cannot write " << path << " (the write failed)\n";
    return false;
  }
  return true;
}

int run_compile(const CompileCommandOptions &opt) {
  const std::optional<ArchInfo> arch = find_arch(opt.arch);
  if (!arch) {
    std::cerr << "tcjit compile: error: unknown arch '" << opt.arch << "' (tcjit targets "
              << known_arch_list() << ")\n";
    return kExitUsage;
  }
  if (opt.cubin && opt.output.empty()) {
    std::cerr << "tcjit compile: error: --cubin needs -o FILE.cubin, the file to write the cubin "
                 "to\n";
    return kExitUsage;
  }
  const jit::NvJitLinkLibrary *nvjitlink = nullptr;
  if (opt.cubin) { // before compiling: fail fast
    nvjitlink = &jit::nvjitlink_library();
    if (!nvjitlink->loaded) {
      std::cerr << "tcjit compile: error: --cubin needs nvJitLink, which cannot be loaded: "
                << nvjitlink->error << "\n";
      return kExitFailure;
    }
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
  // PTX -> cubin with nvJitLink: the whole module (the GEMM kernel, and for split-K its reduce
  // kernel), for exactly --arch.
  std::vector<char> cubin;
  double link_ms = 0;
  if (nvjitlink) {
    jit::PtxCompileOptions link_options;
    link_options.sm_arch = arch->sm_version;
    try {
      jit::CompiledPtx compiled =
          jit::compile_ptx(k.ptx, k.plan.kernel_name + ".ptx", link_options, *nvjitlink);
      cubin = std::move(compiled.cubin);
      link_ms = compiled.compile_milliseconds;
    } catch (const device::DeviceError &e) {
      std::cerr << "tcjit compile: error: " << e.what() << "\n";
      return kExitFailure;
    }
  }
  std::cout << "times    parse " << std::fixed << std::setprecision(2) << parse_ms << " ms";
  for (const codegen::StageTime &t : k.times)
    std::cout << ", " << t.name << " " << t.ms << " ms";
  if (nvjitlink)
    std::cout << ", nvJitLink " << link_ms << " ms";
  std::cout << "\n";
  if (nvjitlink) {
    if (!write_file(opt.output, std::string_view(cubin.data(), cubin.size())))
      return kExitFailure;
    // the kernels of the module, in order: one, or two for split-K
    const std::vector<device::KernelInfo> kernels = cuda::parse_ptx_entries(k.ptx, opt.output);
    std::cout << "wrote    " << opt.output << " (cubin for " << opt.arch << " by nvJitLink "
              << nvjitlink->major << "." << nvjitlink->minor << ", " << cubin.size() << " bytes, "
              << (kernels.size() == 1 ? "kernel" : "kernels");
    for (size_t i = 0; i < kernels.size(); ++i)
      std::cout << (i ? ", " : " ") << kernels[i].name;
    std::cout << ")\n";
  } else if (!opt.output.empty()) {
    if (!write_file(opt.output, k.ptx))
      return kExitFailure;
    std::cout << "wrote    " << opt.output << " (" << k.ptx.size() << " bytes, kernel "
              << k.plan.kernel_name << ")\n";
  }
  return kExitOk;
}

} // namespace

void add_compile_command(CLI::App &app) {
  auto opt = std::make_shared<CompileCommandOptions>();
  CLI::App *cmd = app.add_subcommand(
      "compile", "Compile a GEMM spec to PTX (or, with --cubin, a cubin): prints the tile config, "
                 "kernel plan, ptxas resource use and the time of each stage");
  cmd->add_option("spec", opt->spec,
                  "DSL text (\"gemm m=... \"), a workload file with one op, or - for stdin")
      ->required();
  cmd->add_option("--arch", opt->arch, "target architecture: sm_80, sm_86, sm_89, sm_90")
      ->capture_default_str();
  cmd->add_option("--config", opt->config,
                  "tile config words over the defaults, e.g. \"128x128x32 w64x64 s3 va8 vb8\"");
  cmd->add_option("-o,--output", opt->output,
                  "write the PTX to this file (with --cubin: the cubin; required then)");
  cmd->add_flag("--no-ptxas", opt->no_ptxas, "skip the ptxas check");
  cmd->add_flag("--cubin", opt->cubin,
                "link the PTX module (every kernel in it) to a cubin for --arch with nvJitLink "
                "and write it to -o FILE; prints the nvJitLink time and the cubin size");
  cmd->callback([opt]() { throw CLI::RuntimeError(run_compile(*opt)); });
}

} // namespace tcjit::cli
