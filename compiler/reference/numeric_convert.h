// Element formats and conversions, exactly as the hardware rounds them.
//
// Storage: f16 and bf16 are uint16_t bit patterns; tf32 and f32 are float; f64 double; s8 int8_t;
// u8 uint8_t; s32 int32_t; e4m3 and e5m2 uint8_t bit patterns (read exactly: e4m3 bias 7, no
// infinities, NaN S.1111.111, max 448; e5m2 bias 15, IEEE inf/NaN, max 57344; written like
// cvt.rn.satfinite: nearest even, overflow and infinity to the largest finite value, NaN kept);
// s4 and u4 two per byte (element 2i in the low nibble, s4 two's complement), b1 eight per byte
// (element 8i in bit 0): read_element/write_element take the element index and touch only that
// element's bits (writes saturate to the type's range).
#pragma once

#include "tcjit/op_spec.h"

#include <cstdint>

namespace tcjit {

// f16: round to nearest even, overflow to infinity, subnormals rounded correctly, NaN stays NaN.
uint16_t f32_to_f16_bits(float value);
uint16_t f64_to_f16_bits(double value); // one correct rounding (never through float)
float f16_bits_to_f32(uint16_t bits);

// bf16: round to nearest even, overflow to infinity, NaN stays NaN (made quiet).
uint16_t f32_to_bf16_bits(float value);
uint16_t f64_to_bf16_bits(double value); // one correct rounding (never through float)
float bf16_bits_to_f32(uint16_t bits);

// f32 with round to nearest even, overflow to infinity; well defined for every double.
float f64_to_f32(double value);

// cvt.rna.tf32.f32: keeps 10 explicit mantissa bits, rounding to nearest with ties away from zero;
// the low 13 bits of the result are zero. NaN and infinity are returned unchanged; a value that
// rounds past the largest finite float becomes infinity.
float round_to_tf32(float value);

// Bytes one element of `dtype` occupies in memory (packed s4/u4/b1: std::invalid_argument; use
// packed_bytes of compiler/target/dtype_info.h).
int dtype_storage_bytes(DType dtype);

// Element `index` of a buffer of `dtype`, exactly, as a double.
double read_element(DType dtype, const void *data, int64_t index);

// Stores `value` into element `index`: floats round to nearest even (tf32 is stored as an f32);
// integers round half to even and saturate to the type's range, NaN becomes 0.
void write_element(DType dtype, void *data, int64_t index, double value);

// `value` after write_element + read_element: what a buffer of `dtype` can hold.
double round_to_dtype(DType dtype, double value);

// An input element as the tensor cores see it: tf32 elements, and f32 elements when the math
// mode is tf32, are rounded with round_to_tf32. `resolved` must be tf32 or f32 (see
// resolved_math_mode); `automatic` throws std::invalid_argument.
double read_input_as_hardware_sees(DType dtype, MathMode resolved, const void *data, int64_t index);

// The spec's math mode with `automatic` resolved from the environment (NVIDIA_TF32_OVERRIDE).
// Tests should pass an explicit mode instead, so that they do not depend on the environment.
MathMode resolved_math_mode(const OpSpec &spec);

} // namespace tcjit
