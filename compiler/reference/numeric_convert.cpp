#include "compiler/reference/numeric_convert.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

namespace tcjit {

namespace {

// A binary floating-point format: significand bits (the implicit bit included), the smallest
// normal exponent, and the largest finite value.
struct BinaryFormat {
  int precision;
  int min_exponent;
  double max_finite;
};

constexpr BinaryFormat f16_format{11, -14, 65504.0};
constexpr BinaryFormat bf16_format{8, -126, 3.3895313892515355e38}; // (2 - 2^-7) * 2^127
constexpr BinaryFormat f32_format{24, -126, 3.4028234663852886e38}; // FLT_MAX

// std::ilogb(value) for a finite non-zero value, from the exponent field where it is normal.
int exponent_of(double value) {
  const int field = static_cast<int>(std::bit_cast<uint64_t>(value) >> 52) & 0x7FF;
  return field != 0 ? field - 1023 : std::ilogb(value);
}

// std::ldexp(value, e): one multiply by 2^e (built from its bits) where 2^e is a normal double;
// both are the exact product, rounded once.
double scale_by_pow2(double value, int e) {
  if (e < -1022 || e > 1023)
    return std::ldexp(value, e);
  return value * std::bit_cast<double>(static_cast<uint64_t>(e + 1023) << 52);
}

// `value` rounded to `format`, to nearest with ties to even, overflowing to infinity. Scaling by
// powers of two is exact, so the only rounding is std::nearbyint's (round to nearest even in the
// default floating-point environment).
double round_to_format(double value, const BinaryFormat &format) {
  if (std::isnan(value) || std::isinf(value) || value == 0.0)
    return value;
  const int exponent = std::max(exponent_of(value), format.min_exponent);
  const int shift = format.precision - 1 - exponent;
  const double rounded = scale_by_pow2(std::nearbyint(scale_by_pow2(value, shift)), -shift);
  if (std::fabs(rounded) > format.max_finite)
    return std::copysign(std::numeric_limits<double>::infinity(), value);
  return rounded;
}

// Bits of an f16 that holds `value` exactly (value is already rounded to f16).
uint16_t encode_f16(double value) {
  const uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  if (std::isnan(value))
    return sign | 0x7E00;
  const double magnitude = std::fabs(value);
  if (std::isinf(magnitude))
    return sign | 0x7C00;
  if (magnitude == 0.0)
    return sign;
  const int exponent = exponent_of(magnitude);
  if (exponent < f16_format.min_exponent)
    return sign | static_cast<uint16_t>(scale_by_pow2(magnitude, 24)); // subnormal: m * 2^-24
  const auto mantissa = static_cast<uint16_t>(scale_by_pow2(magnitude, 10 - exponent) - 1024.0);
  return sign | static_cast<uint16_t>((exponent + 15) << 10) | mantissa;
}

// fp8 (the OCP 8-bit formats the sm_89 tensor cores multiply): e4m3 has bias 7, 3 fraction bits,
// no infinities and one NaN per sign (S.1111.111), largest finite 448; e5m2 has bias 15, 2
// fraction bits, and IEEE infinities (S.11111.00) and NaNs (S.11111.xx, xx != 0), largest
// finite 57344.
struct Fp8Format {
  int fraction_bits;
  int bias;
  double max_finite;
  bool ieee_specials; // e5m2: all-ones exponent is inf/NaN; e4m3: only S.1111.111 is NaN
};
constexpr Fp8Format e4m3_format{3, 7, 448.0, false};
constexpr Fp8Format e5m2_format{2, 15, 57344.0, true};

const Fp8Format &fp8_format(DType dtype) {
  return dtype == DType::e4m3 ? e4m3_format : e5m2_format;
}

double decode_fp8(uint8_t bits, const Fp8Format &f) {
  const int exponent_field = bits >> f.fraction_bits & ((1 << (7 - f.fraction_bits)) - 1);
  const int fraction = bits & ((1 << f.fraction_bits) - 1);
  const int all_ones = (1 << (7 - f.fraction_bits)) - 1;
  const double sign = (bits & 0x80) != 0 ? -1.0 : 1.0;
  if (f.ieee_specials && exponent_field == all_ones)
    return fraction == 0 ? sign * std::numeric_limits<double>::infinity()
                         : std::numeric_limits<double>::quiet_NaN();
  if (!f.ieee_specials && exponent_field == all_ones && fraction == (1 << f.fraction_bits) - 1)
    return std::numeric_limits<double>::quiet_NaN();
  if (exponent_field == 0) // subnormal: fraction * 2^(1 - bias - fraction_bits)
    return sign * std::ldexp(fraction, 1 - f.bias - f.fraction_bits);
  return sign *
         std::ldexp((1 << f.fraction_bits) + fraction, exponent_field - f.bias - f.fraction_bits);
}

// cvt.rn.satfinite: round to nearest even; a magnitude above the largest finite value (infinity
// included) becomes the largest finite value with its sign; NaN stays NaN.
uint8_t encode_fp8(double value, const Fp8Format &f) {
  const uint8_t sign = std::signbit(value) ? 0x80 : 0;
  if (std::isnan(value))
    return 0x7F; // e4m3: the NaN; e5m2: S.11111.11, a NaN
  const BinaryFormat binary{f.fraction_bits + 1, 1 - f.bias,
                            std::numeric_limits<double>::infinity()};
  const double magnitude = std::min(std::fabs(round_to_format(value, binary)), f.max_finite);
  if (magnitude == 0.0)
    return sign;
  const int exponent = std::ilogb(magnitude);
  if (exponent < 1 - f.bias) // subnormal
    return sign | static_cast<uint8_t>(std::ldexp(magnitude, f.bias - 1 + f.fraction_bits));
  const auto fraction =
      static_cast<int>(std::ldexp(magnitude, f.fraction_bits - exponent)) - (1 << f.fraction_bits);
  return sign | static_cast<uint8_t>((exponent + f.bias) << f.fraction_bits | fraction);
}

template <typename T> T saturate_to_integer(double value) {
  if (std::isnan(value))
    return 0;
  const double rounded = std::nearbyint(value);
  const double lo = static_cast<double>(std::numeric_limits<T>::min());
  const double hi = static_cast<double>(std::numeric_limits<T>::max());
  return static_cast<T>(std::clamp(rounded, lo, hi));
}

template <typename T> T load(const void *data, int64_t index) {
  T v;
  std::memcpy(&v, static_cast<const unsigned char *>(data) + index * int64_t(sizeof(T)), sizeof(T));
  return v;
}

template <typename T> void store(void *data, int64_t index, T v) {
  std::memcpy(static_cast<unsigned char *>(data) + index * int64_t(sizeof(T)), &v, sizeof(T));
}

// Packed sub-byte elements (docs/dsl.md "Packed types"): element i of `bits` bits lies in byte
// i * bits / 8, at bit (i * bits) % 8 upwards. The raw bits of one element:
unsigned load_packed(const void *data, int64_t index, int bits) {
  const int64_t bit = index * bits;
  const unsigned byte = static_cast<const unsigned char *>(data)[bit / 8];
  return (byte >> (bit % 8)) & ((1u << bits) - 1);
}

void store_packed(void *data, int64_t index, int bits, unsigned value) {
  const int64_t bit = index * bits;
  unsigned char &byte = static_cast<unsigned char *>(data)[bit / 8];
  const unsigned mask = ((1u << bits) - 1) << (bit % 8);
  byte = static_cast<unsigned char>((byte & ~mask) | ((value << (bit % 8)) & mask));
}

// value clamped to [lo, hi] after rounding to the nearest integer (NaN: 0).
int saturate_to_range(double value, int lo, int hi) {
  if (std::isnan(value))
    return 0;
  return static_cast<int>(std::clamp(std::nearbyint(value), double(lo), double(hi)));
}

[[noreturn]] void throw_reserved(DType dtype) {
  throw std::invalid_argument("tcjit reference: dtype " + std::string(to_string(dtype)) +
                              " is reserved and not supported yet");
}

} // namespace

uint16_t f64_to_f16_bits(double value) {
  return encode_f16(round_to_format(value, f16_format));
}

uint16_t f32_to_f16_bits(float value) {
  return f64_to_f16_bits(static_cast<double>(value));
}

float f16_bits_to_f32(uint16_t bits) {
  const bool negative = (bits & 0x8000) != 0;
  const int exponent = (bits >> 10) & 0x1F;
  const int mantissa = bits & 0x3FF;
  float magnitude = 0.0f;
  if (exponent == 0x1F)
    magnitude = mantissa == 0 ? std::numeric_limits<float>::infinity()
                              : std::numeric_limits<float>::quiet_NaN();
  else if (exponent == 0)
    magnitude = static_cast<float>(mantissa) * 0x1p-24f; // subnormal: m * 2^-24, exact
  else // (1024 + m) * 2^(exponent - 25); the power of two built from its bits (a normal f32)
    magnitude = static_cast<float>(1024 + mantissa) *
                std::bit_cast<float>(static_cast<uint32_t>(exponent - 25 + 127) << 23);
  return negative ? -magnitude : magnitude;
}

uint16_t f64_to_bf16_bits(double value) {
  if (std::isnan(value))
    return std::signbit(value) ? 0xFFC0 : 0x7FC0;
  // A bf16 value is an f32 whose low 16 bits are zero, so the rounded value converts exactly.
  const float rounded = static_cast<float>(round_to_format(value, bf16_format));
  return static_cast<uint16_t>(std::bit_cast<uint32_t>(rounded) >> 16);
}

uint16_t f32_to_bf16_bits(float value) {
  return f64_to_bf16_bits(static_cast<double>(value));
}

float bf16_bits_to_f32(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

float f64_to_f32(double value) {
  return static_cast<float>(round_to_format(value, f32_format));
}

float round_to_tf32(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & 0x7F800000u) == 0x7F800000u)
    return value; // infinity or NaN
  // Adding half of the dropped range to the magnitude bits and truncating rounds ties away from
  // zero; a carry out of the mantissa correctly bumps the exponent (to infinity at the top).
  return std::bit_cast<float>((bits + 0x1000u) & 0xFFFFE000u);
}

int dtype_storage_bytes(DType dtype) {
  switch (dtype) {
  case DType::f16:
  case DType::bf16: return 2;
  case DType::tf32:
  case DType::f32:
  case DType::s32: return 4;
  case DType::f64: return 8;
  case DType::s8:
  case DType::u8:
  case DType::e4m3:
  case DType::e5m2: return 1;
  case DType::s4:
  case DType::u4:
  case DType::b1:
    throw std::invalid_argument("tcjit reference: " + std::string(to_string(dtype)) +
                                " elements are packed several per byte; size their buffers with "
                                "packed_bytes (compiler/target/dtype_info.h)");
  }
  throw_reserved(dtype);
}

double read_element(DType dtype, const void *data, int64_t index) {
  switch (dtype) {
  case DType::f16: return f16_bits_to_f32(load<uint16_t>(data, index));
  case DType::bf16: return bf16_bits_to_f32(load<uint16_t>(data, index));
  case DType::tf32:
  case DType::f32: return load<float>(data, index);
  case DType::f64: return load<double>(data, index);
  case DType::s8: return load<int8_t>(data, index);
  case DType::u8: return load<uint8_t>(data, index);
  case DType::s32: return load<int32_t>(data, index);
  case DType::e4m3:
  case DType::e5m2: return decode_fp8(load<uint8_t>(data, index), fp8_format(dtype));
  case DType::s4: return static_cast<int>(load_packed(data, index, 4) ^ 8u) - 8; // sign-extend
  case DType::u4: return load_packed(data, index, 4);
  case DType::b1: return load_packed(data, index, 1);
  }
  throw_reserved(dtype);
}

void write_element(DType dtype, void *data, int64_t index, double value) {
  switch (dtype) {
  case DType::f16: return store<uint16_t>(data, index, f64_to_f16_bits(value));
  case DType::bf16: return store<uint16_t>(data, index, f64_to_bf16_bits(value));
  case DType::tf32:
  case DType::f32: return store<float>(data, index, f64_to_f32(value));
  case DType::f64: return store<double>(data, index, value);
  case DType::s8: return store<int8_t>(data, index, saturate_to_integer<int8_t>(value));
  case DType::u8: return store<uint8_t>(data, index, saturate_to_integer<uint8_t>(value));
  case DType::s32: return store<int32_t>(data, index, saturate_to_integer<int32_t>(value));
  case DType::e4m3:
  case DType::e5m2: return store<uint8_t>(data, index, encode_fp8(value, fp8_format(dtype)));
  case DType::s4:
    return store_packed(data, index, 4, static_cast<unsigned>(saturate_to_range(value, -8, 7)));
  case DType::u4:
    return store_packed(data, index, 4, static_cast<unsigned>(saturate_to_range(value, 0, 15)));
  case DType::b1:
    return store_packed(data, index, 1, static_cast<unsigned>(saturate_to_range(value, 0, 1)));
  }
  throw_reserved(dtype);
}

double round_to_dtype(DType dtype, double value) {
  unsigned char storage[8] = {};
  write_element(dtype, storage, 0, value);
  return read_element(dtype, storage, 0);
}

double read_input_as_hardware_sees(DType dtype, MathMode resolved, const void *data,
                                   int64_t index) {
  if (resolved == MathMode::automatic)
    throw std::invalid_argument(
        "tcjit reference: the math mode must be resolved (tf32 or f32), not auto");
  const double value = read_element(dtype, data, index);
  const bool rounds_to_tf32 =
      dtype == DType::tf32 || (dtype == DType::f32 && resolved == MathMode::tf32);
  if (!rounds_to_tf32)
    return value;
  return round_to_tf32(static_cast<float>(value));
}

MathMode resolved_math_mode(const OpSpec &spec) {
  return resolve_math(spec.math, tf32_disabled_by_environment());
}

} // namespace tcjit
