// nvJitLink (the CUDA toolkit's in-process PTX → cubin compiler), opened with dlopen through one
// list of symbols. Nothing links it: where it is absent, the JIT falls back to the driver.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tcjit::jit {

// The nvJitLink ABI subset tcjit uses (nvJitLink.h; stable across CUDA 12 and 13).
using NvJitLinkHandle = struct nvJitLink *;
using NvJitLinkResult = int;                 // nvJitLinkResult: 0 is NVJITLINK_SUCCESS
inline constexpr int kNvJitLinkInputPtx = 2; // NVJITLINK_INPUT_PTX

// X(name, return type, parameter list): every symbol is required.
#define TCJIT_NVJITLINK_SYMBOLS(X)                                                                 \
  X(nvJitLinkVersion, NvJitLinkResult, (unsigned *major, unsigned *minor))                         \
  X(nvJitLinkCreate, NvJitLinkResult,                                                              \
    (NvJitLinkHandle * handle, uint32_t option_count, const char **options))                       \
  X(nvJitLinkDestroy, NvJitLinkResult, (NvJitLinkHandle * handle))                                 \
  X(nvJitLinkAddData, NvJitLinkResult,                                                             \
    (NvJitLinkHandle handle, int input_type, const void *data, size_t size, const char *name))     \
  X(nvJitLinkComplete, NvJitLinkResult, (NvJitLinkHandle handle))                                  \
  X(nvJitLinkGetLinkedCubinSize, NvJitLinkResult, (NvJitLinkHandle handle, size_t * size))         \
  X(nvJitLinkGetLinkedCubin, NvJitLinkResult, (NvJitLinkHandle handle, void *cubin))               \
  X(nvJitLinkGetErrorLogSize, NvJitLinkResult, (NvJitLinkHandle handle, size_t * size))            \
  X(nvJitLinkGetErrorLog, NvJitLinkResult, (NvJitLinkHandle handle, char *log))                    \
  X(nvJitLinkGetInfoLogSize, NvJitLinkResult, (NvJitLinkHandle handle, size_t * size))             \
  X(nvJitLinkGetInfoLog, NvJitLinkResult, (NvJitLinkHandle handle, char *log))

struct NvJitLinkLibrary {
  bool loaded = false;
  std::string path;  // the file that was opened
  std::string error; // when !loaded: which library or symbol is missing, and how to fix it
  unsigned major = 0, minor = 0;
#define TCJIT_NVJITLINK_MEMBER(name, ret, params) ret(*name) params = nullptr;
  TCJIT_NVJITLINK_SYMBOLS(TCJIT_NVJITLINK_MEMBER)
#undef TCJIT_NVJITLINK_MEMBER
};

// Where nvJitLink is looked for: libnvJitLink.so.13, .so.12, .so on the loader path, then the
// same names in $CUDA_HOME/lib64, $CUDAToolkit_ROOT/lib64 and /usr/local/cuda/lib64.
// $TCJIT_NVJITLINK_LIBRARY, when set, is the only candidate.
std::vector<std::string> nvjitlink_library_candidates();

// Opens the first candidate that loads and resolves every symbol (one attempt, not cached).
NvJitLinkLibrary load_nvjitlink_library(const std::vector<std::string> &candidates);

// The process-wide nvJitLink, loaded on first use; check .loaded before use.
const NvJitLinkLibrary &nvjitlink_library();

// "NVJITLINK_ERROR_PTX_COMPILE" for 4, etc.
const char *nvjitlink_result_name(NvJitLinkResult result);

} // namespace tcjit::jit
