#include "compiler/reference/sparse_2_4.h"

#include "compiler/reference/numeric_convert.h"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace tcjit {

namespace {

[[noreturn]] void fail(const std::string &what) {
  throw std::invalid_argument("tcjit 2:4 sparsity: " + what);
}

int64_t round_up_16(int64_t v) {
  return (v + 15) / 16 * 16;
}

// |v| as the pruning orders values: NaN above every number.
double magnitude(double v) {
  return std::isnan(v) ? INFINITY : std::fabs(v);
}

} // namespace

Sparse24Layout compressed_a_layout(DType dtype, int64_t m, int64_t k, int64_t lda) {
  if (dtype_bits(dtype) % 8 != 0 || is_reserved_type(dtype))
    fail("a=" + std::string(to_string(dtype)) +
         " has no whole-byte elements; 2:4 compression takes f16, bf16, f32, tf32, s8 and u8");
  if (m < 1)
    fail("m=" + std::to_string(m) + " must be positive");
  if (k < 4 || k % 4 != 0)
    fail("k=" + std::to_string(k) + " must be a positive multiple of 4 (groups of 4 along K)");
  Sparse24Layout l;
  l.lda = lda == 0 ? k / 2 : lda;
  if (l.lda < k / 2)
    fail("lda=" + std::to_string(l.lda) + " is smaller than the k/2=" + std::to_string(k / 2) +
         " kept values of a row");
  const int64_t esize = dtype_bits(dtype) / 8;
  l.metadata_offset = round_up_16(m * l.lda * esize);
  l.metadata_row_bytes = k / 8 + (k % 8 != 0);
  l.block_bytes = round_up_16(l.metadata_offset + m * l.metadata_row_bytes);
  return l;
}

KeptPair kept_pair_1_2(const double (&v)[4]) {
  // the larger magnitude of each pair, the lower index among equals
  return {magnitude(v[1]) > magnitude(v[0]) ? 1 : 0, magnitude(v[3]) > magnitude(v[2]) ? 3 : 2};
}

bool prunes_pairs(DType dtype) {
  return dtype == DType::f32 || dtype == DType::tf32;
}

KeptPair kept_of(DType dtype, const double (&v)[4]) {
  return prunes_pairs(dtype) ? kept_pair_1_2(v) : kept_pair(v);
}

KeptPair kept_pair(const double (&v)[4]) {
  // the largest magnitude, the lowest index among equals; then the next one
  int best = 0;
  for (int i = 1; i < 4; ++i)
    if (magnitude(v[i]) > magnitude(v[best]))
      best = i;
  int next = best == 0 ? 1 : 0;
  for (int i = 0; i < 4; ++i)
    if (i != best && magnitude(v[i]) > magnitude(v[next]))
      next = i;
  return best < next ? KeptPair{best, next} : KeptPair{next, best};
}

void sparse_prune(DType dtype, void *data, int64_t m, int64_t k, int64_t ld) {
  (void)compressed_a_layout(dtype, m, k);
  const int64_t esize = dtype_bits(dtype) / 8;
  auto *bytes = static_cast<unsigned char *>(data);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t g = 0; g < k / 4; ++g) {
      const int64_t first = r * ld + 4 * g;
      double v[4];
      for (int i = 0; i < 4; ++i)
        v[i] = read_element(dtype, data, first + i);
      const KeptPair kept = kept_of(dtype, v);
      for (int i = 0; i < 4; ++i)
        if (i != kept.first && i != kept.second)
          std::memset(bytes + (first + i) * esize, 0, static_cast<size_t>(esize));
    }
}

void sparse_compress(DType dtype, const void *dense, int64_t m, int64_t k, int64_t ld,
                     const Sparse24Layout &layout, void *out) {
  const int64_t esize = dtype_bits(dtype) / 8;
  const auto *in = static_cast<const unsigned char *>(dense);
  auto *o = static_cast<unsigned char *>(out);
  std::memset(o, 0, static_cast<size_t>(layout.block_bytes));
  for (int64_t r = 0; r < m; ++r)
    for (int64_t g = 0; g < k / 4; ++g) {
      const int64_t first = r * ld + 4 * g;
      double v[4];
      for (int i = 0; i < 4; ++i)
        v[i] = read_element(dtype, dense, first + i);
      const KeptPair kept = kept_of(dtype, v);
      const int64_t to = r * layout.lda + 2 * g;
      std::memcpy(o + to * esize, in + (first + kept.first) * esize, static_cast<size_t>(esize));
      std::memcpy(o + (to + 1) * esize, in + (first + kept.second) * esize,
                  static_cast<size_t>(esize));
      const int nibble = kept.first | kept.second << 2;
      o[layout.metadata_offset + r * layout.metadata_row_bytes + g / 2] |=
          static_cast<unsigned char>(nibble << (g % 2 * 4));
    }
}

void sparse_decompress(DType dtype, const void *compressed, const Sparse24Layout &layout, int64_t m,
                       int64_t k, void *dense, int64_t ld) {
  const int64_t esize = dtype_bits(dtype) / 8;
  const auto *in = static_cast<const unsigned char *>(compressed);
  auto *o = static_cast<unsigned char *>(dense);
  for (int64_t r = 0; r < m; ++r) {
    std::memset(o + r * ld * esize, 0, static_cast<size_t>(k * esize));
    for (int64_t g = 0; g < k / 4; ++g) {
      const int nibble =
          in[layout.metadata_offset + r * layout.metadata_row_bytes + g / 2] >> (g % 2 * 4) & 15;
      const int first = nibble & 3, second = nibble >> 2;
      if (first >= second || (prunes_pairs(dtype) && (first > 1 || second < 2)))
        fail("row " + std::to_string(r) + ", group " + std::to_string(g) + ": metadata nibble " +
             std::to_string(nibble) +
             " does not hold two increasing indices (f32/tf32: one of each pair)");
      const int64_t from = r * layout.lda + 2 * g;
      std::memcpy(o + (r * ld + 4 * g + first) * esize, in + from * esize,
                  static_cast<size_t>(esize));
      std::memcpy(o + (r * ld + 4 * g + second) * esize, in + (from + 1) * esize,
                  static_cast<size_t>(esize));
    }
  }
}

} // namespace tcjit
