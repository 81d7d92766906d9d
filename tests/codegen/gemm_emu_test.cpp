// Generated GEMM kernels on the PTX emulator against the CPU reference (compiler/reference), with
// the tolerance model of docs/numerics.md, and the emulator's counters for shared-memory bank
// conflicts.
#include "gemm_runner.h"

#include <gtest/gtest.h>

namespace tcjit::codegen::test {
namespace {

const char *kLayouts[] = {"a=%s:row b=%s:row", "a=%s:row b=%s:col", "a=%s:col b=%s:row",
                          "a=%s:col b=%s:col"};

std::string with_dtype(const char *pattern, const char *dtype) {
  char buf[128];
  std::snprintf(buf, sizeof buf, pattern, dtype, dtype);
  return buf;
}

constexpr const char *kSmall = "64x64x32 w32x32 s3";

// --- f16: all four layouts, both outputs, no bank conflicts when aligned
// --------------------------
TEST(GemmEmuF16, AllLayoutsF32OutputNoBankConflicts) {
  for (const char *l : kLayouts) {
    EmuRun r = expect_matches("gemm m=64 n=64 k=64 " + with_dtype(l, "f16") + " c=f32:row acc=f32",
                              kSmall);
    EXPECT_EQ(r.counters.shared_bank_conflicts, 0u) << l;
    EXPECT_GT(r.counters.ldmatrix_requests, 0u);
  }
}

TEST(GemmEmuF16, AllLayoutsF16OutputColMajorC) {
  for (const char *l : kLayouts)
    expect_matches("gemm m=32 n=48 k=96 " + with_dtype(l, "f16") + " c=f16:col acc=f32", kSmall);
}

TEST(GemmEmuF16, DefaultConfig) {
  expect_matches("gemm m=128 n=128 k=64 a=f16:row b=f16:col c=f16:row acc=f32");
}

TEST(GemmEmuF16, OtherConfigs) {
  const std::string s = "gemm m=96 n=80 k=160 a=f16:col b=f16:row c=f32:row acc=f32";
  expect_matches(s, "64x128x64 w32x64 s4");
  expect_matches(s, "32x32x16 w16x16 s2");
  expect_matches(s, "128x64x32 w64x32 s5");
  expect_matches(s, "64x64x32 w64x64 s2");
}

TEST(GemmEmuF16, Tails) {
  for (const char *l : kLayouts) {
    const std::string ab = with_dtype(l, "f16");
    expect_matches("gemm m=65 n=63 k=40 " + ab + " c=f32:row acc=f32", kSmall); // M, N tails
    expect_matches("gemm m=1 n=1 k=1 " + ab + " c=f32:row acc=f32", kSmall);    // tiny
    expect_matches("gemm m=17 n=9 k=8 " + ab + " c=f16:row acc=f32", kSmall);   // K < BK
    expect_matches("gemm m=33 n=31 k=66 " + ab + " c=f32:row acc=f32", kSmall); // alignment 2
    expect_matches("gemm m=36 n=20 k=68 " + ab + " c=f32:row acc=f32", kSmall); // alignment 4
  }
}

TEST(GemmEmuF16, EveryActivation) {
  for (const char *act :
       {"relu", "tanh", "sigmoid", "elu", "gelu", "gelu_tanh", "softplus", "swish"}) {
    expect_matches(std::string("gemm m=40 n=24 k=32 a=f16:row b=f16:col c=f32:row acc=f32 act=") +
                       act,
                   kSmall);
    expect_matches(std::string("gemm m=40 n=24 k=32 a=f16:row b=f16:col c=f16:row acc=f32 act=") +
                       act + " bias=col beta=0.5",
                   kSmall);
  }
}

TEST(GemmEmuF16, AlphaBetaBias) {
  expect_matches("gemm m=48 n=40 k=32 a=f16:row b=f16:col c=f32:row acc=f32 alpha=2 beta=-1.5 "
                 "bias=row",
                 kSmall);
  expect_matches("gemm m=48 n=40 k=32 a=f16:col b=f16:row c=f16:col acc=f32 alpha=0.5 beta=1 "
                 "bias=col act=relu",
                 kSmall);
}

TEST(GemmEmuF16, BatchAndLeadingDimensions) {
  expect_matches("gemm m=40 n=24 k=48 batch=3 a=f16:row b=f16:col c=f32:row acc=f32", kSmall);
  expect_matches("gemm m=40 n=24 k=48 batch=2 a=f16:col lda=48 b=f16:row ldb=32 c=f32:row ldc=40 "
                 "acc=f32 beta=1",
                 kSmall);
}

// --- the other dtypes --------------------------------------------------------------------------
TEST(GemmEmuBf16, AllLayouts) {
  for (const char *l : kLayouts) {
    expect_matches("gemm m=64 n=40 k=64 " + with_dtype(l, "bf16") + " c=bf16:row acc=f32", kSmall);
    expect_matches("gemm m=33 n=17 k=24 " + with_dtype(l, "bf16") + " c=f32:row acc=f32 act=gelu",
                   kSmall);
  }
}

TEST(GemmEmuTf32, AllLayouts) {
  for (const char *l : kLayouts) {
    expect_matches("gemm m=64 n=48 k=32 " + with_dtype(l, "f32") + " c=f32:row acc=f32 math=tf32",
                   "64x64x16 w32x32 s3");
    expect_matches("gemm m=19 n=21 k=13 " + with_dtype(l, "f32") +
                       " c=f32:col acc=f32 math=tf32 act=sigmoid beta=1",
                   "64x64x16 w32x32 s3");
  }
}

TEST(GemmEmuS8, AllLayouts) {
  for (const char *l : kLayouts) {
    expect_matches("gemm m=64 n=48 k=128 " + with_dtype(l, "s8") + " c=s32:row acc=s32",
                   "64x64x64 w32x32 s3");
    expect_matches("gemm m=20 n=36 k=48 " + with_dtype(l, "s8") + " c=s8:row acc=s32 alpha=0.05",
                   "64x64x64 w32x32 s3");
  }
}

// u8 inputs: the m16n8k32 .u8 form, zero-extended bytes (255 x 255 products), exact s32 sums.
TEST(GemmEmuU8, AllLayouts) {
  for (const char *l : kLayouts) {
    expect_matches("gemm m=64 n=48 k=128 " + with_dtype(l, "u8") + " c=s32:row acc=s32",
                   "64x64x64 w32x32 s3");
    expect_matches("gemm m=20 n=36 k=48 " + with_dtype(l, "u8") + " c=s8:row acc=s32 alpha=0.001",
                   "64x64x64 w32x32 s3");
  }
  expect_matches("gemm m=40 n=24 k=192 a=u8 b=u8:col c=s32 acc=s32", "64x64x64 w32x32 s3 k2");
}

// Mixed 8-bit inputs: the .s8.u8 and .u8.s8 forms, each operand read by its own signedness (the
// reference decodes A and B by their dtypes); tails, odd sizes, batch, split-K, float epilogue.
TEST(GemmEmuMixed8, SignedTimesUnsignedBothWays) {
  for (const char *pair : {"a=s8:%s b=u8:%s", "a=u8:%s b=s8:%s"})
    for (const char *l : {"row", "col"}) {
      char ab[64];
      std::snprintf(ab, sizeof ab, pair, l, std::string(l) == "row" ? "col" : "row");
      expect_matches(std::string("gemm m=64 n=48 k=128 ") + ab + " c=s32:row acc=s32",
                     "64x64x64 w32x32 s3");
      expect_matches(std::string("gemm m=33 n=17 k=72 batch=2 ") + ab + " c=s32:col acc=s32",
                     "64x64x64 w32x32 s3");
      expect_matches(std::string("gemm m=20 n=36 k=48 ") + ab +
                         " c=s8:row acc=s32 alpha=0.01 bias=col act=relu",
                     "64x64x64 w32x32 s3");
      expect_matches(std::string("gemm m=40 n=24 k=192 ") + ab + " c=s32 acc=s32",
                     "32x32x64 w16x16 s3 k2");
    }
}

// f16 accumulation: f16x2 accumulators in the main loop, widened to f32 for the epilogue, under
// the f16-accumulation bound of docs/numerics.md.
TEST(GemmEmuF16Acc, LayoutsTailsBatchSplitKEpilogue) {
  for (const char *l : kLayouts)
    expect_matches("gemm m=64 n=48 k=256 " + with_dtype(l, "f16") + " c=f16:row acc=f16", kSmall);
  expect_matches("gemm m=65 n=63 k=40 a=f16:row b=f16:col c=f32:row acc=f16", "32x32x32 w16x16 s2");
  expect_matches("gemm m=33 n=17 k=100 batch=3 a=f16:col b=f16:row c=f16:col acc=f16", kSmall);
  expect_matches("gemm m=48 n=40 k=96 a=f16 b=f16:col c=f16 acc=f16 alpha=0.5 beta=1 bias=col "
                 "act=gelu",
                 "");
  expect_matches("gemm m=64 n=48 k=256 a=f16 b=f16:col c=f16 acc=f16", "32x32x32 w16x16 s3 k4");
  expect_matches("gemm m=128 n=128 k=64 a=f16 b=f16:col c=f16 acc=f16", "");
}

// Packed sub-byte inputs (s4, u4: two per byte; b1: eight), A row-major and B column-major:
// m16n8k64 / m16n8k256 loaded as bytes along K (KernelPlan::k_pack). Exact s32 sums against the
// reference (b1: its own bit counts); M/N tails, odd sizes, K multiples, batch, split-K, epilogues.
TEST(GemmEmuPacked, Int4) {
  for (const char *t : {"a=s4 b=s4:col", "a=u4 b=u4:col", "a=s4 b=u4:col", "a=u4 b=s4:col"}) {
    expect_matches(std::string("gemm m=64 n=48 k=256 ") + t + " c=s32 acc=s32",
                   "64x64x128 w32x32 s3");
    expect_matches(std::string("gemm m=33 n=17 k=96 batch=2 ") + t + " c=s32:col acc=s32",
                   "32x32x64 w16x16 s2");
  }
  expect_matches("gemm m=31 n=45 k=160 a=s4 b=s4:col c=s8 acc=s32 alpha=0.1 bias=col act=relu", "");
  expect_matches("gemm m=40 n=24 k=512 a=s4 b=s4:col c=s32 acc=s32", "32x32x64 w16x16 s3 k3");
  expect_matches("gemm m=16 n=8 k=32 a=u4 b=u4:col c=s32 acc=s32 lda=64 ldb=34 beta=1",
                 "32x32x256 w16x16 s2");
}

TEST(GemmEmuPacked, Binary) {
  for (const char *bop : {"", " bop=and", " bop=xor"}) {
    expect_matches(std::string("gemm m=64 n=48 k=512 a=b1 b=b1:col c=s32 acc=s32") + bop,
                   "64x64x512 w32x32 s3");
    expect_matches(std::string("gemm m=21 n=13 k=384 batch=3 a=b1 b=b1:col c=s32:col acc=s32") +
                       bop,
                   "32x32x256 w16x16 s2");
  }
  expect_matches("gemm m=40 n=24 k=1280 a=b1 b=b1:col c=s32 acc=s32 bop=xor", "32x32x256 w16x16 "
                                                                              "s3 k4");
  expect_matches("gemm m=35 n=9 k=128 a=b1 b=b1:col c=s8 acc=s32 alpha=0.25 beta=1 bias=row "
                 "act=relu bop=xor",
                 "");
}

TEST(GemmEmuF64, AllLayouts) {
  for (const char *l : kLayouts) {
    expect_matches("gemm m=40 n=24 k=20 " + with_dtype(l, "f64") + " c=f64:row acc=f64",
                   "32x32x16 w16x16 s3");
    expect_matches("gemm m=9 n=7 k=5 " + with_dtype(l, "f64") +
                       " c=f64:col acc=f64 act=tanh bias=row beta=2",
                   "32x32x16 w16x16 s3");
  }
}

// The bar: aligned full tiles load global memory at 100% sector efficiency (every byte of
// every 32-byte sector fetched is used) and read shared memory without bank conflicts.
TEST(GemmEmuCounters, FullLoadEfficiencyAndNoBankConflictsWhenAligned) {
  for (const char *s : {"gemm m=128 n=128 k=64 a=f16:row b=f16:col c=f16:row acc=f32",
                        "gemm m=128 n=128 k=64 a=f16:col b=f16:row c=f16:row acc=f32",
                        "gemm m=128 n=128 k=64 a=bf16:row b=bf16:row c=f32:row acc=f32",
                        "gemm m=128 n=128 k=128 a=s8:row b=s8:col c=s32:row acc=s32",
                        "gemm m=128 n=128 k=64 a=f32:row b=f32:col c=f32:row acc=f32 math=tf32",
                        "gemm m=128 n=128 k=64 a=f32:row b=f32:col c=f32:row acc=f32 math=f32"}) {
    EmuRun r = expect_matches(s);
    const emu::LaunchCounters &c = r.counters;
    EXPECT_EQ(c.shared_bank_conflicts, 0u) << s;
    EXPECT_GT(c.global_load_sectors, 0u);
    EXPECT_EQ(c.global_bytes_read, 32 * c.global_load_sectors) << s; // 100% efficiency
    EXPECT_GT(c.mma_instructions + c.warp_instructions, 0u);
  }
}

// The element-wise fragment loads (f64 in every layout, tf32 and s8 m/n-contiguous tiles) are
// free of bank conflicts too, through the swizzle parameters of kernel_plan.h, for several CTA,
// warp and K-tile sizes (16- to 256-byte tile rows). Tiles whose contiguous extent is at least one
// 32-byte sector load at 100% efficiency.
TEST(GemmEmuCounters, ElementWiseFragmentLoadsHaveNoBankConflicts) {
  struct Case {
    const char *dtype, *tail, *configs[3];
  };
  const Case cases[] = {
      {"f64", "c=f64 acc=f64", {"32x32x16 w16x16 s2", "64x64x8 w32x32 s3", "128x64x16 w64x32 s3"}},
      {"f32",
       "c=f32 acc=f32 math=tf32",
       {"16x16x16 w16x16 s2", "64x32x32 w32x16 s3", "128x128x32 w64x64 s3"}},
      {"s8", "c=s32 acc=s32", {"32x32x32 w16x16 s2", "64x64x64 w32x32 s3", "128x128x32 w64x64 s3"}},
  };
  for (const Case &c : cases)
    for (const char *l : kLayouts)
      for (const char *config : c.configs) {
        const std::string spec =
            std::string("gemm m=128 n=128 k=128 ") + with_dtype(l, c.dtype) + " " + c.tail;
        EmuRun r = expect_matches(spec, config);
        EXPECT_EQ(r.counters.shared_bank_conflicts, 0u) << spec << " [" << config << "]";
        EXPECT_EQ(r.counters.global_bytes_read, 32 * r.counters.global_load_sectors)
            << spec << " [" << config << "]";
      }
}

// CTA rasterization: grouped ordering of the CTAs covers every tile exactly once, also when the
// number of M-tiles is not a multiple of the group.
TEST(GemmEmuRaster, GroupedOrderingCoversEveryTile) {
  expect_matches("gemm m=80 n=112 k=32 a=f16:row b=f16:col c=f16:row acc=f32",
                 "16x16x16 w16x16 s2 g2");
  expect_matches("gemm m=80 n=112 k=32 batch=2 a=f16:col b=f16:row c=f32:col acc=f32 beta=1",
                 "16x16x16 w16x16 s2 g3");
  expect_matches("gemm m=70 n=50 k=64 a=bf16 b=bf16:col c=bf16 acc=f32",
                 "32x16x32 w16x16 s3 g4 k2");
}

// Split-K: workspace + ordered reduction (deterministic), with the epilogue in the reduce pass.
TEST(GemmEmuSplitK, SlicesSumToTheReference) {
  expect_matches("gemm m=64 n=48 k=256 a=f16:row b=f16:col c=f16:row acc=f32",
                 "64x64x32 w32x32 s3 k4");
  expect_matches("gemm m=33 n=17 k=100 batch=2 a=f16:col b=f16:row c=f32:col acc=f32 act=gelu "
                 "bias=row beta=0.5",
                 "32x32x16 w16x16 s2 k3");
  // more slices than K-tiles: the empty slices contribute zeros
  expect_matches("gemm m=16 n=16 k=16 a=bf16 b=bf16:col c=f32 acc=f32", "32x32x16 w16x16 s2 k5");
  expect_matches("gemm m=40 n=24 k=192 a=s8 b=s8:col c=s8 acc=s32 alpha=0.1",
                 "64x64x64 w32x32 s3 k2");
  expect_matches("gemm m=40 n=24 k=64 a=f64 b=f64 c=f64 acc=f64 beta=1", "32x32x16 w16x16 s3 k2");
  expect_matches("gemm m=40 n=24 k=64 a=f32 b=f32 c=f32 acc=f32 math=f32", "64x64x8 w32x32 s3 k3");
}

TEST(GemmEmuSimtF32, AllLayoutsExactFp32) {
  for (const char *l : kLayouts) {
    expect_matches("gemm m=64 n=64 k=24 " + with_dtype(l, "f32") + " c=f32:row acc=f32 math=f32",
                   "64x64x8 w32x32 s3");
    expect_matches("gemm m=23 n=45 k=11 " + with_dtype(l, "f32") +
                       " c=f32:col acc=f32 math=f32 act=elu bias=col beta=0.5",
                   "32x64x16 w16x32 s2");
  }
  expect_matches("gemm m=130 n=129 k=17 a=f32 b=f32:col c=f32 acc=f32 math=f32"); // default
}

} // namespace
} // namespace tcjit::codegen::test
