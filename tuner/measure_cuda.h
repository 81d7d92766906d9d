// The CUDA measurer: CUDA events around repeated launches of the candidate on a real GPU, after
// warm-up, with the L2 flushed between repetitions; the median and spread of the repetitions,
// stopped early when the spread is tight. Each candidate's output is checked against the CPU
// reference on first use. Written for a real GPU: where there is none, opening the CUDA device
// already fails with a clear message.
#pragma once

#include "runtime/device/device.h"
#include "tuner/measure.h"

#include <memory>

namespace tcjit::tuner {

struct CudaMeasureOptions {
  int warmup = 3;
  int min_reps = 10;
  int max_reps = 100;
  double spread = 0.02; // stop once (p75 - p25) / median is below this
  bool flush_l2 = true; // write a buffer larger than L2 between repetitions
};

// `cuda` must be a CUDA device; it must outlive the measurer.
std::unique_ptr<Measurer> make_cuda_measurer(device::Device &cuda,
                                             const CudaMeasureOptions &options = {});

} // namespace tcjit::tuner
