// Conversions between the floating-point formats PTX uses (f64, f32, f16, bf16, tf32) and
// integers, with every PTX rounding mode. All roundings are single roundings from the exact
// input value (long double holds every f64 and every 64-bit integer exactly).
#pragma once

#include <cstdint>

#include "runtime/emu/program.h"

namespace tcjit::emu {

struct FloatFormat {
  int exponent_bits;
  int mantissa_bits; // stored fraction bits
};
constexpr FloatFormat kF16{5, 10};
constexpr FloatFormat kBF16{8, 7};
constexpr FloatFormat kTF32{8, 10}; // stored in an f32 container, low 13 bits zero
constexpr FloatFormat kF32{8, 23};

// Rounds x to the format with mode (Rn, Rz, Rm, Rp, Rna); returns the rounded value (possibly
// +-inf on overflow per the mode). NaN stays NaN.
long double round_to_format(long double x, FloatFormat f, Round mode);
// Largest finite value of the format.
long double max_finite(FloatFormat f);

// Bits of an exactly representable value (or inf/NaN) in a small format; NaN -> canonical NaN.
uint32_t encode_small_float(long double x, FloatFormat f);
long double decode_small_float(uint32_t bits, FloatFormat f);

inline float f16_bits_to_f32(uint16_t h) {
  return static_cast<float>(decode_small_float(h, kF16));
}
inline float bf16_bits_to_f32(uint16_t h) {
  return static_cast<float>(decode_small_float(h, kBF16));
}
uint16_t f32_to_f16_bits(float x, Round mode = Round::Rn);
uint16_t f32_to_bf16_bits(float x, Round mode = Round::Rn);

// Rounds to an integral value (Rni, Rzi, Rmi, Rpi; also Rn/Rz/Rm/Rp as their integer forms).
long double round_to_integral(long double x, Round mode);

// Flush a subnormal f32 to a signed zero.
float flush_subnormal(float x);

} // namespace tcjit::emu
