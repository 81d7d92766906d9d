// The statistics of the CUDA measurer's repetitions and its early-stop rule.
#include "tuner/measure_stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

namespace tcjit::tuner {
namespace {

TEST(MeasureStats, PercentilesInterpolateBetweenRanks) {
  const std::vector<double> times = {4, 1, 3, 2}; // unsorted on purpose
  EXPECT_DOUBLE_EQ(percentile(times, 0.0), 1);
  EXPECT_DOUBLE_EQ(percentile(times, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(percentile(times, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(percentile(times, 0.75), 3.25);
  EXPECT_DOUBLE_EQ(percentile(times, 1.0), 4);
  EXPECT_DOUBLE_EQ(percentile(std::vector<double>{7}, 0.3), 7);
  EXPECT_THROW(percentile(std::vector<double>{}, 0.5), std::invalid_argument);
}

TEST(MeasureStats, MedianMinMaxAndSampleStddev) {
  const RepStats s = rep_stats(std::vector<double>{3, 1, 2, 10, 4});
  EXPECT_EQ(s.count, 5);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 10);
  EXPECT_DOUBLE_EQ(s.p25, 2);
  EXPECT_DOUBLE_EQ(s.p75, 4);
  // mean 4; squared deviations 9 + 4 + 1 + 36 + 0 = 50; / (5 - 1)
  EXPECT_DOUBLE_EQ(s.stddev, std::sqrt(12.5));
  const RepStats one = rep_stats(std::vector<double>{42});
  EXPECT_EQ(one.count, 1);
  EXPECT_DOUBLE_EQ(one.median, 42);
  EXPECT_DOUBLE_EQ(one.stddev, 0);
  EXPECT_THROW(rep_stats(std::vector<double>{}), std::invalid_argument);

  const kernels_db::Timing timing = to_timing(s);
  EXPECT_DOUBLE_EQ(timing.median_us, 3);
  EXPECT_DOUBLE_EQ(timing.min_us, 1);
  EXPECT_DOUBLE_EQ(timing.max_us, 10);
  EXPECT_DOUBLE_EQ(timing.stddev_us, std::sqrt(12.5));
}

TEST(MeasureStats, RelativeSpreadIsTheInterquartileRangeOverTheMedian) {
  EXPECT_DOUBLE_EQ(relative_spread(rep_stats(std::vector<double>{3, 1, 2, 10, 4})), 2.0 / 3);
  EXPECT_DOUBLE_EQ(relative_spread(rep_stats(std::vector<double>{5, 5, 5})), 0);
  EXPECT_DOUBLE_EQ(relative_spread(rep_stats(std::vector<double>{0, 0, 0})), 0);
  EXPECT_EQ(relative_spread(rep_stats(std::vector<double>{0, 0, 0, 1, 1})),
            std::numeric_limits<double>::infinity()); // median 0, p75 1
}

TEST(MeasureStats, StopsAfterMinRepsOnceTheSpreadIsTight) {
  // Identical times: tight from the first, but never before min_reps.
  std::vector<double> times;
  for (int n = 1; n <= 3; ++n) {
    times.push_back(10);
    EXPECT_EQ(stop_repeating(times, 3, 100, 0.02), n == 3) << n;
  }
  // 100, 101, 102, 103: p25 100.75, p75 102.25, median 101.5 -> spread 1.48%
  const std::vector<double> tight = {100, 101, 102, 103};
  EXPECT_TRUE(stop_repeating(tight, 4, 100, 0.02));
  EXPECT_FALSE(stop_repeating(tight, 4, 100, 0.01));
  EXPECT_FALSE(stop_repeating(tight, 5, 100, 0.02)); // not yet min_reps
  // the spread must be strictly below the threshold
  const RepStats s = rep_stats(tight);
  EXPECT_FALSE(stop_repeating(tight, 4, 100, relative_spread(s)));
}

TEST(MeasureStats, StopsAtMaxRepsWhateverTheSpread) {
  const std::vector<double> noisy = {1, 50, 3, 80, 2};
  EXPECT_FALSE(stop_repeating(noisy, 2, 6, 0.02));
  EXPECT_TRUE(stop_repeating(noisy, 2, 5, 0.02));
  EXPECT_TRUE(stop_repeating(noisy, 2, 4, 0.02));                 // past max_reps too
  EXPECT_FALSE(stop_repeating(std::vector<double>{}, 0, 5, 1.0)); // nothing measured yet
}

} // namespace
} // namespace tcjit::tuner
