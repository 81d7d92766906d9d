#include "runtime/jit/ptx_compiler.h"

#include <chrono>
#include <string>

#include "runtime/device/device.h"

namespace tcjit::jit {

namespace {

using device::DeviceError;
using device::ErrorKind;

// Destroys the nvJitLink handle on every path out of compile_ptx.
struct LinkerHandle {
  const NvJitLinkLibrary &library;
  NvJitLinkHandle handle = nullptr;
  ~LinkerHandle() {
    if (handle) {
      library.nvJitLinkDestroy(&handle);
    }
  }
};

std::string read_log(const NvJitLinkLibrary &library, NvJitLinkHandle handle, bool error_log) {
  size_t size = 0;
  NvJitLinkResult result = error_log ? library.nvJitLinkGetErrorLogSize(handle, &size)
                                     : library.nvJitLinkGetInfoLogSize(handle, &size);
  if (result != 0 || size == 0) {
    return {};
  }
  std::string log(size, '\0');
  result = error_log ? library.nvJitLinkGetErrorLog(handle, log.data())
                     : library.nvJitLinkGetInfoLog(handle, log.data());
  if (result != 0) {
    return {};
  }
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) {
    log.pop_back();
  }
  return log;
}

void check_options(const PtxCompileOptions &options) {
  if (options.sm_arch < 50 || options.sm_arch > 1299) {
    throw DeviceError(ErrorKind::InvalidArgument,
                      "sm_" + std::to_string(options.sm_arch) +
                          " is not an SM architecture; pass the compute capability as 80 for "
                          "sm_80, 90 for sm_90");
  }
  if (options.optimization_level < 0 || options.optimization_level > 3) {
    throw DeviceError(ErrorKind::InvalidArgument, "optimisation level " +
                                                      std::to_string(options.optimization_level) +
                                                      " is out of range; use 0 to 3");
  }
}

} // namespace

std::vector<std::string> nvjitlink_option_strings(const PtxCompileOptions &options) {
  std::vector<std::string> strings = {"-arch=sm_" + std::to_string(options.sm_arch)};
  // nvJitLink itself accepts only -O0 and -O3; ptxas gets the exact level.
  strings.push_back(options.optimization_level == 0 ? "-O0" : "-O3");
  strings.push_back("-Xptxas=-O" + std::to_string(options.optimization_level));
  if (options.line_info) {
    strings.push_back("-lineinfo");
  }
  if (options.max_registers > 0) {
    strings.push_back("-maxrregcount=" + std::to_string(options.max_registers));
  }
  if (options.resource_usage) {
    strings.push_back("-Xptxas=-v");
  }
  return strings;
}

std::string options_text(const PtxCompileOptions &options) {
  std::string text;
  for (const std::string &option : nvjitlink_option_strings(options)) {
    text += (text.empty() ? "" : " ") + option;
  }
  return text;
}

CompiledPtx compile_ptx(std::string_view ptx, std::string_view source_name,
                        const PtxCompileOptions &options, const NvJitLinkLibrary &library) {
  check_options(options);
  CompiledPtx compiled;
  compiled.options = options_text(options);
  if (!library.loaded) {
    compiled.origin = CubinOrigin::DriverJit;
    compiled.fallback_reason = library.error + "; the driver will JIT-compile the PTX when the "
                                               "module is loaded";
    return compiled;
  }
  const auto start = std::chrono::steady_clock::now();
  const std::string where = source_name.empty() ? std::string("<ptx>") : std::string(source_name);
  const std::string arch = "sm_" + std::to_string(options.sm_arch);

  std::vector<std::string> option_strings = nvjitlink_option_strings(options);
  std::vector<const char *> option_pointers;
  for (const std::string &option : option_strings) {
    option_pointers.push_back(option.c_str());
  }
  LinkerHandle linker{library};
  NvJitLinkResult result = library.nvJitLinkCreate(
      &linker.handle, static_cast<uint32_t>(option_pointers.size()), option_pointers.data());
  if (result != 0) {
    throw DeviceError(ErrorKind::InvalidArgument, where + ": nvJitLink rejected the options '" +
                                                      compiled.options + "' (" +
                                                      nvjitlink_result_name(result) + ")");
  }
  const auto fail = [&](const char *step, NvJitLinkResult failed) {
    std::string log = read_log(library, linker.handle, true);
    throw DeviceError(ErrorKind::ModuleLoad, where + ": nvJitLink could not compile the PTX for " +
                                                 arch + " (" + step + ": " +
                                                 nvjitlink_result_name(failed) + ")" +
                                                 (log.empty() ? std::string() : ":\n" + log));
  };
  // nvJitLink reads PTX as a C string: pass the text with its terminator.
  std::string ptx_text(ptx);
  result = library.nvJitLinkAddData(linker.handle, kNvJitLinkInputPtx, ptx_text.c_str(),
                                    ptx_text.size() + 1, where.c_str());
  if (result != 0) {
    fail("nvJitLinkAddData", result);
  }
  result = library.nvJitLinkComplete(linker.handle);
  if (result != 0) {
    fail("nvJitLinkComplete", result);
  }
  size_t cubin_size = 0;
  result = library.nvJitLinkGetLinkedCubinSize(linker.handle, &cubin_size);
  if (result != 0) {
    fail("nvJitLinkGetLinkedCubinSize", result);
  }
  compiled.cubin.resize(cubin_size);
  result = library.nvJitLinkGetLinkedCubin(linker.handle, compiled.cubin.data());
  if (result != 0) {
    fail("nvJitLinkGetLinkedCubin", result);
  }
  compiled.info_log = read_log(library, linker.handle, false);
  compiled.resources = parse_ptxas_resources(compiled.info_log);
  compiled.compile_milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return compiled;
}

CompiledPtx compile_ptx(std::string_view ptx, std::string_view source_name,
                        const PtxCompileOptions &options) {
  return compile_ptx(ptx, source_name, options, nvjitlink_library());
}

} // namespace tcjit::jit
