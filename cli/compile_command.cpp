// `tcjit compile`: a client of tcjit::compile (include/tcjit/tools.hpp), which writes the PTX or
// the cubin it returns.
#include "cli/compile_command.h"
#include "cli/json_text.h"

#include "cli/exit_codes.h"
#include "cli/spec_input.h"
#include "tcjit/tools.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <string_view>

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
  bool json = false;   // one JSON object on stdout (docs/cli.md) instead of the text report
  std::string backend; // "" = llvm, unless --emit cuda
  std::string emit = "ptx";
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
  const char *cmd = "tcjit compile";
  if (!is_target_arch(opt.arch)) {
    std::cerr << cmd << ": error: unknown arch '" << opt.arch << "' (tcjit targets "
              << target_arch_names() << ")\n";
    return kExitUsage;
  }
  if (opt.cubin && opt.output.empty()) {
    std::cerr << cmd << ": error: --cubin needs -o FILE.cubin, the file to write the cubin to\n";
    return kExitUsage;
  }
  if (opt.no_ptxas && (opt.cubin || opt.nvjitlink)) {
    std::cerr << cmd << ": error: --no-ptxas skips the compile to a cubin; it cannot go with "
              << (opt.cubin ? "--cubin" : "--nvjitlink") << "\n";
    return kExitUsage;
  }
  if (opt.emit == "cuda" && opt.backend == "llvm") {
    std::cerr << cmd
              << ": error: --emit cuda writes the nvrtc backend's source; it cannot go "
                 "with --backend llvm\n";
    return kExitUsage;
  }
  if (opt.emit == "cuda" && opt.cubin) {
    std::cerr << cmd
              << ": error: --emit cuda writes the CUDA C++ source to -o; it cannot go with "
                 "--cubin\n";
    return kExitUsage;
  }
  const SpecInput in = read_spec_input(opt.spec);
  if (!in.error.empty()) {
    std::cerr << "tcjit: error: " << escape_controls(in.error) << "\n";
    return kExitBadSpec;
  }
  CompileRequest request;
  request.arch = opt.arch;
  request.config = opt.config;
  request.backend = !opt.backend.empty() ? opt.backend : opt.emit == "cuda" ? "nvrtc" : "llvm";
  request.cubin = opt.no_ptxas    ? CubinCompiler::none
                  : opt.nvjitlink ? CubinCompiler::nvjitlink
                                  : CubinCompiler::ptxas;
  CompiledModule m;
  try {
    m = compile(in.text, in.source_name, request);
  } catch (const Error &e) {
    if (e.code() == ErrorCode::bad_spec && e.where() == "parse")
      std::cerr << escape_controls_keep_lines(e.problem().find('\n') != std::string::npos
                                                  ? e.problem()
                                                  : "tcjit: error: " + e.problem() + "\n");
    else
      print_error(cmd, e);
    return exit_status_of(e);
  }
  nlohmann::json j = nlohmann::json::parse(m.json);
  std::string text = m.text;
  if (opt.cubin) {
    if (!write_file(opt.output, std::string_view(reinterpret_cast<const char *>(m.cubin.data()),
                                                 m.cubin.size())))
      return kExitFailure;
    text += "wrote    " + opt.output + " (cubin for " + opt.arch + " by " + m.cubin_options + ", " +
            std::to_string(m.cubin.size()) + " bytes, " +
            (m.kernels.size() == 1 ? "kernel" : "kernels");
    for (size_t i = 0; i < m.kernels.size(); ++i)
      text += (i ? ", " : " ") + m.kernels[i];
    text += ")\n";
    j["output"] = {{"path", opt.output}, {"kind", "cubin"}, {"bytes", m.cubin.size()}};
  } else if (opt.emit == "cuda") {
    if (opt.output.empty()) { // the source itself is the output
      std::cout << m.cuda_source;
      return kExitOk;
    }
    if (!write_file(opt.output, m.cuda_source))
      return kExitFailure;
    text += "wrote    " + opt.output + " (" + std::to_string(m.cuda_source.size()) +
            " bytes of CUDA C++, kernel " + m.kernel_name + ")\n";
    j["output"] = {{"path", opt.output}, {"kind", "cuda"}, {"bytes", m.cuda_source.size()}};
  } else if (!opt.output.empty()) {
    if (!write_file(opt.output, m.ptx))
      return kExitFailure;
    text += "wrote    " + opt.output + " (" + std::to_string(m.ptx.size()) + " bytes, kernel " +
            m.kernel_name + ")\n";
    j["output"] = {{"path", opt.output}, {"kind", "ptx"}, {"bytes", m.ptx.size()}};
  }
  if (opt.json)
    std::cout << json_text(j, 2) << "\n"; // any bytes: invalid UTF-8 replaced
  else
    std::cout << text;
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
  cmd->add_option("--arch", opt->arch, "target architecture: " + target_arch_names())
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
  cmd->add_option("--backend", opt->backend,
                  "llvm (LLVM's NVPTX backend) or nvrtc (CUDA C++ source compiled by NVRTC; the "
                  "one that compiles act=custom:FILE); default llvm, nvrtc with --emit cuda")
      ->check(CLI::IsMember({"llvm", "nvrtc"}));
  cmd->add_option("--emit", opt->emit,
                  "what -o receives: ptx, or cuda (the nvrtc backend's CUDA C++ source; printed "
                  "when there is no -o)")
      ->check(CLI::IsMember({"ptx", "cuda"}))
      ->capture_default_str();
  cmd->add_flag("--nvjitlink", opt->nvjitlink,
                "compile with nvJitLink instead (relocatable code, the runtime's fallback when "
                "ptxas cannot be run), to compare");
  cmd->footer("Example: tcjit compile \"gemm m=4096 n=4096 k=4096 a=f16 b=f16:col c=f16 acc=f32\" "
              "--config \"128x128x32 w64x64 s3\" --cubin -o gemm.cubin");
  cmd->callback([opt]() { throw CLI::RuntimeError(run_compile(*opt)); });
}

} // namespace tcjit::cli
