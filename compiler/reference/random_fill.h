// Deterministic random operand data, identical on every platform and compiler (splitmix64 and
// explicit arithmetic; no std:: distributions, whose outputs are implementation-defined).
#pragma once

#include "tcjit/op_spec.h"

#include <cstdint>

namespace tcjit {

// How integer dtypes scale [lo, hi]: see fill_random.
constexpr double integer_fill_scale = 16.0;

// Fills `count` elements of `dtype` from the seed.
// Floating-point dtypes: uniform in [lo, hi], then rounded to the dtype (RNE). tf32 buffers get
// full f32 values, so that the tf32 rounding of the inputs stays visible.
// Integer dtypes: uniform integers in [ceil(lo * 16), floor(hi * 16)] intersected with the dtype's
// range (integer_fill_scale = 16): the default [-1, 1] gives s8/s32 values in [-16, 16] and u8
// values in [0, 16]; pass lo = hi = 3 / 16.0 for all 3s.
void fill_random(DType dtype, void *data, int64_t count, uint64_t seed, double lo = -1,
                 double hi = 1);

// splitmix64: the next 64-bit value of the sequence whose state is `state` (advanced).
uint64_t splitmix64_next(uint64_t &state);

// A double uniform in [0, 1) with 53 random bits, from splitmix64_next.
double uniform_unit(uint64_t &state);

} // namespace tcjit
