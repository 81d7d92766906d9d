// Opens a device by kind: "cuda" (the CUDA Driver API), "emu" (the PTX emulator) or "auto" (cuda
// when a driver and a device exist, else emu).
#pragma once

#include <memory>
#include <string_view>

#include "runtime/device/device.h"

namespace tcjit::device {

// Throws DeviceError: InvalidArgument for an unknown kind, Unsupported for "cuda" without a
// driver or device ("no CUDA driver (libcuda.so.1 not found); use --device emu").
std::unique_ptr<Device> open_device(std::string_view kind);

// The one place the emulator is created for open_device (default EmuDeviceOptions).
std::unique_ptr<Device> make_emulator_device();

} // namespace tcjit::device
