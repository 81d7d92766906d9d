// The public 2:4 prune-and-compress API (tools.hpp): the documented layout on a hand-worked f16
// example, prune + compress + decompress agreeing on random matrices, and errors that say what to
// fix.
#include "tcjit/tcjit.hpp"
#include "tcjit/tools.hpp"
#include "tests/api/expect_error.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <tuple>
#include <vector>

namespace {

using tcjit::DType;
using tcjit::testing::expect_error;

// f16 bit patterns of small integers (exact): 1.0 = 0x3c00, 2 = 0x4000, 3 = 0x4200, -3 = 0xc200.
constexpr uint16_t kOne = 0x3c00, kTwo = 0x4000, kThree = 0x4200, kMinusThree = 0xc200;

TEST(Sparse24Api, CompressesTheHandExampleIntoTheDocumentedLayout) {
  // one row, k = 8: groups {1, -3, 2, 0} -> keeps indices 1, 2; {0, 0, 3, 3} -> keeps 2, 3
  const std::vector<uint16_t> dense = {kOne, kMinusThree, kTwo, 0, 0, 0, kThree, kThree};
  ASSERT_EQ(tcjit::sparse_2_4_bytes(DType::f16, 1, 8), 32u); // 4 values (8 B) -> 16, +1 -> 32
  ASSERT_EQ(tcjit::sparse_2_4_metadata_offset(DType::f16, 1, 8), 16u);
  std::vector<uint8_t> out(32, 0xee);
  tcjit::prune_2_4_and_compress(DType::f16, dense.data(), 1, 8, 8, out.data());
  uint16_t values[4];
  std::memcpy(values, out.data(), sizeof values);
  EXPECT_EQ(values[0], kMinusThree);
  EXPECT_EQ(values[1], kTwo);
  EXPECT_EQ(values[2], kThree);
  EXPECT_EQ(values[3], kThree);
  // group 0: 1 | 2 << 2 = 0x9 (low nibble), group 1: 2 | 3 << 2 = 0xe
  EXPECT_EQ(out[16], 0xe9);
  for (size_t i = 8; i < 16; ++i)
    EXPECT_EQ(out[i], 0) << "padding byte " << i;
  std::vector<uint16_t> back(8, 0xffff);
  tcjit::decompress_2_4(DType::f16, out.data(), 1, 8, back.data(), 8);
  EXPECT_EQ(back, (std::vector<uint16_t>{0, kMinusThree, kTwo, 0, 0, 0, kThree, kThree}));
}

TEST(Sparse24Api, DecompressOfCompressIsThePrunedMatrix) {
  std::mt19937 rng(5);
  for (const auto &[m, k, ld, lda] : {std::tuple{7, 32, 40, 0}, std::tuple{3, 64, 64, 48}}) {
    std::vector<int8_t> dense(static_cast<size_t>(m * ld));
    for (int8_t &v : dense)
      v = static_cast<int8_t>(static_cast<int>(rng() % 9) - 4); // many ties
    std::vector<uint8_t> block(tcjit::sparse_2_4_bytes(DType::s8, m, k, lda));
    tcjit::prune_2_4_and_compress(DType::s8, dense.data(), m, k, ld, block.data(), lda);
    std::vector<int8_t> pruned = dense;
    tcjit::prune_2_4(DType::s8, pruned.data(), m, k, ld);
    std::vector<int8_t> back(dense.size(), 99);
    tcjit::decompress_2_4(DType::s8, block.data(), m, k, back.data(), ld, lda);
    for (int r = 0; r < m; ++r)
      for (int g = 0; g < k / 4; ++g) {
        int kept = 0;
        for (int i = 0; i < 4; ++i) {
          const int at = r * ld + 4 * g + i;
          EXPECT_EQ(back[at], pruned[at]);
          kept += pruned[at] == dense[at] && (pruned[at] != 0 || dense[at] == 0);
          for (int j = 0; j < 4; ++j) { // a dropped value is no larger than a kept one
            if (pruned[r * ld + 4 * g + j] != 0 && pruned[at] == 0) {
              EXPECT_LE(std::abs(dense[at]), std::abs(dense[r * ld + 4 * g + j]));
            }
          }
        }
        EXPECT_GE(kept, 2);
      }
  }
}

TEST(Sparse24Api, ErrorsSayWhatToFix) {
  std::vector<uint8_t> buf(1024);
  expect_error([&] { tcjit::sparse_2_4_bytes(DType::f16, 4, 30); },
               tcjit::ErrorCode::invalid_argument, "multiple of 4");
  expect_error([&] { tcjit::sparse_2_4_bytes(DType::f16, 4, 32, 8); },
               tcjit::ErrorCode::invalid_argument, "lda=8 is smaller than the k/2=16");
  expect_error([&] { tcjit::prune_2_4_and_compress(DType::f16, nullptr, 1, 8, 8, buf.data()); },
               tcjit::ErrorCode::invalid_argument, "dense is null");
  expect_error([&] { tcjit::prune_2_4(DType::f16, buf.data(), 1, 8, 4); },
               tcjit::ErrorCode::invalid_argument, "ld_dense=4 is smaller than k=8");
}

// s4/u4 by pairs: the block is 16-aligned values then k/16 metadata bytes per row, prune keeps 2
// pairs of every 4 and decompress gives the pruned matrix back; odd strides are refused.
TEST(Sparse24Api, FourBitTypesArePrunedByPairs) {
  // m = 2, k = 16: 2 x 4 bytes of values -> metadata at 16, 2 x 1 byte -> 32
  ASSERT_EQ(tcjit::sparse_2_4_bytes(DType::s4, 2, 16), 32u);
  ASSERT_EQ(tcjit::sparse_2_4_metadata_offset(DType::s4, 2, 16), 16u);
  const std::vector<uint8_t> dense = {0x11, 0x77, 0x00, 0x23, 0xff, 0x00, 0x10, 0x88,
                                      0x01, 0x02, 0x03, 0x04, 0x40, 0x30, 0x20, 0x10};
  std::vector<uint8_t> block(tcjit::sparse_2_4_bytes(DType::u4, 2, 16));
  tcjit::prune_2_4_and_compress(DType::u4, dense.data(), 2, 16, 16, block.data());
  std::vector<uint8_t> back(dense.size()), pruned = dense;
  tcjit::decompress_2_4(DType::u4, block.data(), 2, 16, back.data(), 16);
  tcjit::prune_2_4(DType::u4, pruned.data(), 2, 16, 16);
  EXPECT_EQ(back, pruned);
  // u4 pair sums: row 0 group 0 (1,1)=2 (7,7)=14 (0,0)=0 (3,2)=5 -> pairs 1, 3
  EXPECT_EQ(pruned[0], 0x00);
  EXPECT_EQ(pruned[1], 0x77);
  EXPECT_EQ(pruned[3], 0x23);
  EXPECT_EQ(block[16] & 15, 1 | 3 << 2);
  expect_error([&] { tcjit::sparse_2_4_bytes(DType::s4, 2, 12); },
               tcjit::ErrorCode::invalid_argument, "multiple of 8");
  expect_error([&] { tcjit::sparse_2_4_bytes(DType::s4, 2, 16, 9); },
               tcjit::ErrorCode::invalid_argument, "lda=9 is odd");
  expect_error([&] { tcjit::prune_2_4(DType::s4, pruned.data(), 1, 16, 17); },
               tcjit::ErrorCode::invalid_argument, "ld_dense=17 is odd");
}

} // namespace
