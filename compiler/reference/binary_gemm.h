// The reference of binary GEMMs (a=b1 b=b1, bop=and|xor): each accumulator is a count of bits,
// popcount over K of (A's row bits OP B's column bits), computed on the packed bits (b1: element
// i in bit i % 8 of byte i / 8), independent of how a kernel computes it.
#pragma once

#include "compiler/reference/gemm_geometry.h"
#include "compiler/reference/reference_result.h"

#include <vector>

namespace tcjit {

// The accumulators of every output element, in the output's element order ([batch][m][n] for a
// row-major C, [batch][n][m] for a column-major one), as exact counts.
ReferenceValues binary_gemm_counts(const GemmGeometry &g, BitOp op, const void *a, const void *b);

} // namespace tcjit
