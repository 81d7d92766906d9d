// What a reference computation returns, per output element.
#pragma once

#include <vector>

namespace tcjit {

// One entry per output element, in the output buffer's memory order (GEMM: ldc padding skipped;
// see output_layout.h for the element <-> buffer offset and coordinates mapping).
struct ReferenceResult {
  // D = act(alpha * acc + beta * C + bias) in f64, before the rounding to the output dtype.
  std::vector<double> values;
  // acc = sum_k a*b of the inputs as the hardware sees them, in f64.
  std::vector<double> accumulators;
  // |alpha| * sum_k |a||b| + |beta * C| + |bias|: the scale of the rounding errors of a correct
  // kernel (see tolerance.h).
  std::vector<double> magnitudes;
  // act=custom only (apply_custom_activation): how far act moves within the pre-activation
  // tolerance around each element, which replaces the Lipschitz term of the tolerance model.
  std::vector<double> activation_spreads;
};

} // namespace tcjit
