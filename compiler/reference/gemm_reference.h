// The reference GEMM: D[b] = act(alpha * A[b] B[b] + beta * C[b] + bias), batch strided.
#pragma once

#include "compiler/reference/reference_result.h"
#include "tcjit/op_spec.h"

#include <string>

namespace tcjit {

// Raw operand buffers in the spec's dtypes and layouts (see numeric_convert.h for the formats).
// Batch b of an operand starts b * (outer * ld) elements in, the operand's full matrix size. C is
// read when beta != 0 and D is written over it, as in cuBLAS. `bias` (of c's dtype) holds m values
// for bias=row, n values for bias=col; it may be null when there is no bias.
struct GemmBuffers {
  const void *a = nullptr, *b = nullptr;
  void *c = nullptr;
  const void *bias = nullptr;
};

// Inputs are rounded as the tensor cores see them (tf32 inputs, and f32 inputs under tf32 math,
// with cvt.rna.tf32.f32), products and sums are f64, sums in increasing k, then the epilogue in
// f64 and one rounding to c's dtype (integers: round half to even and saturate).
// `resolved` is the math mode after `auto` is resolved (tf32 or f32): an explicit parameter so that
// results do not depend on the environment; resolved_math_mode(spec) gives the environment's.
// Throws std::invalid_argument when the spec is not a concrete GEMM (see gemm_geometry.h),
// `resolved` is `automatic`, or a needed buffer is null.
ReferenceResult reference_gemm(const OpSpec &spec, const GemmBuffers &buffers, MathMode resolved);

// The micro tile kernel reference_gemm multiplies with: "avx512", "avx2" or "portable", the widest
// this CPU runs unless TCJIT_REFERENCE_SIMD names one (so that one machine can check each).
// std::invalid_argument naming the variable when its value is none of them or the CPU lacks it.
std::string reference_simd_kernel();

} // namespace tcjit
