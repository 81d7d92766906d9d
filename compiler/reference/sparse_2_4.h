// 2:4 structured sparsity of a GEMM's A (DSL `sparse=2:4`): the pruning (the 2 largest magnitudes
// of every 4 consecutive values along K are kept; f32/tf32: the larger of each pair, 1:2), the
// compressed layout a sparse kernel reads, and the way back. The layout (docs/dsl.md, "2:4-sparse
// A"), per batch, in one buffer:
//   values    M rows of K/2 elements, row-major, row stride lda (compressed elements, >= K/2):
//             element (m, 2g + j) is the j-th kept value (in K order) of group g (columns
//             4g .. 4g+3) of row m;
//   metadata  at byte metadata_offset = round_up(M * lda * element bytes, 16): row m's K/8 bytes
//             at metadata_offset + m * K/8; group g's 4 bits in byte g/2 (the low nibble for even
//             g): bits 0-1 the index (0..3) within the group of the first kept value, bits 2-3 the
//             second's (always the larger index). Read as little-endian 16-bit words, word w of a
//             row holds groups 4w .. 4w+3 (dense columns 16w .. 16w+15), group 4w+i in bits 4i.
//   The next batch's block starts at round_up(metadata_offset + M * K/8, 16) bytes, a whole
//   number of elements: the batch stride.
// K must be a multiple of 4 here (the kernels need a multiple of their mma's K: validate.cpp).
// Supported element types: f16, bf16, f32/tf32, s8, u8 (whole bytes), and s4, u4 by pairs:
//   s4/u4 (two values per byte, value 2i in the low nibble of byte i; PTX ISA "Sparse matrix
//   storage": 4-bit A is "pair-wise" 4:8 sparse) is pruned and compressed as the 8-bit 2:4 of its
//   bytes: a unit is a byte (a pair of adjacent values 2j, 2j+1), of every 4 units (8 values) the
//   2 pairs of largest |v0| + |v1| are kept (ties to the lower index), and the layout above holds
//   with "element" read as "byte" and K as k/2 bytes: lda counts compressed values (even), the
//   values are M rows of lda/2 bytes, the metadata rows k/16 bytes whose indices count pairs.
#pragma once

#include "tcjit/op_spec.h"

#include <cstdint>

namespace tcjit {

struct Sparse24Layout {
  int64_t lda = 0;             // compressed elements between rows (>= k / 2)
  int64_t metadata_offset = 0; // bytes from the block's start
  int64_t metadata_row_bytes = 0;
  int64_t block_bytes = 0; // one matrix (one batch): values and metadata, a multiple of 16
};

// The layout of an m x k A; lda = 0 for the dense default k / 2. Throws std::invalid_argument
// when k is not a positive multiple of 4 (s4/u4: 8), m < 1, lda < k / 2 (s4/u4: or odd), or the
// dtype has no whole bytes (other than s4/u4).
Sparse24Layout compressed_a_layout(DType dtype, int64_t m, int64_t k, int64_t lda = 0);

// The two indices (0..3, first < second) kept of the 4 values v[0..3]: the two largest
// magnitudes, ties to the lower index; a NaN counts as larger than any number (never pruned).
struct KeptPair {
  int first = 0, second = 1;
};
KeptPair kept_pair(const double (&v)[4]);
// f32/tf32 (mma.sp's tf32 sparsity is 1:2): the larger magnitude of each pair (v[0], v[1]) and
// (v[2], v[3]), ties and NaN as above; first is 0 or 1, second 2 or 3.
KeptPair kept_pair_1_2(const double (&v)[4]);
// Whether dtype prunes by pairs (f32, tf32) rather than by groups of 4.
bool prunes_pairs(DType dtype);
// Whether dtype's unit of sparsity is a pair of adjacent values, one byte (s4, u4: 4:8 pair-wise).
bool packs_pairs(DType dtype);

// Prunes a row-major m x k matrix (row stride ld elements) in place: zeroes the 2 values of every
// 4 along K that kept_pair drops (f32/tf32: kept_pair_1_2, the smaller of every pair; s4/u4: the
// 2 pairs of every 4 pairs of smallest |v0| + |v1|, ld even).
void sparse_prune(DType dtype, void *data, int64_t m, int64_t k, int64_t ld);

// Prunes and compresses a row-major m x k matrix (row stride ld) into `out` (layout.block_bytes;
// padding bytes are zero).
void sparse_compress(DType dtype, const void *dense, int64_t m, int64_t k, int64_t ld,
                     const Sparse24Layout &layout, void *out);

// The dense m x k matrix (row stride ld) a compressed block stands for: the kept values at their
// indices, zeros elsewhere. Throws std::invalid_argument on metadata whose two indices are not
// increasing.
void sparse_decompress(DType dtype, const void *compressed, const Sparse24Layout &layout, int64_t m,
                       int64_t k, void *dense, int64_t ld);

} // namespace tcjit
