#include "compiler/reference/gemm_reference.h"

#include "compiler/reference/binary_gemm.h"
#include "compiler/reference/epilogue.h"
#include "compiler/reference/gemm_geometry.h"
#include "compiler/reference/numeric_convert.h"
#include "compiler/reference/output_layout.h"
#include "support/parallel_for.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

namespace tcjit {

namespace {

constexpr int64_t rows_per_block = 4;      // rows of A that share each loaded row of B
constexpr int64_t columns_per_block = 256; // keeps a block's accumulators in L1

// A matrix operand converted to double, row-major and dense: [batch][rows][cols].
std::vector<double> load_matrix(const MatrixGeometry &g, int64_t batch, MathMode resolved,
                                const void *data) {
  std::vector<double> out(static_cast<size_t>(batch * g.rows * g.cols));
  parallel_for(batch * g.rows, 64, [&](int64_t begin, int64_t end) {
    for (int64_t line = begin; line < end; ++line) {
      const int64_t b = line / g.rows, row = line % g.rows;
      double *dst = out.data() + line * g.cols;
      for (int64_t col = 0; col < g.cols; ++col)
        dst[col] =
            read_input_as_hardware_sees(g.dtype, resolved, data, matrix_offset(g, b, row, col));
    }
  });
  return out;
}

// acc[j] += a * b[j] and abs_acc[j] += |a| * b_abs[j]: one k step of a row block.
void accumulate_row(double a, const double *__restrict b, const double *__restrict b_abs,
                    double *__restrict acc, double *__restrict abs_acc, int64_t count) {
  const double a_abs = std::fabs(a);
  for (int64_t j = 0; j < count; ++j) {
    acc[j] += a * b[j];
    abs_acc[j] += a_abs * b_abs[j];
  }
}

} // namespace

ReferenceResult reference_gemm(const OpSpec &spec, const GemmBuffers &buffers, MathMode resolved) {
  if (spec.sparsity != Sparsity::dense)
    throw std::invalid_argument(
        "tcjit reference gemm: the reference multiplies the pruned dense A: give it the spec with "
        "sparse=2:4 removed and the pruned matrix (compiler/reference/sparse_2_4.h, prune_2_4)");
  const GemmGeometry g = gemm_geometry(spec);
  if (resolved == MathMode::automatic)
    throw std::invalid_argument(
        "tcjit reference gemm: pass the resolved math mode (tf32 or f32), not auto");
  if (buffers.a == nullptr || buffers.b == nullptr || buffers.c == nullptr)
    throw std::invalid_argument("tcjit reference gemm: buffers a, b and c are required");
  const OutputLayout layout = output_layout(spec);
  if (g.a.dtype == DType::b1) { // counts of bits, all non-negative: |terms| sum to the count
    std::vector<double> counts = binary_gemm_counts(g, spec.bop, buffers.a, buffers.b);
    std::vector<double> abs_sums = counts;
    return finish_reference(spec, layout, std::move(counts), std::move(abs_sums), buffers.c,
                            buffers.bias);
  }

  const std::vector<double> a = load_matrix(g.a, g.batch, resolved, buffers.a);
  const std::vector<double> b = load_matrix(g.b, g.batch, resolved, buffers.b);
  std::vector<double> b_abs(b.size());
  std::transform(b.begin(), b.end(), b_abs.begin(), [](double v) { return std::fabs(v); });

  std::vector<double> accumulators(static_cast<size_t>(layout.count));
  std::vector<double> abs_sums(static_cast<size_t>(layout.count));
  const int64_t m = g.m, n = g.n, k = g.k;
  const int64_t row_blocks = (m + rows_per_block - 1) / rows_per_block;
  const int64_t work_per_block = rows_per_block * n * k;
  const int64_t min_chunk = std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(work_per_block, 1));

  parallel_for(g.batch * row_blocks, min_chunk, [&](int64_t begin, int64_t end) {
    std::vector<double> acc(static_cast<size_t>(rows_per_block * columns_per_block));
    std::vector<double> abs_acc(acc.size());
    for (int64_t block = begin; block < end; ++block) {
      const int64_t batch = block / row_blocks;
      const int64_t row0 = block % row_blocks * rows_per_block;
      const int64_t rows = std::min(rows_per_block, m - row0);
      const double *a_rows = a.data() + (batch * m + row0) * k;
      for (int64_t col0 = 0; col0 < n; col0 += columns_per_block) {
        const int64_t cols = std::min(columns_per_block, n - col0);
        std::fill(acc.begin(), acc.end(), 0.0);
        std::fill(abs_acc.begin(), abs_acc.end(), 0.0);
        for (int64_t kk = 0; kk < k; ++kk) {
          const double *b_row = b.data() + (batch * k + kk) * n + col0;
          const double *b_abs_row = b_abs.data() + (batch * k + kk) * n + col0;
          for (int64_t r = 0; r < rows; ++r)
            accumulate_row(a_rows[r * k + kk], b_row, b_abs_row, acc.data() + r * columns_per_block,
                           abs_acc.data() + r * columns_per_block, cols);
        }
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t row = row0 + r;
          for (int64_t j = 0; j < cols; ++j) {
            const int64_t col = col0 + j;
            const int64_t element =
                g.c.row_major ? (batch * m + row) * n + col : (batch * n + col) * m + row;
            accumulators[static_cast<size_t>(element)] =
                acc[static_cast<size_t>(r * columns_per_block + j)];
            abs_sums[static_cast<size_t>(element)] =
                abs_acc[static_cast<size_t>(r * columns_per_block + j)];
          }
        }
      }
    }
  });
  return finish_reference(spec, layout, std::move(accumulators), std::move(abs_sums), buffers.c,
                          buffers.bias);
}

} // namespace tcjit
