// tools.hpp: the 2:4 prune-and-compress step of sparse=2:4 GEMMs, over host memory
// (compiler/reference/sparse_2_4.h holds the layout and the pruning).
#include "compiler/reference/sparse_2_4.h"
#include "tcjit/tools.hpp"

#include <stdexcept>
#include <string>

namespace tcjit {

namespace {

constexpr const char *kWhere = "2:4 sparsity";

Sparse24Layout layout_or_throw(DType dtype, int64_t m, int64_t k, int64_t lda) {
  try {
    return compressed_a_layout(dtype, m, k, lda);
  } catch (const std::invalid_argument &e) {
    throw Error(ErrorCode::invalid_argument, e.what(), kWhere,
                "give m >= 1, k a multiple of 4 (8 for s4/u4), lda >= k/2 (or 0; even for s4/u4) "
                "and a dtype of whole bytes or s4/u4");
  }
}

void check_dense(DType dtype, const void *p, int64_t k, int64_t ld_dense, const char *name) {
  if (!p)
    throw Error(ErrorCode::invalid_argument, std::string(name) + " is null", kWhere,
                "pass the host buffer");
  if (ld_dense < k)
    throw Error(ErrorCode::invalid_argument,
                "ld_dense=" + std::to_string(ld_dense) + " is smaller than k=" + std::to_string(k),
                kWhere, "give the row stride of the dense matrix, at least k");
  if (packs_pairs(dtype) && ld_dense % 2 != 0)
    throw Error(ErrorCode::invalid_argument,
                "ld_dense=" + std::to_string(ld_dense) +
                    " is odd: " + std::string(to_string(dtype)) + " values are packed two per byte",
                kWhere, "give an even row stride, so that every row starts on a byte");
}

} // namespace

size_t sparse_2_4_bytes(DType dtype, int64_t m, int64_t k, int64_t lda) {
  return static_cast<size_t>(layout_or_throw(dtype, m, k, lda).block_bytes);
}

size_t sparse_2_4_metadata_offset(DType dtype, int64_t m, int64_t k, int64_t lda) {
  return static_cast<size_t>(layout_or_throw(dtype, m, k, lda).metadata_offset);
}

void prune_2_4_and_compress(DType dtype, const void *dense, int64_t m, int64_t k, int64_t ld_dense,
                            void *out, int64_t lda) {
  const Sparse24Layout layout = layout_or_throw(dtype, m, k, lda);
  check_dense(dtype, dense, k, ld_dense, "dense");
  check_dense(dtype, out, k, ld_dense, "out");
  sparse_compress(dtype, dense, m, k, ld_dense, layout, out);
}

void prune_2_4(DType dtype, void *dense, int64_t m, int64_t k, int64_t ld_dense) {
  (void)layout_or_throw(dtype, m, k, 0);
  check_dense(dtype, dense, k, ld_dense, "dense");
  sparse_prune(dtype, dense, m, k, ld_dense);
}

void decompress_2_4(DType dtype, const void *compressed, int64_t m, int64_t k, void *dense,
                    int64_t ld_dense, int64_t lda) {
  const Sparse24Layout layout = layout_or_throw(dtype, m, k, lda);
  check_dense(dtype, compressed, k, ld_dense, "compressed");
  check_dense(dtype, dense, k, ld_dense, "dense");
  try {
    sparse_decompress(dtype, compressed, layout, m, k, dense, ld_dense);
  } catch (const std::invalid_argument &e) {
    throw Error(ErrorCode::invalid_argument, e.what(), kWhere,
                "pass a block written by prune_2_4_and_compress");
  }
}

} // namespace tcjit
