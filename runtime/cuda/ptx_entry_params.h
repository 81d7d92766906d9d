// Reads what the CUDA device needs from PTX text without the emulator's parser (the device
// layers are independent): each .entry's .param list laid out per the PTX ABI, the .version and
// the .target. Small and tolerant: it reads the entry signatures and skips everything else.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/device/device.h"

namespace tcjit::cuda {

// Every .entry of `ptx`, in order, with name, params and param_bytes filled (the other
// KernelInfo fields come from the driver). Throws device::DeviceError(ModuleLoad) naming
// source_name and the line when a signature cannot be read.
std::vector<device::KernelInfo> parse_ptx_entries(std::string_view ptx,
                                                  std::string_view source_name);

struct PtxVersion {
  int major = 0, minor = 0;
};
// The `.version X.Y` directive, if any.
std::optional<PtxVersion> parse_ptx_version(std::string_view ptx);
// The first target of `.target sm_80[, ...]`, e.g. "sm_80", if any.
std::optional<std::string> parse_ptx_target(std::string_view ptx);

// The CUDA driver version (cuDriverGetVersion's encoding, 1000*major + 10*minor) that first
// accepts PTX ISA `version`, or 0 when it is not in tcjit's table.
int minimum_driver_for_ptx_isa(PtxVersion version);

} // namespace tcjit::cuda
