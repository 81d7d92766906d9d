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
#include <cstdint>
#include <cstdlib>
#include <cstring>
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace tcjit {

namespace {

// The product is computed in register-sized tiles: micro_rows x micro_cols sums (and their
// |a| * |b| twins, the tolerance model's input) stay in registers for the whole K loop, reading B
// from a packed panel of micro_cols columns. Each sum still adds its K products in order, in
// double, each product rounded before it is added (fused only where the products are exact, which
// gives the same bits), so the result does not depend on the tiling, the instruction set or the
// thread count. Small integers (s8, u8, s4, u4) are multiplied as int16 into int32 sums where no
// sum can overflow: exact integers, so the same doubles.
constexpr int64_t micro_rows = 4;
constexpr int64_t micro_cols = 8;
constexpr int64_t panel_cols = 64;  // B columns packed at once: micro_cols-wide strips
constexpr int64_t chunk_rows = 128; // rows of A one work item takes against a packed panel

// Integer inputs of at most 8 bits (s8, u8, s4, u4) as int16, K in groups of 4 (zero past K):
// B's packed strip holds, per group, micro_cols x 4 values, column-major inside the group, so
// that one 64-bit broadcast of a row's 4 values meets 2-value pairs of 4 columns per 256 bits
// (vpmaddwd: a[2q] * b[2q][j] + a[2q + 1] * b[2q + 1][j] in the 32-bit lane (j, q)). Each sum is
// then the exact integer the double kernels reach: int_tile_kernel makes sure no int32 sum
// overflows.
constexpr int64_t int_k_group = 4;

// A matrix operand converted to Element (double, or int16 for small integers), row-major and
// dense: [batch][rows][row_stride], zero past its columns. Allocated uninitialized and written by
// the worker threads, so that no thread zeroes (and first touches) it alone: fresh memory is dear
// (the kernel zeroes every page on first touch).
template <typename Element>
std::unique_ptr<Element[]> load_matrix(const MatrixGeometry &g, int64_t batch, MathMode resolved,
                                       const void *data, int64_t row_stride) {
  auto out =
      std::make_unique_for_overwrite<Element[]>(static_cast<size_t>(batch * g.rows * row_stride));
  parallel_for(batch * g.rows, 64, [&](int64_t begin, int64_t end) {
    for (int64_t line = begin; line < end; ++line) {
      const int64_t b = line / g.rows, row = line % g.rows;
      Element *dst = out.get() + line * row_stride;
      for (int64_t col = 0; col < g.cols; ++col)
        dst[col] = static_cast<Element>(
            read_input_as_hardware_sees(g.dtype, resolved, data, matrix_offset(g, b, row, col)));
      std::fill(dst + g.cols, dst + row_stride, Element(0));
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

// The sums of the int32 lane pairs (2j, 2j + 1) as doubles: each 64-bit lane's low half plus
// its high half (the high half's own sum is dropped), then the low halves narrowed.
__attribute__((target("avx2"))) __m256d sum_lane_pairs_avx2(__m256i lanes) {
  const __m256i pairs = _mm256_add_epi32(lanes, _mm256_srli_epi64(lanes, 32));
  const __m256i low_halves =
      _mm256_permutevar8x32_epi32(pairs, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6));
  return _mm256_cvtepi32_pd(_mm256_castsi256_si128(low_halves));
}

// (The zero-masked forms, all lanes kept: GCC 12 warns that the plain ones' undefined source is
// used uninitialized.)
__attribute__((target("avx512f"))) __m512d sum_lane_pairs_avx512(__m512i lanes) {
  const __m512i pairs = _mm512_add_epi32(lanes, _mm512_maskz_srli_epi64(0xff, lanes, 32));
  return _mm512_maskz_cvtepi32_pd(0xff, _mm512_maskz_cvtepi64_epi32(0xff, pairs));
}

// AVX2: the 8 columns in two passes of 4 (8 accumulators each).
__attribute__((target("avx2"))) void multiply_int_tile_avx2(const int16_t *const *a_rows,
                                                            const int16_t *const *a_abs_rows,
                                                            int64_t k, const int16_t *b_strip,
                                                            const int16_t *b_abs_strip,
                                                            double *sums, double *abs_sums) {
  for (int64_t half = 0; half < 2; ++half) {
    __m256i acc[micro_rows], abs[micro_rows];
    for (int r = 0; r < micro_rows; ++r)
      acc[r] = abs[r] = _mm256_setzero_si256();
    for (int64_t kk = 0; kk < k; kk += int_k_group) {
      const int64_t at = kk * micro_cols + half * 16;
      const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(b_strip + at));
      const __m256i b_abs = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(b_abs_strip + at));
#pragma GCC unroll 4
      for (int r = 0; r < micro_rows; ++r) {
        int64_t a4, a4_abs;
        std::memcpy(&a4, a_rows[r] + kk, sizeof a4);
        std::memcpy(&a4_abs, a_abs_rows[r] + kk, sizeof a4_abs);
        acc[r] = _mm256_add_epi32(acc[r], _mm256_madd_epi16(_mm256_set1_epi64x(a4), b));
        abs[r] = _mm256_add_epi32(abs[r], _mm256_madd_epi16(_mm256_set1_epi64x(a4_abs), b_abs));
      }
    }
    for (int r = 0; r < micro_rows; ++r) {
      _mm256_storeu_pd(sums + r * micro_cols + half * 4, sum_lane_pairs_avx2(acc[r]));
      _mm256_storeu_pd(abs_sums + r * micro_cols + half * 4, sum_lane_pairs_avx2(abs[r]));
    }
  }
}

// AVX-512BW: the 8 columns at once.
__attribute__((target("avx512f,avx512bw"))) void
multiply_int_tile_avx512(const int16_t *const *a_rows, const int16_t *const *a_abs_rows, int64_t k,
                         const int16_t *b_strip, const int16_t *b_abs_strip, double *sums,
                         double *abs_sums) {
  __m512i acc[micro_rows], abs[micro_rows];
  for (int r = 0; r < micro_rows; ++r)
    acc[r] = abs[r] = _mm512_setzero_si512();
  for (int64_t kk = 0; kk < k; kk += int_k_group) {
    const __m512i b = _mm512_loadu_si512(b_strip + kk * micro_cols);
    const __m512i b_abs = _mm512_loadu_si512(b_abs_strip + kk * micro_cols);
#pragma GCC unroll 4
    for (int r = 0; r < micro_rows; ++r) {
      int64_t a4, a4_abs;
      std::memcpy(&a4, a_rows[r] + kk, sizeof a4);
      std::memcpy(&a4_abs, a_abs_rows[r] + kk, sizeof a4_abs);
      acc[r] = _mm512_add_epi32(acc[r], _mm512_madd_epi16(_mm512_set1_epi64(a4), b));
      abs[r] = _mm512_add_epi32(abs[r], _mm512_madd_epi16(_mm512_set1_epi64(a4_abs), b_abs));
    }
  }
  for (int r = 0; r < micro_rows; ++r) {
    _mm512_storeu_pd(sums + r * micro_cols, sum_lane_pairs_avx512(acc[r]));
    _mm512_storeu_pd(abs_sums + r * micro_cols, sum_lane_pairs_avx512(abs[r]));
  }
}
#endif

template <typename Element>
using TileKernel = void (*)(const Element *const *a_rows, const Element *const *a_abs_rows,
                            int64_t k, const Element *b_strip, const Element *b_abs_strip,
                            double *sums, double *abs_sums);

// Whether every product of two inputs of these types is exact in double: at most 24 significant
// bits each (48 <= 53), exponents far inside double's range. Not f64 (53 bits) or s32 (31).
bool products_are_exact(DType a, DType b) {
  const auto exact = [](DType t) { return t != DType::f64 && t != DType::s32; };
  return exact(a) && exact(b);
}

// `exact_products`: the fused kernels may be used (the sums are the same bits either way).
TileKernel<double> micro_tile_kernel(bool exact_products) {
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

// The largest magnitude of an integer type of at most 8 bits; 0 for every other type.
int64_t small_integer_magnitude(DType t) {
  switch (t) {
  case DType::s8: return 128;
  case DType::u8: return 255;
  case DType::s4: return 8;
  case DType::u4: return 15;
  default: return 0;
  }
}

// The int16 kernel for A and B of these types over K, or null where the double kernels must
// run: a type that is not a small integer, sums that could pass int32 (K * max|a| * max|b|), or
// TCJIT_REFERENCE_SIMD=portable. Its sums are the same integers, so the same doubles.
TileKernel<int16_t> int_tile_kernel(DType a, DType b, int64_t k) {
  const int64_t magnitude = small_integer_magnitude(a) * small_integer_magnitude(b);
  if (magnitude == 0 || k > std::numeric_limits<int32_t>::max() / magnitude)
    return nullptr;
  const std::string name = reference_simd_kernel();
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (name == "avx512" && __builtin_cpu_supports("avx512bw"))
    return multiply_int_tile_avx512;
  if (name == "avx512" || name == "avx2")
    return multiply_int_tile_avx2;
#endif
  return nullptr;
}

// The packed panel index of B's (kk, column j of strip s) with K in groups of `k_group` (1 for
// the double kernels: micro_cols values per kk; int_k_group for the int16 kernels).
size_t packed_index(int64_t s, int64_t k_stride, int64_t kk, int64_t j, int64_t k_group) {
  return static_cast<size_t>((s * k_stride + kk / k_group * k_group) * micro_cols + j * k_group +
                             kk % k_group);
}

template <typename Element> Element magnitude_of(Element v) {
  if constexpr (std::is_floating_point_v<Element>)
    return std::fabs(v);
  else
    return static_cast<Element>(v < 0 ? -v : v);
}

// accumulators[e] = sum over K of a * b and abs_sums[e] of |a| * |b|, for each output element e
// (layout order), by `kernel` on Element operands whose K is padded with zeros to a multiple of
// `k_group`.
template <typename Element>
void multiply_tiles(const GemmGeometry &g, const GemmBuffers &buffers, MathMode resolved,
                    TileKernel<Element> kernel, int64_t k_group, ReferenceValues &accumulators,
                    ReferenceValues &abs_sums) {
  const int64_t m = g.m, n = g.n, k = g.k;
  const int64_t k_stride = (k + k_group - 1) / k_group * k_group;
  // A dense (its rows are read once per panel); B read from its buffer as each panel is packed,
  // and |a| per micro tile's rows: no whole-matrix copy that only one pass reads.
  const std::unique_ptr<Element[]> a =
      load_matrix<Element>(g.a, g.batch, resolved, buffers.a, k_stride);
  const int64_t panels = (n + panel_cols - 1) / panel_cols;
  const int64_t row_chunks = (m + chunk_rows - 1) / chunk_rows;
  const int64_t work_per_item = chunk_rows * panel_cols * k;
  const int64_t min_chunk = std::max<int64_t>(1, (1 << 20) / std::max<int64_t>(work_per_item, 1));

  // Work items run panel by panel, row chunks innermost, so a thread packs each panel once.
  parallel_for(g.batch * panels * row_chunks, min_chunk, [&](int64_t begin, int64_t end) {
    // B's panel as strips of micro_cols columns (packed_index)
    std::vector<Element> b_pack(static_cast<size_t>(k_stride * panel_cols));
    std::vector<Element> b_abs_pack(b_pack.size());
    std::vector<Element> a_abs(static_cast<size_t>(micro_rows * k_stride)); // a micro tile's |a|
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
          for (int64_t kk = 0; kk < k_stride; ++kk)
            for (int64_t j = 0; j < micro_cols; ++j) {
              const int64_t col = col0 + s * micro_cols + j;
              const Element v =
                  col < n && kk < k
                      ? static_cast<Element>(read_input_as_hardware_sees(
                            g.b.dtype, resolved, buffers.b, matrix_offset(g.b, batch, kk, col)))
                      : Element(0);
              const size_t at = packed_index(s, k_stride, kk, j, k_group);
              b_pack[at] = v;
              b_abs_pack[at] = magnitude_of(v);
            }
      }
      const int64_t first_row = item % row_chunks * chunk_rows;
      const int64_t last_row = std::min(m, first_row + chunk_rows);
      for (int64_t row0 = first_row; row0 < last_row; row0 += micro_rows) {
        const int64_t rows = std::min(micro_rows, last_row - row0);
        const Element *a_rows[micro_rows], *a_abs_rows[micro_rows];
        for (int64_t r = 0; r < micro_rows; ++r) { // rows past the matrix repeat the last one
          const int64_t row = batch * m + row0 + std::min(r, rows - 1);
          a_rows[r] = a.get() + row * k_stride;
          Element *abs_row = a_abs.data() + r * k_stride;
          for (int64_t kk = 0; kk < k_stride; ++kk)
            abs_row[kk] = magnitude_of(a_rows[r][kk]);
          a_abs_rows[r] = abs_row;
        }
        for (int64_t s = 0; s < strips; ++s) {
          const size_t strip = static_cast<size_t>(s * k_stride * micro_cols);
          kernel(a_rows, a_abs_rows, k_stride, b_pack.data() + strip, b_abs_pack.data() + strip,
                 sums, abs_tile);
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

  // Not zeroed: the work items write every element (and first touch its page).
  ReferenceValues accumulators(static_cast<size_t>(layout.count));
  ReferenceValues abs_sums(static_cast<size_t>(layout.count));
  if (const TileKernel<int16_t> int_kernel = int_tile_kernel(g.a.dtype, g.b.dtype, g.k))
    multiply_tiles(g, buffers, resolved, int_kernel, int_k_group, accumulators, abs_sums);
  else
    multiply_tiles(g, buffers, resolved,
                   micro_tile_kernel(products_are_exact(g.a.dtype, g.b.dtype)), 1, accumulators,
                   abs_sums);
  return finish_reference(spec, layout, std::move(accumulators), std::move(abs_sums), buffers.c,
                          buffers.bias);
}

} // namespace tcjit
