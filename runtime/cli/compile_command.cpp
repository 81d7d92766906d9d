#include "runtime/cli/compile_command.h"
#include "kernels_db/record_json.h"
#include "runtime/jit/cuda_toolkit.h"

#include "compiler/codegen/pipeline.h"
#include "compiler/dsl/printer.h"
#include "compiler/spec/arch.h"
#include "runtime/cli/exit_codes.h"
#include "runtime/cli/spec_input.h"
#include "runtime/cuda/ptx_entry_params.h"
#include "runtime/device/device.h"
#include "runtime/jit/nvjitlink_library.h"
#include "runtime/jit/ptx_compiler.h"
#include "runtime/jit/ptxas_compiler.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

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
  bool nvjitlink = false;
  bool json = false; // one JSON object on stdout (docs/cli.md) instead of the text report
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
  if (opt.no_ptxas && (opt.cubin || opt.nvjitlink)) {
    std::cerr << "tcjit compile: error: --no-ptxas skips the compile to a cubin; it cannot go with "
              << (opt.cubin ? "--cubin" : "--nvjitlink") << "\n";
    return kExitUsage;
  }
  const jit::NvJitLinkLibrary *nvjitlink = nullptr;
  if (opt.nvjitlink) { // before compiling: fail fast
    nvjitlink = &jit::nvjitlink_library();
    if (!nvjitlink->loaded) {
      std::cerr << "tcjit compile: error: --nvjitlink needs nvJitLink, which cannot be loaded: "
                << nvjitlink->error << "\n";
      return kExitFailure;
    }
  } else if (!opt.no_ptxas && !jit::ptxas_available()) {
    std::cerr << "tcjit compile: error: cannot run ptxas at '" << jit::ptxas_executable()
              << "' (set TCJIT_PTXAS to the toolkit's bin/ptxas, or pass --no-ptxas for PTX "
                 "only)\n";
    return kExitFailure;
  }
  codegen::CompileOptions copt;
  copt.arch = opt.arch;
  copt.tf32_off = tf32_disabled_by_environment();
  copt.libdevice = jit::current_cuda_toolkit().libdevice.path;
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
  // The text report, or (with --json) nothing but the JSON object at the end.
  std::ostream null_stream(nullptr);
  std::ostream &out = opt.json ? null_stream : std::cout;
  nlohmann::json j = {{"spec", print_spec(parsed.entries[0].spec)},
                      {"arch", opt.arch},
                      {"config", codegen::to_string(k.config)},
                      {"config_source", opt.config.empty() ? "default" : "--config"},
                      {"kernel", k.plan.kernel_name},
                      {"identity", codegen::kernel_identity(k.plan)},
                      {"threads", k.plan.threads},
                      {"dynamic_shared_bytes", k.plan.smem_bytes},
                      {"ptx_bytes", k.ptx.size()},
                      {"kernels", nlohmann::json::array()},
                      {"times_ms", {{"parse", parse_ms}}}};
  out << "config   " << codegen::to_string(k.config) << (opt.config.empty() ? "  (default)" : "")
      << "\n";
  out << codegen::describe(k.plan);
  // PTX -> cubin once, as the runtime does it (ptxas, whole program; or nvJitLink with
  // --nvjitlink): the whole module (the GEMM kernel, and for split-K its reduce kernel), for
  // exactly --arch. The resources printed are this cubin's, per kernel.
  jit::CompiledPtx compiled;
  const char *stage = opt.nvjitlink ? "nvJitLink" : "ptxas";
  if (!opt.no_ptxas) {
    jit::PtxCompileOptions options;
    options.sm_arch = arch->sm_version;
    options.resource_usage = true;
    try {
      compiled = opt.nvjitlink
                     ? jit::compile_ptx(k.ptx, k.plan.kernel_name + ".ptx", options, *nvjitlink)
                     : jit::compile_ptx_with_ptxas(k.ptx, k.plan.kernel_name + ".ptx", options);
    } catch (const device::DeviceError &e) {
      std::cerr << "tcjit compile: error: " << e.what()
                << (e.kind() == device::ErrorKind::ModuleLoad ? "\n(a bug in tcjit: please report "
                                                                "it with the spec)"
                                                              : "")
                << "\n";
      return kExitFailure;
    }
    for (const jit::KernelResources &r : compiled.resources) {
      const int shared =
          (r.kernel == k.plan.kernel_name ? k.plan.smem_bytes : 0) + r.static_shared_bytes;
      out << std::left << std::setw(9) << stage << std::right << r.kernel << ": " << r.registers
          << " registers, " << r.spill_stores << " B spill stores, " << r.spill_loads
          << " B spill loads, " << r.stack_frame << " B stack, " << shared << " B shared memory\n";
      j["kernels"].push_back({{"name", r.kernel},
                              {"registers", r.registers},
                              {"spill_stores", r.spill_stores},
                              {"spill_loads", r.spill_loads},
                              {"stack_bytes", r.stack_frame},
                              {"shared_bytes", shared}});
    }
    j["cubin_by"] = stage;
  }
  out << "times    parse " << std::fixed << std::setprecision(2) << parse_ms << " ms";
  for (const codegen::StageTime &t : k.times) {
    out << ", " << t.name << " " << t.ms << " ms";
    j["times_ms"][t.name] = t.ms;
  }
  if (!opt.no_ptxas) {
    out << ", " << stage << " " << compiled.compile_milliseconds << " ms";
    j["times_ms"][opt.nvjitlink ? "nvjitlink" : "ptxas"] = compiled.compile_milliseconds;
  }
  out << "\n";
  if (opt.cubin) {
    const std::vector<char> &cubin = compiled.cubin;
    if (!write_file(opt.output, std::string_view(cubin.data(), cubin.size())))
      return kExitFailure;
    // the kernels of the module, in order: one, or two for split-K
    const std::vector<device::KernelInfo> kernels = cuda::parse_ptx_entries(k.ptx, opt.output);
    out << "wrote    " << opt.output << " (cubin for " << opt.arch << " by "
        << (nvjitlink ? "nvJitLink " + std::to_string(nvjitlink->major) + "." +
                            std::to_string(nvjitlink->minor)
                      : compiled.options)
        << ", " << cubin.size() << " bytes, " << (kernels.size() == 1 ? "kernel" : "kernels");
    for (size_t i = 0; i < kernels.size(); ++i)
      out << (i ? ", " : " ") << kernels[i].name;
    out << ")\n";
    j["output"] = {{"path", opt.output}, {"kind", "cubin"}, {"bytes", cubin.size()}};
  } else if (!opt.output.empty()) {
    if (!write_file(opt.output, k.ptx))
      return kExitFailure;
    out << "wrote    " << opt.output << " (" << k.ptx.size() << " bytes, kernel "
        << k.plan.kernel_name << ")\n";
    j["output"] = {{"path", opt.output}, {"kind", "ptx"}, {"bytes", k.ptx.size()}};
  }
  if (opt.json)
    std::cout << kernels_db::dump_json(j, 2) << "\n"; // any bytes: invalid UTF-8 replaced
  return kExitOk;
}

} // namespace

void add_compile_command(CLI::App &app) {
  auto opt = std::make_shared<CompileCommandOptions>();
  CLI::App *cmd = app.add_subcommand(
      "compile",
      "Compile a GEMM or convolution spec to PTX and a cubin: prints the tile config, the kernel "
      "plan, the cubin's resource use per kernel and the time of each stage");
  cmd->add_option("spec", opt->spec,
                  "DSL text (\"gemm m=... \"), a workload file with one op, or - for stdin")
      ->required();
  cmd->add_option("--arch", opt->arch, "target architecture: sm_80, sm_86, sm_89, sm_90")
      ->capture_default_str();
  cmd->add_option("--config", opt->config,
                  "tile config words over the defaults, e.g. \"128x128x32 w64x64 s3 va8 vb8\"");
  cmd->add_option("-o,--output", opt->output,
                  "write the PTX to this file (with --cubin: the cubin; required then)");
  cmd->add_flag("--no-ptxas", opt->no_ptxas, "PTX only: skip the compile to a cubin");
  cmd->add_flag("--cubin", opt->cubin,
                "write the cubin of the PTX module (every kernel in it) for --arch to -o FILE: "
                "the one the runtime ships, compiled once by ptxas as a whole program");
  cmd->add_flag("--json", opt->json,
                "print one JSON object (config, kernel, per-kernel resources, stage times, "
                "output; docs/cli.md) instead of the text report");
  cmd->add_flag("--nvjitlink", opt->nvjitlink,
                "compile with nvJitLink instead (relocatable code, the runtime's fallback when "
                "ptxas cannot be run), to compare");
  cmd->footer("Example: tcjit compile \"gemm m=4096 n=4096 k=4096 a=f16 b=f16:col c=f16 acc=f32\" "
              "--config \"128x128x32 w64x64 s3\" --cubin -o gemm.cubin");
  cmd->callback([opt]() { throw CLI::RuntimeError(run_compile(*opt)); });
}

} // namespace tcjit::cli
