// Alignment analysis: the widest global-memory vector (in elements) each operand allows.
//
// A vector of v elements along an operand's contiguous dimension is legal when v divides both the
// contiguous extent and the leading dimension (so every row/column, and every batch/group slice,
// starts on a v-element boundary), and v * element size <= 16 bytes. Widest possible: 8 for 16-bit
// types, 4 for 32-bit, 16 for 8-bit, 2 for f64. A symbolic contiguous extent allows only 1.
// Alignment decides which kernels are legal, so it is part of the canonical problem key.
#pragma once

#include "tcjit/op_spec.h"

#include <string>
#include <vector>

namespace tcjit {

struct OperandAlignment {
  std::string operand; // "a", "b", "c" (GEMM) or "x", "filter", "y" (convolution)
  DType dtype = DType::f16;
  int elements = 1;       // widest legal vector, in elements
  int max_elements = 1;   // what a 16-byte vector of this dtype holds
  std::string limited_by; // why `elements` < `max_elements` ("" when it is not)
  int bytes() const { return elements * dtype_bits(dtype) / 8; }
};

// The widest 16-byte-or-less vector, in elements, for a dtype (8 for f16, 16 for s8, ...).
int max_vector_elements(DType);

// Per operand, in DSL order (a, b, c or x, filter, y). The spec should be valid (validate_spec).
std::vector<OperandAlignment> analyze_alignment(const OpSpec &);

// "a8,b8,c8": the form used in canonical keys.
std::string alignment_signature(const std::vector<OperandAlignment> &);

} // namespace tcjit
