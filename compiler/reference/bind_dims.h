// Binds the symbolic sizes of a spec (`?`, ranges) to concrete ones, for the references.
#pragma once

#include "tcjit/op_spec.h"

#include <cstdint>

namespace tcjit {

struct GemmSizes {
  int64_t m = 1, n = 1, k = 1, batch = 1;
};

// The spec with m, n, k and batch fixed to `sizes`. Throws std::invalid_argument when the spec is
// not a GEMM, a size is not positive, or a size contradicts the spec (a different fixed size, or
// outside a range).
OpSpec bind_gemm_sizes(const OpSpec &spec, const GemmSizes &sizes);

// The convolution spec with its batch n fixed to `n` (the only dimension that can be symbolic).
// Throws std::invalid_argument like bind_gemm_sizes.
OpSpec bind_conv_batch(const OpSpec &spec, int64_t n);

} // namespace tcjit
