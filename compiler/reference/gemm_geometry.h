// Sizes and element offsets of a concrete GEMM spec's operands.
#pragma once

#include "tcjit/op_spec.h"

#include <cstdint>

namespace tcjit {

// Where the elements of one matrix operand live: element (row, col) of batch b is at
// b * batch_stride + row * row_stride + col * col_stride.
struct MatrixGeometry {
  DType dtype = DType::f16;
  int64_t rows = 0, cols = 0;
  int64_t ld = 0; // the spec's ld, or the dense default (cols for row, rows for col)
  int64_t row_stride = 0, col_stride = 0;
  int64_t batch_stride = 0; // outer * ld: the full matrix size
  bool row_major = true;
};

struct GemmGeometry {
  int64_t batch = 1, m = 1, n = 1, k = 1;
  // a: m x k, b: k x n, c (C input and D output): m x n. A 2:4-sparse A (sparse=2:4) is given as
  // the kernel reads it: m x k/2 compressed values, ld in compressed elements, batch_stride the
  // block of values and metadata (compiler/reference/sparse_2_4.h).
  MatrixGeometry a, b, c;
};

// Validates a GEMM spec and returns its geometry. Throws std::invalid_argument with a message
// naming the problem when the spec is not a GEMM, has symbolic sizes (bind them first: see
// bind_dims.h), non-positive sizes, an ld smaller than the matrix, or a reserved dtype.
GemmGeometry gemm_geometry(const OpSpec &spec);

inline int64_t matrix_offset(const MatrixGeometry &g, int64_t batch, int64_t row, int64_t col) {
  return batch * g.batch_stride + row * g.row_stride + col * g.col_stride;
}

} // namespace tcjit
