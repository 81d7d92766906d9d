// NVIDIA's libraries tcjit compares with or may use (cuBLASLt, cuDNN, the CUDA runtime, NVRTC),
// found where a GPU node keeps them: opened with dlopen, never linked. Only the GPU bench uses
// cuBLASLt and cuDNN (its anchors); `tcjit doctor` reports where each was found.
//
// The candidates of a library, in order (each folder contributes the library's files it holds,
// newest soname first, e.g. libcudnn.so.9 then libcudnn.so):
//   1. each folder of $LD_LIBRARY_PATH
//   2. the CUDA toolkit's lib64/, targets/x86_64-linux/lib/ and lib/, for each root of the toolkit
//   search
//      (runtime/jit/cuda_toolkit.h: $TCJIT_CUDA_HOME, $CUDA_HOME, $CUDA_PATH, the ptxas on $PATH,
//      /usr/local/cuda, the toolkit tcjit was configured with)
//   3. Python's NVIDIA wheels (nvidia-cublas-cu12/cu13, nvidia-cudnn-cu12/cu13 ...): their
//      nvidia/<package>/lib folders in the site-packages of $VIRTUAL_ENV, $CONDA_PREFIX,
//      ~/.local, then the system's (/usr/local/lib/python3.*/dist-packages and site-packages,
//      /usr/lib/python3/dist-packages, /usr/lib/python3.*/site-packages, lib64 alike); newest
//      Python first. No Python process is started.
//   4. the bare sonames, for the loader's own search (RUNPATH, ld.so.cache, /usr/lib ...)
// Nothing here throws: a library not found is reported with every folder looked in.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tcjit::cuda {

enum class VendorLibrary { cublaslt, cudnn, cudart, nvrtc };

// "cuBLASLt", "cuDNN", "CUDA runtime", "NVRTC".
const char *vendor_library_name(VendorLibrary library);
// The sonames tried, newest first: {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"}.
std::vector<std::string> vendor_library_sonames(VendorLibrary library);

// The environment the search reads (a parameter, so tests can give their own).
struct VendorLibraryEnvironment {
  std::optional<std::string> ld_library_path, virtual_env, conda_prefix, home;
  std::vector<std::string> toolkit_roots; // jit::toolkit_roots of the process's environment
  // The system's Python installations: <prefix>/lib/python3.*/..., <prefix>/lib64/python3.*/...
  // and <prefix>/lib/python3/dist-packages.
  std::vector<std::string> system_python_prefixes = {"/usr/local", "/usr"};
  bool loader_search = true; // the bare sonames last (tests turn it off: the machine's own)
  static VendorLibraryEnvironment from_process();
};

struct VendorCandidate {
  std::string path;   // a file, or a bare soname for the loader's search
  std::string source; // "LD_LIBRARY_PATH", "CUDA toolkit", "Python wheel ($VIRTUAL_ENV)", ...
};

struct VendorLibrarySearch {
  VendorLibrary library = VendorLibrary::cublaslt;
  std::vector<std::string> folders;        // every folder looked in, in order
  std::vector<VendorCandidate> candidates; // the files found there, in order, then the sonames
};

VendorLibrarySearch search_vendor_library(VendorLibrary library,
                                          const VendorLibraryEnvironment &environment);

// The candidate paths of the process's environment, in order: what the GPU bench's anchors open.
std::vector<std::string> default_vendor_library_candidates(VendorLibrary library);
std::vector<std::string> default_cublaslt_candidates();
std::vector<std::string> default_cudnn_candidates();

struct LoadedVendorLibrary {
  VendorLibrary library = VendorLibrary::cublaslt;
  void *handle = nullptr; // open for the rest of the process; null when none opened
  std::string path;       // the file opened (for a bare soname: where the loader found it)
  std::string source;     // the candidate's source
  std::string version;    // "13.1.0" from the library's own version call; "" when it has none
  // Every folder looked in, then each candidate that did not open with the loader's reason.
  std::vector<std::string> tried;
  std::string error; // when not loaded: what was looked for, where, and how to make it found
  bool loaded() const { return handle != nullptr; }
};

// Opens the first candidate that dlopens and asks it its version (cublasLtGetVersion,
// cudnnGetVersion, cudaRuntimeGetVersion, nvrtcVersion).
LoadedVendorLibrary load_vendor_library(const VendorLibrarySearch &search);
// load_vendor_library(search_vendor_library(library, VendorLibraryEnvironment::from_process())).
LoadedVendorLibrary load_vendor_library(VendorLibrary library);

// The version number a library reports, as text: cuBLASLt and cuDNN 9 count
// major * 10000 + minor * 100 + patch (130100: "13.1.0"), cuDNN 8 major * 1000 + minor * 100 +
// patch (8906: "8.9.6"); the CUDA runtime 1000 * major + 10 * minor (13000: "13.0").
std::string vendor_version_text(VendorLibrary library, long long number);

} // namespace tcjit::cuda
