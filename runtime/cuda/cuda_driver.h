// libcuda, opened with dlopen("libcuda.so.1") through one list of symbols (an X-macro): never
// linked, so every tcjit binary starts without a driver, and each entry point of the CUDA device
// fails with a clear message instead. A missing required symbol is reported by name.
#pragma once

#include <cuda.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/device/device.h"

namespace tcjit::cuda {

// X(name): a symbol every tcjit CUDA device needs. Names are the exact exported symbols (the
// _v2 ones cuda.h maps the plain names to), typed from cuda.h by decltype. One exception:
// cuEventElapsedTime is the plain symbol every CUDA 12 driver exports; cuda.h 13 maps the name to
// cuEventElapsedTime_v2 (drivers 12.8 and newer, same signature), so the member is typed (and
// named) by that, and resolved from the plain symbol.
#define TCJIT_CUDA_REQUIRED_SYMBOLS(X)                                                             \
  X(cuInit)                                                                                        \
  X(cuDriverGetVersion)                                                                            \
  X(cuDeviceGetCount)                                                                              \
  X(cuDeviceGet)                                                                                   \
  X(cuDeviceGetAttribute)                                                                          \
  X(cuDeviceGetName)                                                                               \
  X(cuDeviceTotalMem_v2)                                                                           \
  X(cuDevicePrimaryCtxRetain)                                                                      \
  X(cuDevicePrimaryCtxRelease_v2)                                                                  \
  X(cuCtxSetCurrent)                                                                               \
  X(cuCtxSynchronize)                                                                              \
  X(cuStreamCreate)                                                                                \
  X(cuStreamDestroy_v2)                                                                            \
  X(cuStreamSynchronize)                                                                           \
  X(cuMemAlloc_v2)                                                                                 \
  X(cuMemFree_v2)                                                                                  \
  X(cuMemcpyHtoD_v2)                                                                               \
  X(cuMemcpyDtoH_v2)                                                                               \
  X(cuMemsetD8_v2)                                                                                 \
  X(cuModuleLoadData)                                                                              \
  X(cuModuleLoadDataEx)                                                                            \
  X(cuModuleUnload)                                                                                \
  X(cuModuleGetFunction)                                                                           \
  X(cuFuncGetAttribute)                                                                            \
  X(cuFuncSetAttribute)                                                                            \
  X(cuLaunchKernel)                                                                                \
  X(cuEventCreate)                                                                                 \
  X(cuEventRecord)                                                                                 \
  X(cuEventSynchronize)                                                                            \
  X(cuEventElapsedTime)                                                                            \
  X(cuEventDestroy_v2)

// X(name): used when present (messages fall back to the numeric CUresult without them).
#define TCJIT_CUDA_OPTIONAL_SYMBOLS(X)                                                             \
  X(cuGetErrorName)                                                                                \
  X(cuGetErrorString)

struct CudaDriver {
  bool loaded = false;    // the library opened, every required symbol resolved and cuInit succeeded
  std::string path;       // the library that was opened
  std::string error;      // when !loaded: what is missing and how to go on (use --device emu)
  int driver_version = 0; // cuDriverGetVersion: 1000 * major + 10 * minor
  int device_count = 0;
#define TCJIT_CUDA_MEMBER(name) decltype(&::name) name = nullptr;
  TCJIT_CUDA_REQUIRED_SYMBOLS(TCJIT_CUDA_MEMBER)
  TCJIT_CUDA_OPTIONAL_SYMBOLS(TCJIT_CUDA_MEMBER)
#undef TCJIT_CUDA_MEMBER
};

// The symbol names, in list order (for documentation and tests).
std::vector<std::string> cuda_required_symbol_names();
std::vector<std::string> cuda_optional_symbol_names();

// Opens the first of `candidates` ("libcuda.so.1" by default), resolves the symbols, calls
// cuInit(0) and counts devices. Never throws; the result says what failed.
CudaDriver load_cuda_driver(const std::vector<std::string> &candidates);

// The process-wide driver (libcuda.so.1), loaded once; check .loaded.
std::shared_ptr<const CudaDriver> process_cuda_driver();

// Throws device::DeviceError(Unsupported, driver.error) when the driver is not loaded.
void require_loaded(const CudaDriver &driver);

// "CUDA_ERROR_OUT_OF_MEMORY: out of memory" (or the number when the driver cannot name it).
std::string describe_cuda_result(const CudaDriver &driver, CUresult result);

// The device::ErrorKind a CUresult belongs to.
device::ErrorKind error_kind_of(CUresult result);

// Throws device::DeviceError when result != CUDA_SUCCESS: "<call> failed (<described result>)"
// followed by `context` (what was being done, and with what).
void check_cuda(const CudaDriver &driver, CUresult result, std::string_view call,
                std::string_view context);

// "13.0" for 13000.
std::string cuda_version_text(int version);

} // namespace tcjit::cuda
