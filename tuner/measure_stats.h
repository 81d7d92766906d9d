// The statistics of a timed measurement: what the CUDA measurer computes over its repetitions,
// as pure functions (unit-tested without a GPU).
#pragma once

#include "kernels_db/records.h"

#include <span>

namespace tcjit::tuner {

struct RepStats {
  int count = 0;
  double median = 0, min = 0, max = 0;
  double stddev = 0; // sample standard deviation (n - 1); 0 for one repetition
  double p25 = 0, p75 = 0;
};

// Percentiles by linear interpolation between the closest ranks (q in [0, 1]; numpy's default):
// rank q * (n - 1) of the sorted times. Throws std::invalid_argument when `times` is empty.
double percentile(std::span<const double> times, double q);
RepStats rep_stats(std::span<const double> times);

// The interquartile range relative to the median, (p75 - p25) / median: 0 when p75 == p25
// (identical times), infinite when the median is 0 and the quartiles differ.
double relative_spread(const RepStats &stats);

// Whether to stop repeating after `times`: at max_reps, or once there are min_reps and
// relative_spread(rep_stats(times)) < spread.
bool stop_repeating(std::span<const double> times, int min_reps, int max_reps, double spread);

// The stored timing of the repetitions (the same unit as `stats`).
kernels_db::Timing to_timing(const RepStats &stats);

} // namespace tcjit::tuner
