#include "runtime/cuda/cuda_driver.h"

#include "support/shared_library.h"

namespace tcjit::cuda {

using device::DeviceError;
using device::ErrorKind;

std::vector<std::string> cuda_required_symbol_names() {
#define TCJIT_CUDA_NAME(name) #name,
  return {TCJIT_CUDA_REQUIRED_SYMBOLS(TCJIT_CUDA_NAME)};
#undef TCJIT_CUDA_NAME
}

std::vector<std::string> cuda_optional_symbol_names() {
#define TCJIT_CUDA_NAME(name) #name,
  return {TCJIT_CUDA_OPTIONAL_SYMBOLS(TCJIT_CUDA_NAME)};
#undef TCJIT_CUDA_NAME
}

std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

CudaDriver load_cuda_driver(const std::vector<std::string> &candidates) {
  CudaDriver driver;
  support::OpenedLibrary opened = support::open_first_library(candidates);
  if (!opened.handle) {
    std::string names;
    for (const std::string &candidate : candidates) {
      names += (names.empty() ? "" : ", ") + candidate;
    }
    driver.error = "no CUDA driver (" + names + " not found); use --device emu";
    return driver;
  }
  driver.path = opened.path;
  std::string missing;
#define TCJIT_CUDA_RESOLVE_REQUIRED(name)                                                          \
  driver.name =                                                                                    \
      reinterpret_cast<decltype(&::name)>(support::find_library_symbol(opened.handle, #name));     \
  if (!driver.name) {                                                                              \
    missing += std::string(missing.empty() ? "" : ", ") + #name;                                   \
  }
#define TCJIT_CUDA_RESOLVE_OPTIONAL(name)                                                          \
  driver.name =                                                                                    \
      reinterpret_cast<decltype(&::name)>(support::find_library_symbol(opened.handle, #name));
  TCJIT_CUDA_REQUIRED_SYMBOLS(TCJIT_CUDA_RESOLVE_REQUIRED)
  TCJIT_CUDA_OPTIONAL_SYMBOLS(TCJIT_CUDA_RESOLVE_OPTIONAL)
#undef TCJIT_CUDA_RESOLVE_REQUIRED
#undef TCJIT_CUDA_RESOLVE_OPTIONAL
  if (!missing.empty()) {
    driver.error = "the CUDA driver " + opened.path + " does not export " + missing +
                   " (the driver is too old or not libcuda; tcjit needs a CUDA 12 or newer "
                   "driver): update the NVIDIA driver, or use --device emu";
    return driver;
  }
  if (CUresult result = driver.cuInit(0); result != CUDA_SUCCESS) {
    driver.error = "the CUDA driver " + opened.path +
                   " failed to initialise (cuInit: " + describe_cuda_result(driver, result) +
                   "); use --device emu";
    return driver;
  }
  if (CUresult result = driver.cuDriverGetVersion(&driver.driver_version); result != CUDA_SUCCESS) {
    driver.error = "cuDriverGetVersion failed (" + describe_cuda_result(driver, result) +
                   "); use --device emu";
    return driver;
  }
  if (CUresult result = driver.cuDeviceGetCount(&driver.device_count); result != CUDA_SUCCESS) {
    driver.error =
        "cuDeviceGetCount failed (" + describe_cuda_result(driver, result) + "); use --device emu";
    return driver;
  }
  if (driver.device_count == 0) {
    driver.error = "no CUDA device (the CUDA " + cuda_version_text(driver.driver_version) +
                   " driver reports 0 devices); use --device emu";
    return driver;
  }
  driver.loaded = true;
  return driver;
}

std::shared_ptr<const CudaDriver> process_cuda_driver() {
  static const std::shared_ptr<const CudaDriver> driver =
      std::make_shared<const CudaDriver>(load_cuda_driver({"libcuda.so.1"}));
  return driver;
}

void require_loaded(const CudaDriver &driver) {
  if (!driver.loaded) {
    throw DeviceError(ErrorKind::Unsupported, driver.error);
  }
}

std::string describe_cuda_result(const CudaDriver &driver, CUresult result) {
  const char *name = nullptr;
  const char *text = nullptr;
  if (driver.cuGetErrorName) {
    driver.cuGetErrorName(result, &name);
  }
  if (driver.cuGetErrorString) {
    driver.cuGetErrorString(result, &text);
  }
  std::string described = name ? name : "CUresult " + std::to_string(static_cast<int>(result));
  if (text) {
    described += std::string(": ") + text;
  }
  return described;
}

ErrorKind error_kind_of(CUresult result) {
  if (result == CUDA_ERROR_OUT_OF_MEMORY) {
    return ErrorKind::OutOfMemory;
  }
  if (result == CUDA_ERROR_INVALID_PTX || result == CUDA_ERROR_UNSUPPORTED_PTX_VERSION ||
      result == CUDA_ERROR_INVALID_IMAGE || result == CUDA_ERROR_NO_BINARY_FOR_GPU ||
      result == CUDA_ERROR_JIT_COMPILER_NOT_FOUND ||
      result == CUDA_ERROR_SHARED_OBJECT_INIT_FAILED) {
    return ErrorKind::ModuleLoad;
  }
  if (result == CUDA_ERROR_NOT_FOUND || result == CUDA_ERROR_INVALID_HANDLE) {
    return ErrorKind::NotFound;
  }
  if (result == CUDA_ERROR_INVALID_VALUE) {
    return ErrorKind::InvalidArgument;
  }
  if (result == CUDA_ERROR_NOT_SUPPORTED || result == CUDA_ERROR_NO_DEVICE ||
      result == CUDA_ERROR_NOT_INITIALIZED || result == CUDA_ERROR_DEINITIALIZED) {
    return ErrorKind::Unsupported;
  }
  return ErrorKind::LaunchFailed;
}

void check_cuda(const CudaDriver &driver, CUresult result, std::string_view call,
                std::string_view context) {
  if (result == CUDA_SUCCESS) {
    return;
  }
  std::string message =
      std::string(call) + " failed (" + describe_cuda_result(driver, result) + ")";
  if (!context.empty()) {
    message += ": " + std::string(context);
  }
  throw DeviceError(error_kind_of(result), message);
}

} // namespace tcjit::cuda
