#include "runtime/emu/float_format.h"

#include <bit>
#include <cmath>
#include <limits>

namespace tcjit::emu {

long double max_finite(FloatFormat f) {
  int emax = (1 << (f.exponent_bits - 1)) - 1;
  return std::ldexp(2.0L - std::ldexp(1.0L, -f.mantissa_bits), emax);
}

long double round_to_integral(long double x, Round mode) {
  switch (mode) {
  case Round::Rz:
  case Round::Rzi: return std::trunc(x);
  case Round::Rm:
  case Round::Rmi: return std::floor(x);
  case Round::Rp:
  case Round::Rpi: return std::ceil(x);
  case Round::Rna: return std::round(x); // ties away from zero
  case Round::None:
  case Round::Rn:
  case Round::Rni: {
    long double r = std::round(x);
    if (std::fabs(x - std::trunc(x)) == 0.5L) // tie: to even
      r = 2.0L * std::round(x / 2.0L);
    return r;
  }
  }
  return x;
}

long double round_to_format(long double x, FloatFormat f, Round mode) {
  if (std::isnan(x) || std::isinf(x) || x == 0)
    return x;
  const int emin = 2 - (1 << (f.exponent_bits - 1)); // e.g. -14 for f16
  int e;
  std::frexp(x, &e); // x = m * 2^e, m in [0.5, 1)
  int exponent = std::max(e - 1, emin);
  int q = exponent - f.mantissa_bits; // quantum exponent
  long double scaled = std::ldexp(x, -q);
  Round int_mode = mode;
  long double r = std::ldexp(round_to_integral(scaled, int_mode), q);
  long double mx = max_finite(f);
  if (std::fabs(r) > mx) {
    bool neg = r < 0;
    switch (mode) {
    case Round::Rz:
    case Round::Rzi: return neg ? -mx : mx;
    case Round::Rm:
    case Round::Rmi: return neg ? -INFINITY : mx;
    case Round::Rp:
    case Round::Rpi: return neg ? -mx : INFINITY;
    case Round::None:
    case Round::Rn:
    case Round::Rna:
    case Round::Rni: return neg ? -INFINITY : INFINITY;
    }
  }
  return r;
}

uint32_t encode_small_float(long double x, FloatFormat f) {
  const uint32_t sign_bit = 1u << (f.exponent_bits + f.mantissa_bits);
  const uint32_t exp_mask = (1u << f.exponent_bits) - 1;
  if (std::isnan(x))
    return (sign_bit - 1); // canonical NaN: all exponent and fraction bits set, sign clear
  uint32_t sign = std::signbit(x) ? sign_bit : 0;
  x = std::fabs(x);
  if (std::isinf(x))
    return sign | (exp_mask << f.mantissa_bits);
  if (x == 0)
    return sign;
  const int bias = (1 << (f.exponent_bits - 1)) - 1;
  const int emin = 1 - bias;
  int e;
  std::frexp(x, &e);
  int exponent = e - 1;
  if (exponent < emin) { // subnormal
    uint32_t mant = static_cast<uint32_t>(std::ldexp(x, -(emin - f.mantissa_bits)));
    return sign | mant;
  }
  uint32_t mant = static_cast<uint32_t>(std::ldexp(x, f.mantissa_bits - exponent)) &
                  ((1u << f.mantissa_bits) - 1);
  return sign | (static_cast<uint32_t>(exponent + bias) << f.mantissa_bits) | mant;
}

namespace {

long double decode_by_fields(uint32_t bits, FloatFormat f);

// The f32 bits of an f16 / bf16 value (exact: both are subsets of f32), a NaN as the canonical
// quiet NaN with the input's sign.
uint32_t f16_bits_as_f32_bits(uint32_t h) {
  const uint32_t sign = (h & 0x8000u) << 16, exponent = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exponent == 0x1f)
    return sign | (mant ? 0x7fc00000u : 0x7f800000u);
  if (exponent == 0) // subnormal: mant * 2^-24, exact in f32
    return sign | std::bit_cast<uint32_t>(static_cast<float>(mant) * 0x1p-24f);
  return sign | ((exponent + 112) << 23) | (mant << 13); // rebias 15 -> 127
}
uint32_t bf16_bits_as_f32_bits(uint32_t h) {
  if ((h & 0x7fffu) > 0x7f80u)
    return ((h & 0x8000u) << 16) | 0x7fc00000u;
  return h << 16;
}

// Every f16 and bf16 value as a float, decoded once: mma and the half instructions decode
// operands per lane and element, and ldexp on long double made that ~40% of an f16 GEMM's
// emulation time. Built from the bits (with ldexp on long double the build itself was ~12 M host
// instructions, a few ms of every process's first f16 or bf16 instruction).
struct HalfTables {
  float f16[65536], bf16[65536];
  HalfTables() {
    for (uint32_t b = 0; b < 65536; ++b) {
      f16[b] = std::bit_cast<float>(f16_bits_as_f32_bits(b));
      bf16[b] = std::bit_cast<float>(bf16_bits_as_f32_bits(b));
    }
  }
};

const HalfTables &half_tables() {
  static const HalfTables tables; // thread-safe initialisation
  return tables;
}

} // namespace

const float *f16_table() {
  return half_tables().f16;
}
const float *bf16_table() {
  return half_tables().bf16;
}

namespace {

// One fp8 byte's value. e4m3: bias 7, 3 fraction bits, no infinities, NaN only at S.1111.111
// (max 448). e5m2: bias 15, 2 fraction bits, IEEE-like (S.11111.00 infinity, S.11111.xx NaN;
// max 57344). Subnormals (exponent field 0) are fraction * 2^(1 - bias - fraction bits).
float decode_fp8_byte(uint32_t byte, bool e4m3) {
  const uint32_t fraction_bits = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
  const uint32_t exponent = (byte & 0x7f) >> fraction_bits;
  const uint32_t fraction = byte & ((1u << fraction_bits) - 1);
  const uint32_t top = (1u << (7 - fraction_bits)) - 1;
  const float sign = (byte & 0x80) ? -1.0f : 1.0f;
  if (e4m3 ? (exponent == top && fraction == 7) : (exponent == top && fraction != 0))
    return std::copysign(std::numeric_limits<float>::quiet_NaN(), sign);
  if (!e4m3 && exponent == top)
    return sign * std::numeric_limits<float>::infinity();
  if (exponent == 0)
    return sign *
           std::ldexp(static_cast<float>(fraction), 1 - static_cast<int>(bias + fraction_bits));
  return sign * std::ldexp(static_cast<float>((1u << fraction_bits) + fraction),
                           static_cast<int>(exponent) - static_cast<int>(bias + fraction_bits));
}

struct Fp8Tables {
  float e4m3[256], e5m2[256];
  Fp8Tables() {
    for (uint32_t b = 0; b < 256; ++b) {
      e4m3[b] = decode_fp8_byte(b, true);
      e5m2[b] = decode_fp8_byte(b, false);
    }
  }
};

const Fp8Tables &fp8_tables() {
  static const Fp8Tables tables;
  return tables;
}

} // namespace

const float *e4m3_table() {
  return fp8_tables().e4m3;
}
const float *e5m2_table() {
  return fp8_tables().e5m2;
}

long double decode_small_float(uint32_t bits, FloatFormat f) {
  if (f.exponent_bits == kF16.exponent_bits && f.mantissa_bits == kF16.mantissa_bits)
    return half_tables().f16[bits & 0xffff];
  if (f.exponent_bits == kBF16.exponent_bits && f.mantissa_bits == kBF16.mantissa_bits)
    return half_tables().bf16[bits & 0xffff];
  return decode_by_fields(bits, f);
}

namespace {

long double decode_by_fields(uint32_t bits, FloatFormat f) {
  const uint32_t sign_bit = 1u << (f.exponent_bits + f.mantissa_bits);
  const uint32_t exp_mask = (1u << f.exponent_bits) - 1;
  const int bias = (1 << (f.exponent_bits - 1)) - 1;
  bool neg = bits & sign_bit;
  uint32_t exponent = (bits >> f.mantissa_bits) & exp_mask;
  uint32_t mant = bits & ((1u << f.mantissa_bits) - 1);
  long double v;
  if (exponent == exp_mask) {
    v = mant ? NAN : INFINITY;
  } else if (exponent == 0) {
    v = std::ldexp(static_cast<long double>(mant), 1 - bias - f.mantissa_bits);
  } else {
    v = std::ldexp(static_cast<long double>(mant | (1u << f.mantissa_bits)),
                   static_cast<int>(exponent) - bias - f.mantissa_bits);
  }
  return neg ? -v : v;
}

} // namespace

uint16_t f32_to_f16_bits(float x, Round mode) {
  if (mode == Round::Rn)
    return static_cast<uint16_t>(f32_to_f16_rn(std::bit_cast<uint32_t>(x)));
  return static_cast<uint16_t>(encode_small_float(round_to_format(x, kF16, mode), kF16));
}

uint16_t f32_to_bf16_bits(float x, Round mode) {
  if (mode == Round::Rn)
    return static_cast<uint16_t>(f32_to_bf16_rn(std::bit_cast<uint32_t>(x)));
  return static_cast<uint16_t>(encode_small_float(round_to_format(x, kBF16, mode), kBF16));
}

float flush_subnormal(float x) {
  if (std::fpclassify(x) == FP_SUBNORMAL)
    return std::copysign(0.0f, x);
  return x;
}

} // namespace tcjit::emu
