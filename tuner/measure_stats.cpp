#include "tuner/measure_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

namespace tcjit::tuner {

namespace {

double sorted_percentile(const std::vector<double> &sorted, double q) {
  const double rank = std::clamp(q, 0.0, 1.0) * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - static_cast<double>(lo));
}

std::vector<double> sorted_times(std::span<const double> times) {
  if (times.empty())
    throw std::invalid_argument("timing statistics of no repetitions");
  std::vector<double> sorted(times.begin(), times.end());
  std::sort(sorted.begin(), sorted.end());
  return sorted;
}

} // namespace

double percentile(std::span<const double> times, double q) {
  return sorted_percentile(sorted_times(times), q);
}

RepStats rep_stats(std::span<const double> times) {
  const std::vector<double> sorted = sorted_times(times);
  RepStats s;
  s.count = static_cast<int>(sorted.size());
  s.min = sorted.front();
  s.max = sorted.back();
  s.median = sorted_percentile(sorted, 0.5);
  s.p25 = sorted_percentile(sorted, 0.25);
  s.p75 = sorted_percentile(sorted, 0.75);
  double mean = 0;
  for (double t : sorted)
    mean += t;
  mean /= static_cast<double>(sorted.size());
  double squares = 0;
  for (double t : sorted)
    squares += (t - mean) * (t - mean);
  s.stddev = sorted.size() > 1 ? std::sqrt(squares / static_cast<double>(sorted.size() - 1)) : 0;
  return s;
}

double relative_spread(const RepStats &stats) {
  const double iqr = stats.p75 - stats.p25;
  if (iqr == 0)
    return 0;
  if (stats.median == 0)
    return std::numeric_limits<double>::infinity();
  return iqr / stats.median;
}

bool stop_repeating(std::span<const double> times, int min_reps, int max_reps, double spread) {
  const auto n = static_cast<int64_t>(times.size());
  if (n >= max_reps)
    return true;
  if (n == 0 || n < min_reps)
    return false;
  return relative_spread(rep_stats(times)) < spread;
}

kernels_db::Timing to_timing(const RepStats &stats) {
  return {stats.median, stats.min, stats.max, stats.stddev};
}

} // namespace tcjit::tuner
