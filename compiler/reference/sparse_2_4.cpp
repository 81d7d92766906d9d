#include "compiler/reference/sparse_2_4.h"

#include "compiler/reference/numeric_convert.h"
#include "compiler/target/dtype_info.h"

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

// How the pruning sees a row: units of `bytes` bytes, `values` values each, in groups of 4 units
// of which 2 are kept. A unit is one element; for the packed 4-bit types (s4, u4: two values per
// byte, element 2i in the low nibble of byte i) one byte, a pair of adjacent values (the PTX ISA's
// 4:8 pair-wise sparsity of mma.sp .s4/.u4, which in bytes is 8-bit 2:4).
struct Units {
  int64_t bytes = 1;
  int64_t values = 1;
};

Units units_of(DType dtype) {
  if (packs_pairs(dtype))
    return {1, 2};
  return {dtype_bits(dtype) / 8, 1};
}

// The number whose magnitude (kept_pair) the pruning orders unit `u` of `data` by: the element; a
// pair of 4-bit values: |v0| + |v1|.
double unit_value(DType dtype, const void *data, int64_t u) {
  if (packs_pairs(dtype))
    return std::fabs(read_element(dtype, data, 2 * u)) +
           std::fabs(read_element(dtype, data, 2 * u + 1));
  return read_element(dtype, data, u);
}

// The values of the 4 units from unit `first` of `data` (unit_value).
void read_group(DType dtype, const void *data, int64_t first, double (&v)[4]) {
  for (int i = 0; i < 4; ++i)
    v[i] = unit_value(dtype, data, first + i);
}

// A dense row stride in units; a packed one must start every row on a byte.
int64_t ld_units(DType dtype, int64_t ld) {
  const Units u = units_of(dtype);
  if (ld % u.values != 0)
    fail("ld=" + std::to_string(ld) + " is odd: " + std::string(to_string(dtype)) +
         " values are packed two per byte, so every row must start on a byte");
  return ld / u.values;
}

} // namespace

bool packs_pairs(DType dtype) {
  return dtype == DType::s4 || dtype == DType::u4;
}

Sparse24Layout compressed_a_layout(DType dtype, int64_t m, int64_t k, int64_t lda) {
  const bool pairs = packs_pairs(dtype);
  if ((dtype_bits(dtype) % 8 != 0 && !pairs) || is_reserved_type(dtype))
    fail("a=" + std::string(to_string(dtype)) +
         " has no whole-byte elements; 2:4 compression takes f16, bf16, f32, tf32, s8, u8 and the "
         "4-bit s4 and u4 (by pairs)");
  if (m < 1)
    fail("m=" + std::to_string(m) + " must be positive");
  const int64_t group = pairs ? 8 : 4; // values per group of 4 units
  if (k < group || k % group != 0)
    fail("k=" + std::to_string(k) + " must be a positive multiple of " + std::to_string(group) +
         (pairs ? " (groups of 4 pairs of " + std::string(to_string(dtype)) + " values along K)"
                : std::string(" (groups of 4 along K)")));
  Sparse24Layout l;
  l.lda = lda == 0 ? k / 2 : lda;
  if (l.lda < k / 2)
    fail("lda=" + std::to_string(l.lda) + " is smaller than the k/2=" + std::to_string(k / 2) +
         " kept values of a row");
  if (pairs && l.lda % 2 != 0)
    fail("lda=" + std::to_string(l.lda) + " is odd: " + std::string(to_string(dtype)) +
         " values are packed two per byte, so every compressed row must start on a byte");
  l.metadata_offset = round_up_16(m * l.lda * dtype_bits(dtype) / 8);
  const int64_t groups = k / group; // 4 bits each
  l.metadata_row_bytes = (groups + 1) / 2;
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
  const Units u = units_of(dtype);
  const int64_t ldu = ld_units(dtype, ld), groups = k / u.values / 4;
  auto *bytes = static_cast<unsigned char *>(data);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t first = r * ldu + 4 * g;
      double v[4];
      read_group(dtype, data, first, v);
      const KeptPair kept = kept_of(dtype, v);
      for (int i = 0; i < 4; ++i)
        if (i != kept.first && i != kept.second)
          std::memset(bytes + (first + i) * u.bytes, 0, static_cast<size_t>(u.bytes));
    }
}

void sparse_compress(DType dtype, const void *dense, int64_t m, int64_t k, int64_t ld,
                     const Sparse24Layout &layout, void *out) {
  const Units u = units_of(dtype);
  const int64_t ldu = ld_units(dtype, ld), lda_u = layout.lda / u.values;
  const int64_t groups = k / u.values / 4;
  const auto *in = static_cast<const unsigned char *>(dense);
  auto *o = static_cast<unsigned char *>(out);
  const auto n = static_cast<size_t>(u.bytes);
  std::memset(o, 0, static_cast<size_t>(layout.block_bytes));
  for (int64_t r = 0; r < m; ++r)
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t first = r * ldu + 4 * g;
      double v[4];
      read_group(dtype, dense, first, v);
      const KeptPair kept = kept_of(dtype, v);
      const int64_t to = r * lda_u + 2 * g;
      std::memcpy(o + to * u.bytes, in + (first + kept.first) * u.bytes, n);
      std::memcpy(o + (to + 1) * u.bytes, in + (first + kept.second) * u.bytes, n);
      const int nibble = kept.first | kept.second << 2;
      o[layout.metadata_offset + r * layout.metadata_row_bytes + g / 2] |=
          static_cast<unsigned char>(nibble << (g % 2 * 4));
    }
}

void sparse_decompress(DType dtype, const void *compressed, const Sparse24Layout &layout, int64_t m,
                       int64_t k, void *dense, int64_t ld) {
  const Units u = units_of(dtype);
  const int64_t ldu = ld_units(dtype, ld), lda_u = layout.lda / u.values;
  const int64_t groups = k / u.values / 4;
  const auto *in = static_cast<const unsigned char *>(compressed);
  auto *o = static_cast<unsigned char *>(dense);
  const auto n = static_cast<size_t>(u.bytes);
  for (int64_t r = 0; r < m; ++r) {
    std::memset(o + r * ldu * u.bytes, 0, static_cast<size_t>(4 * groups * u.bytes));
    for (int64_t g = 0; g < groups; ++g) {
      const int nibble =
          in[layout.metadata_offset + r * layout.metadata_row_bytes + g / 2] >> (g % 2 * 4) & 15;
      const int first = nibble & 3, second = nibble >> 2;
      if (first >= second || (prunes_pairs(dtype) && (first > 1 || second < 2)))
        fail("row " + std::to_string(r) + ", group " + std::to_string(g) + ": metadata nibble " +
             std::to_string(nibble) +
             " does not hold two increasing indices (f32/tf32: one of each pair)");
      const int64_t from = r * lda_u + 2 * g;
      std::memcpy(o + (r * ldu + 4 * g + first) * u.bytes, in + from * u.bytes, n);
      std::memcpy(o + (r * ldu + 4 * g + second) * u.bytes, in + (from + 1) * u.bytes, n);
    }
  }
}

} // namespace tcjit
