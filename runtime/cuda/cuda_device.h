// The `cuda` device: the CUDA Driver API (libcuda opened with dlopen, see cuda_driver.h) on one
// GPU's primary context. PTX is compiled by the JIT compile service (nvJitLink) for the device's
// exact compute capability and loaded as a cubin; without nvJitLink the driver JITs the PTX.
// Where no driver or device exists, constructing it throws device::DeviceError(Unsupported) with
// "no CUDA driver (libcuda.so.1 not found); use --device emu" or a similar message.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/device/device.h"
#include "runtime/jit/compile_service.h"

namespace tcjit::cuda {

struct CudaDeviceOptions {
  int ordinal = 0;                                // which GPU (cuDeviceGet)
  int optimization_level = 3;                     // ptxas -O level (0..3)
  bool line_info = false;                         // -lineinfo
  jit::CompileService *compile_service = nullptr; // null: jit::default_compile_service()
  // Libraries tried for libcuda; empty: the process-wide "libcuda.so.1". Tests point it at fakes.
  std::vector<std::string> driver_library_candidates;
};

// What the driver reports beyond device::DeviceInfo.
struct CudaDeviceProperties {
  int ordinal = 0;
  int compute_capability_major = 0, compute_capability_minor = 0;
  int driver_version = 0;   // cuDriverGetVersion (12040 for CUDA 12.4)
  int clock_khz = 0;        // SM clock
  int memory_clock_khz = 0; // peak memory clock
  int memory_bus_width_bits = 0;
  int l2_cache_bytes = 0;
  int max_shared_bytes_per_sm = 0;
  int max_shared_bytes_per_block_default = 0; // without the opt-in attribute (48 KiB)
};

// Whether a CUDA driver loads and reports at least one device (`auto` device selection).
bool cuda_device_available();
// Why not: the message a CudaDevice would throw ("no CUDA driver (...); use --device emu").
std::string cuda_unavailable_reason();

class CudaDevice : public device::Device {
public:
  explicit CudaDevice(CudaDeviceOptions options = {});
  ~CudaDevice() override;
  CudaDevice(const CudaDevice &) = delete;
  CudaDevice &operator=(const CudaDevice &) = delete;

  device::DeviceInfo info() const override;
  device::DevicePtr allocate(size_t bytes) override;
  void free(device::DevicePtr ptr) override;
  void copy_to_device(device::DevicePtr dst, const void *src, size_t bytes) override;
  void copy_to_host(void *dst, device::DevicePtr src, size_t bytes) override;
  void memset(device::DevicePtr dst, uint8_t value, size_t bytes) override;
  device::ModuleHandle load_module(std::string_view ptx, std::string_view source_name) override;
  device::ModuleHandle load_module_prebuilt(std::string_view ptx, std::string_view source_name,
                                            const device::PrebuiltCubin &cubin) override;
  void unload_module(device::ModuleHandle module) override;
  device::FunctionHandle get_function(device::ModuleHandle module, std::string_view name) override;
  const device::KernelInfo &kernel_info(device::FunctionHandle function) const override;
  void launch(device::FunctionHandle function, const device::LaunchConfig &config,
              std::span<const std::byte> params) override;
  void synchronize() override;
  // CUDA events recorded on the device's stream (set_stream) before and after `enqueue`; waits
  // for the second. Launches in `enqueue` that fail throw as launch() does; an error of the timed
  // work itself is reported here ("after the launch of ...").
  double time_ms(const std::function<void()> &enqueue) override;

  const CudaDeviceProperties &properties() const;
  // Launches go to `cu_stream` (a CUstream of this device's primary context) from now on;
  // null: back to the device's own stream. Copies and memsets wait for the stream first.
  void set_stream(void *cu_stream) override;
  // The CUstream launches go to now (set_stream's, else the device's own): what a caller that
  // enqueues work of its own (cuBLASLt, cuDNN) passes so that time_ms's events bracket it.
  void *stream() const;
  // How a module's code was produced (nvJitLink cubin or driver JIT), with the compile log.
  const jit::CompiledPtx &module_compilation(device::ModuleHandle module) const;

  struct State;

private:
  std::unique_ptr<State> state_;
};

} // namespace tcjit::cuda
