// The 2:4 prune-and-compress step (compiler/reference/sparse_2_4.h, tools.hpp): a hand-worked
// example of the documented layout, and properties over random matrices: every group keeps its 2
// largest magnitudes (ties to the lower index) and decompress(compress(x)) == prune(x).
#include "compiler/reference/numeric_convert.h"
#include "compiler/reference/random_fill.h"
#include "compiler/reference/sparse_2_4.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace tcjit {
namespace {

TEST(Sparse24, LayoutOfTheDocumentedExample) {
  // f32, m = 2, k = 16, lda = 8: values 2 * 8 * 4 = 64 bytes, metadata 2 bytes per row at 64,
  // block rounded to 80 bytes.
  const Sparse24Layout l = compressed_a_layout(DType::f32, 2, 16);
  EXPECT_EQ(l.lda, 8);
  EXPECT_EQ(l.metadata_offset, 64);
  EXPECT_EQ(l.metadata_row_bytes, 2);
  EXPECT_EQ(l.block_bytes, 80);
  EXPECT_EQ(compressed_a_layout(DType::f16, 3, 32, 20).metadata_offset, 128); // 3*20*2 -> 128
  EXPECT_THROW(compressed_a_layout(DType::f16, 2, 30), std::invalid_argument);
  EXPECT_THROW(compressed_a_layout(DType::f16, 2, 32, 15), std::invalid_argument);
  EXPECT_THROW(compressed_a_layout(DType::b1, 2, 32), std::invalid_argument);
}

TEST(Sparse24, HandExample) {
  const float nan = std::nanf("");
  // f32 prunes by pairs (tf32's mma.sp is 1:2): the larger magnitude of each pair, ties to the
  // lower index.
  // Row 0: groups {1,-3,2,0.5} keeps 1,2 (-3, 2); {0,0,0,0} keeps 0,2 (ties: lower indices);
  //        {1,2,2,1} keeps 1,2; {nan,1,2,3} keeps 0,3 (NaN is never pruned).
  // Row 1: {-4,1,4,0} keeps 0,2; {0,0,7,0} keeps 0,2; {5,5,5,5} keeps 0,2; {0,-1,0,1} keeps 1,3.
  const std::vector<float> dense = {1,  -3, 2, 0.5f, 0, 0, 0, 0, 1, 2, 2, 1, nan, 1,  2, 3,
                                    -4, 1,  4, 0,    0, 0, 7, 0, 5, 5, 5, 5, 0,   -1, 0, 1};
  const Sparse24Layout l = compressed_a_layout(DType::f32, 2, 16);
  std::vector<unsigned char> block(static_cast<size_t>(l.block_bytes), 0xff);
  sparse_compress(DType::f32, dense.data(), 2, 16, 16, l, block.data());
  std::vector<float> values(16);
  std::memcpy(values.data(), block.data(), 64);
  const std::vector<float> expected_row0 = {-3, 2, 0, 0, 2, 2, nan, 3};
  const std::vector<float> expected_row1 = {-4, 4, 0, 7, 5, 5, -1, 1};
  for (int i = 0; i < 8; ++i) {
    if (std::isnan(expected_row0[i]))
      EXPECT_TRUE(std::isnan(values[i]));
    else
      EXPECT_EQ(values[i], expected_row0[i]) << i;
    EXPECT_EQ(values[8 + i], expected_row1[i]) << i;
  }
  // nibble = first | second << 2; group g in byte g / 2, low nibble for even g
  //   row 0: 1|2<<2 = 9, 0|2<<2 = 8, 9, 0|3<<2 = 12 -> bytes 0x89, 0xc9
  //   row 1: 0|2<<2 = 8, 8, 8, 1|3<<2 = 13 -> bytes 0x88, 0xd8
  EXPECT_EQ(block[64], 0x89);
  EXPECT_EQ(block[65], 0xc9);
  EXPECT_EQ(block[66], 0x88);
  EXPECT_EQ(block[67], 0xd8);
  for (size_t i = 68; i < block.size(); ++i)
    EXPECT_EQ(block[i], 0) << "padding byte " << i;
  // read as little-endian 16-bit words: row 0's word holds groups 0..3 in bits 0-15
  uint16_t word0 = 0;
  std::memcpy(&word0, block.data() + 64, 2);
  EXPECT_EQ(word0, 0xc989);
}

// f16 and s8 matrices of several shapes, with strides and many ties (small integer values).
TEST(Sparse24, PruneKeepsTheTwoLargestAndDecompressInvertsCompress) {
  struct Case {
    DType t;
    int64_t m, k, ld, lda;
  };
  for (const Case &c : {Case{DType::f16, 5, 32, 32, 0}, Case{DType::f16, 3, 64, 70, 40},
                        Case{DType::bf16, 7, 16, 16, 8}, Case{DType::s8, 4, 48, 50, 0},
                        Case{DType::u8, 2, 32, 32, 16}, Case{DType::f32, 3, 8, 9, 5},
                        Case{DType::tf32, 4, 32, 36, 20}, Case{DType::f32, 2, 64, 64, 0}}) {
    SCOPED_TRACE(std::string(to_string(c.t)) + " m=" + std::to_string(c.m) +
                 " k=" + std::to_string(c.k));
    const int esize = dtype_storage_bytes(c.t);
    std::vector<unsigned char> dense(static_cast<size_t>(c.m * c.ld * esize));
    fill_random(c.t, dense.data(), c.m * c.ld, 42);
    // f32/tf32: tf32's mma.sp is 1:2, so the larger magnitude of every pair is kept
    const bool pairs = c.t == DType::f32 || c.t == DType::tf32;
    if (c.t == DType::f16 ||
        c.t == DType::tf32) // ties: every value of row 0 rounded to an integer in [-2, 2]
      for (int64_t i = 0; i < c.k; ++i)
        write_element(c.t, dense.data(), i, std::round(read_element(c.t, dense.data(), i) * 4) / 2);
    std::vector<unsigned char> pruned = dense;
    sparse_prune(c.t, pruned.data(), c.m, c.k, c.ld);
    for (int64_t r = 0; r < c.m; ++r)
      for (int64_t g = 0; g < c.k / 4; ++g) {
        double v[4];
        for (int i = 0; i < 4; ++i) {
          const int64_t at = r * c.ld + 4 * g + i;
          v[i] = read_element(c.t, dense.data(), at);
        }
        const KeptPair p = pairs ? KeptPair{std::fabs(v[1]) > std::fabs(v[0]) ? 1 : 0,
                                            std::fabs(v[3]) > std::fabs(v[2]) ? 3 : 2}
                                 : kept_pair(v);
        for (int i : {p.first, p.second}) // kept values are unchanged
          EXPECT_EQ(std::memcmp(pruned.data() + (r * c.ld + 4 * g + i) * esize,
                                dense.data() + (r * c.ld + 4 * g + i) * esize,
                                static_cast<size_t>(esize)),
                    0);
        // exactly the kept pair survives; no dropped value is larger, and a dropped value equal
        // to a kept one lies after it
        for (int i = 0; i < 4; ++i) {
          if (i == p.first || i == p.second)
            continue;
          EXPECT_EQ(read_element(c.t, pruned.data(), r * c.ld + 4 * g + i), 0.0);
          for (int j : {p.first, p.second}) {
            if (pairs && i / 2 != j / 2) // only the pair's other value competes
              continue;
            EXPECT_LE(std::fabs(v[i]), std::fabs(v[j]));
            if (std::fabs(v[i]) == std::fabs(v[j])) {
              EXPECT_GT(i, j) << "a tie keeps the lower index";
            }
          }
        }
      }
    const Sparse24Layout l = compressed_a_layout(c.t, c.m, c.k, c.lda);
    std::vector<unsigned char> block(static_cast<size_t>(l.block_bytes));
    sparse_compress(c.t, dense.data(), c.m, c.k, c.ld, l, block.data());
    std::vector<unsigned char> back(dense.size(), 0x5a);
    sparse_decompress(c.t, block.data(), l, c.m, c.k, back.data(), c.ld);
    for (int64_t r = 0; r < c.m; ++r)
      EXPECT_EQ(std::memcmp(back.data() + r * c.ld * esize, pruned.data() + r * c.ld * esize,
                            static_cast<size_t>(c.k * esize)),
                0)
          << "row " << r;
  }
}

TEST(Sparse24, DecompressRefusesMetadataThatIsNotTwoIncreasingIndices) {
  const Sparse24Layout l = compressed_a_layout(DType::f16, 1, 4);
  std::vector<unsigned char> block(static_cast<size_t>(l.block_bytes), 0);
  block[static_cast<size_t>(l.metadata_offset)] = 0x5; // indices 1 and 1
  std::vector<unsigned char> dense(8);
  EXPECT_THROW(sparse_decompress(DType::f16, block.data(), l, 1, 4, dense.data(), 4),
               std::invalid_argument);
}

TEST(Sparse24, Tf32KeepsOneOfEveryPairAndRefusesOtherMetadata) {
  // 1:2 pairs: (3, -5) keeps -5, (2, 1) keeps 2, although 3 is larger than 2
  const float row[4] = {3, -5, 2, 1};
  const Sparse24Layout l = compressed_a_layout(DType::f32, 1, 4);
  std::vector<unsigned char> block(static_cast<size_t>(l.block_bytes), 0);
  sparse_compress(DType::f32, row, 1, 4, 4, l, block.data());
  float kept[2];
  std::memcpy(kept, block.data(), sizeof kept);
  EXPECT_EQ(kept[0], -5.0f);
  EXPECT_EQ(kept[1], 2.0f);
  EXPECT_EQ(block[static_cast<size_t>(l.metadata_offset)], 1 | 2 << 2);
  block[static_cast<size_t>(l.metadata_offset)] = 0 | 1 << 2; // both of the first pair
  float dense[4];
  EXPECT_THROW(sparse_decompress(DType::f32, block.data(), l, 1, 4, dense, 4),
               std::invalid_argument);
}

} // namespace
} // namespace tcjit
