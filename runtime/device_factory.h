// Opens a device by kind: "cuda" (the CUDA Driver API), "emu" (the PTX emulator) or "auto" (cuda
// when a driver and a device exist, else emu).
#pragma once

#include <memory>
#include <string_view>

#include "runtime/device/device.h"

namespace tcjit::device {

// Throws DeviceError: InvalidArgument for an unknown kind, Unsupported for "cuda" without a
// driver or device ("no CUDA driver (libcuda.so.1 not found); use --device emu").
// `emulator_timeout_seconds`: the emulator's wall-clock limit per launch (0: none); a GPU's
// launches are not interrupted.
std::unique_ptr<Device> open_device(std::string_view kind, double emulator_timeout_seconds = 0);

// The one place the emulator is created for open_device (default EmuDeviceOptions but the
// timeout).
std::unique_ptr<Device> make_emulator_device(double timeout_seconds = 0);

} // namespace tcjit::device
