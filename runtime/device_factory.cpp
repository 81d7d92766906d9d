#include "runtime/device_factory.h"

#include <string>

#include "runtime/cuda/cuda_device.h"
#include "runtime/emu/emu_device.h"

namespace tcjit::device {

std::unique_ptr<Device> make_emulator_device() {
  return std::make_unique<emu::EmuDevice>();
}

std::unique_ptr<Device> open_device(std::string_view kind) {
  if (kind == "cuda") {
    return std::make_unique<cuda::CudaDevice>();
  }
  if (kind == "emu") {
    return make_emulator_device();
  }
  if (kind == "auto") {
    if (cuda::cuda_device_available()) {
      return std::make_unique<cuda::CudaDevice>();
    }
    return make_emulator_device();
  }
  throw DeviceError(ErrorKind::InvalidArgument,
                    "unknown device '" + std::string(kind) + "'; use cuda, emu or auto");
}

} // namespace tcjit::device
