#include "runtime/jit/cuda_toolkit.h"

#include <cstdlib>
#include <filesystem>
#include <string_view>

#include <sys/stat.h>
#include <unistd.h>

namespace tcjit::jit {

namespace {

bool is_file(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool is_executable(const std::string &path) {
  return is_file(path) && ::access(path.c_str(), X_OK) == 0;
}

std::optional<std::string> env(const char *name) {
  const char *v = std::getenv(name);
  if (!v || !*v)
    return std::nullopt;
  return std::string(v);
}

// The toolkit root of the first executable `ptxas` on PATH (…/bin/ptxas → …).
std::optional<std::string> root_of_ptxas_on(const std::optional<std::string> &path) {
  if (!path)
    return std::nullopt;
  std::string_view dirs = *path;
  while (!dirs.empty()) {
    const size_t colon = dirs.find(':');
    const std::string dir(dirs.substr(0, colon));
    if (!dir.empty() && is_executable(dir + "/ptxas"))
      return std::filesystem::path(dir).parent_path().string();
    dirs = colon == std::string_view::npos ? std::string_view{} : dirs.substr(colon + 1);
  }
  return std::nullopt;
}

struct Root {
  std::string source;
  std::optional<std::string> dir;
};

// `relatives` are tried in order inside each root; `accept` says whether a path is the piece.
template <typename Accept>
ToolkitPiece search(const std::vector<Root> &roots, const std::vector<std::string> &relatives,
                    Accept accept) {
  ToolkitPiece piece;
  for (const Root &r : roots) {
    if (!r.dir) {
      piece.tried.push_back("$" + r.source + " (not set)");
      continue;
    }
    for (const std::string &rel : relatives) {
      const std::string candidate = *r.dir + "/" + rel;
      piece.tried.push_back(candidate);
      if (accept(candidate)) {
        piece.path = candidate;
        piece.root = *r.dir;
        piece.source = r.source;
        return piece;
      }
    }
  }
  return piece;
}

ToolkitPiece overridden(const std::optional<std::string> &value, const char *variable) {
  ToolkitPiece piece;
  piece.path = *value;
  piece.source = variable;
  piece.tried.push_back("$" + std::string(variable) + "=" + *value);
  return piece;
}

std::vector<Root> roots_of(const ToolkitEnvironment &e) {
  return {
      {"TCJIT_CUDA_HOME", e.tcjit_cuda_home},
      {"CUDA_HOME", e.cuda_home},
      {"CUDA_PATH", e.cuda_path},
      {"PATH", root_of_ptxas_on(e.path)},
      {"/usr/local/cuda", std::string("/usr/local/cuda")},
      {"the toolkit tcjit was configured with",
       e.configured_root.empty() ? std::nullopt : std::optional(e.configured_root)},
  };
}

} // namespace

std::string ToolkitPiece::missing_message(const std::string &what) const {
  std::string text = what + " not found: tried ";
  for (size_t i = 0; i < tried.size(); ++i)
    text += (i ? ", " : "") + tried[i];
  return text + "; install the CUDA toolkit (>= 12) or set TCJIT_CUDA_HOME to its folder";
}

ToolkitEnvironment ToolkitEnvironment::from_process() {
  ToolkitEnvironment e;
  e.tcjit_cuda_home = env("TCJIT_CUDA_HOME");
  e.cuda_home = env("CUDA_HOME");
  e.cuda_path = env("CUDA_PATH");
  e.path = env("PATH");
  e.tcjit_ptxas = env("TCJIT_PTXAS");
  e.tcjit_libdevice = env("TCJIT_LIBDEVICE");
  e.tcjit_nvjitlink_library = env("TCJIT_NVJITLINK_LIBRARY");
  e.configured_root = TCJIT_CONFIGURED_CUDA_ROOT;
  return e;
}

CudaToolkit find_cuda_toolkit(const ToolkitEnvironment &e) {
  const std::vector<Root> roots = roots_of(e);
  CudaToolkit t;
  t.ptxas = e.tcjit_ptxas ? overridden(e.tcjit_ptxas, "TCJIT_PTXAS")
                          : search(roots, {"bin/ptxas"}, is_executable);
  t.libdevice = e.tcjit_libdevice ? overridden(e.tcjit_libdevice, "TCJIT_LIBDEVICE")
                                  : search(roots, {"nvvm/libdevice/libdevice.10.bc"}, is_file);
  const std::vector<std::string> nvjitlink = {"lib64/libnvJitLink.so.13",
                                              "lib64/libnvJitLink.so.12", "lib64/libnvJitLink.so"};
  t.nvjitlink = e.tcjit_nvjitlink_library
                    ? overridden(e.tcjit_nvjitlink_library, "TCJIT_NVJITLINK_LIBRARY")
                    : search(roots, nvjitlink, is_file);
  t.nvrtc =
      search(roots, {"lib64/libnvrtc.so.13", "lib64/libnvrtc.so.12", "lib64/libnvrtc.so"}, is_file);
  return t;
}

CudaToolkit current_cuda_toolkit() {
  return find_cuda_toolkit(ToolkitEnvironment::from_process());
}

std::vector<std::string> toolkit_roots(const ToolkitEnvironment &e) {
  std::vector<std::string> out;
  for (const Root &r : roots_of(e))
    if (r.dir)
      out.push_back(*r.dir);
  return out;
}

} // namespace tcjit::jit
