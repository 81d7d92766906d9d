#include "compiler/reference/numeric_convert.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

namespace tcjit {
namespace {

constexpr float inf_f = std::numeric_limits<float>::infinity();
constexpr float nan_f = std::numeric_limits<float>::quiet_NaN();

bool is_f16_nan(uint16_t bits) {
  return (bits & 0x7C00) == 0x7C00 && (bits & 0x03FF) != 0;
}
bool is_bf16_nan(uint16_t bits) {
  return (bits & 0x7F80) == 0x7F80 && (bits & 0x007F) != 0;
}

TEST(F16Conversion, ExactValuesEncode) {
  EXPECT_EQ(f32_to_f16_bits(1.0f), 0x3C00);
  EXPECT_EQ(f32_to_f16_bits(-2.0f), 0xC000);
  EXPECT_EQ(f32_to_f16_bits(0.5f), 0x3800);
  EXPECT_EQ(f32_to_f16_bits(65504.0f), 0x7BFF); // largest finite
  EXPECT_EQ(f32_to_f16_bits(0.0f), 0x0000);
  EXPECT_EQ(f32_to_f16_bits(-0.0f), 0x8000);
}

TEST(F16Conversion, TiesRoundToEven) {
  // 1 + 2^-11 lies halfway between 1 (even mantissa) and 1 + 2^-10.
  EXPECT_EQ(f32_to_f16_bits(1.0f + 0x1p-11f), 0x3C00);
  // 1 + 3 * 2^-11 lies halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even).
  EXPECT_EQ(f32_to_f16_bits(1.0f + 3 * 0x1p-11f), 0x3C02);
  EXPECT_EQ(f32_to_f16_bits(-(1.0f + 3 * 0x1p-11f)), 0xBC02);
  // Just above and below the tie go to the nearer neighbour.
  EXPECT_EQ(f32_to_f16_bits(1.0f + 0x1p-11f + 0x1p-20f), 0x3C01);
  EXPECT_EQ(f32_to_f16_bits(1.0f + 3 * 0x1p-11f - 0x1p-20f), 0x3C01);
}

TEST(F16Conversion, OverflowGoesToInfinity) {
  EXPECT_EQ(f32_to_f16_bits(65519.0f), 0x7BFF); // below the 65520 tie
  EXPECT_EQ(f32_to_f16_bits(65520.0f), 0x7C00); // tie with 2^16: rounds to even = infinity
  EXPECT_EQ(f32_to_f16_bits(-70000.0f), 0xFC00);
  EXPECT_EQ(f32_to_f16_bits(1e30f), 0x7C00);
  EXPECT_EQ(f32_to_f16_bits(inf_f), 0x7C00);
  EXPECT_EQ(f32_to_f16_bits(-inf_f), 0xFC00);
  EXPECT_EQ(f64_to_f16_bits(1e300), 0x7C00);
}

TEST(F16Conversion, NanStaysNan) {
  EXPECT_TRUE(is_f16_nan(f32_to_f16_bits(nan_f)));
  EXPECT_TRUE(is_f16_nan(f32_to_f16_bits(-nan_f)));
  // A NaN whose payload lies only in low bits must not truncate into an infinity.
  EXPECT_TRUE(is_f16_nan(f32_to_f16_bits(std::bit_cast<float>(0x7F800001u))));
  EXPECT_TRUE(std::isnan(f16_bits_to_f32(0x7E00)));
  EXPECT_TRUE(std::isnan(f16_bits_to_f32(0xFC01)));
}

TEST(F16Conversion, SubnormalsRoundCorrectly) {
  EXPECT_EQ(f32_to_f16_bits(0x1p-24f), 0x0001);   // smallest subnormal
  EXPECT_EQ(f32_to_f16_bits(0x1p-25f), 0x0000);   // tie between 0 and 2^-24: even is 0
  EXPECT_EQ(f32_to_f16_bits(0x1.8p-24f), 0x0002); // 1.5 * 2^-24: tie, even is 2
  EXPECT_EQ(f32_to_f16_bits(0x1.4p-24f), 0x0001); // 1.25 * 2^-24
  EXPECT_EQ(f32_to_f16_bits(0x1p-26f), 0x0000);
  EXPECT_EQ(f32_to_f16_bits(-0x1p-26f), 0x8000);          // keeps its sign
  EXPECT_EQ(f32_to_f16_bits(1023 * 0x1p-24f), 0x03FF);    // largest subnormal
  EXPECT_EQ(f32_to_f16_bits(1023.5f * 0x1p-24f), 0x0400); // tie: rounds up to the smallest normal
  EXPECT_EQ(f32_to_f16_bits(0x1p-14f), 0x0400);
  EXPECT_EQ(f16_bits_to_f32(0x0001), 0x1p-24f);
  EXPECT_EQ(f16_bits_to_f32(0x03FF), 1023 * 0x1p-24f);
  EXPECT_EQ(f16_bits_to_f32(0x8001), -0x1p-24f);
}

TEST(F16Conversion, EveryFiniteValueDecodesToItsFieldsValueAndEncodesBack) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const int exponent = (bits >> 10) & 0x1F, mantissa = bits & 0x3FF;
    if (exponent == 0x1F)
      continue; // infinities and NaNs: the tests above
    // the IEEE binary16 definition: (-1)^s * 2^(e-15) * 1.m, or 2^-14 * 0.m when e = 0
    const double magnitude =
        exponent == 0 ? std::ldexp(mantissa, -24) : std::ldexp(1024 + mantissa, exponent - 25);
    const double expected = (bits & 0x8000) ? -magnitude : magnitude;
    const float decoded = f16_bits_to_f32(static_cast<uint16_t>(bits));
    ASSERT_EQ(decoded, expected) << "bits 0x" << std::hex << bits;
    ASSERT_EQ(std::signbit(decoded), (bits & 0x8000) != 0) << "bits 0x" << std::hex << bits;
    ASSERT_EQ(f32_to_f16_bits(decoded), bits) << "bits 0x" << std::hex << bits;
  }
}

// Doubles spread over every binade an f16 or f32 rounding cares about (subnormal results,
// overflow, ties built exactly at half an ulp of the target and one double ulp either side).
std::vector<double> rounding_probe_values(int target_fraction_bits, int min_exp, int max_exp) {
  std::vector<double> values;
  uint64_t state = 0x9E3779B97F4A7C15ull;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  for (int e = min_exp; e <= max_exp; ++e)
    for (int i = 0; i < 400; ++i) {
      const double random = std::ldexp(1.0 + static_cast<double>(next() >> 12) * 0x1p-52, e);
      // a tie: an odd multiple of half the target's ulp in this binade
      const double ulp = std::ldexp(1.0, e - target_fraction_bits);
      const double tie =
          std::ldexp(1.0, e) + (2.0 * static_cast<double>(next() % 512) + 1) * ulp / 2;
      for (double v : {random, tie, std::nextafter(tie, 0.0), std::nextafter(tie, 1e300)})
        for (double sign : {1.0, -1.0})
          values.push_back(sign * v);
    }
  return values;
}

#if defined(__FLT16_MAX__)
// The compiler's double -> _Float16 conversion (correctly rounded, ties to even) as an
// independent judge of f64_to_f16_bits.
TEST(F16Conversion, FromDoubleMatchesTheCompilersFloat16OverEveryBinade) {
  for (double v : rounding_probe_values(10, -30, 17)) {
    const auto expected = std::bit_cast<uint16_t>(static_cast<_Float16>(v));
    ASSERT_EQ(f64_to_f16_bits(v), expected) << std::hexfloat << v;
  }
}
#endif

// The hardware's double -> float conversion (ties to even) as the judge of the f32 rounding.
TEST(F32Rounding, FromDoubleMatchesTheHardwareConversionOverEveryBinade) {
  for (double v : rounding_probe_values(23, -155, 129)) {
    const double expected = static_cast<double>(static_cast<float>(v));
    ASSERT_EQ(std::bit_cast<uint64_t>(round_to_dtype(DType::f32, v)),
              std::bit_cast<uint64_t>(expected))
        << std::hexfloat << v;
  }
}

TEST(F16Conversion, DecodesSpecialValues) {
  EXPECT_EQ(f16_bits_to_f32(0x3C00), 1.0f);
  EXPECT_EQ(f16_bits_to_f32(0x7BFF), 65504.0f);
  EXPECT_EQ(f16_bits_to_f32(0x7C00), inf_f);
  EXPECT_EQ(f16_bits_to_f32(0xFC00), -inf_f);
  EXPECT_EQ(f16_bits_to_f32(0x3555), 0x1.554p-2f); // 0.333251953125
  const float negative_zero = f16_bits_to_f32(0x8000);
  EXPECT_EQ(negative_zero, 0.0f);
  EXPECT_TRUE(std::signbit(negative_zero));
}

TEST(F16Conversion, EveryNonNanPatternRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const auto pattern = static_cast<uint16_t>(bits);
    if (is_f16_nan(pattern))
      continue;
    ASSERT_EQ(f32_to_f16_bits(f16_bits_to_f32(pattern)), pattern) << std::hex << bits;
  }
}

TEST(F16Conversion, FromDoubleRoundsOnceNotThroughFloat) {
  // 1 + 2^-11 + 2^-40: just above the f16 tie, so it rounds up. Through float the 2^-40 is lost
  // first and the tie then rounds to even (down): the double-rounding error this API avoids.
  const double value = 1.0 + 0x1p-11 + 0x1p-40;
  EXPECT_EQ(f64_to_f16_bits(value), 0x3C01);
  EXPECT_EQ(f32_to_f16_bits(static_cast<float>(value)), 0x3C00);
}

TEST(Bf16Conversion, TiesRoundToEven) {
  EXPECT_EQ(f32_to_bf16_bits(1.0f), 0x3F80);
  EXPECT_EQ(f32_to_bf16_bits(1.0f + 0x1p-8f), 0x3F80);     // tie: even is 1
  EXPECT_EQ(f32_to_bf16_bits(1.0f + 3 * 0x1p-8f), 0x3F82); // tie: even is 1 + 2^-6
  EXPECT_EQ(f32_to_bf16_bits(1.0f + 0x1p-8f + 0x1p-20f), 0x3F81);
  EXPECT_EQ(f32_to_bf16_bits(-(1.0f + 3 * 0x1p-8f)), 0xBF82);
  EXPECT_EQ(bf16_bits_to_f32(0x3F81), 1.0f + 0x1p-7f);
}

TEST(Bf16Conversion, NanInfinityOverflowAndSubnormals) {
  EXPECT_TRUE(is_bf16_nan(f32_to_bf16_bits(nan_f)));
  // Truncating this NaN's bits would give an infinity.
  EXPECT_TRUE(is_bf16_nan(f32_to_bf16_bits(std::bit_cast<float>(0x7F800001u))));
  EXPECT_TRUE(is_bf16_nan(f64_to_bf16_bits(std::numeric_limits<double>::quiet_NaN())));
  EXPECT_EQ(f32_to_bf16_bits(inf_f), 0x7F80);
  EXPECT_EQ(f32_to_bf16_bits(-inf_f), 0xFF80);
  EXPECT_EQ(f32_to_bf16_bits(std::numeric_limits<float>::max()), 0x7F80); // rounds past max
  EXPECT_EQ(f32_to_bf16_bits(0x1.FEp127f), 0x7F7F);                       // largest finite
  EXPECT_EQ(f64_to_bf16_bits(1e300), 0x7F80);
  EXPECT_EQ(f32_to_bf16_bits(0x1p-133f), 0x0001); // smallest subnormal
  EXPECT_EQ(f32_to_bf16_bits(0x1p-134f), 0x0000); // tie with 0
  EXPECT_EQ(f32_to_bf16_bits(0x1.8p-133f), 0x0002);
  EXPECT_TRUE(std::isnan(bf16_bits_to_f32(0x7FC0)));
}

TEST(Bf16Conversion, FromDoubleRoundsOnceNotThroughFloat) {
  // 1 + 2^-8 + 2^-40 is above the bf16 tie; float drops the 2^-40 and the tie goes to even.
  const double value = 1.0 + 0x1p-8 + 0x1p-40;
  EXPECT_EQ(f64_to_bf16_bits(value), 0x3F81);
  EXPECT_EQ(f32_to_bf16_bits(static_cast<float>(value)), 0x3F80);
}

TEST(Tf32Rounding, TiesGoAwayFromZero) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: cvt.rna picks 1 + 2^-10 (RNE would pick 1).
  EXPECT_EQ(round_to_tf32(1.0f + 0x1p-11f), 1.0f + 0x1p-10f);
  EXPECT_EQ(round_to_tf32(-(1.0f + 0x1p-11f)), -(1.0f + 0x1p-10f));
  EXPECT_EQ(round_to_tf32(1.0f + 0x1p-11f - 0x1p-23f), 1.0f); // just below the tie
  EXPECT_EQ(round_to_tf32(1.0f + 3 * 0x1p-11f), 1.0f + 0x1p-9f);
  EXPECT_EQ(round_to_tf32(1.0f + 0x1p-10f), 1.0f + 0x1p-10f); // already tf32
}

TEST(Tf32Rounding, LowBitsZeroAndSpecialsPreserved) {
  for (const float v : {0.1f, -3.14159f, 1e-30f, 123456.789f, 0x1.FFFFFEp-1f}) {
    const uint32_t bits = std::bit_cast<uint32_t>(round_to_tf32(v));
    EXPECT_EQ(bits & 0x1FFFu, 0u) << v;
    EXPECT_LE(std::fabs(round_to_tf32(v) - v), std::fabs(v) * 0x1p-11f) << v;
  }
  EXPECT_EQ(round_to_tf32(0x1.FFFFFEp-1f), 1.0f); // carries into the exponent
  EXPECT_EQ(round_to_tf32(inf_f), inf_f);
  EXPECT_EQ(round_to_tf32(-inf_f), -inf_f);
  EXPECT_TRUE(std::isnan(round_to_tf32(nan_f)));
  EXPECT_TRUE(std::isnan(round_to_tf32(std::bit_cast<float>(0x7F800001u))));
  EXPECT_EQ(round_to_tf32(std::numeric_limits<float>::max()), inf_f);
  EXPECT_TRUE(std::signbit(round_to_tf32(-0.0f)));
}

TEST(IntegerWrite, RoundsHalfToEvenAndSaturates) {
  int8_t s8 = 0;
  auto s8_of = [&](double v) {
    write_element(DType::s8, &s8, 0, v);
    return static_cast<int>(s8);
  };
  EXPECT_EQ(s8_of(2.5), 2);
  EXPECT_EQ(s8_of(3.5), 4);
  EXPECT_EQ(s8_of(-2.5), -2);
  EXPECT_EQ(s8_of(-3.5), -4);
  EXPECT_EQ(s8_of(2.4999), 2);
  EXPECT_EQ(s8_of(126.5), 126);
  EXPECT_EQ(s8_of(127.5), 127);
  EXPECT_EQ(s8_of(200), 127);
  EXPECT_EQ(s8_of(-128.5), -128);
  EXPECT_EQ(s8_of(-1e9), -128);
  EXPECT_EQ(s8_of(std::numeric_limits<double>::infinity()), 127);
  EXPECT_EQ(s8_of(std::numeric_limits<double>::quiet_NaN()), 0);

  uint8_t u8 = 7;
  write_element(DType::u8, &u8, 0, -3.0);
  EXPECT_EQ(u8, 0);
  write_element(DType::u8, &u8, 0, 254.5);
  EXPECT_EQ(u8, 254);
  write_element(DType::u8, &u8, 0, 300.0);
  EXPECT_EQ(u8, 255);

  int32_t s32 = 0;
  write_element(DType::s32, &s32, 0, 3e9);
  EXPECT_EQ(s32, 2147483647);
  write_element(DType::s32, &s32, 0, -3e9);
  EXPECT_EQ(s32, -2147483647 - 1);
  write_element(DType::s32, &s32, 0, 1000001.5);
  EXPECT_EQ(s32, 1000002);
}

TEST(ElementAccess, ReadsAndWritesEachFormatAtItsIndex) {
  uint16_t halves[3] = {0, 0, 0};
  write_element(DType::f16, halves, 1, 0.333333);
  EXPECT_EQ(halves[1], 0x3555);
  EXPECT_EQ(halves[0], 0);
  EXPECT_EQ(read_element(DType::f16, halves, 1), 0.333251953125);
  write_element(DType::bf16, halves, 2, -2.0);
  EXPECT_EQ(halves[2], 0xC000);
  float floats[2] = {0, 0};
  write_element(DType::f32, floats, 1, 0.1);
  EXPECT_EQ(floats[1], 0.1f);
  write_element(DType::f32, floats, 0, 1e39);
  EXPECT_EQ(floats[0], inf_f);
  write_element(DType::tf32, floats, 0, 0.1); // tf32 storage is a plain f32
  EXPECT_EQ(floats[0], 0.1f);
  double d = 0;
  write_element(DType::f64, &d, 0, 0.1);
  EXPECT_EQ(read_element(DType::f64, &d, 0), 0.1);
  const int8_t s8[2] = {-5, 100};
  EXPECT_EQ(read_element(DType::s8, s8, 0), -5.0);
  const uint8_t u8[1] = {200};
  EXPECT_EQ(read_element(DType::u8, u8, 0), 200.0);
  EXPECT_EQ(round_to_dtype(DType::f16, 1.0 + 0x1p-11), 1.0);
  EXPECT_EQ(round_to_dtype(DType::s8, 300.0), 127.0);
}

TEST(ElementAccess, StorageBytesAndReservedTypes) {
  EXPECT_EQ(dtype_storage_bytes(DType::f16), 2);
  EXPECT_EQ(dtype_storage_bytes(DType::bf16), 2);
  EXPECT_EQ(dtype_storage_bytes(DType::tf32), 4);
  EXPECT_EQ(dtype_storage_bytes(DType::f64), 8);
  EXPECT_EQ(dtype_storage_bytes(DType::u8), 1);
  EXPECT_EQ(dtype_storage_bytes(DType::e4m3), 1);
  EXPECT_EQ(dtype_storage_bytes(DType::e5m2), 1);
  EXPECT_THROW(dtype_storage_bytes(DType::s4), std::invalid_argument);
  EXPECT_THROW(dtype_storage_bytes(DType::b1), std::invalid_argument);
}

double read_fp8(DType t, uint8_t bits) {
  return read_element(t, &bits, 0);
}
uint8_t write_fp8(DType t, double v) {
  uint8_t bits = 0xAA;
  write_element(t, &bits, 0, v);
  return bits;
}

// Bit patterns and their values, from the OCP 8-bit float formats: e4m3 S.EEEE.MMM bias 7 (no
// infinities; S.1111.111 is NaN; max 448), e5m2 S.EEEEE.MM bias 15 (IEEE infinities and NaNs;
// max 57344).
TEST(Fp8Conversion, DecodesATableOfBitPatterns) {
  const struct {
    uint8_t bits;
    double e4m3, e5m2;
  } table[] = {
      {0x00, 0.0, 0.0},
      {0x01, 0x1p-9, 0x1p-16},         // smallest subnormals
      {0x03, 3 * 0x1p-9, 3 * 0x1p-16}, // largest e5m2 subnormal
      {0x07, 7 * 0x1p-9, 0x1.Cp-14},   // largest e4m3 subnormal; e5m2 1.11b * 2^-14
      {0x08, 0x1p-6, 0x1p-13},         // smallest e4m3 normal
      {0x38, 1.0, 0.5},                // 0.0111.000 = 1; 0.01110.00 = 2^-1
      {0x3C, 1.5, 1.0},                // 0.0111.100 = 1.5; 0.01111.00 = 1
      {0x40, 2.0, 2.0},
      {0x77, 240.0, 0x1.Cp14},     // 0.1110.111; 0.11101.11 = 1.75 * 2^14
      {0x7B, 0x1.6p8, 57344.0},    // e5m2 max: 1.75 * 2^15
      {0x7E, 448.0, std::nan("")}, // e4m3 max: 1.75 * 2^8; e5m2 NaN
      {0xB8, -1.0, -0.5},
      {0xFE, -448.0, std::nan("")},
  };
  for (const auto &row : table) {
    SCOPED_TRACE(int(row.bits));
    if (std::isnan(row.e4m3))
      EXPECT_TRUE(std::isnan(read_fp8(DType::e4m3, row.bits)));
    else
      EXPECT_EQ(read_fp8(DType::e4m3, row.bits), row.e4m3);
    if (std::isnan(row.e5m2))
      EXPECT_TRUE(std::isnan(read_fp8(DType::e5m2, row.bits)));
    else
      EXPECT_EQ(read_fp8(DType::e5m2, row.bits), row.e5m2);
  }
  // specials
  EXPECT_TRUE(std::isnan(read_fp8(DType::e4m3, 0x7F)));
  EXPECT_TRUE(std::isnan(read_fp8(DType::e4m3, 0xFF)));
  EXPECT_EQ(read_fp8(DType::e4m3, 0x78), 256.0); // S.1111.000 is a number in e4m3
  EXPECT_EQ(read_fp8(DType::e5m2, 0x7C), std::numeric_limits<double>::infinity());
  EXPECT_EQ(read_fp8(DType::e5m2, 0xFC), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(read_fp8(DType::e5m2, 0x7D)));
  EXPECT_TRUE(std::isnan(read_fp8(DType::e5m2, 0x7F)));
  EXPECT_TRUE(std::signbit(read_fp8(DType::e4m3, 0x80)));
  EXPECT_EQ(read_fp8(DType::e4m3, 0x80), 0.0);
}

TEST(Fp8Conversion, EveryNonNanPatternRoundTrips) {
  for (DType t : {DType::e4m3, DType::e5m2})
    for (int b = 0; b < 256; ++b) {
      const double v = read_fp8(t, static_cast<uint8_t>(b));
      if (std::isnan(v) || std::isinf(v))
        continue;
      EXPECT_EQ(write_fp8(t, v), b) << to_string(t) << " " << b;
    }
}

// Writing is cvt.rn.satfinite: nearest even, magnitudes past the largest finite value (and
// infinities) saturate to it, NaN stays NaN.
TEST(Fp8Conversion, WritesRoundToNearestEvenAndSaturate) {
  EXPECT_EQ(write_fp8(DType::e4m3, 1.0625), 0x38);   // halfway 1 .. 1.125: to even (1)
  EXPECT_EQ(write_fp8(DType::e4m3, 1.1875), 0x3A);   // halfway 1.125 .. 1.25: to even (1.25)
  EXPECT_EQ(write_fp8(DType::e4m3, 1.07), 0x39);     // above halfway
  EXPECT_EQ(write_fp8(DType::e4m3, 0x1p-10), 0x00);  // half the smallest subnormal: to even (0)
  EXPECT_EQ(write_fp8(DType::e4m3, 0x1.8p-9), 0x02); // 1.5 subnormal steps: to even (2)
  EXPECT_EQ(write_fp8(DType::e4m3, 460.0), 0x7E);    // saturates (not NaN)
  EXPECT_EQ(write_fp8(DType::e4m3, 1e9), 0x7E);
  EXPECT_EQ(write_fp8(DType::e4m3, -1e9), 0xFE);
  EXPECT_EQ(write_fp8(DType::e4m3, std::numeric_limits<double>::infinity()), 0x7E);
  EXPECT_EQ(write_fp8(DType::e5m2, 61440.0), 0x7B); // halfway past the max: still the max
  EXPECT_EQ(write_fp8(DType::e5m2, -std::numeric_limits<double>::infinity()), 0xFB);
  EXPECT_EQ(write_fp8(DType::e5m2, 1.125), 0x3C); // halfway 1 .. 1.25: to even (1)
  EXPECT_TRUE(std::isnan(read_fp8(DType::e4m3, write_fp8(DType::e4m3, std::nan("")))));
  EXPECT_TRUE(std::isnan(read_fp8(DType::e5m2, write_fp8(DType::e5m2, std::nan("")))));
  EXPECT_EQ(round_to_dtype(DType::e4m3, 0.3), 0.3125); // 1.010b * 2^-2
  EXPECT_EQ(round_to_dtype(DType::e5m2, 0.3), 0.3125); // 1.01b * 2^-2
}

// Packed elements: s4/u4 two per byte, element 2i in the low nibble (s4 two's complement); b1
// eight per byte, element 8i in bit 0. Writes touch only their element and saturate.
TEST(ElementAccess, PackedSubByteElements) {
  const unsigned char s4[2] = {0x8F, 0x71}; // elements -1, -8, 1, 7
  EXPECT_EQ(read_element(DType::s4, s4, 0), -1);
  EXPECT_EQ(read_element(DType::s4, s4, 1), -8);
  EXPECT_EQ(read_element(DType::s4, s4, 2), 1);
  EXPECT_EQ(read_element(DType::s4, s4, 3), 7);
  EXPECT_EQ(read_element(DType::u4, s4, 0), 15);
  EXPECT_EQ(read_element(DType::u4, s4, 1), 8);
  unsigned char buf[2] = {0, 0};
  write_element(DType::s4, buf, 1, -3);  // 0xD in the high nibble of byte 0
  write_element(DType::s4, buf, 2, 100); // saturates to 7
  write_element(DType::u4, buf, 3, -5);  // saturates to 0
  EXPECT_EQ(buf[0], 0xD0);
  EXPECT_EQ(buf[1], 0x07);
  const unsigned char bits[2] = {0x05, 0x80}; // elements 0, 2 and 15 set
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(read_element(DType::b1, bits, i), i == 0 || i == 2 || i == 15 ? 1 : 0) << i;
  unsigned char out[1] = {0xFF};
  write_element(DType::b1, out, 3, 0);
  write_element(DType::b1, out, 4, 7); // saturates to 1
  EXPECT_EQ(out[0], 0xF7);
}

TEST(HardwareView, Tf32RoundingAppliesToTf32AndToF32UnderTf32Math) {
  const float value = 1.0f + 0x1p-11f;
  EXPECT_EQ(read_input_as_hardware_sees(DType::f32, MathMode::tf32, &value, 0), 1.0 + 0x1p-10);
  EXPECT_EQ(read_input_as_hardware_sees(DType::f32, MathMode::f32, &value, 0), 1.0 + 0x1p-11);
  EXPECT_EQ(read_input_as_hardware_sees(DType::tf32, MathMode::f32, &value, 0), 1.0 + 0x1p-10);
  const uint16_t half = 0x3C01;
  EXPECT_EQ(read_input_as_hardware_sees(DType::f16, MathMode::tf32, &half, 0), 1.0 + 0x1p-10);
  EXPECT_THROW(read_input_as_hardware_sees(DType::f32, MathMode::automatic, &value, 0),
               std::invalid_argument);
}

TEST(HardwareView, ResolvedMathModeFollowsTheSpecAndEnvironment) {
  OpSpec spec;
  spec.math = MathMode::f32;
  EXPECT_EQ(resolved_math_mode(spec), MathMode::f32);
  spec.math = MathMode::tf32;
  EXPECT_EQ(resolved_math_mode(spec), MathMode::tf32);
  spec.math = MathMode::automatic;
  EXPECT_EQ(resolved_math_mode(spec),
            tf32_disabled_by_environment() ? MathMode::f32 : MathMode::tf32);
}

} // namespace
} // namespace tcjit
