// Runs a compiled kernel (a GEMM or a convolution) on a device with random inputs and checks it
// against the CPU reference (compiler/reference) under the documented tolerance model
// (docs/numerics.md).
#pragma once

#include "compiler/codegen/pipeline.h"
#include "compiler/reference/tolerance.h"
#include "runtime/device/device.h"
#include "runtime/emu/counters.h"

#include <memory>
#include <optional>
#include <string>

namespace tcjit::engine {

struct KernelCheck {
  CompareReport report;                        // against the reference
  std::optional<emu::LaunchCounters> counters; // the main kernel's, on the emulator
  double device_ms = 0;                        // upload + launch + download, wall clock
  double reference_ms = 0;
  bool reference_reused = false; // the reference came from the ReferenceCache
};

// The CPU reference of the last problem checked, for a caller that checks many kernels of one
// problem (the CUDA measurer checks every candidate config): the reference depends only on the
// spec, the seed and the math mode, so it is computed once. act=custom is never cached (its
// reference runs the kernel's own epilogue plan on the device).
struct ReferenceCache {
  std::string key; // print_spec, seed and math mode of `result`
  std::shared_ptr<const ReferenceResult> result;
};

// `spec` must be concrete (no symbolic sizes) and `kernel` compiled from it; `cubin`: as for
// load_kernel. Inputs come from fill_random(seed, seed+1, ...). With `cache`, a reference of the
// same spec, seed and math mode is taken from it, and a new one is kept in it. Throws
// device::DeviceError when the device fails.
KernelCheck run_and_check_kernel(device::Device &dev, const codegen::CompiledKernel &kernel,
                                 const OpSpec &spec, uint64_t seed,
                                 std::span<const uint8_t> cubin = {},
                                 ReferenceCache *cache = nullptr);

} // namespace tcjit::engine
