// 2:4 sparsity of the packed 4-bit types s4/u4 (compiler/reference/sparse_2_4.h): the PTX ISA's
// 4:8 pair-wise rule (of every 8 values along K, 2 pairs of adjacent values are kept) applied as
// the 8-bit 2:4 of their bytes. A hand-worked example of the bytes, an independent check of the
// rule over random matrices (nibbles decoded here, not by numeric_convert), and the byte view: the
// block is the s8 layout of the packed bytes, and s8's decompression reads it back unchanged.
#include "compiler/reference/random_fill.h"
#include "compiler/reference/sparse_2_4.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace tcjit {
namespace {

// Value i of a packed row (value 2j in the low nibble of byte j), decoded by hand.
int nibble_value(DType t, const std::vector<unsigned char> &bytes, int64_t i) {
  const int raw = bytes[static_cast<size_t>(i / 2)] >> (4 * (i % 2)) & 15;
  return t == DType::s4 && raw >= 8 ? raw - 16 : raw;
}

TEST(Sparse24Pairs, HandExampleOfTheBytes) {
  // s4, m = 1, k = 16: two groups of 4 pairs.
  //   group 0 pairs (1,-3) (2,0) (7,-8) (0,1): |v0|+|v1| = 4, 2, 15, 1 -> keeps pairs 0 and 2
  //   group 1 pairs (0,0) (0,0) (-1,1) (1,-1): 0, 0, 2, 2 -> keeps pairs 2 and 3 (tie: both kept)
  // bytes: value 2j low nibble, 2j+1 high nibble; -3 = 0xd, -8 = 0x8, -1 = 0xf
  const std::vector<unsigned char> dense = {0xd1, 0x02, 0x87, 0x10, 0x00, 0x00, 0x1f, 0xf1};
  const Sparse24Layout l = compressed_a_layout(DType::s4, 1, 16);
  EXPECT_EQ(l.lda, 8);              // compressed values
  EXPECT_EQ(l.metadata_offset, 16); // 8 values = 4 bytes, rounded up to 16
  EXPECT_EQ(l.metadata_row_bytes, 1);
  EXPECT_EQ(l.block_bytes, 32);
  std::vector<unsigned char> block(static_cast<size_t>(l.block_bytes), 0xff);
  sparse_compress(DType::s4, dense.data(), 1, 16, 16, l, block.data());
  const std::vector<unsigned char> values = {0xd1, 0x87, 0x1f, 0xf1};
  for (size_t i = 0; i < values.size(); ++i)
    EXPECT_EQ(block[i], values[i]) << i;
  // nibbles: group 0: 0 | 2 << 2 = 0x8, group 1: 2 | 3 << 2 = 0xe (high nibble)
  EXPECT_EQ(block[16], 0xe8);
  for (size_t i = 4; i < block.size(); ++i) {
    if (i != 16) {
      EXPECT_EQ(block[i], 0) << "padding byte " << i;
    }
  }
  // a tie between pairs keeps the lower index: u4 (15,0) and (7,8) both sum to 15
  const std::vector<unsigned char> ties = {0x0f, 0x87, 0x00, 0x00};
  const Sparse24Layout lu = compressed_a_layout(DType::u4, 1, 8);
  std::vector<unsigned char> out(static_cast<size_t>(lu.block_bytes));
  sparse_compress(DType::u4, ties.data(), 1, 8, 8, lu, out.data());
  EXPECT_EQ(out[0], 0x0f);
  EXPECT_EQ(out[1], 0x87);
  EXPECT_EQ(out[static_cast<size_t>(lu.metadata_offset)], 0 | 1 << 2);
  // prune in place zeroes the dropped pairs only
  std::vector<unsigned char> pruned = dense;
  sparse_prune(DType::s4, pruned.data(), 1, 16, 16);
  EXPECT_EQ(pruned, (std::vector<unsigned char>{0xd1, 0x00, 0x87, 0x00, 0x00, 0x00, 0x1f, 0xf1}));
}

TEST(Sparse24Pairs, LayoutIsTheS8LayoutOfTheBytes) {
  struct Case {
    int64_t m, k, lda;
  };
  for (const Case &c : {Case{1, 8, 0}, Case{3, 128, 0}, Case{5, 256, 160}, Case{17, 24, 14}}) {
    const Sparse24Layout s4 = compressed_a_layout(DType::s4, c.m, c.k, c.lda);
    const Sparse24Layout s8 = compressed_a_layout(DType::s8, c.m, c.k / 2, c.lda / 2);
    EXPECT_EQ(s4.lda, s8.lda * 2) << c.k;
    EXPECT_EQ(s4.metadata_offset, s8.metadata_offset) << c.k;
    EXPECT_EQ(s4.metadata_row_bytes, s8.metadata_row_bytes) << c.k;
    EXPECT_EQ(s4.block_bytes, s8.block_bytes) << c.k;
  }
  // groups of 8 values, whole bytes
  EXPECT_THROW(compressed_a_layout(DType::u4, 2, 12), std::invalid_argument);
  EXPECT_THROW(compressed_a_layout(DType::s4, 2, 32, 17), std::invalid_argument);
  EXPECT_THROW(compressed_a_layout(DType::s4, 2, 32, 14), std::invalid_argument); // < k/2
  EXPECT_THROW(compressed_a_layout(DType::b1, 2, 256), std::invalid_argument);
  std::vector<unsigned char> dense(64);
  EXPECT_THROW(sparse_prune(DType::s4, dense.data(), 2, 16, 17), std::invalid_argument);
}

// Random s4/u4 matrices: every group of 4 pairs keeps exactly the 2 pairs of largest |v0| + |v1|
// (ties to the lower index), the others become zero, the kept ones are unchanged, and
// decompress(compress(x)) == prune(x) -- also when the block is read as s8 bytes.
TEST(Sparse24Pairs, KeepsTheTwoLargestPairsAndTheByteViewReadsItBack) {
  struct Case {
    DType t;
    int64_t m, k, ld, lda;
  };
  for (const Case &c : {Case{DType::s4, 5, 128, 128, 0}, Case{DType::u4, 3, 64, 72, 40},
                        Case{DType::s4, 7, 256, 256, 130}, Case{DType::u4, 2, 8, 8, 0}}) {
    SCOPED_TRACE(std::string(to_string(c.t)) + " m=" + std::to_string(c.m) +
                 " k=" + std::to_string(c.k));
    std::vector<unsigned char> dense(static_cast<size_t>(c.m * c.ld / 2));
    fill_random(c.t, dense.data(), c.m * c.ld, 7);
    // many ties: row 0's values folded into 0 and 1
    for (int64_t j = 0; j < c.k / 2; ++j)
      dense[static_cast<size_t>(j)] = static_cast<unsigned char>(dense[j] & 0x11);
    std::vector<unsigned char> pruned = dense;
    sparse_prune(c.t, pruned.data(), c.m, c.k, c.ld);
    for (int64_t r = 0; r < c.m; ++r)
      for (int64_t g = 0; g < c.k / 8; ++g) {
        const int64_t first = r * c.ld + 8 * g; // the group's first value
        int sum[4];
        for (int p = 0; p < 4; ++p)
          sum[p] = std::abs(nibble_value(c.t, dense, first + 2 * p)) +
                   std::abs(nibble_value(c.t, dense, first + 2 * p + 1));
        int kept = 0;
        for (int p = 0; p < 4; ++p) {
          const auto byte = static_cast<size_t>(first / 2 + p);
          const bool zero = pruned[byte] == 0, same = pruned[byte] == dense[byte];
          // pair p is kept when fewer than 2 pairs beat it (larger, or equal at a lower index)
          int beaten_by = 0;
          for (int o = 0; o < 4; ++o)
            beaten_by += o != p && (sum[o] > sum[p] || (sum[o] == sum[p] && o < p));
          if (beaten_by < 2) {
            ++kept;
            EXPECT_TRUE(same) << "row " << r << " group " << g << " pair " << p;
          } else {
            EXPECT_TRUE(zero) << "row " << r << " group " << g << " pair " << p;
          }
        }
        EXPECT_EQ(kept, 2);
      }
    const Sparse24Layout l = compressed_a_layout(c.t, c.m, c.k, c.lda);
    std::vector<unsigned char> block(static_cast<size_t>(l.block_bytes));
    sparse_compress(c.t, dense.data(), c.m, c.k, c.ld, l, block.data());
    std::vector<unsigned char> back(dense.size(), 0x5a), bytes(dense.size(), 0xa5);
    sparse_decompress(c.t, block.data(), l, c.m, c.k, back.data(), c.ld);
    const Sparse24Layout l8 = compressed_a_layout(DType::s8, c.m, c.k / 2, l.lda / 2);
    sparse_decompress(DType::s8, block.data(), l8, c.m, c.k / 2, bytes.data(), c.ld / 2);
    for (int64_t r = 0; r < c.m; ++r) {
      const size_t at = static_cast<size_t>(r * c.ld / 2), n = static_cast<size_t>(c.k / 2);
      EXPECT_EQ(std::memcmp(back.data() + at, pruned.data() + at, n), 0) << "row " << r;
      EXPECT_EQ(std::memcmp(bytes.data() + at, pruned.data() + at, n), 0) << "s8 view, row " << r;
    }
  }
}

} // namespace
} // namespace tcjit
