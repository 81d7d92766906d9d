// NVRTC (the CUDA toolkit's in-process CUDA C++ -> PTX compiler), opened with dlopen like
// nvJitLink: nothing links it, and where it is absent the NVRTC backend says so. The source backend
// (compiler/cuda_source/) emits CUDA C++ that includes no header; the toolkit's include folder is
// still passed (-I) when found, for user code that wants one.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tcjit::jit {

using NvrtcProgram = struct _nvrtcProgram *;
using NvrtcResult = int; // nvrtcResult: 0 is NVRTC_SUCCESS

// X(name, return type, parameter list): every symbol is required (nvrtc.h, CUDA >= 12).
#define TCJIT_NVRTC_SYMBOLS(X)                                                                     \
  X(nvrtcVersion, NvrtcResult, (int *major, int *minor))                                           \
  X(nvrtcGetErrorString, const char *, (NvrtcResult result))                                       \
  X(nvrtcCreateProgram, NvrtcResult,                                                               \
    (NvrtcProgram * prog, const char *src, const char *name, int num_headers,                      \
     const char *const *headers, const char *const *include_names))                                \
  X(nvrtcDestroyProgram, NvrtcResult, (NvrtcProgram * prog))                                       \
  X(nvrtcCompileProgram, NvrtcResult,                                                              \
    (NvrtcProgram prog, int num_options, const char *const *options))                              \
  X(nvrtcGetPTXSize, NvrtcResult, (NvrtcProgram prog, size_t * size))                              \
  X(nvrtcGetPTX, NvrtcResult, (NvrtcProgram prog, char *ptx))                                      \
  X(nvrtcGetProgramLogSize, NvrtcResult, (NvrtcProgram prog, size_t * size))                       \
  X(nvrtcGetProgramLog, NvrtcResult, (NvrtcProgram prog, char *log))

struct NvrtcLibrary {
  bool loaded = false;
  std::string path;  // the file that was opened
  std::string error; // when !loaded: what is missing (every path tried) and how to fix it
  int major = 0, minor = 0;
#define TCJIT_NVRTC_MEMBER(name, ret, params) ret(*name) params = nullptr;
  TCJIT_NVRTC_SYMBOLS(TCJIT_NVRTC_MEMBER)
#undef TCJIT_NVRTC_MEMBER
};

// The process-wide NVRTC, loaded on first use from the toolkit cuda_toolkit.h finds (then the
// loader's path); check .loaded before use.
const NvrtcLibrary &nvrtc_library();

struct CudaCompileResult {
  bool ok = false;
  std::string ptx;
  std::string log;     // NVRTC's log: warnings, or the errors when !ok
  std::string options; // the options passed, as text
  double milliseconds = 0;
};

// Compiles `source` (named `source_name` in messages) for sm_<sm_arch>, -default-device, -O3
// (NVRTC's default), with `extra_options`. Throws std::runtime_error when NVRTC cannot be loaded;
// a source that does not compile is returned with ok = false and the log.
CudaCompileResult compile_cuda_source(std::string_view source, std::string_view source_name,
                                      int sm_arch,
                                      const std::vector<std::string> &extra_options = {});

} // namespace tcjit::jit
