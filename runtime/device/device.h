// The device interface every backend implements (the PTX emulator now, the CUDA Driver API later).
// Device pointers are plain 64-bit addresses. Every failure throws DeviceError, whose message says
// what went wrong, where, and how to fix it; nothing here aborts the process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tcjit::device {

using DevicePtr = uint64_t;

enum class ErrorKind {
  InvalidArgument, // a bad value passed by the caller (null pointer, wrong parameter size...)
  OutOfMemory,     // an allocation the device cannot satisfy
  ModuleLoad,      // PTX that does not parse or uses an unsupported feature
  NotFound,        // an unknown module, function or pointer
  LaunchFailed,    // the kernel faulted (sanitizer error on the emulator, a CUDA error on a GPU)
  Unsupported,     // a valid request this backend does not implement
};

const char *error_kind_name(ErrorKind kind);

class DeviceError : public std::runtime_error {
public:
  DeviceError(ErrorKind kind, const std::string &message);
  ErrorKind kind() const { return kind_; }

private:
  ErrorKind kind_;
};

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  uint64_t count() const { return uint64_t{x} * y * z; }
};

struct LaunchConfig {
  Dim3 grid;
  Dim3 block;
  uint32_t dynamic_shared_bytes = 0;
};

struct DeviceInfo {
  std::string name;
  int sm_arch = 0; // e.g. 80 for sm_80
  int sm_count = 0;
  uint64_t global_memory_bytes = 0;
  uint32_t max_shared_bytes_per_block = 0; // with the opt-in attribute
  uint32_t max_threads_per_block = 1024;
  uint32_t warp_size = 32;
  bool is_emulator = false;
};

// One .param of an .entry, laid out per the PTX ABI: each parameter at the next multiple of its
// alignment (natural alignment of its type, or its .align).
struct ParamInfo {
  std::string name;
  uint32_t offset = 0;
  uint32_t size = 0;
  uint32_t align = 1;
};

struct KernelInfo {
  std::string name;
  std::vector<ParamInfo> params;
  uint32_t param_bytes = 0;         // total size of the parameter buffer
  uint32_t static_shared_bytes = 0; // .shared variables the kernel uses
  uint32_t local_bytes_per_thread = 0;
  uint32_t registers_per_thread = 0; // virtual registers declared (emulator) or allocated (GPU)
};

struct ModuleHandle {
  uint64_t id = 0;
};
struct FunctionHandle {
  uint64_t id = 0;
};

// Builds the parameter buffer of one launch from a KernelInfo: set(i, value) checks that the
// value's size matches parameter i.
class ParamBuffer {
public:
  explicit ParamBuffer(const KernelInfo &kernel);
  void set_bytes(size_t index, const void *data, size_t size);
  template <typename T> void set(size_t index, const T &value) {
    set_bytes(index, &value, sizeof(T));
  }
  std::span<const std::byte> bytes() const { return bytes_; }

private:
  const KernelInfo *kernel_;
  std::vector<std::byte> bytes_;
};

// A cubin built earlier from the same PTX (e.g. kept in the kernel cache) for the GPU arch
// `sm_arch` (80 = sm_80).
struct PrebuiltCubin {
  std::span<const uint8_t> image;
  int sm_arch = 0;
};

class Device {
public:
  virtual ~Device() = default;

  virtual DeviceInfo info() const = 0;

  virtual DevicePtr allocate(size_t bytes) = 0;
  virtual void free(DevicePtr ptr) = 0;
  virtual void copy_to_device(DevicePtr dst, const void *src, size_t bytes) = 0;
  virtual void copy_to_host(void *dst, DevicePtr src, size_t bytes) = 0;
  virtual void memset(DevicePtr dst, uint8_t value, size_t bytes) = 0;

  // source_name names the PTX in error messages ("kernel.ptx:123: ...").
  virtual ModuleHandle load_module(std::string_view ptx, std::string_view source_name) = 0;
  // The same module, loaded from `cubin` when this device runs that binary (a GPU of its arch)
  // instead of compiling `ptx` again; `ptx` still describes the kernels, and is compiled as by
  // load_module() when the cubin does not fit or the driver refuses it. The default (the
  // emulator, which runs PTX only): load_module(ptx, source_name).
  virtual ModuleHandle load_module_prebuilt(std::string_view ptx, std::string_view source_name,
                                            const PrebuiltCubin &cubin) {
    (void)cubin;
    return load_module(ptx, source_name);
  }
  virtual void unload_module(ModuleHandle module) = 0;
  virtual FunctionHandle get_function(ModuleHandle module, std::string_view name) = 0;
  virtual const KernelInfo &kernel_info(FunctionHandle function) const = 0;

  // params: the buffer laid out per kernel_info(function) (see ParamBuffer).
  virtual void launch(FunctionHandle function, const LaunchConfig &config,
                      std::span<const std::byte> params) = 0;
  virtual void synchronize() = 0;
  // Launches (and synchronize) go to `stream` from now on: an opaque queue of the device (a
  // CUstream of its context for the CUDA device); null: the device's own. The default, for a
  // device that runs every launch before launch() returns (the emulator), ignores it: its work is
  // always complete, in order, whatever the stream.
  virtual void set_stream(void *stream) { (void)stream; }
  // Reports the progress of each launch from now on: `callback(done, total)` with the blocks
  // finished of the grid's, a few times a second and once at the end (one call at a time, from
  // the launch's threads); empty: no reports. The default, for a device whose launches take
  // microseconds (a GPU), never reports; the emulator does (a launch can take minutes).
  virtual void set_progress(std::function<void(uint64_t done, uint64_t total)> callback) {
    (void)callback;
  }

  // Runs `enqueue`, which must only enqueue work on this device (launches; no copy, memset or
  // synchronize, which wait for the host), and returns the time the device spent from before
  // that work to after it, in milliseconds. A GPU records events on its stream around the work
  // and waits for the second (CUDA events: ~0.5 us resolution). This default, for devices that
  // run a launch before it returns (the emulator), is the wall-clock time of enqueue() and
  // synchronize(): the host's emulation time, which says nothing of a GPU's.
  virtual double time_ms(const std::function<void()> &enqueue);
};

} // namespace tcjit::device
