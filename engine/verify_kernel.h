// Runs a compiled kernel (a GEMM or a convolution) on a device with random inputs and checks it
// against the CPU reference (compiler/reference) under the documented tolerance model
// (docs/numerics.md).
#pragma once

#include "compiler/codegen/pipeline.h"
#include "compiler/reference/tolerance.h"
#include "runtime/device/device.h"
#include "runtime/emu/counters.h"

#include <optional>

namespace tcjit::engine {

struct KernelCheck {
  CompareReport report;                        // against the reference
  std::optional<emu::LaunchCounters> counters; // the main kernel's, on the emulator
  double device_ms = 0;                        // upload + launch + download, wall clock
  double reference_ms = 0;
};

// `spec` must be concrete (no symbolic sizes) and `kernel` compiled from it; `cubin`: as for
// load_kernel. Inputs come from fill_random(seed, seed+1, ...). Throws device::DeviceError when the
// device fails.
KernelCheck run_and_check_kernel(device::Device &dev, const codegen::CompiledKernel &kernel,
                                 const OpSpec &spec, uint64_t seed,
                                 std::span<const uint8_t> cubin = {});

} // namespace tcjit::engine
