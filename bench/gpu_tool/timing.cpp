#include "bench/gpu_tool/timing.h"

#include "tuner/measure_stats.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace tcjit::bench {

namespace {

constexpr uint64_t kDefaultFlushBytes = uint64_t{128} << 20; // when the driver reports no L2

} // namespace

void check_timing_options(const TimingOptions &options) {
  if (options.warmup < 0)
    throw std::invalid_argument("warm-up launches must be >= 0 (got " +
                                std::to_string(options.warmup) + ")");
  if (options.reps < kMinReps)
    throw std::invalid_argument("--reps must be at least " + std::to_string(kMinReps) +
                                " (a median and spread of fewer repetitions is not reported; got " +
                                std::to_string(options.reps) + ")");
}

Timer::Timer(cuda::CudaDevice &dev, const TimingOptions &options) : dev_(dev), options_(options) {
  check_timing_options(options);
  if (options_.flush_l2) {
    const int l2 = dev_.properties().l2_cache_bytes;
    // Twice the L2, so none of the previous repetition's data is left in it.
    flush_bytes_ = l2 > 0 ? 2 * static_cast<uint64_t>(l2) : kDefaultFlushBytes;
  }
}

TimingResult Timer::time(const std::function<void(void *stream)> &enqueue) {
  if (flush_bytes_ > 0 && !flush_)
    flush_ = std::make_unique<engine::DeviceBuffer>(dev_, flush_bytes_);
  void *const stream = dev_.stream();
  const auto work = [&] { enqueue(stream); };
  for (int i = 0; i < options_.warmup; ++i) {
    work();
    dev_.synchronize();
  }
  std::vector<double> times_us;
  times_us.reserve(static_cast<size_t>(options_.reps));
  for (int i = 0; i < options_.reps; ++i) {
    // The flush comes before the timed work (which waits for it), outside its events.
    if (flush_)
      dev_.memset(flush_->ptr(), static_cast<uint8_t>(i), flush_bytes_);
    times_us.push_back(1000.0 * dev_.time_ms(work));
  }
  const tuner::RepStats stats = tuner::rep_stats(times_us);
  TimingResult r;
  r.reps = stats.count;
  r.warmup = options_.warmup;
  r.median_us = stats.median;
  r.min_us = stats.min;
  r.max_us = stats.max;
  r.p25_us = stats.p25;
  r.p75_us = stats.p75;
  r.flush_bytes = flush_ ? flush_bytes_ : 0;
  return r;
}

} // namespace tcjit::bench
