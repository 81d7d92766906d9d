#include "runtime/jit/nvrtc_compiler.h"

#include "runtime/jit/cuda_toolkit.h"
#include "support/shared_library.h"

#include <chrono>
#include <filesystem>
#include <stdexcept>

namespace tcjit::jit {

namespace {

NvrtcLibrary load_nvrtc() {
  NvrtcLibrary library;
  const CudaToolkit toolkit = current_cuda_toolkit();
  std::vector<std::string> candidates;
  if (toolkit.nvrtc.found())
    candidates.push_back(toolkit.nvrtc.path);
  for (const char *name : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"})
    candidates.push_back(name);
  support::OpenedLibrary opened = support::open_first_library(candidates);
  if (!opened.handle) {
    library.error = "NVRTC not found (" + toolkit.nvrtc.missing_message("libnvrtc.so") +
                    "; the loader's path:" + opened.error +
                    "); install the CUDA toolkit >= 12, or set TCJIT_CUDA_HOME or CUDA_HOME to "
                    "its folder";
    return library;
  }
  library.path = opened.path;
  std::string missing;
#define TCJIT_NVRTC_RESOLVE(name, ret, params)                                                     \
  library.name =                                                                                   \
      reinterpret_cast<ret(*) params>(support::find_library_symbol(opened.handle, #name));         \
  if (!library.name)                                                                               \
    missing += std::string(missing.empty() ? "" : ", ") + #name;
  TCJIT_NVRTC_SYMBOLS(TCJIT_NVRTC_RESOLVE)
#undef TCJIT_NVRTC_RESOLVE
  if (!missing.empty()) {
    library.error = opened.path + " does not export " + missing +
                    "; it is too old or not NVRTC (use the CUDA toolkit >= 12)";
    return library;
  }
  if (library.nvrtcVersion(&library.major, &library.minor) != 0) {
    library.error = opened.path + ": nvrtcVersion failed";
    return library;
  }
  library.loaded = true;
  return library;
}

} // namespace

const NvrtcLibrary &nvrtc_library() {
  static const NvrtcLibrary library = load_nvrtc();
  return library;
}

CudaCompileResult compile_cuda_source(std::string_view source, std::string_view source_name,
                                      int sm_arch, const std::vector<std::string> &extra_options) {
  const NvrtcLibrary &nvrtc = nvrtc_library();
  if (!nvrtc.loaded)
    throw std::runtime_error(nvrtc.error);
  std::vector<std::string> options = {"--gpu-architecture=sm_" + std::to_string(sm_arch),
                                      "-default-device", "-std=c++17"};
  // The toolkit's headers, for user code that includes one (the generated source includes none).
  const CudaToolkit toolkit = current_cuda_toolkit();
  if (!toolkit.nvrtc.root.empty() && std::filesystem::is_directory(toolkit.nvrtc.root + "/include"))
    options.push_back("-I" + toolkit.nvrtc.root + "/include");
  options.insert(options.end(), extra_options.begin(), extra_options.end());
  CudaCompileResult result;
  for (const std::string &o : options)
    result.options += (result.options.empty() ? "" : " ") + o;
  const std::string text(source), name(source_name);
  NvrtcProgram program = nullptr;
  const auto start = std::chrono::steady_clock::now();
  NvrtcResult r =
      nvrtc.nvrtcCreateProgram(&program, text.c_str(), name.c_str(), 0, nullptr, nullptr);
  if (r != 0)
    throw std::runtime_error(std::string("nvrtcCreateProgram failed: ") +
                             nvrtc.nvrtcGetErrorString(r));
  std::vector<const char *> argv;
  for (const std::string &o : options)
    argv.push_back(o.c_str());
  r = nvrtc.nvrtcCompileProgram(program, static_cast<int>(argv.size()), argv.data());
  size_t size = 0;
  if (nvrtc.nvrtcGetProgramLogSize(program, &size) == 0 && size > 1) {
    result.log.resize(size);
    nvrtc.nvrtcGetProgramLog(program, result.log.data());
    result.log.resize(size - 1);
  }
  if (r == 0 && nvrtc.nvrtcGetPTXSize(program, &size) == 0) {
    result.ptx.resize(size);
    if (nvrtc.nvrtcGetPTX(program, result.ptx.data()) == 0) {
      result.ptx.resize(size > 0 ? size - 1 : 0); // without the terminating NUL
      result.ok = true;
    }
  }
  nvrtc.nvrtcDestroyProgram(&program);
  result.milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

} // namespace tcjit::jit
