#include "compiler/reference/random_fill.h"

#include "compiler/reference/numeric_convert.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tcjit {

namespace {

struct IntegerRange {
  double lo, hi;
};

IntegerRange integer_dtype_range(DType dtype) {
  switch (dtype) {
  case DType::s8: return {-128, 127};
  case DType::u8: return {0, 255};
  case DType::s32: return {-2147483648.0, 2147483647.0};
  case DType::s4: return {-8, 7};
  case DType::u4: return {0, 15};
  case DType::b1: return {0, 1};
  case DType::f16:
  case DType::bf16:
  case DType::tf32:
  case DType::f32:
  case DType::f64:
  case DType::e4m3:
  case DType::e5m2: break;
  }
  throw std::invalid_argument("tcjit fill_random: not an integer dtype");
}

} // namespace

uint64_t splitmix64_next(uint64_t &state) {
  state += 0x9E3779B97F4A7C15ull;
  uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double uniform_unit(uint64_t &state) {
  return static_cast<double>(splitmix64_next(state) >> 11) * 0x1.0p-53;
}

void fill_random(DType dtype, void *data, int64_t count, uint64_t seed, double lo, double hi) {
  if (!(lo <= hi))
    throw std::invalid_argument("tcjit fill_random: lo must not exceed hi");
  uint64_t state = seed;
  if (is_float_type(dtype)) {
    for (int64_t i = 0; i < count; ++i)
      write_element(dtype, data, i, lo + (hi - lo) * uniform_unit(state));
    return;
  }
  const IntegerRange range = integer_dtype_range(dtype);
  const double first = std::max(std::ceil(lo * integer_fill_scale), range.lo);
  const double last = std::min(std::floor(hi * integer_fill_scale), range.hi);
  if (first > last)
    throw std::invalid_argument("tcjit fill_random: no integer of the dtype in [lo, hi]");
  const auto span = static_cast<uint64_t>(last - first) + 1;
  for (int64_t i = 0; i < count; ++i) {
    // span <= 2^32 and uniform_unit has 53 bits, so every offset is (almost exactly) equally
    // likely.
    const double offset = std::floor(uniform_unit(state) * static_cast<double>(span));
    write_element(dtype, data, i, first + offset);
  }
}

} // namespace tcjit
