#include "compiler/reference/gemm_reference.h"

#include "compiler/reference/binary_gemm.h"
#include "compiler/reference/epilogue.h"
#include "compiler/reference/gemm_geometry.h"
#include "compiler/reference/numeric_convert.h"
#include "compiler/reference/output_layout.h"
#include "support/escape_controls.h"
#include "support/parallel_for.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tcjit {

namespace {

// The product is computed in register-sized tiles: micro_rows x micro_cols sums (and their
// |a| * |b| twins, the tolerance model's input) stay in registers for the whole K loop, reading B
// from a packed panel of micro_cols columns. Each sum still adds its K products in order, in
// double, each product rounded before it is added (fused only where the products are exact, which
// gives the same bits), so the result does not depend on the tiling, the instruction set or the
// thread count.
constexpr int64_t micro_rows = 4;
constexpr int64_t micro_cols = 8;
constexpr int64_t panel_cols = 64;  // B columns packed at once: micro_cols-wide strips
constexpr int64_t chunk_rows = 128; // rows of A one work item takes against a packed panel

// A matrix operand converted to double, row-major and dense: [batch][rows][cols]. Allocated
// uninitialized and written by the worker threads, so that no thread zeroes (and first touches)
// it alone: fresh memory is dear (the kernel zeroes every page on first touch).
std::unique_ptr<double[]> load_matrix(const MatrixGeometry &g, int64_t batch, MathMode resolved,
                                      const void *data) {
  auto out = std::make_unique_for_overwrite<double[]>(static_cast<size_t>(batch * g.rows * g.cols));
  parallel_for(batch * g.rows, 64, [&](int64_t begin, int64_t end) {
    for (int64_t line = begin; line < end; ++line) {
      const int64_t b = line / g.rows, row = line % g.rows;
      double *dst = out.get() + line * g.cols;
      for (int64_t col = 0; col < g.cols; ++col)
        dst[col] =
            read_input_as_hardware_sees(g.dtype, resolved, data, matrix_offset(g, b, row, col));
    }
  });
  return out;
}

// Rows of 8 and 4 doubles (GCC/Clang vector extension): a micro tile row is one double8 with
// AVX-512, two double4 with AVX2 (four SSE2 registers on baseline x86-64).
typedef double double8 __attribute__((vector_size(8 * sizeof(double))));
typedef double double4 __attribute__((vector_size(4 * sizeof(double))));

// `Rows` rows of one micro tile, the Vec-wide column block at `col` of it: sums[r][col + j] = sum
// over kk of a[r][kk] * b[kk][col + j], for A rows a_rows[r] (K contiguous values) and a packed
// strip of B (micro_cols values per kk, zero past the matrix), and abs_sums the same over |a|
// (a_abs_rows) and |b| (b_abs_strip).
template <typename Vec, int Rows>
[[gnu::always_inline]] inline void
multiply_rows(const double *const *a_rows, const double *const *a_abs_rows, int64_t k, int64_t col,
              const double *__restrict b_strip, const double *__restrict b_abs_strip,
              double *__restrict sums, double *__restrict abs_sums) {
  Vec acc[Rows] = {}, abs[Rows] = {};
  for (int64_t kk = 0; kk < k; ++kk) {
    Vec b, b_abs;
    std::memcpy(&b, b_strip + kk * micro_cols + col, sizeof b);
    std::memcpy(&b_abs, b_abs_strip + kk * micro_cols + col, sizeof b_abs);
#pragma GCC unroll 4
    for (int r = 0; r < Rows; ++r) {
      acc[r] += a_rows[r][kk] * b;
      abs[r] += a_abs_rows[r][kk] * b_abs;
    }
  }
  for (int r = 0; r < Rows; ++r) {
    std::memcpy(sums + r * micro_cols + col, &acc[r], sizeof acc[r]);
    std::memcpy(abs_sums + r * micro_cols + col, &abs[r], sizeof abs[r]);
  }
}

// One micro tile (micro_rows rows of A; rows past the matrix repeat the last one, their sums not
// stored) in two column halves of double4: 8 accumulators and their twins in AVX2's 16 registers.
void multiply_micro_tile_portable(const double *const *a_rows, const double *const *a_abs_rows,
                                  int64_t k, const double *b_strip, const double *b_abs_strip,
                                  double *sums, double *abs_sums) {
  for (int64_t col = 0; col < micro_cols; col += 4)
    multiply_rows<double4, micro_rows>(a_rows, a_abs_rows, k, col, b_strip, b_abs_strip, sums,
                                       abs_sums);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("avx2"))) void multiply_micro_tile_avx2(const double *const *a_rows,
                                                              const double *const *a_abs_rows,
                                                              int64_t k, const double *b_strip,
                                                              const double *b_abs_strip,
                                                              double *sums, double *abs_sums) {
  for (int64_t col = 0; col < micro_cols; col += 4)
    multiply_rows<double4, micro_rows>(a_rows, a_abs_rows, k, col, b_strip, b_abs_strip, sums,
                                       abs_sums);
}

// The whole tile at once: AVX-512's 32 registers of 8 doubles.
__attribute__((target("avx512f"))) void multiply_micro_tile_avx512(const double *const *a_rows,
                                                                   const double *const *a_abs_rows,
                                                                   int64_t k, const double *b_strip,
                                                                   const double *b_abs_strip,
                                                                   double *sums, double *abs_sums) {
  multiply_rows<double8, micro_rows>(a_rows, a_abs_rows, k, 0, b_strip, b_abs_strip, sums,
                                     abs_sums);
}

// The same sums with fused multiply-adds, for inputs whose products are exact in double (see
// products_are_exact): fma(a, b, acc) rounds a * b + acc once, and a * b is exact, so each sum
// is bit for bit the one the multiply-then-add kernels give, in half the instructions.
__attribute__((target("avx2,fma"))) void
multiply_micro_tile_avx2_fma(const double *const *a_rows, const double *const *a_abs_rows,
                             int64_t k, const double *b_strip, const double *b_abs_strip,
                             double *sums, double *abs_sums) {
  for (int64_t col = 0; col < micro_cols; col += 4) {
    __m256d acc[micro_rows], abs[micro_rows];
    for (int r = 0; r < micro_rows; ++r)
      acc[r] = abs[r] = _mm256_setzero_pd();
    for (int64_t kk = 0; kk < k; ++kk) {
      const __m256d b = _mm256_loadu_pd(b_strip + kk * micro_cols + col);
      const __m256d b_abs = _mm256_loadu_pd(b_abs_strip + kk * micro_cols + col);
#pragma GCC unroll 4
      for (int r = 0; r < micro_rows; ++r) {
        acc[r] = _mm256_fmadd_pd(_mm256_broadcast_sd(a_rows[r] + kk), b, acc[r]);
        abs[r] = _mm256_fmadd_pd(_mm256_broadcast_sd(a_abs_rows[r] + kk), b_abs, abs[r]);
      }
    }
    for (int r = 0; r < micro_rows; ++r) {
      _mm256_storeu_pd(sums + r * micro_cols + col, acc[r]);
      _mm256_storeu_pd(abs_sums + r * micro_cols + col, abs[r]);
    }
  }
}

__attribute__((target("avx512f"))) void
multiply_micro_tile_avx512_fma(const double *const *a_rows, const double *const *a_abs_rows,
                               int64_t k, const double *b_strip, const double *b_abs_strip,
                               double *sums, double *abs_sums) {
  __m512d acc[micro_rows], abs[micro_rows];
  for (int r = 0; r < micro_rows; ++r)
    acc[r] = abs[r] = _mm512_setzero_pd();
  for (int64_t kk = 0; kk < k; ++kk) {
    const __m512d b = _mm512_loadu_pd(b_strip + kk * micro_cols);
    const __m512d b_abs = _mm512_loadu_pd(b_abs_strip + kk * micro_cols);
#pragma GCC unroll 4
    for (int r = 0; r < micro_rows; ++r) {
      acc[r] = _mm512_fmadd_pd(_mm512_set1_pd(a_rows[r][kk]), b, acc[r]);
      abs[r] = _mm512_fmadd_pd(_mm512_set1_pd(a_abs_rows[r][kk]), b_abs, abs[r]);
    }
  }
  for (int r = 0; r < micro_rows; ++r) {
    _mm512_storeu_pd(sums + r * micro_cols, acc[r]);
    _mm512_storeu_pd(abs_sums + r * micro_cols, abs[r]);
  }
}
#endif

using MicroTileKernel = void (*)(const double *const *a_rows, const double *const *a_abs_rows,
                                 int64_t k, const double *b_strip, const double *b_abs_strip,
                                 double *sums, double *abs_sums);

// Whether every product of two inputs of these types is exact in double: at most 24 significant
// bits each (48 <= 53), exponents far inside double's range. Not f64 (53 bits) or s32 (31).
bool products_are_exact(DType a, DType b) {
  const auto exact = [](DType t) { return t != DType::f64 && t != DType::s32; };
  return exact(a) && exact(b);
}

// `exact_products`: the fused kernels may be used (the sums are the same bits either way).
MicroTileKernel micro_tile_kernel(bool exact_products) {
  const std::string name = reference_simd_kernel();
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (name == "avx512")
    return exact_products ? multiply_micro_tile_avx512_fma : multiply_micro_tile_avx512;
  if (name == "avx2")
    return exact_products && __builtin_cpu_supports("fma") ? multiply_micro_tile_avx2_fma
                                                           : multiply_micro_tile_avx2;
#endif
  return multiply_micro_tile_portable;
}

} // namespace

std::string reference_simd_kernel() {
  const char *env = std::getenv("TCJIT_REFERENCE_SIMD");
  const std::string asked = env ? env : "";
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  const bool has_avx512 = __builtin_cpu_supports("avx512f");
  const bool has_avx2 = __builtin_cpu_supports("avx2");
#else
  const bool has_avx512 = false, has_avx2 = false;
#endif
  if (asked.empty())
    return has_avx512 ? "avx512" : has_avx2 ? "avx2" : "portable";
  if (asked == "portable" || (asked == "avx512" && has_avx512) || (asked == "avx2" && has_avx2))
    return asked;
  if (asked == "avx512" || asked == "avx2")
    throw std::invalid_argument("tcjit reference: TCJIT_REFERENCE_SIMD=" + asked +
                                " but this CPU lacks " + asked +
                                "; unset it, or set it to portable");
  throw std::invalid_argument("tcjit reference: TCJIT_REFERENCE_SIMD='" +
                              support::escape_controls(asked) +
                              "' is none of avx512, avx2, portable; unset it to use the widest "
                              "this CPU has");
}

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
    ReferenceValues counts = binary_gemm_counts(g, spec.bop, buffers.a, buffers.b);
    ReferenceValues abs_sums = counts;
    return finish_reference(spec, layout, std::move(counts), std::move(abs_sums), buffers.c,
                            buffers.bias);
  }

  const MicroTileKernel kernel = micro_tile_kernel(products_are_exact(g.a.dtype, g.b.dtype));
  // A dense (its rows are read once per panel); B read from its buffer as each panel is packed,
  // and |a| per micro tile's rows: no whole-matrix copy that only one pass reads.
  const std::unique_ptr<double[]> a = load_matrix(g.a, g.batch, resolved, buffers.a);
  // Not zeroed: the work items below write every element (and first touch its page).
  ReferenceValues accumulators(static_cast<size_t>(layout.count));
  ReferenceValues abs_sums(static_cast<size_t>(layout.count));
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
    std::vector<double> a_abs(static_cast<size_t>(micro_rows * k)); // |a| of a micro tile's rows
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
              const double v = col < n
                                   ? read_input_as_hardware_sees(g.b.dtype, resolved, buffers.b,
                                                                 matrix_offset(g.b, batch, kk, col))
                                   : 0.0;
              const size_t at = static_cast<size_t>((s * k + kk) * micro_cols + j);
              b_pack[at] = v;
              b_abs_pack[at] = std::fabs(v);
            }
      }
      const int64_t first_row = item % row_chunks * chunk_rows;
      const int64_t last_row = std::min(m, first_row + chunk_rows);
      for (int64_t row0 = first_row; row0 < last_row; row0 += micro_rows) {
        const int64_t rows = std::min(micro_rows, last_row - row0);
        const double *a_rows[micro_rows], *a_abs_rows[micro_rows];
        for (int64_t r = 0; r < micro_rows; ++r) { // rows past the matrix repeat the last one
          const int64_t row = batch * m + row0 + std::min(r, rows - 1);
          a_rows[r] = a.get() + row * k;
          double *abs_row = a_abs.data() + r * k;
          for (int64_t kk = 0; kk < k; ++kk)
            abs_row[kk] = std::fabs(a_rows[r][kk]);
          a_abs_rows[r] = abs_row;
        }
        for (int64_t s = 0; s < strips; ++s) {
          const size_t strip = static_cast<size_t>(s * k * micro_cols);
          kernel(a_rows, a_abs_rows, k, b_pack.data() + strip, b_abs_pack.data() + strip, sums,
                 abs_tile);
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
