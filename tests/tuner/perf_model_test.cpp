// The analytical performance model: its GPU figures, occupancy rules and which term bounds a
// kernel, checked against numbers worked out by hand from docs/perf_model.md.
#include "tuner/perf_model.h"

#include <gtest/gtest.h>

namespace tcjit::tuner {
namespace {

// A100 with the full math rate, perfect overlap and no latency limit on DRAM: the hand-worked
// figures below check the throughput terms alone.
const GpuModel &ideal_a100() {
  static const GpuModel g = [] {
    GpuModel m = a100_model();
    m.mma_efficiency = 1;
    m.l2_efficiency = 1;
    m.overlap_loss = 0;
    m.dram_latency_seconds = 0;
    return m;
  }();
  return g;
}

KernelFeatures f16_128x128x32(double instructions_per_mma) {
  KernelFeatures k;
  k.math = MathKind::f16;
  k.threads = 128;
  k.registers = 224;
  k.shared_bytes = 49152;
  k.instructions_per_mma = instructions_per_mma;
  return k;
}

TEST(PerfModel, PeaksAreTheDatasheetFigures) {
  // A100: 312 TFLOPS f16/bf16, 156 tf32, 624 TOPS s8, 19.5 f64 (within 0.5%).
  EXPECT_NEAR(a100_model().peak_flops(MathKind::f16) / 1e12, 312, 1.5);
  EXPECT_NEAR(a100_model().peak_flops(MathKind::tf32) / 1e12, 156, 0.8);
  EXPECT_NEAR(a100_model().peak_flops(MathKind::s8) / 1e12, 624, 3);
  EXPECT_NEAR(a100_model().peak_flops(MathKind::f64) / 1e12, 19.5, 0.1);
  // H100 SXM's mma.sync path: A100's per-SM-clock rate on 132 SMs at 1.83 GHz.
  EXPECT_NEAR(h100_model().peak_flops(MathKind::f16) / 1e12, 132 * 1.83 * 2048 / 1e3, 0.01);
}

TEST(PerfModel, OccupancyTakesTheTightestLimit) {
  // 224 registers: 7168 per warp, 28672 per CTA -> 2 CTAs in 65536; shared would allow 3.
  EXPECT_EQ(ctas_per_sm(a100_model(), f16_128x128x32(3)), 2);
  KernelFeatures k = f16_128x128x32(3);
  k.registers = 128; // 16384 per CTA -> 4 by registers; shared: 167936 / 50176 -> 3
  EXPECT_EQ(ctas_per_sm(a100_model(), k), 3);
  k.shared_bytes = 200 * 1024;
  std::string why;
  EXPECT_EQ(ctas_per_sm(a100_model(), k, &why), 0);
  EXPECT_NE(why.find("shared memory"), std::string::npos) << why;
  EXPECT_EQ(ctas_per_sm(h100_model(), k), 1); // 228 KiB per SM on H100
  k = f16_128x128x32(3);
  k.registers = 256;
  EXPECT_EQ(ctas_per_sm(a100_model(), k, &why), 0);
  EXPECT_NE(why.find("255"), std::string::npos) << why;
}

TEST(PerfModel, LargeGemmWithALeanLoopIsTensorBound) {
  const Prediction p = predict(ideal_a100(), f16_128x128x32(2.5), {4096, 4096, 4096});
  ASSERT_TRUE(p.launchable);
  EXPECT_EQ(p.bound, "tensor");
  EXPECT_EQ(p.ctas, 32 * 32);
  EXPECT_EQ(p.waves, 5); // 1024 CTAs over 108 SMs x 2
  EXPECT_GT(p.fraction_of_peak, 0.7);
  EXPECT_LE(p.fraction_of_peak, 1.0);
  // Tensor cycles per K-tile, 2 CTAs: 2 * 2*128*128*32 / 2048 = 1024.
  EXPECT_DOUBLE_EQ(p.tensor_cycles, 1024);
}

// mma.sp (2:4-sparse A) runs at twice the unit's dense peak: half the tensor cycles per K-tile
// (1024 -> 512 by hand, as above), and its fraction of peak is of the doubled peak.
TEST(PerfModel, ASparseKernelHasTwiceThePeak) {
  KernelFeatures sparse = f16_128x128x32(2.5);
  sparse.sparse = true;
  sparse.mma_k = 32;
  const Prediction dense = predict(ideal_a100(), f16_128x128x32(2.5), {4096, 4096, 4096});
  const Prediction p = predict(ideal_a100(), sparse, {4096, 4096, 4096});
  ASSERT_TRUE(p.launchable);
  EXPECT_DOUBLE_EQ(p.tensor_cycles, 512);
  EXPECT_LT(p.seconds, dense.seconds);
  EXPECT_LE(p.fraction_of_peak, 1.0);
  EXPECT_NEAR(p.tflops / p.fraction_of_peak, 2 * ideal_a100().peak_flops(MathKind::f16) / 1e12,
              1e-6 * p.tflops / p.fraction_of_peak);
}

TEST(PerfModel, AFatLoopBecomesIssueBoundAndSlower) {
  // 128*128*32 / (16*8*16) = 256 mma per K-tile; 2 CTAs * 256 * 10 / 4 = 1280 > 1024 cycles.
  const Prediction lean = predict(ideal_a100(), f16_128x128x32(2.5), {4096, 4096, 4096});
  const Prediction fat = predict(ideal_a100(), f16_128x128x32(10), {4096, 4096, 4096});
  EXPECT_EQ(fat.bound, "issue");
  EXPECT_DOUBLE_EQ(fat.issue_cycles, 1280);
  EXPECT_LT(fat.tflops, lean.tflops);
  EXPECT_NEAR(lean.tflops / fat.tflops, 1280.0 / 1024.0, 0.02);
}

TEST(PerfModel, SkinnyGemmNeedsSplitKToReachDram) {
  KernelFeatures k = f16_128x128x32(3);
  k.bm = 64;
  // 16x4096x4096 f16 without split-K: 32 CTAs on 32 of 108 SMs. Each computes its whole 64-row
  // tile (48 rows wasted): 2*64*128*32 / 2048 = 256 tensor cycles per K-tile, more than pulling
  // (64+128)*32*2 = 12288 B at 64 B/clk (192 cycles).
  const Prediction alone = predict(ideal_a100(), k, {16, 4096, 4096});
  EXPECT_EQ(alone.ctas, 32);
  EXPECT_EQ(alone.bound, "tensor");
  EXPECT_DOUBLE_EQ(alone.tensor_cycles, 256);
  EXPECT_DOUBLE_EQ(alone.l2_cycles, 192);
  // Split 4 ways: 128 CTAs on every SM, and B (32 MiB at 2.039 TB/s, ~16.5 us) bounds it.
  k.split_k = 4;
  const Prediction p = predict(ideal_a100(), k, {16, 4096, 4096});
  EXPECT_EQ(p.bound, "dram");
  EXPECT_LT(p.seconds, alone.seconds);
  EXPECT_NEAR(p.dram_seconds * 1e6, (16.0 * 4096 * 2 * 2 + 4096.0 * 4096 * 2) / 2.039e12 * 1e6,
              0.01);
  // Then the reduction: 4 f32 partial tiles of 16x4096 written and read back (1 MiB), and its
  // launch.
  EXPECT_NEAR(p.splitk_seconds, 2e-6 + 2 * 16.0 * 4096 * 4 * 4 / 2.039e12, 1e-12);
  EXPECT_DOUBLE_EQ(p.seconds, p.dram_seconds + p.splitk_seconds);
}

TEST(PerfModel, OneCtaPastAFullWaveCostsASecondWave) {
  KernelFeatures k = f16_128x128x32(2.5);
  const int64_t slots = 108 * 2;
  // A grid of exactly `slots` CTAs: 18 x 12 tiles of 128x128.
  const Prediction full = predict(ideal_a100(), k, {18 * 128, 12 * 128, 4096});
  const Prediction one_more = predict(ideal_a100(), k, {18 * 128 + 1, 12 * 128, 4096});
  EXPECT_EQ(full.ctas, slots);
  EXPECT_EQ(full.waves, 1);
  EXPECT_EQ(one_more.waves, 2);
  EXPECT_GT(one_more.seconds, full.seconds * 1.4);
}

TEST(PerfModel, UnlaunchableKernelsPredictNothing) {
  KernelFeatures k = f16_128x128x32(3);
  k.threads = 2048;
  const Prediction p = predict(ideal_a100(), k, {1024, 1024, 1024});
  EXPECT_FALSE(p.launchable);
  EXPECT_EQ(p.tflops, 0);
  EXPECT_NE(p.why_not.find("threads"), std::string::npos) << p.why_not;
}

TEST(PerfModel, MathKindNamesRoundTrip) {
  for (MathKind k : {MathKind::f16, MathKind::bf16, MathKind::tf32, MathKind::s8, MathKind::f64,
                     MathKind::f32_simt})
    EXPECT_EQ(parse_math_kind(to_string(k)), k);
  EXPECT_FALSE(parse_math_kind("fp16"));
}

} // namespace
} // namespace tcjit::tuner

namespace tcjit::tuner {
namespace {

TEST(PerfModel, FewCtasCannotSaturateDram) {
  // 16x4096x4096 with 64x128 tiles: 32 CTAs keep 2 K-tiles of 12 KiB each in flight: 768 KiB
  // over a 700 ns latency is ~1.1 TB/s, half of A100's 2.039 TB/s; 128 CTAs (split-K 4) reach it.
  KernelFeatures k;
  k.math = MathKind::f16;
  k.bm = 64;
  k.threads = 128;
  k.registers = 128;
  k.shared_bytes = 36864;
  k.instructions_per_mma = 3;
  const Prediction alone = predict(a100_model(), k, {16, 4096, 4096});
  const double bytes = 16.0 * 4096 * 2 * 2 + 4096.0 * 4096 * 2;
  EXPECT_NEAR(alone.dram_seconds, bytes / (32 * 2 * 12288 / 700e-9), 1e-9);
  k.split_k = 4;
  const Prediction split = predict(a100_model(), k, {16, 4096, 4096});
  EXPECT_NEAR(split.dram_seconds, bytes / 2.039e12, 1e-9);
  EXPECT_LT(split.seconds, alone.seconds);
}

TEST(PerfModel, FewerThanFourWarpsLeaveTensorCoresIdle) {
  KernelFeatures k;
  k.math = MathKind::f16;
  k.threads = 64; // 2 warps, one CTA per SM (shared memory)
  k.registers = 128;
  k.shared_bytes = 120 * 1024;
  k.instructions_per_mma = 3;
  const Prediction p = predict(ideal_a100(), k, {4096, 4096, 4096});
  EXPECT_EQ(p.ctas_per_sm, 1);
  EXPECT_DOUBLE_EQ(p.tensor_cycles, 2.0 * 128 * 128 * 32 / 2048 * 2); // half the sub-partitions
}

} // namespace
} // namespace tcjit::tuner
