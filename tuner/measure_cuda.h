// The CUDA measurer: CUDA events around repeated launches of the candidate on a real GPU
// (Device::time_ms), after warm-up, with the L2 flushed between repetitions (a memset of twice
// the L2 the driver reports); the median, min, max and stddev of the repetitions, stopped early
// once the interquartile spread is tight (measure_stats.h). Each candidate's output is checked
// against the CPU reference on first use (run_and_check_kernel; the reference is computed once per
// problem and shared by its candidates, engine::ReferenceCache): a wrong result, a device error or
// an unusable candidate is a failed measurement with the reason, never an exception. Written for
// a real GPU: where there is none, opening the CUDA device already fails with a clear message.
// Provenance: measured, with the device's name, the driver's CUDA version ("CUDA 13.0") and SM
// clock. On the emulator (tests) the times are the emulation's wall clock, the provenance
// `emulated`, and nothing is flushed.
#pragma once

#include "runtime/device/device.h"
#include "tuner/measure.h"

#include <cstdint>
#include <memory>
#include <span>

namespace tcjit::tuner {

struct CudaMeasureOptions {
  int warmup = 3;
  int min_reps = 10;
  int max_reps = 100;
  double spread = 0.02; // stop once (p75 - p25) / median is below this
  bool flush_l2 = true; // write a buffer larger than L2 between repetitions
};

// `cuda` should be a CUDA device (see above for the emulator); it must outlive the measurer.
// Throws std::invalid_argument unless warmup >= 0, 1 <= min_reps <= max_reps and spread >= 0.
std::unique_ptr<Measurer> make_cuda_measurer(device::Device &cuda,
                                             const CudaMeasureOptions &options = {});

// The measurer's timing alone, for a kernel whose output the caller has already checked (`tcjit
// run` on a GPU): random inputs, warm-up, CUDA events around each launch, the L2 flushed between
// repetitions; an ok Measurement with its timing and provenance. `cubin`: as for
// engine::load_kernel. Throws std::invalid_argument for bad options (as make_cuda_measurer) and
// device::DeviceError when the device fails.
Measurement time_kernel(device::Device &dev, const OpSpec &spec,
                        const codegen::CompiledKernel &kernel, std::span<const uint8_t> cubin,
                        const CudaMeasureOptions &options = {});

} // namespace tcjit::tuner
