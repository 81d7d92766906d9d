// Helpers for the reference tests: typed buffers and spec builders (no DSL, so that these tests
// depend on the reference library only).
#pragma once

#include "compiler/reference/numeric_convert.h"
#include "tcjit/op_spec.h"

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace tcjit::testing {

// A buffer of `count` elements of `dtype`, zero-filled.
struct Buffer {
  DType dtype = DType::f32;
  std::vector<unsigned char> bytes;

  Buffer() = default;
  Buffer(DType type, int64_t count)
      : dtype(type), bytes(static_cast<size_t>(count * dtype_storage_bytes(type))) {}
  void *data() { return bytes.data(); }
  const void *data() const { return bytes.data(); }
  int64_t size() const { return int64_t(bytes.size()) / dtype_storage_bytes(dtype); }
  double get(int64_t i) const { return read_element(dtype, bytes.data(), i); }
  void set(int64_t i, double v) { write_element(dtype, bytes.data(), i, v); }
};

inline Buffer buffer_of(DType dtype, const std::vector<double> &values) {
  Buffer b(dtype, int64_t(values.size()));
  for (size_t i = 0; i < values.size(); ++i)
    b.set(int64_t(i), values[i]);
  return b;
}

inline MatrixOperand matrix(DType dtype, MatrixLayout layout,
                            std::optional<int64_t> ld = std::nullopt) {
  MatrixOperand op;
  op.dtype = dtype;
  op.layout = layout;
  op.ld = ld;
  return op;
}

inline OpSpec gemm_spec(int64_t m, int64_t n, int64_t k, MatrixOperand a, MatrixOperand b,
                        MatrixOperand c, DType acc = DType::f32, int64_t batch = 1) {
  OpSpec spec;
  spec.kind = OpKind::gemm;
  spec.gemm.m = Dim::fixed_size(m);
  spec.gemm.n = Dim::fixed_size(n);
  spec.gemm.k = Dim::fixed_size(k);
  spec.gemm.batch = Dim::fixed_size(batch);
  spec.gemm.a = a;
  spec.gemm.b = b;
  spec.gemm.c = c;
  spec.acc = acc;
  spec.math = MathMode::f32;
  return spec;
}

// The offset of element (row, col) of batch `batch` of a rows x cols matrix operand.
inline int64_t matrix_index(const MatrixOperand &op, int64_t rows, int64_t cols, int64_t batch,
                            int64_t row, int64_t col) {
  const bool row_major = op.layout == MatrixLayout::row;
  const int64_t ld = op.ld ? *op.ld : (row_major ? cols : rows);
  const int64_t outer = row_major ? rows : cols;
  return batch * outer * ld + (row_major ? row * ld + col : col * ld + row);
}

inline int64_t matrix_buffer_size(const MatrixOperand &op, int64_t rows, int64_t cols,
                                  int64_t batch) {
  const bool row_major = op.layout == MatrixLayout::row;
  const int64_t ld = op.ld ? *op.ld : (row_major ? cols : rows);
  return batch * (row_major ? rows : cols) * ld;
}

// A buffer for a batch of rows x cols matrices in `op`'s layout, from row-major logical values
// (values[(b * rows + row) * cols + col]); padding elements hold `padding`.
inline Buffer matrix_buffer(const MatrixOperand &op, int64_t rows, int64_t cols, int64_t batch,
                            const std::vector<double> &values, double padding = 0) {
  Buffer buf(op.dtype, matrix_buffer_size(op, rows, cols, batch));
  for (int64_t i = 0; i < buf.size(); ++i)
    buf.set(i, padding);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        buf.set(matrix_index(op, rows, cols, b, r, c), values[size_t((b * rows + r) * cols + c)]);
  return buf;
}

struct ConvShape {
  int64_t n = 1, d = 1, h = 1, w = 1, c = 1, k = 1, t = 1, r = 1, s = 1;
  std::array<int64_t, 3> pad{0, 0, 0}, stride{1, 1, 1}, dilation{1, 1, 1};
  int64_t groups = 1;
};

inline OpSpec conv_spec(const ConvShape &shape, ConvPass pass, DType dtype = DType::f32,
                        TensorLayout activations = TensorLayout::nhwc,
                        TensorLayout filter = TensorLayout::krsc, bool three_d = false) {
  OpSpec spec;
  spec.kind = three_d ? OpKind::conv3d : OpKind::conv2d;
  ConvSpec &c = spec.conv;
  c.n = Dim::fixed_size(shape.n);
  c.d = shape.d;
  c.h = shape.h;
  c.w = shape.w;
  c.c = shape.c;
  c.k = shape.k;
  c.t = shape.t;
  c.r = shape.r;
  c.s = shape.s;
  c.pad = shape.pad;
  c.stride = shape.stride;
  c.dilation = shape.dilation;
  c.groups = shape.groups;
  c.pass = pass;
  c.x = TensorOperand{dtype, activations};
  c.y = TensorOperand{dtype, activations};
  c.filter = TensorOperand{dtype, filter};
  spec.acc = dtype == DType::f64 ? DType::f64 : DType::f32;
  spec.math = MathMode::f32;
  return spec;
}

} // namespace tcjit::testing
