#include "compiler/reference/gemm_geometry.h"

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

} // namespace

GemmGeometry gemm_geometry(const OpSpec &spec) {
  if (spec.kind != OpKind::gemm)
    fail("the spec is a " + std::string(to_string(spec.kind)) + ", not a gemm");
  GemmGeometry g;
  g.batch = fixed_value(spec.gemm.batch, "batch");
  g.m = fixed_value(spec.gemm.m, "m");
  g.n = fixed_value(spec.gemm.n, "n");
  g.k = fixed_value(spec.gemm.k, "k");
  g.a = matrix_geometry(spec.gemm.a, g.m, g.k, "a");
  g.b = matrix_geometry(spec.gemm.b, g.k, g.n, "b");
  g.c = matrix_geometry(spec.gemm.c, g.m, g.n, "c");
  if (is_reserved_type(spec.acc))
    fail("the accumulator has the reserved dtype " + std::string(to_string(spec.acc)));
  return g;
}

} // namespace tcjit
