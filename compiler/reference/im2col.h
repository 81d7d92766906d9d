// Explicit im2col lowering: a convolution as `groups` batched f64 GEMMs (shape.h's implicit GEMM,
// made explicit), used to cross-check the direct-loop reference_conv.
#pragma once

#include "compiler/reference/conv_reference.h"
#include "compiler/reference/reference_result.h"
#include "tcjit/op_spec.h"

#include <vector>

namespace tcjit {

// Per group g (the GEMM batch index), row-major and dense, zeros where a tap falls in the padding:
//   fprop: A[g] = im2col(x)        M = n*o*p*q rows (n, o, p, q), K = t*r*s*c/groups (t, r, s, c)
//          B[g] = filter            K x N, N = k/groups
//   dgrad: A[g] = col(dy)          M = n*d*h*w rows (n, d, h, w), K = t*r*s*k/groups (t, r, s, k)
//          B[g] = filter            K x N, N = c/groups
//   wgrad: A[g] = dy^T             M = k/groups rows, K = n*o*p*q (n, o, p, q)
//          B[g] = im2col(x)         K x N, N = t*r*s*c/groups (t, r, s, c)
// Elements are converted as the hardware sees them (read_input_as_hardware_sees).
struct Im2colGemm {
  OpSpec gemm;              // f64 GEMM, all row-major, batch = groups, alpha 1, beta 0, no epilogue
  std::vector<double> a, b; // batch-strided operands of `gemm`
};
Im2colGemm lower_conv_to_gemm(const OpSpec &conv, const ConvBuffers &buffers, MathMode resolved);

// reference_conv computed through lower_conv_to_gemm and reference_gemm instead of direct loops:
// same contract (reads C and writes the output tensor in `buffers`), same result element order.
ReferenceResult reference_conv_via_im2col(const OpSpec &conv, const ConvBuffers &buffers,
                                          MathMode resolved);

} // namespace tcjit
