// The one timing method of every column of the race (tcjit's configs and the anchors' candidates
// alike): warm-up launches, then `reps` repetitions, each an L2 flush (a memset of twice the L2
// the driver reports, as the CUDA measurer does: tuner/measure_cuda.cpp) followed by CUDA events
// around the work on the device's stream (cuda::CudaDevice::time_ms). The statistics are the
// tuner's (tuner/measure_stats.h).
#pragma once

#include "engine/device_buffer.h"
#include "runtime/cuda/cuda_device.h"

#include <cstdint>
#include <functional>
#include <memory>

namespace tcjit::bench {

struct TimingOptions {
  int warmup = 3; // launches before the timed repetitions, each waited for
  int reps = 25;  // timed repetitions; at least kMinReps
  bool flush_l2 = true;
};
inline constexpr int kMinReps = 20;

// Microseconds of one repetition's work (GPU time between the two events).
struct TimingResult {
  int reps = 0, warmup = 0;
  double median_us = 0, min_us = 0, max_us = 0, p25_us = 0, p75_us = 0;
  uint64_t flush_bytes = 0; // the memset before each repetition; 0 when not flushed
};

// Throws std::invalid_argument unless warmup >= 0 and reps >= kMinReps, naming the option.
void check_timing_options(const TimingOptions &options);

class Timer {
public:
  // `dev` must outlive the timer. The flush buffer is allocated on first use.
  Timer(cuda::CudaDevice &dev, const TimingOptions &options);
  // Times `enqueue`, which enqueues the work once on the CUstream it is given (the device's: the
  // stream the events are recorded on). Throws what the device or `enqueue` throws.
  TimingResult time(const std::function<void(void *stream)> &enqueue);
  const TimingOptions &options() const { return options_; }

private:
  cuda::CudaDevice &dev_;
  TimingOptions options_;
  uint64_t flush_bytes_ = 0;
  std::unique_ptr<engine::DeviceBuffer> flush_;
};

} // namespace tcjit::bench
