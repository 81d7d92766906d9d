#include "runtime/cuda/vendor_libraries.h"

#include "runtime/jit/cuda_toolkit.h"
#include "support/shared_library.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string_view>
#include <system_error>

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

namespace tcjit::cuda {

namespace {

namespace fs = std::filesystem;

struct LibraryFacts {
  const char *name;
  std::vector<std::string> sonames;
  std::vector<std::string> wheel_folders; // relative to a site-packages folder
};

LibraryFacts facts_of(VendorLibrary library) {
  switch (library) {
  case VendorLibrary::cublaslt:
    return {"cuBLASLt",
            {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"},
            {"nvidia/cu13/lib", "nvidia/cublas/lib"}};
  case VendorLibrary::cudnn:
    return {"cuDNN", {"libcudnn.so.9", "libcudnn.so"}, {"nvidia/cudnn/lib"}};
  case VendorLibrary::cudart:
    return {"CUDA runtime",
            {"libcudart.so.13", "libcudart.so.12", "libcudart.so"},
            {"nvidia/cu13/lib", "nvidia/cuda_runtime/lib"}};
  case VendorLibrary::nvrtc:
    return {"NVRTC",
            {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"},
            {"nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"}};
  }
  return {"?", {}, {}};
}

std::optional<std::string> env(const char *name) {
  const char *v = std::getenv(name);
  if (!v || !*v)
    return std::nullopt;
  return std::string(v);
}

bool is_file(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The folders of a colon-separated list, empty entries left out.
std::vector<std::string> split_path_list(std::string_view list) {
  std::vector<std::string> out;
  while (!list.empty()) {
    const size_t colon = list.find(':');
    if (colon != 0)
      out.emplace_back(list.substr(0, colon));
    list = colon == std::string_view::npos ? std::string_view{} : list.substr(colon + 1);
  }
  return out;
}

// The minor version of a "python3.N" folder name, or -1.
int python3_minor(const std::string &name) {
  constexpr std::string_view prefix = "python3.";
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0)
    return -1;
  int minor = 0;
  for (size_t i = prefix.size(); i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9')
      return -1;
    minor = minor * 10 + (name[i] - '0');
  }
  return minor;
}

// <lib>/python3.*/<packages>, the newest Python first (only the ones that exist).
std::vector<std::string> python_folders(const std::string &lib, const char *packages) {
  std::vector<std::pair<int, std::string>> found;
  std::error_code ec;
  for (fs::directory_iterator it(lib, ec), end; !ec && it != end; it.increment(ec)) {
    const int minor = python3_minor(it->path().filename().string());
    const fs::path site = it->path() / packages;
    std::error_code exists_ec;
    if (minor >= 0 && fs::is_directory(site, exists_ec))
      found.emplace_back(minor, site.string());
  }
  std::sort(found.begin(), found.end(), [](const auto &x, const auto &y) {
    return x.first != y.first ? x.first > y.first : x.second < y.second;
  });
  std::vector<std::string> out;
  for (const auto &[minor, path] : found)
    out.push_back(path);
  return out;
}

struct Folder {
  std::string path;
  std::string source;
};

// The site-packages folders of the Python installations, in search order, with their source.
std::vector<Folder> site_packages(const VendorLibraryEnvironment &e) {
  std::vector<Folder> out;
  const auto add_prefix = [&](const std::string &prefix, const std::string &source, bool system) {
    for (const char *lib : {"lib", "lib64"}) {
      const std::string dir = prefix + "/" + lib;
      if (system)
        for (const std::string &site : python_folders(dir, "dist-packages"))
          out.push_back({site, source});
      for (const std::string &site : python_folders(dir, "site-packages"))
        out.push_back({site, source});
    }
    if (system)
      out.push_back({prefix + "/lib/python3/dist-packages", source});
  };
  if (e.virtual_env)
    add_prefix(*e.virtual_env, "Python wheel ($VIRTUAL_ENV)", false);
  if (e.conda_prefix)
    add_prefix(*e.conda_prefix, "Python wheel ($CONDA_PREFIX)", false);
  if (e.home)
    add_prefix(*e.home + "/.local", "Python wheel (~/.local)", false);
  for (const std::string &prefix : e.system_python_prefixes)
    add_prefix(prefix, "Python wheel (" + prefix + ")", true);
  return out;
}

// Every folder that may hold the library, in search order, each once.
std::vector<Folder> library_folders(const LibraryFacts &facts, const VendorLibraryEnvironment &e) {
  std::vector<Folder> all;
  if (e.ld_library_path)
    for (const std::string &dir : split_path_list(*e.ld_library_path))
      all.push_back({dir, "LD_LIBRARY_PATH"});
  for (const std::string &root : e.toolkit_roots) {
    all.push_back({root + "/lib64", "CUDA toolkit (" + root + ")"});
    all.push_back({root + "/targets/x86_64-linux/lib", "CUDA toolkit (" + root + ")"});
    all.push_back({root + "/lib", "CUDA toolkit (" + root + ")"}); // cuDNN's tarball puts it here
  }
  for (const Folder &site : site_packages(e))
    for (const std::string &relative : facts.wheel_folders)
      all.push_back({site.path + "/" + relative, site.source});
  std::vector<Folder> out;
  std::set<std::string> seen;
  for (Folder &folder : all) {
    while (folder.path.size() > 1 && folder.path.back() == '/')
      folder.path.pop_back();
    if (seen.insert(folder.path).second)
      out.push_back(std::move(folder));
  }
  return out;
}

// Where the loader found an opened library (its link map's name), else `fallback`.
std::string opened_path(void *handle, const std::string &fallback) {
  struct link_map *map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name)
    return map->l_name;
  return fallback;
}

template <typename T> T symbol(void *handle, const char *name) {
  return reinterpret_cast<T>(support::find_library_symbol(handle, name));
}

std::string version_of(VendorLibrary library, void *handle) {
  switch (library) {
  case VendorLibrary::cublaslt:
    if (const auto get = symbol<size_t (*)()>(handle, "cublasLtGetVersion"))
      return vendor_version_text(library, static_cast<long long>(get()));
    return "";
  case VendorLibrary::cudnn:
    if (const auto get = symbol<size_t (*)()>(handle, "cudnnGetVersion"))
      return vendor_version_text(library, static_cast<long long>(get()));
    return "";
  case VendorLibrary::cudart: {
    int version = 0;
    const auto get = symbol<int (*)(int *)>(handle, "cudaRuntimeGetVersion");
    return get && get(&version) == 0 ? vendor_version_text(library, version) : "";
  }
  case VendorLibrary::nvrtc: {
    int major = 0, minor = 0;
    const auto get = symbol<int (*)(int *, int *)>(handle, "nvrtcVersion");
    return get && get(&major, &minor) == 0 ? std::to_string(major) + "." + std::to_string(minor)
                                           : "";
  }
  }
  return "";
}

std::string joined(const std::vector<std::string> &items) {
  std::string text;
  for (size_t i = 0; i < items.size(); ++i)
    text += (i ? ", " : "") + items[i];
  return text;
}

std::string fix_for(VendorLibrary library) {
  switch (library) {
  case VendorLibrary::cublaslt:
    return "install the CUDA toolkit's cuBLAS or `pip install nvidia-cublas-cu12` (or -cu13), or "
           "put the folder of libcublasLt.so on LD_LIBRARY_PATH";
  case VendorLibrary::cudnn:
    return "install cuDNN 9 or `pip install nvidia-cudnn-cu12` (or -cu13), or put the folder of "
           "libcudnn.so.9 on LD_LIBRARY_PATH";
  case VendorLibrary::cudart:
  case VendorLibrary::nvrtc:
    return "install the CUDA toolkit (>= 12) and set CUDA_HOME to its folder, or put the "
           "library's folder on LD_LIBRARY_PATH";
  }
  return "";
}

} // namespace

const char *vendor_library_name(VendorLibrary library) {
  return facts_of(library).name;
}

std::vector<std::string> vendor_library_sonames(VendorLibrary library) {
  return facts_of(library).sonames;
}

VendorLibraryEnvironment VendorLibraryEnvironment::from_process() {
  VendorLibraryEnvironment e;
  e.ld_library_path = env("LD_LIBRARY_PATH");
  e.virtual_env = env("VIRTUAL_ENV");
  e.conda_prefix = env("CONDA_PREFIX");
  e.home = env("HOME");
  e.toolkit_roots = jit::toolkit_roots(jit::ToolkitEnvironment::from_process());
  return e;
}

VendorLibrarySearch search_vendor_library(VendorLibrary library,
                                          const VendorLibraryEnvironment &environment) {
  const LibraryFacts facts = facts_of(library);
  VendorLibrarySearch search;
  search.library = library;
  for (const Folder &folder : library_folders(facts, environment)) {
    search.folders.push_back(folder.path);
    for (const std::string &soname : facts.sonames) {
      const std::string path = folder.path + "/" + soname;
      if (is_file(path))
        search.candidates.push_back({path, folder.source});
    }
  }
  if (environment.loader_search)
    for (const std::string &soname : facts.sonames)
      search.candidates.push_back({soname, "the loader's search path"});
  return search;
}

std::vector<std::string> default_vendor_library_candidates(VendorLibrary library) {
  std::vector<std::string> out;
  for (const VendorCandidate &candidate :
       search_vendor_library(library, VendorLibraryEnvironment::from_process()).candidates)
    out.push_back(candidate.path);
  return out;
}

std::vector<std::string> default_cublaslt_candidates() {
  return default_vendor_library_candidates(VendorLibrary::cublaslt);
}

std::vector<std::string> default_cudnn_candidates() {
  return default_vendor_library_candidates(VendorLibrary::cudnn);
}

LoadedVendorLibrary load_vendor_library(const VendorLibrarySearch &search) {
  LoadedVendorLibrary loaded;
  loaded.library = search.library;
  std::vector<std::string> failures, sonames, unopened;
  for (const VendorCandidate &candidate : search.candidates) {
    const support::OpenedLibrary opened = support::open_first_library({candidate.path});
    if (opened.handle) {
      loaded.handle = opened.handle;
      loaded.path = opened_path(opened.handle, candidate.path);
      loaded.source = candidate.source;
      loaded.version = version_of(search.library, opened.handle);
      // The folders up to the one it was found in (all of them for the loader's search).
      const std::string folder = fs::path(candidate.path).parent_path().string();
      for (const std::string &looked_in : search.folders) {
        loaded.tried.push_back(looked_in);
        if (looked_in == folder)
          break;
      }
      loaded.tried.insert(loaded.tried.end(), failures.begin(), failures.end());
      return loaded;
    }
    // open_first_library's error: "\n  CANDIDATE: reason", where dlerror's reason may repeat
    // the path.
    std::string reason = opened.error.substr(opened.error.find(": ") + 2);
    if (reason.rfind(candidate.path + ": ", 0) == 0)
      reason.erase(0, candidate.path.size() + 2);
    if (candidate.path.find('/') == std::string::npos) {
      sonames.push_back(candidate.path);
      failures.push_back(candidate.path + " (the loader's search): " + reason);
    } else {
      failures.push_back(candidate.path + ": " + reason);
      unopened.push_back(candidate.path + " (" + reason + ")");
    }
  }
  loaded.tried = search.folders;
  loaded.tried.insert(loaded.tried.end(), failures.begin(), failures.end());
  const char *name = vendor_library_name(search.library);
  loaded.error = std::string(name) + " not found: looked in " +
                 (search.folders.empty() ? std::string("no folder") : joined(search.folders)) +
                 (unopened.empty() ? std::string() : "; could not open " + joined(unopened)) +
                 (sonames.empty() ? std::string()
                                  : "; the loader's search opened none of " + joined(sonames)) +
                 "; " + fix_for(search.library);
  return loaded;
}

LoadedVendorLibrary load_vendor_library(VendorLibrary library) {
  return load_vendor_library(
      search_vendor_library(library, VendorLibraryEnvironment::from_process()));
}

std::string vendor_version_text(VendorLibrary library, long long number) {
  const auto three = [](long long major, long long minor, long long patch) {
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  };
  switch (library) {
  case VendorLibrary::cublaslt: return three(number / 10000, number / 100 % 100, number % 100);
  case VendorLibrary::cudnn:
    return number >= 90000 ? three(number / 10000, number / 100 % 100, number % 100)
                           : three(number / 1000, number / 100 % 10, number % 100);
  case VendorLibrary::cudart:
  case VendorLibrary::nvrtc:
    return std::to_string(number / 1000) + "." + std::to_string(number % 1000 / 10);
  }
  return std::to_string(number);
}

} // namespace tcjit::cuda
