#include "runtime/cuda/cuda_device.h"

#include <cstdio>
#include <map>
#include <mutex>
#include <set>

#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/ptx_entry_params.h"

namespace tcjit::cuda {

using device::DeviceError;
using device::ErrorKind;

namespace {

constexpr uint32_t kDefaultSharedLimitBytes = 48 * 1024; // above: opt in per function

struct ModuleEntry {
  CUmodule module = nullptr;
  std::string source_name;
  std::vector<device::KernelInfo> entries; // from the PTX text
  jit::CompiledPtx compilation;
};

struct FunctionEntry {
  uint64_t module_id = 0;
  CUfunction function = nullptr;
  device::KernelInfo info;
  int max_threads_per_block = 0;
  uint32_t dynamic_shared_limit = kDefaultSharedLimitBytes; // what the function allows now
};

std::string dim_text(const device::Dim3 &d) {
  return std::to_string(d.x) + "x" + std::to_string(d.y) + "x" + std::to_string(d.z);
}

std::string driver_jit_log_text(const std::vector<char> &log) {
  std::string text(log.data());
  while (!text.empty() && text.back() == '\n') {
    text.pop_back();
  }
  return text;
}

} // namespace

struct CudaDevice::State {
  CudaDeviceOptions options;
  std::shared_ptr<const CudaDriver> driver;
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUstream own_stream = nullptr;
  CUstream stream = nullptr;
  device::DeviceInfo info;
  CudaDeviceProperties properties;
  jit::CompileService *compile_service = nullptr;

  mutable std::mutex mutex;
  uint64_t next_id = 1;
  std::set<CUdeviceptr> allocations;
  std::map<uint64_t, ModuleEntry> modules;
  std::map<uint64_t, FunctionEntry> functions;
  std::string last_launch; // for errors reported later by synchronize()

  const CudaDriver &d() const { return *driver; }
  void check(CUresult result, std::string_view call, std::string_view context_text) const {
    check_cuda(*driver, result, call, context_text);
  }
  void make_current() const {
    check(d().cuCtxSetCurrent(context), "cuCtxSetCurrent", "device " + info.name);
  }
  int attribute(CUdevice_attribute attribute, const char *what) const {
    int value = 0;
    check(d().cuDeviceGetAttribute(&value, attribute, device), "cuDeviceGetAttribute", what);
    return value;
  }
  void wait_for_stream() const {
    check(d().cuStreamSynchronize(stream), "cuStreamSynchronize",
          last_launch.empty() ? std::string("before a copy") : "after " + last_launch);
  }
  const FunctionEntry &function_entry(uint64_t id) const {
    auto found = functions.find(id);
    if (found == functions.end()) {
      throw DeviceError(ErrorKind::NotFound, "unknown function handle " + std::to_string(id) +
                                                 " (its module was unloaded, or it belongs to "
                                                 "another device)");
    }
    return found->second;
  }
  void check_allocation(CUdeviceptr ptr, const char *what) const {
    if (ptr == 0) {
      throw DeviceError(ErrorKind::InvalidArgument, std::string(what) + ": null device pointer");
    }
  }
};

namespace {

std::shared_ptr<const CudaDriver> driver_for(const CudaDeviceOptions &options) {
  if (options.driver_library_candidates.empty()) {
    return process_cuda_driver();
  }
  return std::make_shared<const CudaDriver>(load_cuda_driver(options.driver_library_candidates));
}

} // namespace

bool cuda_device_available() {
  return process_cuda_driver()->loaded;
}

std::string cuda_unavailable_reason() {
  return process_cuda_driver()->error;
}

CudaDevice::CudaDevice(CudaDeviceOptions options) : state_(std::make_unique<State>()) {
  State &s = *state_;
  s.options = std::move(options);
  s.driver = driver_for(s.options);
  require_loaded(*s.driver);
  const CudaDriver &d = *s.driver;
  if (s.options.ordinal < 0 || s.options.ordinal >= d.device_count) {
    throw DeviceError(ErrorKind::InvalidArgument,
                      "CUDA device " + std::to_string(s.options.ordinal) +
                          " does not exist: the driver reports " + std::to_string(d.device_count) +
                          " device(s), numbered from 0");
  }
  s.compile_service =
      s.options.compile_service ? s.options.compile_service : &jit::default_compile_service();
  const std::string which = "CUDA device " + std::to_string(s.options.ordinal);
  s.check(d.cuDeviceGet(&s.device, s.options.ordinal), "cuDeviceGet", which);
  char name[256] = {};
  s.check(d.cuDeviceGetName(name, sizeof(name) - 1, s.device), "cuDeviceGetName", which);
  s.info.name = name;

  CudaDeviceProperties &p = s.properties;
  p.ordinal = s.options.ordinal;
  p.driver_version = d.driver_version;
  p.compute_capability_major =
      s.attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "compute capability");
  p.compute_capability_minor =
      s.attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "compute capability");
  p.clock_khz = s.attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE, "clock rate");
  p.memory_clock_khz = s.attribute(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, "memory clock rate");
  p.memory_bus_width_bits =
      s.attribute(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, "memory bus width");
  p.l2_cache_bytes = s.attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2 cache size");
  p.max_shared_bytes_per_sm =
      s.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, "shared memory");
  p.max_shared_bytes_per_block_default =
      s.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, "shared memory");

  s.info.sm_arch = p.compute_capability_major * 10 + p.compute_capability_minor;
  s.info.sm_count = s.attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "SM count");
  s.info.max_shared_bytes_per_block = static_cast<uint32_t>(
      s.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "opt-in shared memory"));
  s.info.max_threads_per_block = static_cast<uint32_t>(
      s.attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "threads per block"));
  s.info.warp_size = static_cast<uint32_t>(s.attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE, "warp size"));
  size_t total_memory = 0;
  s.check(d.cuDeviceTotalMem_v2(&total_memory, s.device), "cuDeviceTotalMem", which);
  s.info.global_memory_bytes = total_memory;
  s.info.is_emulator = false;

  s.check(d.cuDevicePrimaryCtxRetain(&s.context, s.device), "cuDevicePrimaryCtxRetain", which);
  try {
    s.make_current();
    s.check(d.cuStreamCreate(&s.own_stream, CU_STREAM_DEFAULT), "cuStreamCreate", which);
  } catch (...) {
    d.cuDevicePrimaryCtxRelease_v2(s.device);
    throw;
  }
  s.stream = s.own_stream;
}

CudaDevice::~CudaDevice() {
  State &s = *state_;
  const CudaDriver &d = *s.driver;
  // Errors here cannot be reported (a destructor does not throw): release what can be released.
  if (d.cuCtxSetCurrent(s.context) == CUDA_SUCCESS) {
    d.cuCtxSynchronize(); // launches on every stream the device was given
    for (auto &[id, module] : s.modules) {
      d.cuModuleUnload(module.module);
    }
    for (CUdeviceptr ptr : s.allocations) {
      d.cuMemFree_v2(ptr);
    }
    d.cuStreamDestroy_v2(s.own_stream);
  }
  d.cuDevicePrimaryCtxRelease_v2(s.device);
}

device::DeviceInfo CudaDevice::info() const {
  return state_->info;
}

const CudaDeviceProperties &CudaDevice::properties() const {
  return state_->properties;
}

void CudaDevice::set_stream(void *cu_stream) {
  std::lock_guard lock(state_->mutex);
  state_->stream = cu_stream ? static_cast<CUstream>(cu_stream) : state_->own_stream;
}

void *CudaDevice::stream() const {
  std::lock_guard lock(state_->mutex);
  return state_->stream;
}

device::DevicePtr CudaDevice::allocate(size_t bytes) {
  State &s = *state_;
  std::lock_guard lock(s.mutex);
  s.make_current();
  CUdeviceptr ptr = 0;
  s.check(s.d().cuMemAlloc_v2(&ptr, bytes == 0 ? 1 : bytes), "cuMemAlloc",
          "allocating " + std::to_string(bytes) + " bytes on " + s.info.name);
  s.allocations.insert(ptr);
  return ptr;
}

void CudaDevice::free(device::DevicePtr ptr) {
  State &s = *state_;
  std::lock_guard lock(s.mutex);
  if (!s.allocations.contains(ptr)) {
    char address[32];
    std::snprintf(address, sizeof(address), "0x%llx", static_cast<unsigned long long>(ptr));
    throw DeviceError(ErrorKind::NotFound, std::string("free: ") + address +
                                               " is not an allocation of this device (freed "
                                               "twice, or never returned by allocate)");
  }
  s.make_current();
  s.check(s.d().cuMemFree_v2(ptr), "cuMemFree", "");
  s.allocations.erase(ptr);
}

void CudaDevice::copy_to_device(device::DevicePtr dst, const void *src, size_t bytes) {
  State &s = *state_;
  if (bytes == 0) {
    return;
  }
  std::lock_guard lock(s.mutex);
  s.check_allocation(dst, "copy_to_device");
  s.make_current();
  s.wait_for_stream();
  s.check(s.d().cuMemcpyHtoD_v2(dst, src, bytes), "cuMemcpyHtoD",
          "copying " + std::to_string(bytes) + " bytes to the device");
}

void CudaDevice::copy_to_host(void *dst, device::DevicePtr src, size_t bytes) {
  State &s = *state_;
  if (bytes == 0) {
    return;
  }
  std::lock_guard lock(s.mutex);
  s.check_allocation(src, "copy_to_host");
  s.make_current();
  s.wait_for_stream();
  s.check(s.d().cuMemcpyDtoH_v2(dst, src, bytes), "cuMemcpyDtoH",
          "copying " + std::to_string(bytes) + " bytes to the host");
}

void CudaDevice::memset(device::DevicePtr dst, uint8_t value, size_t bytes) {
  State &s = *state_;
  if (bytes == 0) {
    return;
  }
  std::lock_guard lock(s.mutex);
  s.check_allocation(dst, "memset");
  s.make_current();
  s.wait_for_stream();
  s.check(s.d().cuMemsetD8_v2(dst, value, bytes), "cuMemsetD8",
          "setting " + std::to_string(bytes) + " bytes");
}

namespace {

// Results with which a driver says it cannot use a binary (too new for it, or not for this GPU).
bool is_driver_refusing_the_binary(CUresult result) {
  return result == CUDA_ERROR_UNSUPPORTED_PTX_VERSION || result == CUDA_ERROR_INVALID_IMAGE ||
         result == CUDA_ERROR_NO_BINARY_FOR_GPU;
}

// Loads PTX text and lets the driver compile it; its error log goes to `log`.
CUresult load_with_driver_jit(const CudaDevice::State &s, std::string_view ptx, CUmodule *module,
                              std::string &log) {
  std::string text(ptx);
  std::vector<char> error_log(16384, '\0');
  CUjit_option keys[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                         CU_JIT_OPTIMIZATION_LEVEL, CU_JIT_GENERATE_LINE_INFO};
  void *values[] = {
      error_log.data(), reinterpret_cast<void *>(static_cast<uintptr_t>(error_log.size() - 1)),
      reinterpret_cast<void *>(static_cast<uintptr_t>(s.options.optimization_level == 0 ? 0 : 4)),
      reinterpret_cast<void *>(static_cast<uintptr_t>(s.options.line_info))};
  CUresult result = s.d().cuModuleLoadDataEx(module, text.c_str(), 4, keys, values);
  log = driver_jit_log_text(error_log);
  return result;
}

// load_module() and load_module_prebuilt(): the cubin is `prebuilt` when it is for this GPU's
// arch, else nvJitLink's (through the compile service) or the driver's JIT of the PTX.
device::ModuleHandle load_module_from(CudaDevice::State &s, std::string_view ptx,
                                      std::string_view source_name,
                                      const device::PrebuiltCubin *prebuilt) {
  const std::string where = source_name.empty() ? std::string("<ptx>") : std::string(source_name);
  ModuleEntry entry;
  entry.source_name = where;
  entry.entries = parse_ptx_entries(ptx, where);

  if (prebuilt && !prebuilt->image.empty() && prebuilt->sm_arch == s.info.sm_arch) {
    entry.compilation.origin = jit::CubinOrigin::NvJitLink;
    entry.compilation.cubin.assign(prebuilt->image.begin(), prebuilt->image.end());
    entry.compilation.options = "prebuilt cubin";
  } else {
    jit::CompileRequest request;
    request.ptx = std::string(ptx);
    request.source_name = where;
    request.options.sm_arch = s.info.sm_arch;
    request.options.optimization_level = s.options.optimization_level;
    request.options.line_info = s.options.line_info;
    entry.compilation = s.compile_service->compile(std::move(request)); // outside the lock
  }

  // A hint for load failures: PTX newer than the driver understands.
  std::string driver_hint;
  if (std::optional<PtxVersion> version = parse_ptx_version(ptx)) {
    int needed = minimum_driver_for_ptx_isa(*version);
    if (needed > s.d().driver_version) {
      driver_hint = "; PTX ISA " + std::to_string(version->major) + "." +
                    std::to_string(version->minor) + " needs a CUDA " + cuda_version_text(needed) +
                    " driver, this one is CUDA " + cuda_version_text(s.d().driver_version) +
                    ": update the NVIDIA driver or use --device emu";
    }
  }

  std::lock_guard lock(s.mutex);
  s.make_current();
  const std::string arch = "sm_" + std::to_string(s.info.sm_arch);
  std::string jit_log;
  switch (entry.compilation.origin) {
  case jit::CubinOrigin::Ptxas:
  case jit::CubinOrigin::NvJitLink: {
    CUresult result = s.d().cuModuleLoadData(&entry.module, entry.compilation.cubin.data());
    if (result != CUDA_SUCCESS && is_driver_refusing_the_binary(result)) {
      // A driver older than the nvJitLink that built the cubin: its own JIT may still read the
      // PTX (when the PTX ISA is old enough).
      CUresult retry = load_with_driver_jit(s, ptx, &entry.module, jit_log);
      if (retry == CUDA_SUCCESS) {
        entry.compilation.origin = jit::CubinOrigin::DriverJit;
        entry.compilation.fallback_reason =
            "the CUDA " + cuda_version_text(s.d().driver_version) + " driver refused the cubin (" +
            describe_cuda_result(s.d(), result) + "); the driver JIT-compiled the PTX";
        entry.compilation.cubin.clear();
        break;
      }
      driver_hint += "; the driver's own JIT of the PTX failed too (" +
                     describe_cuda_result(s.d(), retry) + ")" +
                     (jit_log.empty() ? std::string() : ":\n" + jit_log);
    }
    s.check(result, "cuModuleLoadData",
            "loading the " + arch + " cubin of " + where + " on " + s.info.name + driver_hint);
    break;
  }
  case jit::CubinOrigin::DriverJit: {
    CUresult result = load_with_driver_jit(s, ptx, &entry.module, jit_log);
    s.check(result, "cuModuleLoadDataEx",
            "the driver could not JIT-compile " + where + " for " + arch + " (" +
                entry.compilation.fallback_reason + ")" + driver_hint +
                (jit_log.empty() ? std::string() : ":\n" + jit_log));
    break;
  }
  }
  uint64_t id = s.next_id++;
  s.modules.emplace(id, std::move(entry));
  return device::ModuleHandle{id};
}

} // namespace

device::ModuleHandle CudaDevice::load_module(std::string_view ptx, std::string_view source_name) {
  return load_module_from(*state_, ptx, source_name, nullptr);
}

device::ModuleHandle CudaDevice::load_module_prebuilt(std::string_view ptx,
                                                      std::string_view source_name,
                                                      const device::PrebuiltCubin &cubin) {
  return load_module_from(*state_, ptx, source_name, &cubin);
}

void CudaDevice::unload_module(device::ModuleHandle module) {
  State &s = *state_;
  std::lock_guard lock(s.mutex);
  auto found = s.modules.find(module.id);
  if (found == s.modules.end()) {
    throw DeviceError(ErrorKind::NotFound,
                      "unload_module: unknown module handle " + std::to_string(module.id));
  }
  s.make_current();
  // Kernels of the module may still run, on any stream of the context: launches are asynchronous
  // (Operation::launch on the caller's streams).
  s.check(s.d().cuCtxSynchronize(), "cuCtxSynchronize",
          s.last_launch.empty() ? "before unloading " + found->second.source_name
                                : "after " + s.last_launch);
  s.check(s.d().cuModuleUnload(found->second.module), "cuModuleUnload", found->second.source_name);
  std::erase_if(s.functions, [&](const auto &item) { return item.second.module_id == module.id; });
  s.modules.erase(found);
}

device::FunctionHandle CudaDevice::get_function(device::ModuleHandle module,
                                                std::string_view name) {
  State &s = *state_;
  std::lock_guard lock(s.mutex);
  auto found = s.modules.find(module.id);
  if (found == s.modules.end()) {
    throw DeviceError(ErrorKind::NotFound,
                      "get_function: unknown module handle " + std::to_string(module.id));
  }
  const ModuleEntry &entry = found->second;
  const device::KernelInfo *parsed = nullptr;
  std::string known;
  for (const device::KernelInfo &kernel : entry.entries) {
    known += (known.empty() ? "" : ", ") + kernel.name;
    if (kernel.name == name) {
      parsed = &kernel;
    }
  }
  if (!parsed) {
    throw DeviceError(ErrorKind::NotFound,
                      entry.source_name + " has no kernel '" + std::string(name) +
                          "' (its .entry kernels: " + (known.empty() ? "none" : known) + ")");
  }
  s.make_current();
  FunctionEntry function;
  function.module_id = module.id;
  function.info = *parsed;
  s.check(s.d().cuModuleGetFunction(&function.function, entry.module, parsed->name.c_str()),
          "cuModuleGetFunction", "kernel '" + parsed->name + "' in " + entry.source_name);
  const auto attribute = [&](CUfunction_attribute which, const char *what) {
    int value = 0;
    s.check(s.d().cuFuncGetAttribute(&value, which, function.function), "cuFuncGetAttribute",
            std::string(what) + " of kernel '" + parsed->name + "'");
    return value;
  };
  function.info.registers_per_thread =
      static_cast<uint32_t>(attribute(CU_FUNC_ATTRIBUTE_NUM_REGS, "registers"));
  function.info.local_bytes_per_thread =
      static_cast<uint32_t>(attribute(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, "local bytes"));
  function.info.static_shared_bytes =
      static_cast<uint32_t>(attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "shared bytes"));
  function.max_threads_per_block =
      attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "threads per block");
  function.dynamic_shared_limit = static_cast<uint32_t>(
      attribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, "dynamic shared bytes"));
  uint64_t id = s.next_id++;
  s.functions.emplace(id, std::move(function));
  return device::FunctionHandle{id};
}

const device::KernelInfo &CudaDevice::kernel_info(device::FunctionHandle function) const {
  std::lock_guard lock(state_->mutex);
  return state_->function_entry(function.id).info;
}

const jit::CompiledPtx &CudaDevice::module_compilation(device::ModuleHandle module) const {
  std::lock_guard lock(state_->mutex);
  auto found = state_->modules.find(module.id);
  if (found == state_->modules.end()) {
    throw DeviceError(ErrorKind::NotFound, "unknown module handle " + std::to_string(module.id));
  }
  return found->second.compilation;
}

void CudaDevice::launch(device::FunctionHandle function, const device::LaunchConfig &config,
                        std::span<const std::byte> params) {
  State &s = *state_;
  std::lock_guard lock(s.mutex);
  s.function_entry(function.id); // throws NotFound for an unknown handle
  FunctionEntry &entry = s.functions.find(function.id)->second;
  const device::KernelInfo &kernel = entry.info;
  const std::string what =
      "kernel '" + kernel.name + "' (grid " + dim_text(config.grid) + ", block " +
      dim_text(config.block) + ", " + std::to_string(config.dynamic_shared_bytes) + " dynamic + " +
      std::to_string(kernel.static_shared_bytes) + " static shared bytes) on " + s.info.name;
  if (params.size() != kernel.param_bytes) {
    throw DeviceError(ErrorKind::InvalidArgument,
                      "launch of " + what + ": the parameter buffer is " +
                          std::to_string(params.size()) + " bytes, the kernel takes " +
                          std::to_string(kernel.param_bytes) + " (build it with ParamBuffer)");
  }
  if (config.grid.count() == 0 || config.block.count() == 0) {
    throw DeviceError(ErrorKind::InvalidArgument,
                      "launch of " + what + ": grid and block need at least one thread");
  }
  if (config.block.count() > static_cast<uint64_t>(entry.max_threads_per_block)) {
    throw DeviceError(ErrorKind::InvalidArgument,
                      "launch of " + what + ": " + std::to_string(config.block.count()) +
                          " threads per block, the kernel allows at most " +
                          std::to_string(entry.max_threads_per_block) +
                          " (registers: " + std::to_string(kernel.registers_per_thread) + ")");
  }
  const uint64_t shared_total = uint64_t{config.dynamic_shared_bytes} + kernel.static_shared_bytes;
  if (shared_total > s.info.max_shared_bytes_per_block) {
    throw DeviceError(ErrorKind::InvalidArgument,
                      "launch of " + what + ": " + std::to_string(shared_total) +
                          " shared bytes per block exceed the device's opt-in limit of " +
                          std::to_string(s.info.max_shared_bytes_per_block));
  }
  s.make_current();
  if (config.dynamic_shared_bytes > entry.dynamic_shared_limit) {
    s.check(s.d().cuFuncSetAttribute(entry.function,
                                     CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                     static_cast<int>(config.dynamic_shared_bytes)),
            "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", "launch of " + what);
    entry.dynamic_shared_limit = config.dynamic_shared_bytes;
  }
  size_t param_size = params.size();
  void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, const_cast<std::byte *>(params.data()),
                   CU_LAUNCH_PARAM_BUFFER_SIZE, &param_size, CU_LAUNCH_PARAM_END};
  s.check(s.d().cuLaunchKernel(entry.function, config.grid.x, config.grid.y, config.grid.z,
                               config.block.x, config.block.y, config.block.z,
                               config.dynamic_shared_bytes, s.stream, nullptr,
                               param_size == 0 ? nullptr : extra),
          "cuLaunchKernel", "launch of " + what);
  s.last_launch = "the launch of " + what;
}

void CudaDevice::synchronize() {
  State &s = *state_;
  std::lock_guard lock(s.mutex);
  s.make_current();
  s.wait_for_stream();
}

namespace {

// Two timing events of one device, destroyed with it (errors there cannot be reported).
struct EventPair {
  const CudaDriver &d;
  CUevent start = nullptr, stop = nullptr;
  explicit EventPair(const CudaDriver &driver) : d(driver) {}
  EventPair(const EventPair &) = delete;
  EventPair &operator=(const EventPair &) = delete;
  ~EventPair() {
    if (start) {
      d.cuEventDestroy_v2(start);
    }
    if (stop) {
      d.cuEventDestroy_v2(stop);
    }
  }
};

} // namespace

double CudaDevice::time_ms(const std::function<void()> &enqueue) {
  State &s = *state_;
  EventPair events(s.d());
  {
    std::lock_guard lock(s.mutex);
    s.make_current();
    s.check(s.d().cuEventCreate(&events.start, CU_EVENT_DEFAULT), "cuEventCreate", "timing");
    s.check(s.d().cuEventCreate(&events.stop, CU_EVENT_DEFAULT), "cuEventCreate", "timing");
    s.check(s.d().cuEventRecord(events.start, s.stream), "cuEventRecord", "before timed work");
  }
  enqueue(); // launch() takes the lock itself
  std::lock_guard lock(s.mutex);
  s.make_current();
  const std::string after =
      s.last_launch.empty() ? std::string("after timed work") : "after " + s.last_launch;
  s.check(s.d().cuEventRecord(events.stop, s.stream), "cuEventRecord", after);
  s.check(s.d().cuEventSynchronize(events.stop), "cuEventSynchronize", after);
  float ms = 0;
  s.check(s.d().cuEventElapsedTime(&ms, events.start, events.stop), "cuEventElapsedTime", after);
  return ms;
}

} // namespace tcjit::cuda
