// A 2:4-sparse A's metadata staged through shared memory (compiler/codegen/plan/sparse_metadata.h),
// evaluated on the host: the copy formula fills a stage slot from a metadata block in the layout of
// docs/dsl.md, and the read and register formulas give every thread's mma.sp metadata register,
// checked against its direct definition from the PTX ISA's metadata figures (sparsity selector 0)
// for f16, bf16, s8 and tf32, over M tails, K-tiles past K and every warp, m-tile and k-step. Plus
// prmt's expression (byte_perm) and the shared-memory footprint the tuner counts.
#include "compiler/codegen/cuda/expr_source.h"
#include "compiler/codegen/plan/kernel_plan.h"
#include "compiler/codegen/plan/sparse_metadata.h"
#include "compiler/codegen/plan/tile_config.h"
#include "compiler/dsl/parser.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

namespace tcjit::codegen {
namespace {

KernelPlan plan_of(const char *spec_text, const char *config_text) {
  const OpSpec spec = parse_spec(spec_text).entries.at(0).spec;
  TileConfig c;
  std::string error;
  EXPECT_TRUE(parse_tile_config(config_text, c, error)) << error;
  return plan_kernel(spec, resolve_vectors(spec, c), "sm_80", false);
}

uint64_t at(const std::vector<uint8_t> &bytes, size_t offset, int count) {
  uint64_t v = 0;
  for (int i = count - 1; i >= 0; --i)
    v = v << 8 | bytes.at(offset + static_cast<size_t>(i));
  return v;
}

// A metadata block (docs/dsl.md) of m rows and k dense columns with random valid nibbles: two
// different indices, the lower first (tf32: the first of columns 0, 1, the second of 2, 3).
std::vector<uint8_t> random_metadata(int m, int k, bool tf32, std::mt19937 &rng) {
  static const uint8_t kPairs[] = {0x4, 0x8, 0xC, 0x9, 0xD, 0xE};
  static const uint8_t kTf32[] = {0x8, 0x9, 0xC, 0xD};
  std::vector<uint8_t> out(static_cast<size_t>(m) * k / 8);
  for (uint8_t &byte : out) {
    uint8_t nib[2];
    for (uint8_t &n : nib)
      n = tf32 ? kTf32[rng() % 4] : kPairs[rng() % 6];
    byte = static_cast<uint8_t>(nib[0] | nib[1] << 4);
  }
  return out;
}

// True when every nibble of the register is a valid index pair for the form (tf32: 0b0100 or
// 0b1110; else two different indices, the lower first).
bool valid_register(uint32_t e, int elem_bits) {
  for (int i = 0; i < 8; ++i) {
    const uint32_t nib = e >> (4 * i) & 0xF;
    if (elem_bits == 32 ? nib != 0x4 && nib != 0xE : (nib & 3) >= (nib >> 2))
      return false;
  }
  return true;
}

// The register of thread (g, q) for m-tile rows from `row0` (the tile's first row in the matrix)
// and dense columns from `k0` (the k-step's first), straight from the metadata block (PTX ISA,
// mma.sp metadata; docs/dsl.md's layout): `mask` the bits that come from inside the matrix.
struct Direct {
  uint32_t mask = 0, value = 0;
};
Direct direct_register(const std::vector<uint8_t> &meta, int m, int k, int elem_bits, int row0,
                       int k0, int g, int q) {
  const size_t row_bytes = static_cast<size_t>(k) / 8;
  auto inside = [&](int row, int col) { return row < m && col < k; };
  Direct d;
  if (elem_bits == 8) { // row g + 8 (q & 1), columns 32 (q >> 1) .. + 31
    const int row = row0 + g + 8 * (q & 1), col = k0 + 32 * (q >> 1);
    if (inside(row, col))
      d = {0xFFFFFFFFu, static_cast<uint32_t>(at(meta, row * row_bytes + col / 8, 4))};
    return d;
  }
  // f16/bf16: rows g, g + 8: 16 bits each of columns 16 (q & 1) ..; tf32: the byte of columns
  // 8 (q & 1) .. + 7, its pairs (kept index bits 0, 2, 4, 6) as the hardware's nibbles 0b0100
  // (first of the pair) or 0b1110 (second)
  const int col = k0 + (elem_bits == 16 ? 16 : 8) * (q & 1);
  for (int h = 0; h < 2; ++h) {
    const int row = row0 + g + 8 * h;
    if (!inside(row, col))
      continue;
    uint32_t half = 0;
    if (elem_bits == 16) {
      half = static_cast<uint32_t>(at(meta, row * row_bytes + col / 8, 2));
    } else {
      const uint32_t byte = meta.at(row * row_bytes + col / 8);
      for (int p = 0; p < 4; ++p)
        half |= (byte >> (2 * p) & 1 ? 0xEu : 0x4u) << (4 * p);
    }
    d.mask |= 0xFFFFu << (16 * h);
    d.value |= half << (16 * h);
  }
  return d;
}

struct MetadataCase {
  const char *spec;
  const char *config;
  int m, k; // the matrix: M tails, K not a multiple of the K-tile
};

class StagedMetadata : public ::testing::TestWithParam<MetadataCase> {};

// Every thread's register from the stage slot equals its direct definition where its rows and
// k-step lie inside the matrix, and is valid metadata everywhere (A is zero-filled outside).
TEST_P(StagedMetadata, RegistersFromTheStageSlotMatchThePtxLayout) {
  const MetadataCase &c = GetParam();
  const KernelPlan p = plan_of(c.spec, c.config);
  ASSERT_TRUE(p.mma.sparse);
  const SparseMetadataPlan &meta = p.meta;
  ASSERT_EQ(meta.stage_bytes, p.config.bm * p.config.bk / 8);
  ASSERT_EQ(meta.copies * meta.unit_bytes, meta.stage_bytes);
  std::mt19937 rng(7);
  const std::vector<uint8_t> global = random_metadata(c.m, c.k, p.mma.elem_bits == 32, rng);

  ExprGraph g;
  auto i32 = [&](const char *name) { return input(g, ExprType::i32, name); };
  const SparseMetadataCopy copy =
      sparse_metadata_copy(p, i32("idx"), i32("m0"), i32("ktile"), i32("M"), i32("K"));
  Expr q = i32("q");
  Expr read = sparse_metadata_read_offset(p, i32("warp_m0"), i32("g"), q, i32("mi"), i32("ks"));
  std::vector<Expr> words;
  for (int w = 0; w < sparse_metadata_words(p); ++w)
    words.push_back(i32(w == 0 ? "w0" : "w1"));
  Expr reg = sparse_metadata_register(p, words, q);

  const int ktiles = (c.k + p.config.bk - 1) / p.config.bk;
  int checked = 0;
  for (int m0 = 0; m0 < c.m; m0 += p.config.bm)
    for (int kt = 0; kt <= ktiles; ++kt) { // one K-tile past the end (split-K's empty slice)
      std::vector<uint8_t> slot(static_cast<size_t>(meta.stage_bytes), 0);
      std::vector<int> writes(slot.size(), 0);
      for (int idx = 0; idx < meta.copies; ++idx) {
        const ExprInputs in{{"idx", integer_value(idx)},
                            {"m0", integer_value(m0)},
                            {"ktile", integer_value(kt)},
                            {"M", integer_value(c.m)},
                            {"K", integer_value(c.k)}};
        const bool inside = evaluate_integer(copy.in, in) != 0;
        const int64_t src = inside ? evaluate_integer(copy.global_offset, in) : 0;
        const int64_t dst = evaluate_integer(copy.smem_offset, in);
        ASSERT_LE(dst + meta.unit_bytes, meta.stage_bytes);
        ASSERT_EQ(src % meta.unit_bytes, 0) << "a copy unit is aligned to its size";
        std::memcpy(slot.data() + dst, global.data() + src, static_cast<size_t>(meta.unit_bytes));
        for (int b = 0; b < meta.unit_bytes; ++b)
          ++writes[static_cast<size_t>(dst + b)];
      }
      for (int n : writes)
        ASSERT_EQ(n, 1) << "the copies write every byte of the stage slot once";
      for (int warp_m0 = 0; warp_m0 < p.config.bm; warp_m0 += p.config.wm)
        for (int mi = 0; mi < p.tiles_m; ++mi)
          for (int ks = 0; ks < p.k_steps; ++ks)
            for (int lane = 0; lane < 32; ++lane) {
              const int gi = lane >> 2, qi = lane & 3;
              if (p.mma.elem_bits != 8 && qi >= 2)
                continue; // selector 0: threads q = 0, 1 supply the metadata
              ExprInputs in{{"warp_m0", integer_value(warp_m0)},
                            {"g", integer_value(gi)},
                            {"q", integer_value(qi)},
                            {"mi", integer_value(mi)},
                            {"ks", integer_value(ks)}};
              const int64_t off = evaluate_integer(read, in);
              ASSERT_EQ(off % (4 * static_cast<int64_t>(words.size())), 0) << "aligned load";
              for (size_t w = 0; w < words.size(); ++w)
                in[w == 0 ? "w0" : "w1"] = integer_value(
                    static_cast<int64_t>(at(slot, static_cast<size_t>(off) + 4 * w, 4)));
              const auto e = static_cast<uint32_t>(evaluate_integer(reg, in));
              const Direct d =
                  direct_register(global, c.m, c.k, p.mma.elem_bits, m0 + warp_m0 + mi * 16,
                                  kt * p.config.bk + ks * p.mma.k, gi, qi);
              checked += d.mask != 0;
              ASSERT_EQ(e & d.mask, d.value)
                  << "m0 " << m0 << " ktile " << kt << " warp_m0 " << warp_m0 << " mi " << mi
                  << " ks " << ks << " lane " << lane;
              ASSERT_TRUE(valid_register(e, p.mma.elem_bits)) << std::hex << e;
            }
    }
  EXPECT_GT(checked, 0);
}

const MetadataCase kMetadataCases[] = {
    {"gemm m=128 n=128 k=1024 a=f16 b=f16:col c=f16 acc=f32 sparse=2:4", "128x128x64 w64x32 s3",
     256, 1024},
    {"gemm m=64 n=64 k=96 a=bf16 b=bf16:col c=f32 acc=f32 sparse=2:4", "64x32x128 w32x16 s4", 57,
     160},
    {"gemm m=64 n=64 k=128 a=s8 b=s8:col c=s32 acc=s32 sparse=2:4", "64x32x128 w32x16 s3", 75, 192},
    {"gemm m=64 n=64 k=128 a=u8 b=u8:col c=s32 acc=s32 sparse=2:4", "32x32x64 w16x16 s2", 40, 64},
    {"gemm m=64 n=64 k=64 a=f32 b=f32:col c=f32 acc=f32 math=tf32 sparse=2:4", "32x32x16 w16x16 s2",
     37, 48},
    {"gemm m=64 n=64 k=64 a=tf32 b=tf32:col c=f32 acc=f32 sparse=2:4", "64x64x32 w32x32 s4", 70,
     80},
};

INSTANTIATE_TEST_SUITE_P(Forms, StagedMetadata, ::testing::ValuesIn(kMetadataCases));

// prmt.b32 (default mode) as the expression form computes it and the CUDA printer prints it.
TEST(BytePerm, SelectsTheBytesOfTheEightAsPrmtDoes) {
  ExprGraph g;
  Expr a = input(g, ExprType::i32, "a"), b = input(g, ExprType::i32, "b");
  const ExprInputs in{{"a", integer_value(0x33221100)}, {"b", integer_value(0x77665544)}};
  EXPECT_EQ(evaluate_integer(byte_perm(a, b, 0x5410), in), 0x55441100);
  EXPECT_EQ(evaluate_integer(byte_perm(a, b, 0x7632), in), 0x77663322);
  EXPECT_EQ(evaluate_integer(byte_perm(a, b, 0x0123), in), 0x00112233);
  const cuda_detail::ExprSource s =
      cuda_detail::expr_source({byte_perm(a, b, 0x7632)}, {{"a", "x"}, {"b", "y"}}, "");
  EXPECT_EQ(s.values[0], "__byte_perm(x, y, 30258u)"); // 0x7632
}

// The pipeline's shared memory of a sparse kernel: the compressed A tile (bk / 2 values per row),
// B's, and the metadata's stage slot (bm * bk / 8 bytes), per stage; the plan allocates it.
TEST(SparseSharedBytes, CountTheCompressedAAndTheMetadata) {
  const OpSpec spec =
      parse_spec("gemm m=1024 n=1024 k=1024 a=f16 b=f16:col c=f32 acc=f32 sparse=2:4")
          .entries.at(0)
          .spec;
  TileConfig c;
  std::string error;
  ASSERT_TRUE(parse_tile_config("128x128x64 w64x32 s3", c, error)) << error;
  EXPECT_EQ(shared_bytes(spec, c), 3 * ((128 * 32 + 128 * 64) * 2 + 128 * 64 / 8));
  const KernelPlan p = plan_kernel(spec, resolve_vectors(spec, c), "sm_80", false);
  EXPECT_EQ(p.smem_bytes, shared_bytes(spec, c));
  EXPECT_EQ(p.meta.smem_offset, 3 * (128 * 32 + 128 * 64) * 2);
}

} // namespace
} // namespace tcjit::codegen
