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

// Every f16 / bf16 value as a float (65536 entries each, built once; exact: both formats are
// subsets of f32; NaN decodes to the canonical NaN with the input's sign, as decode_small_float).
const float *f16_table();
const float *bf16_table();

// Every e4m3 / e5m2 byte as a float (256 entries each; exact). e4m3: bias 7, no infinities,
// NaN = S.1111.111, max 448; e5m2: bias 15, IEEE infinities and NaNs, max 57344.
const float *e4m3_table();
const float *e5m2_table();

inline float f16_bits_to_f32(uint16_t h) {
  return f16_table()[h];
}
inline float bf16_bits_to_f32(uint16_t h) {
  return bf16_table()[h];
}
uint16_t f32_to_f16_bits(float x, Round mode = Round::Rn);

// Bit-level fast paths, equal to encode_small_float(round_to_format(x, format, mode)) for every
// f32 input x (checked exhaustively): f32 bits -> f16 / bf16 bits, round to nearest even; f32
// bits -> tf32 (in its f32 container), round to nearest with ties away (cvt.rna.tf32.f32) or
// to even. NaN gives the canonical NaN (0x7fff, 0x7fffffff).
inline uint32_t f32_to_f16_rn(uint32_t u) {
  const uint32_t sign = (u >> 16) & 0x8000u;
  u &= 0x7fffffffu;
  if (u > 0x7f800000u)
    return 0x7fffu;
  if (u >= 0x477ff000u) // >= 65520 (halfway from the largest f16 to 2^16, a tie to even): inf
    return sign | 0x7c00u;
  if (u >= 0x38800000u) { // normal f16
    uint32_t h = (u - 0x38000000u) >> 13;
    const uint32_t rem = u & 0x1fffu;
    h += rem > 0x1000u || (rem == 0x1000u && (h & 1));
    return sign | h;
  }
  if (u <= 0x33000000u) // at most half the smallest subnormal (2^-25): zero
    return sign;
  // subnormal f16: the value in units of 2^-24, rounded to nearest even
  const uint32_t e = u >> 23, mant = (u & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126 - e; // 14..24
  uint32_t h = mant >> shift;
  const uint32_t rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
  h += rem > half || (rem == half && (h & 1));
  return sign | h;
}
inline uint32_t f32_to_bf16_rn(uint32_t u) {
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return 0x7fffu;
  return (u + 0x7fffu + ((u >> 16) & 1)) >> 16;
}
inline uint32_t f32_to_tf32_bits(uint32_t u, bool ties_away) {
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return 0x7fffffffu;
  if ((u & 0x7fffffffu) == 0x7f800000u)
    return u;
  return (u + (ties_away ? 0x1000u : 0xfffu + ((u >> 13) & 1))) & 0xffffe000u;
}
uint16_t f32_to_bf16_bits(float x, Round mode = Round::Rn);

// Rounds to an integral value (Rni, Rzi, Rmi, Rpi; also Rn/Rz/Rm/Rp as their integer forms).
long double round_to_integral(long double x, Round mode);

// Flush a subnormal f32 to a signed zero.
float flush_subnormal(float x);

} // namespace tcjit::emu
