#include "compiler/reference/binary_gemm.h"

#include "support/parallel_for.h"

#include <bit>
#include <cstdint>

namespace tcjit {

namespace {

bool bit_at(const void *data, int64_t element) {
  return (static_cast<const unsigned char *>(data)[element / 8] >> (element % 8)) & 1;
}

// The K bits of every (batch, line) of an operand, packed into 64-bit words: line = row of A
// (k along its columns) or column of B (k along its rows).
std::vector<uint64_t> gather_bits(const MatrixGeometry &m, int64_t batch, int64_t lines, int64_t k,
                                  bool k_is_col, const void *data, int64_t words) {
  std::vector<uint64_t> out(static_cast<size_t>(batch * lines * words));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t line = 0; line < lines; ++line) {
      uint64_t *dst = out.data() + (b * lines + line) * words;
      for (int64_t kk = 0; kk < k; ++kk) {
        const int64_t e = k_is_col ? matrix_offset(m, b, line, kk) : matrix_offset(m, b, kk, line);
        if (bit_at(data, e))
          dst[kk / 64] |= uint64_t{1} << (kk % 64);
      }
    }
  return out;
}

} // namespace

ReferenceValues binary_gemm_counts(const GemmGeometry &g, BitOp op, const void *a, const void *b) {
  const int64_t words = (g.k + 63) / 64;
  const std::vector<uint64_t> rows = gather_bits(g.a, g.batch, g.m, g.k, true, a, words);
  const std::vector<uint64_t> cols = gather_bits(g.b, g.batch, g.n, g.k, false, b, words);
  ReferenceValues out(static_cast<size_t>(g.batch * g.m * g.n)); // every element written
  parallel_for(g.batch * g.m, 16, [&](int64_t begin, int64_t end) {
    for (int64_t line = begin; line < end; ++line) {
      const int64_t batch = line / g.m, row = line % g.m;
      const uint64_t *r = rows.data() + line * words;
      for (int64_t col = 0; col < g.n; ++col) {
        const uint64_t *c = cols.data() + (batch * g.n + col) * words;
        int64_t count = 0;
        for (int64_t w = 0; w < words; ++w) // bits past K are zero in both
          count += std::popcount(op == BitOp::xor_popc ? r[w] ^ c[w] : r[w] & c[w]);
        const int64_t element =
            g.c.row_major ? (batch * g.m + row) * g.n + col : (batch * g.n + col) * g.m + row;
        out[static_cast<size_t>(element)] = static_cast<double>(count);
      }
    }
  });
  return out;
}

} // namespace tcjit
