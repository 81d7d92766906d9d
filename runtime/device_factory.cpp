#include "runtime/device_factory.h"

#include <string>

#include "runtime/cuda/cuda_device.h"
#include "runtime/emu/emu_device.h"

namespace tcjit::device {

std::unique_ptr<Device> make_emulator_device(double timeout_seconds) {
  emu::EmuDeviceOptions options;
  options.timeout_seconds = timeout_seconds;
  return std::make_unique<emu::EmuDevice>(options);
}

std::unique_ptr<Device> open_device(std::string_view kind, double emulator_timeout_seconds) {
  if (kind == "cuda") {
    return std::make_unique<cuda::CudaDevice>();
  }
  if (kind == "emu") {
    return make_emulator_device(emulator_timeout_seconds);
  }
  if (kind == "auto") {
    if (cuda::cuda_device_available()) {
      return std::make_unique<cuda::CudaDevice>();
    }
    return make_emulator_device(emulator_timeout_seconds);
  }
  throw DeviceError(ErrorKind::InvalidArgument,
                    "unknown device '" + std::string(kind) + "'; use cuda, emu or auto");
}

} // namespace tcjit::device
