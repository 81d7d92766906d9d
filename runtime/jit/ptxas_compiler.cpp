#include "runtime/jit/ptxas_compiler.h"

#include "runtime/device/device.h"
#include "runtime/jit/cuda_toolkit.h"
#include "support/run_process.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sys/stat.h>
#include <unistd.h>

namespace tcjit::jit {

namespace {

using device::DeviceError;
using device::ErrorKind;

// A scratch directory of its own per compile (mkdtemp), removed with everything in it.
class ScratchDir {
public:
  ScratchDir() {
    std::error_code error;
    const std::filesystem::path tmp = std::filesystem::temp_directory_path(error);
    if (error)
      throw DeviceError(ErrorKind::Unsupported, "no directory for ptxas's scratch files: " +
                                                    error.message() + " (set TMPDIR)");
    const std::string base = (tmp / "tcjit_ptxas_XXXXXX");
    std::vector<char> name(base.begin(), base.end());
    name.push_back('\0');
    if (!mkdtemp(name.data()))
      throw DeviceError(ErrorKind::Unsupported,
                        "cannot create a scratch directory for ptxas under " + tmp.string() +
                            " (set TMPDIR)");
    path_ = name.data();
  }
  ScratchDir(const ScratchDir &) = delete;
  ScratchDir &operator=(const ScratchDir &) = delete;
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path &path() const { return path_; }

private:
  std::filesystem::path path_;
};

std::vector<std::string> ptxas_option_strings(const PtxCompileOptions &options) {
  std::vector<std::string> v = {"-arch=sm_" + std::to_string(options.sm_arch),
                                "-O" + std::to_string(options.optimization_level)};
  if (options.line_info)
    v.push_back("-lineinfo");
  if (options.max_registers > 0)
    v.push_back("-maxrregcount=" + std::to_string(options.max_registers));
  return v;
}

} // namespace

std::string ptxas_executable() {
  const ToolkitPiece ptxas = current_cuda_toolkit().ptxas; // $TCJIT_PTXAS first
  return ptxas.found() ? ptxas.path : TCJIT_PTXAS;
}

namespace {

bool executable_file(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

} // namespace

bool ptxas_available() {
  const std::string path = ptxas_executable();
  if (path.find('/') != std::string::npos)
    return executable_file(path);
  // A bare name ($TCJIT_PTXAS=ptxas) is looked up on PATH, as posix_spawnp will.
  const char *env = std::getenv("PATH");
  std::string_view dirs = env ? env : "";
  while (!dirs.empty()) {
    const size_t colon = dirs.find(':');
    const std::string dir(dirs.substr(0, colon));
    if (!dir.empty() && executable_file(dir + "/" + path))
      return true;
    dirs = colon == std::string_view::npos ? std::string_view{} : dirs.substr(colon + 1);
  }
  return false;
}

std::string ptxas_options_text(const PtxCompileOptions &options) {
  std::string text = "ptxas";
  for (const std::string &o : ptxas_option_strings(options))
    text += " " + o;
  return text;
}

CompiledPtx compile_ptx_with_ptxas(std::string_view ptx, std::string_view source_name,
                                   const PtxCompileOptions &options) {
  const std::string where = source_name.empty() ? std::string("<ptx>") : std::string(source_name);
  if (options.sm_arch < 50 || options.sm_arch > 1299)
    throw DeviceError(ErrorKind::InvalidArgument,
                      where + ": sm_" + std::to_string(options.sm_arch) +
                          " is not a CUDA architecture (expected e.g. 80 for sm_80)");
  if (options.optimization_level < 0 || options.optimization_level > 3)
    throw DeviceError(ErrorKind::InvalidArgument, where + ": optimization level " +
                                                      std::to_string(options.optimization_level) +
                                                      " is not 0..3");
  const std::string ptxas = ptxas_executable();
  if (!ptxas_available()) {
    const ToolkitPiece found = current_cuda_toolkit().ptxas;
    throw DeviceError(ErrorKind::Unsupported,
                      found.found() ? "cannot run ptxas at '" + ptxas +
                                          "' (set TCJIT_PTXAS to the toolkit's bin/ptxas)"
                                    : found.missing_message("ptxas"));
  }
  const auto start = std::chrono::steady_clock::now();
  ScratchDir dir;
  const std::filesystem::path in = dir.path() / "kernel.ptx", out = dir.path() / "kernel.cubin";
  {
    std::ofstream f(in, std::ios::binary);
    f.write(ptx.data(), static_cast<std::streamsize>(ptx.size()));
    if (!f)
      throw DeviceError(ErrorKind::Unsupported, "cannot write the scratch file " + in.string());
  }
  // Started directly (posix_spawnp), not through `sh -c`: one process, no quoting.
  std::vector<std::string> argv = {ptxas, "-v"};
  for (const std::string &o : ptxas_option_strings(options))
    argv.push_back(o);
  argv.insert(argv.end(), {in.string(), "-o", out.string()});

  CompiledPtx compiled;
  compiled.origin = CubinOrigin::Ptxas;
  compiled.options = ptxas_options_text(options);
  support::ProcessResult run = support::run_process(argv);
  compiled.info_log = std::move(run.output);
  if (!run.started) // not a program, or gone since ptxas_available()
    throw DeviceError(ErrorKind::Unsupported,
                      "cannot run ptxas at '" + ptxas + "': " + run.problem + " (set TCJIT_PTXAS)");
  if (run.exit_code != 0)
    throw DeviceError(
        ErrorKind::ModuleLoad,
        where + ": ptxas could not compile the PTX for sm_" + std::to_string(options.sm_arch) +
            (run.signal ? " (ended by signal " + std::to_string(run.signal) + ")" : std::string()) +
            ":\n" + compiled.info_log);
  std::ifstream f(out, std::ios::binary);
  compiled.cubin.assign(std::istreambuf_iterator<char>(f), {});
  if (compiled.cubin.empty())
    throw DeviceError(ErrorKind::ModuleLoad, where + ": ptxas wrote no cubin");
  compiled.resources = parse_ptxas_resources(compiled.info_log);
  compiled.compile_milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return compiled;
}

} // namespace tcjit::jit
