// The reference convolution (conv2d and conv3d; fprop, dgrad and wgrad), by direct loops.
#pragma once

#include "compiler/reference/reference_result.h"
#include "tcjit/op_spec.h"

namespace tcjit {

// Raw tensors in the spec's dtypes and layouts. fprop reads x and filter and writes y; dgrad reads
// y (dy) and filter and writes x (dx); wgrad reads x and y (dy) and writes filter (dw). The written
// tensor is also C: it is read first when beta != 0. `bias` (of the written tensor's dtype) holds
// one value per output channel (fprop and wgrad: k; dgrad: c); null when there is no bias.
struct ConvBuffers {
  void *x = nullptr, *filter = nullptr, *y = nullptr;
  const void *bias = nullptr;
};

// The numerics are reference_gemm's (inputs as the hardware sees them, f64 products and sums,
// the epilogue in f64, one rounding to the output dtype). Each output sums its terms in the order
// of its implicit-GEMM reduction index, skipping the taps that fall in the padding:
//   fprop (t, r, s, c), dgrad (t, r, s, k), wgrad (n, o, p, q),
// so that the explicit im2col GEMM (im2col.h) gives bit-identical f64 values.
// Throws std::invalid_argument for an invalid or symbolic spec (see conv_geometry.h), an
// unresolved math mode or a missing buffer.
ReferenceResult reference_conv(const OpSpec &spec, const ConvBuffers &buffers, MathMode resolved);

} // namespace tcjit
