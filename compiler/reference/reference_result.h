// What a reference computation returns, per output element.
#pragma once

#include "support/default_init_allocator.h"

#include <vector>

namespace tcjit {

// Doubles per output element. vector(n) and resize(n) leave them unset (the references write
// every element, from their worker threads: a serial zero-fill of fresh pages cost more than a
// fifth of a 1024^3 GEMM's reference); vector(n, 0.0) zeroes.
using ReferenceValues = std::vector<double, support::DefaultInitAllocator<double>>;

// One entry per output element, in the output buffer's memory order (GEMM: ldc padding skipped;
// see output_layout.h for the element <-> buffer offset and coordinates mapping).
struct ReferenceResult {
  // D = act(alpha * acc + beta * C + bias) in f64, before the rounding to the output dtype.
  ReferenceValues values;
  // acc = sum_k a*b of the inputs as the hardware sees them, in f64.
  ReferenceValues accumulators;
  // |alpha| * sum_k |a||b| + |beta * C| + |bias|: the scale of the rounding errors of a correct
  // kernel (see tolerance.h).
  ReferenceValues magnitudes;
  // act=custom only (apply_custom_activation): how far act moves within the pre-activation
  // tolerance around each element, which replaces the Lipschitz term of the tolerance model.
  ReferenceValues activation_spreads;
};

} // namespace tcjit
