#include "compiler/spec/tensor_core_rules.h"

#include "compiler/spec/explain.h"

#include "spec_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace tcjit {
namespace {

using testing::spec_of;

std::vector<std::string> rules_of(const std::string &text, std::string_view arch = "sm_80",
                                  bool tf32_off = false) {
  std::vector<std::string> ids;
  for (const RuleFinding &f : check_tensor_core_rules(spec_of(text), arch, tf32_off))
    ids.push_back(f.rule);
  return ids;
}

bool has(const std::vector<std::string> &v, const std::string &id) {
  return std::find(v.begin(), v.end(), id) != v.end();
}

TEST(ChooseMma, EachInputTypeGetsItsInstruction) {
  EXPECT_EQ(choose_mma(spec_of("gemm m=64 n=64 k=64 a=f16 b=f16"), "sm_80", false).instruction,
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32");
  EXPECT_EQ(choose_mma(spec_of("gemm m=64 n=64 k=64 a=bf16 b=bf16"), "sm_80", false).shape,
            "m16n8k16");
  EXPECT_EQ(
      choose_mma(spec_of("gemm m=64 n=64 k=64 a=f32 b=f32 math=tf32"), "sm_80", false).instruction,
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32");
  EXPECT_EQ(choose_mma(spec_of("gemm m=64 n=64 k=64 a=f64 b=f64"), "sm_80", false).shape, "m8n8k4");
  EXPECT_EQ(choose_mma(spec_of("gemm m=64 n=64 k=64 a=s8 b=s8"), "sm_80", false).instruction,
            "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32");
  EXPECT_EQ(choose_mma(spec_of("gemm m=64 n=64 k=64 a=u8 b=u8"), "sm_80", false).instruction,
            "mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32");
}

// f16 accumulation compiles on the .f16.f16 form, and explain says what it trades.
TEST(ChooseMma, F16AccumulatorTradesAccuracyForRegisters) {
  const MmaChoice m =
      choose_mma(spec_of("gemm m=64 n=64 k=64 a=f16 b=f16 acc=f16"), "sm_80", false);
  EXPECT_TRUE(m.tensor_cores);
  EXPECT_TRUE(m.compiles);
  EXPECT_EQ(m.instruction, "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16");
  EXPECT_NE(m.note.find("trades accuracy for registers"), std::string::npos) << m.note;
  EXPECT_EQ(m.unit, MathUnit::f16);
  EXPECT_TRUE(
      choose_mma(spec_of("conv2d n=1 h=8 w=8 c=32 k=32 r=3 s=3 x=f16 acc=f16"), "sm_90", false)
          .tensor_cores);
}

// Mixed 8-bit inputs: the .s8.u8 / .u8.s8 forms on the s8 unit.
TEST(ChooseMma, MixedEightBitForms) {
  const MmaChoice su = choose_mma(spec_of("gemm m=64 n=64 k=64 a=s8 b=u8"), "sm_80", false);
  EXPECT_EQ(su.instruction, "mma.sync.aligned.m16n8k32.row.col.s32.s8.u8.s32");
  EXPECT_EQ(su.unit, MathUnit::s8);
  const MmaChoice us = choose_mma(spec_of("gemm m=64 n=64 k=64 a=u8 b=s8"), "sm_86", false);
  EXPECT_EQ(us.instruction, "mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32");
}

TEST(ChooseMma, F32MathHasNoTensorCores) {
  const MmaChoice m =
      choose_mma(spec_of("gemm m=64 n=64 k=64 a=f32 b=f32 math=f32"), "sm_80", false);
  EXPECT_FALSE(m.tensor_cores);
  EXPECT_EQ(m.instruction, "");
  // auto follows NVIDIA_TF32_OVERRIDE.
  const OpSpec s = spec_of("gemm m=64 n=64 k=64 a=f32 b=f32");
  EXPECT_TRUE(choose_mma(s, "sm_80", false).tensor_cores);
  EXPECT_FALSE(choose_mma(s, "sm_80", true).tensor_cores);
}

TEST(TensorCoreRules, CleanSpecBreaksNothing) {
  EXPECT_TRUE(rules_of("gemm m=4096 n=4096 k=4096 a=f16:row b=f16:col c=f16:row").empty());
  EXPECT_TRUE(rules_of("conv2d n=32 h=56 w=56 c=64 k=64 r=3 s=3 pad=1 x=f16:nhwc").empty());
}

TEST(TensorCoreRules, Tf32DisabledIsSlow) {
  const auto by_env = check_tensor_core_rules(spec_of("gemm m=64 n=64 k=64 a=f32 b=f32"), "sm_80",
                                              /*tf32_override_off=*/true);
  ASSERT_EQ(by_env.size(), 1u);
  EXPECT_EQ(by_env[0].rule, "tf32-disabled");
  EXPECT_NE(by_env[0].problem.find("NVIDIA_TF32_OVERRIDE=0"), std::string::npos);
  EXPECT_NE(by_env[0].problem.find("8-16x slower"), std::string::npos);
  EXPECT_TRUE(has(rules_of("gemm m=64 n=64 k=64 a=f32 b=f32 math=f32"), "tf32-disabled"));
  EXPECT_FALSE(
      has(rules_of("gemm m=64 n=64 k=64 a=f32 b=f32 math=tf32", "sm_80", true), "tf32-disabled"));
}

TEST(TensorCoreRules, ChannelsNotMultipleOfEight) {
  const auto f = check_tensor_core_rules(
      spec_of("conv2d n=1 h=32 w=32 c=3 k=64 r=3 s=3 pad=1 x=f16:nhwc"), "sm_80", false);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].rule, "vector-16B");
  EXPECT_NE(f[0].problem.find("c per group = 3 is not a multiple of 8"), std::string::npos);
  EXPECT_NE(f[0].fix.find("multiple of 8"), std::string::npos);
  // c=3 < 32 too.
  EXPECT_TRUE(has(rules_of("conv2d n=1 h=32 w=32 c=3 k=64 r=3 s=3 pad=1 x=f16:nhwc"), "min-32"));
}

TEST(TensorCoreRules, SmallChannelsAndK) {
  EXPECT_TRUE(has(rules_of("conv2d n=1 h=32 w=32 c=16 k=64 r=3 s=3 pad=1 x=f16"), "min-32"));
  EXPECT_FALSE(has(rules_of("conv2d n=1 h=32 w=32 c=32 k=32 r=3 s=3 pad=1 x=f16"), "min-32"));
  EXPECT_TRUE(has(rules_of("gemm m=64 n=64 k=16 a=f16 b=f16"), "min-32"));
}

TEST(TensorCoreRules, NchwShouldBeNhwc) {
  const auto ids = rules_of("conv2d n=1 h=32 w=32 c=64 k=64 r=3 s=3 x=f16:nchw y=f16:nchw");
  EXPECT_EQ(std::count(ids.begin(), ids.end(), "layout-nhwc"), 2);
  EXPECT_FALSE(has(ids, "vector-16B")); // the layout rule explains it
}

TEST(TensorCoreRules, GroupedConvolutions) {
  // Depthwise (1 channel per group, equal in/out): fine.
  EXPECT_FALSE(has(rules_of("conv2d n=8 h=28 w=28 c=128 k=128 r=3 s=3 pad=1 groups=128 x=f16"),
                   "grouped-equal"));
  EXPECT_FALSE(has(rules_of("conv2d n=8 h=28 w=28 c=128 k=128 r=3 s=3 pad=1 groups=128 x=f16"),
                   "grouped-size"));
  // Unequal per-group channels.
  EXPECT_TRUE(has(rules_of("conv2d n=8 h=28 w=28 c=64 k=128 r=3 s=3 pad=1 groups=4 x=f16"),
                  "grouped-equal"));
  // 12 channels per group is not a fast size.
  EXPECT_TRUE(
      has(rules_of("conv2d n=8 h=28 w=28 c=48 k=48 r=3 s=3 pad=1 groups=4 x=f16"), "grouped-size"));
}

TEST(TensorCoreRules, F64RateDependsOnArch) {
  EXPECT_FALSE(has(rules_of("gemm m=64 n=64 k=64 a=f64 b=f64", "sm_80"), "f64-rate"));
  EXPECT_TRUE(has(rules_of("gemm m=64 n=64 k=64 a=f64 b=f64", "sm_86"), "f64-rate"));
}

// The roofline's peaks are the datasheets' (A100: 312 TFLOPS f16, 156 tf32, 19.5 f32, 624 TOPS
// s8; H100 SXM's mma.sync path: 132 SMs x 1.83 GHz x 2048), within their rounding.
TEST(Peaks, DatasheetNumbers) {
  auto peak = [](const char *text, const char *arch, bool tf32_off) {
    return explain_spec(spec_of(text), arch, tf32_off).peak_ops / 1e12;
  };
  EXPECT_NEAR(peak("gemm m=8 n=8 k=8 a=f16 b=f16", "sm_80", false), 312, 1.5);
  EXPECT_NEAR(peak("gemm m=8 n=8 k=8 a=f32 b=f32", "sm_80", false), 156, 0.8);
  EXPECT_NEAR(peak("gemm m=8 n=8 k=8 a=f32 b=f32", "sm_80", true), 19.5, 0.1);
  EXPECT_NEAR(peak("gemm m=8 n=8 k=8 a=s8 b=s8", "sm_80", false), 624, 3);
  EXPECT_NEAR(peak("gemm m=8 n=8 k=8 a=u8 b=u8", "sm_80", false), 624, 3);
  EXPECT_NEAR(peak("gemm m=8 n=8 k=8 a=f64 b=f64", "sm_80", false), 19.5, 0.1);
  EXPECT_NEAR(peak("gemm m=8 n=8 k=8 a=f16 b=f16", "sm_90", false), 132 * 1.83 * 2048 / 1e3, 0.01);
  EXPECT_EQ(explain_spec(spec_of("gemm m=8 n=8 k=8 a=f16 b=f16"), "sm_86", false).bandwidth, 768e9);
  EXPECT_NEAR(peak("gemm m=8 n=8 k=8 a=s8 b=u8", "sm_80", false), 624, 3);
  EXPECT_NEAR(peak("gemm m=8 n=8 k=8 a=f16 b=f16 acc=f16", "sm_80", false), 312, 1.5);
}

// A100 INT4: 1248 TOPS dense, 2496 with 2:4-sparse A (mma.sp m16n8k128, pairs of values).
TEST(Peaks, SparseS4DoublesTheInt4Peak) {
  auto peak = [](const char *text) {
    return explain_spec(spec_of(text), "sm_80", false).peak_ops / 1e12;
  };
  EXPECT_NEAR(peak("gemm m=64 n=64 k=256 a=s4 b=s4:col c=s32 acc=s32"), 1248, 6);
  EXPECT_NEAR(peak("gemm m=64 n=64 k=256 a=u4 b=s4:col c=s32 acc=s32 sparse=2:4"), 2496, 12);
  const Explanation e = explain_spec(
      spec_of("gemm m=64 n=64 k=256 a=s4 b=u4:col c=s32 acc=s32 sparse=2:4"), "sm_80", false);
  EXPECT_TRUE(e.mma.sparse);
  EXPECT_NE(e.mma.note.find("by pairs"), std::string::npos) << e.mma.note;
}

} // namespace
} // namespace tcjit
