#include "compiler/reference/gemm_reference.h"

#include "compiler/reference/binary_gemm.h"
#include "compiler/reference/epilogue.h"
#include "compiler/reference/gemm_geometry.h"
#include "compiler/reference/numeric_convert.h"
#include "compiler/reference/output_layout.h"
#include "support/parallel_for.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

namespace tcjit {

namespace {

// The product is computed in register-sized tiles: micro_rows x micro_cols sums (and their
// |a| * |b| twins, the tolerance model's input) stay in registers for the whole K loop, reading B
// from a packed panel of micro_cols columns. Each sum still adds its K products in order, in
// double, so the result does not depend on the tiling or the thread count.
constexpr int64_t micro_rows = 4;
constexpr int64_t micro_cols = 4;
constexpr int64_t panel_cols = 64;  // B columns packed at once: micro_cols-wide strips
constexpr int64_t chunk_rows = 128; // rows of A one work item takes against a packed panel

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

// Four doubles, one micro tile row (GCC/Clang vector extension: AVX2 registers in the x86-64-v3
// build, SSE2 pairs in the baseline one).
typedef double double4 __attribute__((vector_size(4 * sizeof(double))));
static_assert(micro_cols == 4, "a micro tile row is one double4");

// One micro tile: sums[r][j] = sum over kk of a[r][kk] * b[kk][j] for `rows` rows of A (row
// stride k) and a packed strip of B (micro_cols values per kk, zero past the matrix), with
// abs_sums the same over |a| (a_abs: A's magnitudes, same layout) and |b|. Built twice: for
// x86-64-v3 (AVX2) and the baseline.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) &&                             \
    !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("arch=x86-64-v3", "default")))
#endif
void multiply_micro_tile(const double *__restrict a, const double *__restrict a_abs, int64_t k,
                         int64_t rows,
                         const double *__restrict b_strip, const double *__restrict b_abs_strip,
                         double *__restrict sums, double *__restrict abs_sums) {
  static_assert(micro_rows == 4, "four rows of accumulators below");
  // rows past the matrix repeat the last one; their sums are not stored
  const int64_t r1 = std::min<int64_t>(1, rows - 1) * k, r2 = std::min<int64_t>(2, rows - 1) * k,
                r3 = std::min<int64_t>(3, rows - 1) * k;
  const double *a0 = a, *a1 = a + r1, *a2 = a + r2, *a3 = a + r3;
  const double *m0 = a_abs, *m1 = a_abs + r1, *m2 = a_abs + r2, *m3 = a_abs + r3;
  double4 acc0 = {}, acc1 = {}, acc2 = {}, acc3 = {};
  double4 abs0 = {}, abs1 = {}, abs2 = {}, abs3 = {};
  for (int64_t kk = 0; kk < k; ++kk) {
    double4 b, b_abs;
    std::memcpy(&b, b_strip + kk * micro_cols, sizeof b);
    std::memcpy(&b_abs, b_abs_strip + kk * micro_cols, sizeof b_abs);
    acc0 += a0[kk] * b;
    abs0 += m0[kk] * b_abs;
    acc1 += a1[kk] * b;
    abs1 += m1[kk] * b_abs;
    acc2 += a2[kk] * b;
    abs2 += m2[kk] * b_abs;
    acc3 += a3[kk] * b;
    abs3 += m3[kk] * b_abs;
  }
  for (int j = 0; j < micro_cols; ++j) {
    sums[j] = acc0[j];
    sums[micro_cols + j] = acc1[j];
    sums[2 * micro_cols + j] = acc2[j];
    sums[3 * micro_cols + j] = acc3[j];
    abs_sums[j] = abs0[j];
    abs_sums[micro_cols + j] = abs1[j];
    abs_sums[2 * micro_cols + j] = abs2[j];
    abs_sums[3 * micro_cols + j] = abs3[j];
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
  std::vector<double> a_abs(a.size());
  std::transform(a.begin(), a.end(), a_abs.begin(), [](double v) { return std::fabs(v); });
  std::vector<double> accumulators(static_cast<size_t>(layout.count));
  std::vector<double> abs_sums(static_cast<size_t>(layout.count));
  const int64_t m = g.m, n = g.n, k = g.k;
  const int64_t panels = (n + panel_cols - 1) / panel_cols;
  const int64_t row_chunks = (m + chunk_rows - 1) / chunk_rows;
  const int64_t work_per_item = chunk_rows * panel_cols * k;
  const int64_t min_chunk = std::max<int64_t>(1, (1 << 20) / std::max<int64_t>(work_per_item, 1));

  // Work items run panel by panel, row chunks innermost, so a thread packs each panel once.
  parallel_for(g.batch * panels * row_chunks, min_chunk, [&](int64_t begin, int64_t end) {
    // b[kk][col0 + j] as strips of micro_cols columns: strip s holds kk-major micro_cols values
    std::vector<double> b_pack(static_cast<size_t>(k * panel_cols));
    std::vector<double> b_abs_pack(b_pack.size());
    double sums[micro_rows * micro_cols], abs_tile[micro_rows * micro_cols];
    int64_t packed_panel = -1;
    for (int64_t item = begin; item < end; ++item) {
      const int64_t panel_item = item / row_chunks;
      const int64_t batch = panel_item / panels;
      const int64_t col0 = panel_item % panels * panel_cols;
      const int64_t cols = std::min(panel_cols, n - col0);
      const int64_t strips = (cols + micro_cols - 1) / micro_cols;
      if (panel_item != packed_panel) {
        packed_panel = panel_item;
        for (int64_t s = 0; s < strips; ++s)
          for (int64_t kk = 0; kk < k; ++kk)
            for (int64_t j = 0; j < micro_cols; ++j) {
              const int64_t col = col0 + s * micro_cols + j;
              const double v = col < n ? b[static_cast<size_t>((batch * k + kk) * n + col)] : 0.0;
              const size_t at = static_cast<size_t>((s * k + kk) * micro_cols + j);
              b_pack[at] = v;
              b_abs_pack[at] = std::fabs(v);
            }
      }
      const int64_t first_row = item % row_chunks * chunk_rows;
      const int64_t last_row = std::min(m, first_row + chunk_rows);
      for (int64_t row0 = first_row; row0 < last_row; row0 += micro_rows) {
        const int64_t rows = std::min(micro_rows, last_row - row0);
        const double *a_rows = a.data() + (batch * m + row0) * k;
        const double *a_abs_rows = a_abs.data() + (batch * m + row0) * k;
        for (int64_t s = 0; s < strips; ++s) {
          const size_t strip = static_cast<size_t>(s * k * micro_cols);
          multiply_micro_tile(a_rows, a_abs_rows, k, rows, b_pack.data() + strip,
                              b_abs_pack.data() + strip, sums, abs_tile);
          for (int64_t r = 0; r < rows; ++r) {
            const int64_t row = row0 + r;
            for (int64_t j = 0; j < micro_cols; ++j) {
              const int64_t col = col0 + s * micro_cols + j;
              if (col >= n)
                break;
              const int64_t element =
                  g.c.row_major ? (batch * m + row) * n + col : (batch * n + col) * m + row;
              accumulators[static_cast<size_t>(element)] = sums[r * micro_cols + j];
              abs_sums[static_cast<size_t>(element)] = abs_tile[r * micro_cols + j];
            }
          }
        }
      }
    }
  });
  return finish_reference(spec, layout, std::move(accumulators), std::move(abs_sums), buffers.c,
                          buffers.bias);
}

} // namespace tcjit
