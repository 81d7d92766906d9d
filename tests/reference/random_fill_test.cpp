#include "compiler/reference/numeric_convert.h"
#include "compiler/reference/random_fill.h"
#include "support/parallel_for.h"

#include "reference_test_util.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace tcjit {
namespace {

using testing::Buffer;

TEST(RandomFill, Splitmix64MatchesThePublishedSequence) {
  // The reference outputs of splitmix64 seeded with 1234567 (Vigna's splitmix64.c test vector).
  uint64_t state = 1234567;
  EXPECT_EQ(splitmix64_next(state), 6457827717110365317ull);
  EXPECT_EQ(splitmix64_next(state), 3203168211198807973ull);
  EXPECT_EQ(splitmix64_next(state), 9817491932198370423ull);
  EXPECT_EQ(splitmix64_next(state), 4593380528125082431ull);
  EXPECT_EQ(splitmix64_next(state), 16408922859458223821ull);
}

TEST(RandomFill, SameSeedSameDataOtherSeedOtherData) {
  for (const DType dtype : {DType::f16, DType::bf16, DType::f32, DType::f64, DType::s8}) {
    Buffer a(dtype, 1000), b(dtype, 1000), c(dtype, 1000);
    fill_random(dtype, a.data(), 1000, 42);
    fill_random(dtype, b.data(), 1000, 42);
    fill_random(dtype, c.data(), 1000, 43);
    EXPECT_EQ(a.bytes, b.bytes) << to_string(dtype);
    EXPECT_NE(a.bytes, c.bytes) << to_string(dtype);
  }
}

TEST(RandomFill, FloatsAreUniformInTheRangeAndRepresentable) {
  Buffer f16(DType::f16, 20000);
  fill_random(DType::f16, f16.data(), f16.size(), 7, -2.0, 3.0);
  double sum = 0;
  int below_half = 0;
  for (int64_t i = 0; i < f16.size(); ++i) {
    const double v = f16.get(i);
    ASSERT_GE(v, -2.0);
    ASSERT_LE(v, 3.0);
    sum += v;
    below_half += v < 0.5;
  }
  EXPECT_NEAR(sum / double(f16.size()), 0.5, 0.05); // the midpoint
  EXPECT_NEAR(below_half / double(f16.size()), 0.5, 0.02);

  // tf32 buffers keep full f32 values: most are not tf32-representable.
  Buffer tf32(DType::tf32, 100);
  fill_random(DType::tf32, tf32.data(), 100, 1);
  int not_tf32 = 0;
  for (int64_t i = 0; i < 100; ++i)
    not_tf32 += round_to_tf32(float(tf32.get(i))) != float(tf32.get(i));
  EXPECT_GT(not_tf32, 90);
}

// fp8 buffers hold bytes whose values lie in the range and cover it (every value is what the byte
// decodes to, so it is exactly representable by construction; the count of distinct bytes shows
// the fill does not collapse onto a few values).
TEST(RandomFill, Fp8FillsRepresentableBytesAcrossTheRange) {
  for (DType t : {DType::e4m3, DType::e5m2}) {
    std::vector<uint8_t> bytes(4000);
    fill_random(t, bytes.data(), int64_t(bytes.size()), 3, -2.0, 2.0);
    std::vector<bool> seen(256, false);
    int distinct = 0;
    for (uint8_t b : bytes) {
      const double v = read_element(t, &b, 0);
      ASSERT_GE(v, -2.0);
      ASSERT_LE(v, 2.0);
      EXPECT_EQ(round_to_dtype(t, v), v);
      distinct += !seen[b];
      seen[b] = true;
    }
    // uniform draws fill the binades down to about 2^-6: e4m3 has 8 values per binade and sign
    // there (over 100 in all), e5m2 4 (over 70)
    EXPECT_GT(distinct, t == DType::e4m3 ? 60 : 40) << to_string(t);
  }
}

TEST(RandomFill, IntegersCoverTheirSmallRange) {
  Buffer s8(DType::s8, 5000), u8(DType::u8, 5000), s32(DType::s32, 5000);
  fill_random(DType::s8, s8.data(), 5000, 3);
  fill_random(DType::u8, u8.data(), 5000, 3);
  fill_random(DType::s32, s32.data(), 5000, 3, -4.0, 4.0);
  std::vector<int> s8_hits(33), u8_hits(17);
  for (int64_t i = 0; i < 5000; ++i) {
    ASSERT_GE(s8.get(i), -16);
    ASSERT_LE(s8.get(i), 16);
    ASSERT_GE(u8.get(i), 0);
    ASSERT_LE(u8.get(i), 16);
    ASSERT_GE(s32.get(i), -64);
    ASSERT_LE(s32.get(i), 64);
    ++s8_hits[size_t(s8.get(i) + 16)];
    ++u8_hits[size_t(u8.get(i))];
  }
  for (const int hits : s8_hits)
    EXPECT_GT(hits, 80); // ~151 expected each
  for (const int hits : u8_hits)
    EXPECT_GT(hits, 180); // ~294 expected each
  Buffer threes(DType::s8, 10);
  fill_random(DType::s8, threes.data(), 10, 9, 3 / 16.0, 3 / 16.0);
  for (int64_t i = 0; i < 10; ++i)
    EXPECT_EQ(threes.get(i), 3);
  EXPECT_THROW(fill_random(DType::u8, u8.data(), 1, 1, -1.0, -0.5), std::invalid_argument);
  EXPECT_THROW(fill_random(DType::f32, u8.data(), 1, 1, 1.0, 0.0), std::invalid_argument);
}

TEST(ParallelFor, CoversEveryIndexExactlyOnce) {
  for (const int64_t count : {0, 1, 7, 1000, 100003}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(count));
    parallel_for(count, 3, [&](int64_t begin, int64_t end) {
      ASSERT_LE(0, begin);
      ASSERT_LT(begin, end);
      ASSERT_LE(end, count);
      for (int64_t i = begin; i < end; ++i)
        hits[size_t(i)].fetch_add(1);
    });
    for (int64_t i = 0; i < count; ++i)
      ASSERT_EQ(hits[size_t(i)].load(), 1) << "count " << count << " index " << i;
  }
  EXPECT_GE(reference_thread_count(), 1);
}

TEST(ParallelFor, RethrowsAChunksException) {
  EXPECT_THROW(parallel_for(1000, 1,
                            [](int64_t begin, int64_t end) {
                              if (begin <= 500 && 500 < end)
                                throw std::runtime_error("chunk failed");
                            }),
               std::runtime_error);
}

} // namespace
} // namespace tcjit
