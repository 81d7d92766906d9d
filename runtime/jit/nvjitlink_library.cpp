#include "runtime/jit/nvjitlink_library.h"

#include <cstdlib>

#include "runtime/jit/cuda_toolkit.h"
#include "support/shared_library.h"

namespace tcjit::jit {

namespace {

void add_in_folder(std::vector<std::string> &candidates, const char *folder) {
  if (!folder || !*folder) {
    return;
  }
  for (const char *name : {"libnvJitLink.so.13", "libnvJitLink.so.12", "libnvJitLink.so"}) {
    candidates.push_back(std::string(folder) + "/lib64/" + name);
  }
}

} // namespace

std::vector<std::string> nvjitlink_library_candidates() {
  if (const char *override_path = std::getenv("TCJIT_NVJITLINK_LIBRARY")) {
    return {override_path};
  }
  // The toolkit roots in cuda_toolkit.h's order, then the dynamic loader's search.
  std::vector<std::string> candidates;
  for (const std::string &root : toolkit_roots(ToolkitEnvironment::from_process()))
    add_in_folder(candidates, root.c_str());
  for (const char *name : {"libnvJitLink.so.13", "libnvJitLink.so.12", "libnvJitLink.so"})
    candidates.push_back(name);
  return candidates;
}

NvJitLinkLibrary load_nvjitlink_library(const std::vector<std::string> &candidates) {
  NvJitLinkLibrary library;
  support::OpenedLibrary opened = support::open_first_library(candidates);
  if (!opened.handle) {
    library.error = "nvJitLink not found (tried:" + opened.error +
                    "); install the CUDA toolkit >= 12 or set CUDA_HOME to its folder";
    return library;
  }
  library.path = opened.path;
  std::string missing;
#define TCJIT_NVJITLINK_RESOLVE(name, ret, params)                                                 \
  library.name =                                                                                   \
      reinterpret_cast<ret(*) params>(support::find_library_symbol(opened.handle, #name));         \
  if (!library.name) {                                                                             \
    missing += std::string(missing.empty() ? "" : ", ") + #name;                                   \
  }
  TCJIT_NVJITLINK_SYMBOLS(TCJIT_NVJITLINK_RESOLVE)
#undef TCJIT_NVJITLINK_RESOLVE
  if (!missing.empty()) {
    library.error = opened.path + " does not export " + missing +
                    "; it is too old or not nvJitLink (use the CUDA toolkit >= 12)";
    return library;
  }
  if (library.nvJitLinkVersion(&library.major, &library.minor) != 0) {
    library.error = opened.path + ": nvJitLinkVersion failed";
    return library;
  }
  library.loaded = true;
  return library;
}

const NvJitLinkLibrary &nvjitlink_library() {
  static const NvJitLinkLibrary library = load_nvjitlink_library(nvjitlink_library_candidates());
  return library;
}

const char *nvjitlink_result_name(NvJitLinkResult result) {
  static const char *const names[] = {
      "NVJITLINK_SUCCESS",
      "NVJITLINK_ERROR_UNRECOGNIZED_OPTION",
      "NVJITLINK_ERROR_MISSING_ARCH",
      "NVJITLINK_ERROR_INVALID_INPUT",
      "NVJITLINK_ERROR_PTX_COMPILE",
      "NVJITLINK_ERROR_NVVM_COMPILE",
      "NVJITLINK_ERROR_INTERNAL",
      "NVJITLINK_ERROR_THREADPOOL",
      "NVJITLINK_ERROR_UNRECOGNIZED_INPUT",
      "NVJITLINK_ERROR_FINALIZE",
      "NVJITLINK_ERROR_NULL_INPUT",
      "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS",
      "NVJITLINK_ERROR_INCORRECT_INPUT_TYPE",
      "NVJITLINK_ERROR_ARCH_MISMATCH",
      "NVJITLINK_ERROR_OUTDATED_LIBRARY",
      "NVJITLINK_ERROR_MISSING_FATBIN",
      "NVJITLINK_ERROR_UNRECOGNIZED_ARCH",
      "NVJITLINK_ERROR_UNSUPPORTED_ARCH",
      "NVJITLINK_ERROR_LTO_NOT_ENABLED",
  };
  if (result < 0 || static_cast<size_t>(result) >= std::size(names)) {
    return "NVJITLINK_ERROR_UNKNOWN";
  }
  return names[result];
}

} // namespace tcjit::jit
