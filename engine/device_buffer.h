// A device allocation freed when it goes out of scope (the tuner's measurers and the GEMM check).
#pragma once

#include "runtime/device/device.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

namespace tcjit::engine {

class DeviceBuffer {
public:
  // `bytes` of device memory (at least 16), holding a copy of `host` when given.
  DeviceBuffer(device::Device &dev, uint64_t bytes, std::span<const std::byte> host = {})
      : dev_(dev), bytes_(std::max<uint64_t>(bytes, 16)), ptr_(dev.allocate(bytes_)) {
    if (!host.empty())
      dev.copy_to_device(ptr_, host.data(), host.size());
  }
  // A copy of `host`.
  DeviceBuffer(device::Device &dev, std::span<const std::byte> host)
      : DeviceBuffer(dev, host.size(), host) {}
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer() {
    try {
      dev_.free(ptr_);
    } catch (const device::DeviceError &) {
      // Nothing to report from a destructor: the error that failed the run is the one reported.
    }
  }
  device::DevicePtr ptr() const { return ptr_; }
  uint64_t bytes() const { return bytes_; } // as allocated: at least 16

private:
  device::Device &dev_;
  uint64_t bytes_;
  device::DevicePtr ptr_;
};

} // namespace tcjit::engine
