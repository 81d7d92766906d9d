#include "compiler/reference/gemm_geometry.h"

#include "compiler/reference/sparse_2_4.h"

#include <stdexcept>
#include <string>

namespace tcjit {

namespace {

[[noreturn]] void fail(const std::string &what) {
  throw std::invalid_argument("tcjit reference gemm: " + what);
}

int64_t fixed_value(const Dim &dim, const char *name) {
  if (!dim.is_fixed())
    fail(std::string("dimension ") + name +
         " is symbolic (`?` or a range); bind concrete sizes first (bind_gemm_sizes)");
  if (dim.value < 1)
    fail(std::string("dimension ") + name + " must be positive, got " + std::to_string(dim.value));
  return dim.value;
}

MatrixGeometry matrix_geometry(const MatrixOperand &op, int64_t rows, int64_t cols,
                               const char *name) {
  if (is_reserved_type(op.dtype))
    fail(std::string("operand ") + name + " has the reserved dtype " +
         std::string(to_string(op.dtype)));
  MatrixGeometry g;
  g.dtype = op.dtype;
  g.rows = rows;
  g.cols = cols;
  g.row_major = op.layout == MatrixLayout::row;
  const int64_t inner = g.row_major ? cols : rows;
  const int64_t outer = g.row_major ? rows : cols;
  g.ld = op.ld ? *op.ld : inner;
  if (g.ld < inner)
    fail(std::string("ld") + name + " = " + std::to_string(g.ld) + " is smaller than the " +
         std::to_string(inner) + " elements of a " + (g.row_major ? "row" : "column"));
  g.row_stride = g.row_major ? g.ld : 1;
  g.col_stride = g.row_major ? 1 : g.ld;
  g.batch_stride = outer * g.ld;
  return g;
}

// A 2:4-sparse A as the kernel reads it (sparse_2_4.h): m rows of k/2 compressed values, row
// stride lda, each batch's block (values, then metadata) a whole number of elements.
MatrixGeometry sparse_a_geometry(const MatrixOperand &op, int64_t m, int64_t k) {
  if (op.layout != MatrixLayout::row)
    fail("a 2:4-sparse A must be row-major (a=" + std::string(to_string(op.dtype)) + ":row)");
  Sparse24Layout l;
  try {
    l = compressed_a_layout(op.dtype, m, k, op.ld ? *op.ld : 0);
  } catch (const std::invalid_argument &e) {
    fail(e.what());
  }
  MatrixGeometry g;
  g.dtype = op.dtype;
  g.rows = m;
  g.cols = k / 2;
  g.row_major = true;
  g.ld = l.lda;
  g.row_stride = l.lda;
  g.col_stride = 1;
  g.batch_stride = l.block_bytes * 8 / dtype_bits(op.dtype); // in elements (s4/u4: 2 per byte)
  return g;
}

} // namespace

GemmGeometry gemm_geometry(const OpSpec &spec) {
  if (spec.kind != OpKind::gemm)
    fail("the spec is a " + std::string(to_string(spec.kind)) + ", not a gemm");
  GemmGeometry g;
  g.batch = fixed_value(spec.gemm.batch, "batch");
  g.m = fixed_value(spec.gemm.m, "m");
  g.n = fixed_value(spec.gemm.n, "n");
  g.k = fixed_value(spec.gemm.k, "k");
  g.a = spec.sparsity == Sparsity::dense ? matrix_geometry(spec.gemm.a, g.m, g.k, "a")
                                         : sparse_a_geometry(spec.gemm.a, g.m, g.k);
  g.b = matrix_geometry(spec.gemm.b, g.k, g.n, "b");
  g.c = matrix_geometry(spec.gemm.c, g.m, g.n, "c");
  if (is_reserved_type(spec.acc))
    fail("the accumulator has the reserved dtype " + std::string(to_string(spec.acc)));
  return g;
}

} // namespace tcjit
