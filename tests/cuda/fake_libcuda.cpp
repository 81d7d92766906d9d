// A stand-in for libcuda.so.1 so the CUDA device's code paths run on machines without a GPU:
// host memory for device memory, cubins checked for the ELF/EM_CUDA header, launches recorded
// (and refused, as the real driver does, when the dynamic shared memory exceeds what
// cuFuncSetAttribute allowed). Signatures come from cuda.h, so they match the real driver's.
// TCJIT_FAKE_CUDA_DEVICES sets the device count (default 1), TCJIT_FAKE_CUDA_DRIVER_VERSION the
// driver version (default 13000; below it cubins are refused as from a too new toolkit).
// Every driver call is logged (fake_cuda_call_log: names, and the stream of stream-ordered calls).
// Events read a fake GPU clock that each launch advances by fake_cuda_set_launch_ms (0.125 ms).
#include <cuda.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct FakeFunction {
  std::string name;
  int max_dynamic_shared = 48 * 1024;
};
struct FakeModule {
  std::string image; // cubin bytes or PTX text
  bool from_ptx = false;
  std::vector<std::unique_ptr<FakeFunction>> functions; // freed with the module, as in CUDA
};
struct LastLaunch {
  unsigned grid[3] = {}, block[3] = {}, shared = 0;
  void *stream = nullptr;
  std::vector<char> params;
  int count = 0;
  bool last_module_from_ptx = false;
};

LastLaunch last_launch;
int live_allocations = 0;
int context_token = 0;
float fake_clock_ms = 0;
float launch_ms = 0.125f;
int live_events = 0;
struct FakeEvent {
  bool recorded = false;
  float at_ms = 0;
};
int stream_token = 0;
size_t alloc_limit = size_t{1} << 40; // larger allocations fail with CUDA_ERROR_OUT_OF_MEMORY

// The driver calls since the last fake_cuda_reset_call_log(), one per line: the function's name,
// and for a call that takes a stream " stream=" and the stream's address (%p).
std::mutex call_log_mutex;
std::string call_log;
std::string call_log_copy; // what fake_cuda_call_log() returned last

void record(const std::string &call) {
  std::lock_guard lock(call_log_mutex);
  call_log += call;
  call_log += '\n';
}
std::string name_on_stream(const char *name, const void *stream) {
  char text[96];
  std::snprintf(text, sizeof(text), "%s stream=%p", name, stream);
  return text;
}

bool is_cubin(const void *image) {
  const auto *bytes = static_cast<const unsigned char *>(image);
  uint16_t machine = 0;
  std::memcpy(&machine, bytes + 18, sizeof(machine));
  return std::memcmp(bytes,
                     "\x7f"
                     "ELF",
                     4) == 0 &&
         machine == 190;
}

} // namespace

extern "C" {

// Test control: the last launch, and allocations not yet freed.
int fake_cuda_launch_count() {
  return last_launch.count;
}
void *fake_cuda_last_launch_stream() {
  return last_launch.stream;
}
unsigned fake_cuda_last_launch_shared() {
  return last_launch.shared;
}
unsigned fake_cuda_last_launch_grid_x() {
  return last_launch.grid[0];
}
unsigned fake_cuda_last_launch_block_x() {
  return last_launch.block[0];
}
size_t fake_cuda_last_launch_params(void *out) {
  if (out) {
    std::memcpy(out, last_launch.params.data(), last_launch.params.size());
  }
  return last_launch.params.size();
}
int fake_cuda_last_module_from_ptx() {
  return last_launch.last_module_from_ptx ? 1 : 0;
}
int fake_cuda_live_allocations() {
  return live_allocations;
}
// The call log (see `record`): reset it, and read it (valid until the next read).
void fake_cuda_reset_call_log() {
  std::lock_guard lock(call_log_mutex);
  call_log.clear();
}
const char *fake_cuda_call_log() {
  std::lock_guard lock(call_log_mutex);
  call_log_copy = call_log;
  return call_log_copy.c_str();
}
// Allocations above `bytes` fail (CUDA_ERROR_OUT_OF_MEMORY); 0 restores the default (1 TiB).
void fake_cuda_set_alloc_limit(size_t bytes) {
  alloc_limit = bytes == 0 ? size_t{1} << 40 : bytes;
}
void fake_cuda_set_launch_ms(float ms) {
  launch_ms = ms;
}
int fake_cuda_live_events() {
  return live_events;
}

CUresult cuInit(unsigned) {
  record("cuInit");
  return CUDA_SUCCESS;
}
int fake_driver_version() {
  const char *env = std::getenv("TCJIT_FAKE_CUDA_DRIVER_VERSION");
  return env ? std::atoi(env) : 13000;
}
CUresult cuDriverGetVersion(int *version) {
  record("cuDriverGetVersion");
  *version = fake_driver_version();
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetCount(int *count) {
  record("cuDeviceGetCount");
  const char *env = std::getenv("TCJIT_FAKE_CUDA_DEVICES");
  *count = env ? std::atoi(env) : 1;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  record("cuDeviceGet");
  *device = ordinal;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attribute, CUdevice) {
  record("cuDeviceGetAttribute");
  switch (attribute) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = 9; break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = 0; break;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = 132; break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *value = 232448; break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *value = 49152; break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *value = 233472; break;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = 1024; break;
  case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *value = 32; break;
  case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *value = 1980000; break;
  case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *value = 2619000; break;
  case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *value = 5120; break;
  case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *value = 50 * 1024 * 1024; break;
  default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetName(char *name, int length, CUdevice) {
  record("cuDeviceGetName");
  std::strncpy(name, "Fake H100", static_cast<size_t>(length));
  return CUDA_SUCCESS;
}
CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice) {
  record("cuDeviceTotalMem_v2");
  *bytes = size_t{80} << 30;
  return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice) {
  record("cuDevicePrimaryCtxRetain");
  *context = reinterpret_cast<CUcontext>(&context_token);
  return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice) {
  record("cuDevicePrimaryCtxRelease_v2");
  return CUDA_SUCCESS;
}
CUresult cuCtxSetCurrent(CUcontext) {
  record("cuCtxSetCurrent");
  return CUDA_SUCCESS;
}
CUresult cuCtxSynchronize() {
  record("cuCtxSynchronize");
  return CUDA_SUCCESS;
}
CUresult cuStreamCreate(CUstream *stream, unsigned) {
  record("cuStreamCreate");
  *stream = reinterpret_cast<CUstream>(&stream_token);
  return CUDA_SUCCESS;
}
CUresult cuStreamDestroy_v2(CUstream) {
  record("cuStreamDestroy_v2");
  return CUDA_SUCCESS;
}
CUresult cuStreamSynchronize(CUstream stream) {
  record(name_on_stream("cuStreamSynchronize", stream));
  return CUDA_SUCCESS;
}
CUresult cuMemAlloc_v2(CUdeviceptr *ptr, size_t bytes) {
  record("cuMemAlloc_v2");
  if (bytes > alloc_limit) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  *ptr = reinterpret_cast<CUdeviceptr>(std::malloc(bytes));
  ++live_allocations;
  return CUDA_SUCCESS;
}
CUresult cuMemFree_v2(CUdeviceptr ptr) {
  record("cuMemFree_v2");
  std::free(reinterpret_cast<void *>(ptr));
  --live_allocations;
  return CUDA_SUCCESS;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes) {
  record("cuMemcpyHtoD_v2");
  std::memcpy(reinterpret_cast<void *>(dst), src, bytes);
  return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes) {
  record("cuMemcpyDtoH_v2");
  std::memcpy(dst, reinterpret_cast<const void *>(src), bytes);
  return CUDA_SUCCESS;
}
CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char value, size_t bytes) {
  record("cuMemsetD8_v2");
  std::memset(reinterpret_cast<void *>(dst), value, bytes);
  return CUDA_SUCCESS;
}
CUresult cuModuleLoadData(CUmodule *module, const void *image) {
  record("cuModuleLoadData");
  if (!is_cubin(image)) {
    return CUDA_ERROR_INVALID_IMAGE;
  }
  if (fake_driver_version() < 13000) {
    return CUDA_ERROR_UNSUPPORTED_PTX_VERSION; // a CUDA 13 toolkit's cubin on an older driver
  }
  // An ELF64 image ends with its section header table: e_shoff + e_shnum * e_shentsize.
  const auto *bytes = static_cast<const char *>(image);
  uint64_t section_headers = 0;
  uint16_t entry_size = 0, entry_count = 0;
  std::memcpy(&section_headers, bytes + 40, sizeof(section_headers));
  std::memcpy(&entry_size, bytes + 58, sizeof(entry_size));
  std::memcpy(&entry_count, bytes + 60, sizeof(entry_count));
  const size_t size = section_headers + size_t{entry_size} * entry_count;
  auto *fake = new FakeModule{std::string(bytes, size), false, {}};
  *module = reinterpret_cast<CUmodule>(fake);
  last_launch.last_module_from_ptx = false;
  return CUDA_SUCCESS;
}
CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned count,
                            CUjit_option *options, void **values) {
  record("cuModuleLoadDataEx");
  const char *text = static_cast<const char *>(image);
  if (fake_driver_version() < 13000 && std::strstr(text, ".version 9.0") != nullptr) {
    return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
  }
  if (std::strstr(text, ".entry") == nullptr) {
    for (unsigned i = 0; i < count; ++i) {
      if (options[i] == CU_JIT_ERROR_LOG_BUFFER) {
        std::strcpy(static_cast<char *>(values[i]), "ptxas fatal   : fake: no .entry in the PTX");
      }
    }
    return CUDA_ERROR_INVALID_PTX;
  }
  *module = reinterpret_cast<CUmodule>(new FakeModule{text, true, {}});
  last_launch.last_module_from_ptx = true;
  return CUDA_SUCCESS;
}
CUresult cuModuleUnload(CUmodule module) {
  record("cuModuleUnload");
  delete reinterpret_cast<FakeModule *>(module);
  return CUDA_SUCCESS;
}
CUresult cuModuleGetFunction(CUfunction *function, CUmodule module, const char *name) {
  record("cuModuleGetFunction");
  FakeModule &fake = *reinterpret_cast<FakeModule *>(module);
  const std::string wanted =
      fake.from_ptx ? std::string(".entry ") + name : std::string(".text.") + name;
  if (fake.image.find(wanted) == std::string::npos) {
    return CUDA_ERROR_NOT_FOUND;
  }
  fake.functions.push_back(std::make_unique<FakeFunction>(FakeFunction{name}));
  *function = reinterpret_cast<CUfunction>(fake.functions.back().get());
  return CUDA_SUCCESS;
}
CUresult cuFuncGetAttribute(int *value, CUfunction_attribute attribute, CUfunction function) {
  record("cuFuncGetAttribute");
  const FakeFunction &fake = *reinterpret_cast<FakeFunction *>(function);
  switch (attribute) {
  case CU_FUNC_ATTRIBUTE_NUM_REGS: *value = 40; break;
  case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *value = 0; break;
  case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *value = 1024; break;
  case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = 1024; break;
  case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *value = fake.max_dynamic_shared; break;
  default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}
CUresult cuFuncSetAttribute(CUfunction function, CUfunction_attribute attribute, int value) {
  record("cuFuncSetAttribute");
  if (attribute != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  reinterpret_cast<FakeFunction *>(function)->max_dynamic_shared = value;
  return CUDA_SUCCESS;
}
CUresult cuLaunchKernel(CUfunction function, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned shared, CUstream stream,
                        void **kernel_params, void **extra) {
  record(name_on_stream("cuLaunchKernel", stream));
  const FakeFunction &fake = *reinterpret_cast<FakeFunction *>(function);
  if (static_cast<int>(shared) > fake.max_dynamic_shared) {
    return CUDA_ERROR_INVALID_VALUE; // what the real driver answers without the opt-in
  }
  if (kernel_params != nullptr) {
    return CUDA_ERROR_INVALID_VALUE; // tcjit passes the parameter buffer through `extra`
  }
  if (gx == 7777) {
    return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES; // lets tests see a driver-side launch failure
  }
  fake_clock_ms += launch_ms;
  last_launch = LastLaunch{{gx, gy, gz},
                           {bx, by, bz},
                           shared,
                           stream,
                           {},
                           last_launch.count + 1,
                           last_launch.last_module_from_ptx};
  if (extra) {
    const void *buffer = nullptr;
    size_t size = 0;
    for (void **item = extra; *item != CU_LAUNCH_PARAM_END; item += 2) {
      if (item[0] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
        buffer = item[1];
      } else if (item[0] == CU_LAUNCH_PARAM_BUFFER_SIZE) {
        size = *static_cast<size_t *>(item[1]);
      }
    }
    last_launch.params.assign(static_cast<const char *>(buffer),
                              static_cast<const char *>(buffer) + size);
  }
  return CUDA_SUCCESS;
}
CUresult cuEventCreate(CUevent *event, unsigned) {
  record("cuEventCreate");
  *event = reinterpret_cast<CUevent>(new FakeEvent);
  ++live_events;
  return CUDA_SUCCESS;
}
CUresult cuEventRecord(CUevent event, CUstream stream) {
  record(name_on_stream("cuEventRecord", stream));
  *reinterpret_cast<FakeEvent *>(event) = FakeEvent{true, fake_clock_ms};
  return CUDA_SUCCESS;
}
CUresult cuEventSynchronize(CUevent event) {
  record("cuEventSynchronize");
  return reinterpret_cast<FakeEvent *>(event)->recorded ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
// The plain symbol (cuda.h 13 maps the name to cuEventElapsedTime_v2).
#undef cuEventElapsedTime
CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent stop) {
  record("cuEventElapsedTime");
  const auto *a = reinterpret_cast<FakeEvent *>(start);
  const auto *b = reinterpret_cast<FakeEvent *>(stop);
  if (!a->recorded || !b->recorded) {
    return CUDA_ERROR_INVALID_HANDLE;
  }
  *ms = b->at_ms - a->at_ms;
  return CUDA_SUCCESS;
}
CUresult cuEventDestroy_v2(CUevent event) {
  record("cuEventDestroy_v2");
  delete reinterpret_cast<FakeEvent *>(event);
  --live_events;
  return CUDA_SUCCESS;
}
CUresult cuGetErrorName(CUresult result, const char **name) {
  record("cuGetErrorName");
  switch (result) {
  case CUDA_ERROR_INVALID_VALUE: *name = "CUDA_ERROR_INVALID_VALUE"; break;
  case CUDA_ERROR_INVALID_PTX: *name = "CUDA_ERROR_INVALID_PTX"; break;
  case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: *name = "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"; break;
  case CUDA_ERROR_OUT_OF_MEMORY: *name = "CUDA_ERROR_OUT_OF_MEMORY"; break;
  case CUDA_ERROR_UNSUPPORTED_PTX_VERSION: *name = "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"; break;
  default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}
CUresult cuGetErrorString(CUresult result, const char **text) {
  record("cuGetErrorString");
  switch (result) {
  case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: *text = "too many resources requested for launch"; break;
  case CUDA_ERROR_OUT_OF_MEMORY: *text = "out of memory"; break;
  default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

} // extern "C"
