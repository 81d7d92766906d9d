// Convolutions as implicit GEMMs (compiler/codegen/plan/conv_lowering.h), run on the PTX emulator
// and compared with the direct-loop CPU reference (reference_conv) under the tolerance model
// (docs/numerics.md): pass x dtype x groups x stride/pad/dilation x odd sizes x epilogue, conv3d,
// and scaled-down ResNet-50 layers.
#include "gemm_runner.h"
#include "tests/common/test_names.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tcjit::codegen::test {
namespace {

struct Case {
  std::string spec;
  std::string config; // "" = the default config
};

void PrintTo(const Case &c, std::ostream *os) {
  *os << c.spec << (c.config.empty() ? "" : " [" + c.config + "]");
}

std::string case_name(const ::testing::TestParamInfo<Case> &info) {
  return ::tcjit::test::test_name(info.param.spec, info.param.config);
}

class ConvMatrix : public ::testing::TestWithParam<Case> {};

TEST_P(ConvMatrix, MatchesReference) {
  expect_matches(GetParam().spec, GetParam().config);
}

// The dtype words of a conv line and a small config that suits the mma form.
struct DtypeCase {
  std::string words, config;
};
const std::vector<DtypeCase> &dtypes() {
  static const std::vector<DtypeCase> d = {
      {"x=f16 acc=f32", "64x32x32 w32x32 s3"},
      {"x=bf16 acc=f32", "32x64x32 w32x32 s2"},
      {"x=f32 acc=f32 math=tf32", "64x32x16 w32x32 s3"},
      {"x=s8 acc=s32 alpha=0.05", "64x32x64 w32x32 s3"},
      {"x=f32 acc=f32 math=f32", "32x32x8 w32x32 s2"},
  };
  return d;
}

std::vector<Case> matrix() {
  std::vector<Case> out;
  // stride/pad/dilation and odd sizes
  const std::vector<std::string> shapes = {
      "n=2 h=5 w=6 c=16 k=24 r=3 s=3 pad=1",             // same padding
      "n=1 h=9 w=7 c=8 k=16 r=3 s=3 pad=1 stride=2",     // strided (dgrad: the strided gather)
      "n=2 h=7 w=7 c=16 k=8 r=3 s=2 pad=2,1 dilation=2", // dilation, per-dimension pad
      "n=3 h=4 w=4 c=12 k=20 r=1 s=1",                   // 1x1, C and K % 8 != 0
      "n=2 h=3 w=3 c=16 k=1 r=3 s=3",                    // P = Q = 1, K = 1
      "n=2 h=6 w=5 c=3 k=8 r=3 s=3 pad=1",               // C = 3: an input layer
  };
  for (const char *pass : {"fprop", "dgrad", "wgrad"})
    for (const DtypeCase &dt : dtypes())
      for (const std::string &shape : shapes)
        out.push_back({"conv2d " + shape + " pass=" + pass + " " + dt.words, dt.config});
  // u8 (the .u8.u8 form) in every pass: dgrad multiplies dy and the filter into an s32 dx; and
  // acc=f16 (f16x2 accumulators) through the same implicit GEMM
  for (const std::string &shape : {shapes[1], shapes[2], shapes[3]}) {
    out.push_back({"conv2d " + shape + " x=u8 acc=s32", "64x32x64 w32x32 s3"});
    out.push_back({"conv2d " + shape + " pass=dgrad x=s32 y=u8 filter=u8 acc=s32", ""});
    out.push_back({"conv2d " + shape + " pass=wgrad x=u8 acc=s32 alpha=0.5", "64x32x64 w32x32 s3"});
    for (const char *pass : {"fprop", "dgrad", "wgrad"})
      out.push_back({"conv2d " + shape + " pass=" + pass + " x=f16 acc=f16", ""});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Conv2d, ConvMatrix, ::testing::ValuesIn(matrix()), case_name);

// Groups (2 and 4, equal and unequal per-group widths) with every pass and the epilogue: bias per
// output channel of each group, beta * C, activations.
std::vector<Case> grouped() {
  std::vector<Case> out;
  for (const char *pass : {"fprop", "dgrad", "wgrad"}) {
    const bool bias_ok = std::string(pass) != "wgrad"; // a filter gradient has no bias
    out.push_back({std::string("conv2d n=2 h=5 w=5 c=16 k=32 r=3 s=3 pad=1 groups=2 pass=") + pass +
                       " x=f16 acc=f32" + (bias_ok ? " bias=col act=relu" : " act=relu"),
                   "64x32x32 w32x32 s3"});
    out.push_back({std::string("conv2d n=1 h=6 w=6 c=32 k=16 r=1 s=3 pad=0,1 stride=2 groups=4 "
                               "pass=") +
                       pass + " x=bf16 acc=f32 alpha=0.5 beta=0.25" +
                       (bias_ok ? " bias=col act=gelu" : " act=tanh"),
                   "32x32x32 w16x16 s2"});
    out.push_back({std::string("conv2d n=2 h=4 w=5 c=24 k=12 r=2 s=2 groups=3 pass=") + pass +
                       " x=f32 acc=f32 math=tf32 act=sigmoid",
                   ""});
    out.push_back({std::string("conv2d n=2 h=5 w=5 c=16 k=32 r=3 s=3 pad=1 groups=2 pass=") + pass +
                       (std::string(pass) == "dgrad" ? " x=s32 y=u8 filter=u8" : " x=u8") +
                       " acc=s32" + (bias_ok ? " bias=col" : ""),
                   ""});
  }
  return out;
}
INSTANTIATE_TEST_SUITE_P(Groups, ConvMatrix, ::testing::ValuesIn(grouped()), case_name);

// Every activation and the epilogue terms on one fprop shape, with split-K (wgrad's long K).
std::vector<Case> epilogues() {
  std::vector<Case> out;
  for (const char *act :
       {"none", "relu", "tanh", "sigmoid", "elu", "gelu", "gelu_tanh", "softplus", "swish"})
    out.push_back({std::string("conv2d n=2 h=5 w=5 c=8 k=16 r=3 s=3 pad=1 x=f16 acc=f32 "
                               "alpha=1.5 beta=0.5 bias=col act=") +
                       act,
                   ""});
  out.push_back({"conv2d n=4 h=6 w=6 c=8 k=16 r=3 s=3 pad=1 pass=wgrad x=f16 acc=f32",
                 "32x32x32 w16x16 s3 k4"});
  out.push_back({"conv2d n=2 h=6 w=6 c=16 k=16 r=3 s=3 pad=1 groups=2 x=f16 acc=f32 bias=col",
                 "32x32x32 w16x16 s3 k3"});
  out.push_back({"conv2d n=2 h=5 w=5 c=16 k=16 r=3 s=3 pad=1 x=s8 y=s8 acc=s32", ""});
  out.push_back({"conv2d n=2 h=5 w=5 c=16 k=16 r=3 s=3 pad=1 x=s8 y=s32 acc=s32", ""});
  out.push_back({"conv2d n=2 h=5 w=5 c=16 k=16 r=3 s=3 pad=1 x=u8 y=s32 acc=s32", ""});
  out.push_back({"conv2d n=1 h=5 w=5 c=8 k=8 r=3 s=3 pad=1 x=f64 acc=f64", ""});
  return out;
}
INSTANTIATE_TEST_SUITE_P(Epilogue, ConvMatrix, ::testing::ValuesIn(epilogues()), case_name);

// conv3d at small sizes, every pass.
std::vector<Case> conv3d() {
  std::vector<Case> out;
  for (const char *pass : {"fprop", "dgrad", "wgrad"}) {
    out.push_back({std::string("conv3d n=1 d=4 h=5 w=4 c=8 k=16 t=3 r=3 s=3 pad=1 pass=") + pass +
                       " x=f16 acc=f32",
                   "32x32x32 w16x16 s3"});
    out.push_back({std::string("conv3d n=2 d=5 h=4 w=4 c=16 k=8 t=3 r=1 s=2 pad=1,0,0 "
                               "stride=2,1,2 dilation=1,2,1 groups=2 pass=") +
                       pass + " x=bf16 acc=f32",
                   "32x32x32 w16x16 s2"});
  }
  return out;
}
INSTANTIATE_TEST_SUITE_P(Conv3d, ConvMatrix, ::testing::ValuesIn(conv3d()), case_name);

// ResNet-50 layer shapes, scaled down in batch and spatial size: the 7x7 stride-2 stem with C = 3,
// a 3x3 bottleneck conv, 1x1 reduce/expand, and the strided 1x1 downsample; each pass.
std::vector<Case> resnet50() {
  std::vector<Case> out;
  const std::vector<std::string> layers = {
      "n=1 h=16 w=16 c=3 k=64 r=7 s=7 pad=3 stride=2", // conv1 (224x224 in the real net)
      "n=1 h=8 w=8 c=64 k=64 r=3 s=3 pad=1",           // res2 3x3
      "n=1 h=8 w=8 c=64 k=256 r=1 s=1",                // res2 1x1 expand
      "n=1 h=8 w=8 c=256 k=64 r=1 s=1",                // res2 1x1 reduce
      "n=1 h=8 w=8 c=256 k=128 r=1 s=1 stride=2",      // res3 downsample
  };
  for (const char *pass : {"fprop", "dgrad", "wgrad"})
    for (const std::string &layer : layers)
      out.push_back({"conv2d " + layer + " pass=" + pass + " x=f16 acc=f32", ""});
  return out;
}
INSTANTIATE_TEST_SUITE_P(ResNet50, ConvMatrix, ::testing::ValuesIn(resnet50()), case_name);

// Channel padding (TileConfig::pad_c): x and the filter copied with c zero-padded to a 16-byte
// vector of channels, then the wide-vector kernel; beside the narrow-vector kernel of the same
// layer. With split-K too (both in one workspace).
std::vector<Case> padded() {
  std::vector<Case> out;
  for (const char *shape : {"n=2 h=9 w=9 c=3 k=16 r=7 s=7 pad=3 stride=2",
                            "n=1 h=6 w=6 c=5 k=8 r=3 s=3 pad=1", "n=2 h=4 w=5 c=1 k=8 r=2 s=2"}) {
    out.push_back({std::string("conv2d ") + shape + " x=f16 acc=f32 bias=col act=relu",
                   "64x32x32 w32x32 s3 pc8"});
    out.push_back({std::string("conv2d ") + shape + " x=f16 acc=f32 bias=col act=relu",
                   "64x32x32 w32x32 s3"});
  }
  out.push_back(
      {"conv2d n=2 h=9 w=9 c=3 k=16 r=3 s=3 pad=1 x=bf16 acc=f32", "32x32x32 w16x16 pc8"});
  out.push_back(
      {"conv2d n=2 h=9 w=9 c=3 k=16 r=3 s=3 pad=1 x=f32 acc=f32 math=tf32", "32x32x16 w16x16 pc4"});
  out.push_back(
      {"conv2d n=2 h=9 w=9 c=6 k=16 r=3 s=3 pad=1 x=s8 acc=s32 alpha=0.1", "32x32x64 w32x32 pc16"});
  out.push_back(
      {"conv3d n=1 d=3 h=5 w=5 c=3 k=8 t=3 r=3 s=3 pad=1 x=f16 acc=f32", "32x32x32 w16x16 pc8 k2"});
  return out;
}
INSTANTIATE_TEST_SUITE_P(ChannelPadding, ConvMatrix, ::testing::ValuesIn(padded()), case_name);

// Depthwise (groups = c = k): fprop and dgrad on the direct kernel, every dtype, strides,
// dilation, the epilogue, conv3d; wgrad on the grouped implicit GEMM.
std::vector<Case> depthwise() {
  std::vector<Case> out;
  const std::vector<std::string> shapes = {
      "n=2 h=7 w=6 c=32 k=32 groups=32 r=3 s=3 pad=1",
      "n=1 h=9 w=9 c=24 k=24 groups=24 r=5 s=5 pad=2 stride=2",
      "n=2 h=8 w=7 c=16 k=16 groups=16 r=3 s=3 pad=2 dilation=2",
      "n=1 h=5 w=5 c=3 k=3 groups=3 r=3 s=1 pad=1,0",
  };
  for (const char *pass : {"fprop", "dgrad", "wgrad"})
    for (const std::string &shape : shapes)
      out.push_back({"conv2d " + shape + " pass=" + pass + " x=f16 acc=f32", ""});
  for (const char *dt : {"x=bf16 acc=f32", "x=f32 acc=f32 math=tf32", "x=f32 acc=f32 math=f32",
                         "x=s8 acc=s32 alpha=0.1", "x=f64 acc=f64"})
    for (const char *pass : {"fprop", "dgrad"})
      out.push_back({std::string("conv2d n=2 h=6 w=6 c=16 k=16 groups=16 r=3 s=3 pad=1 stride=2 "
                                 "pass=") +
                         pass + " " + dt,
                     ""});
  // s8 inputs with an exact s32 output (the written tensor: y for fprop, x for dgrad)
  out.push_back({"conv2d n=2 h=6 w=6 c=16 k=16 groups=16 r=3 s=3 pad=1 x=s8 y=s32 acc=s32", ""});
  out.push_back({"conv2d n=2 h=6 w=6 c=16 k=16 groups=16 r=3 s=3 pad=1 x=u8 y=s32 acc=s32", ""});
  out.push_back({"conv2d n=2 h=6 w=6 c=16 k=16 groups=16 r=3 s=3 pad=1 pass=dgrad x=s32 y=s8 "
                 "filter=s8 acc=s32",
                 ""});
  out.push_back({"conv2d n=2 h=6 w=6 c=40 k=40 groups=40 r=3 s=3 pad=1 x=f16 acc=f32 alpha=0.5 "
                 "beta=1.5 bias=col act=swish",
                 "16x32x8 w16x16"});
  out.push_back({"conv2d n=2 h=6 w=6 c=40 k=40 groups=40 r=3 s=3 pad=1 pass=dgrad x=bf16 "
                 "acc=f32 bias=col act=gelu",
                 "32x16x8 w16x16"});
  out.push_back({"conv3d n=1 d=4 h=5 w=5 c=8 k=8 groups=8 t=3 r=3 s=3 pad=1 x=f16 acc=f32", ""});
  out.push_back({"conv3d n=1 d=5 h=5 w=5 c=8 k=8 groups=8 t=3 r=3 s=3 pad=1 stride=2 pass=dgrad "
                 "x=f16 acc=f32",
                 ""});
  return out;
}
INSTANTIATE_TEST_SUITE_P(Depthwise, ConvMatrix, ::testing::ValuesIn(depthwise()), case_name);

// The depthwise path runs no mma (fprop/dgrad) and a fraction of the grouped implicit GEMM's
// instructions; its wgrad is the grouped implicit GEMM.
TEST(ConvConfig, DepthwiseTakesTheDirectKernel) {
  const std::string spec = "conv2d n=2 h=9 w=9 c=32 k=32 groups=32 r=3 s=3 pad=1 x=f16 acc=f32";
  const EmuRun dw = expect_matches(spec);
  EXPECT_TRUE(dw.kernel.plan.depthwise);
  EXPECT_EQ(dw.counters.mma_instructions, 0u);
  EXPECT_NE(dw.kernel.plan.kernel_name.find("_depthwise_"), std::string::npos);
  // The same layer with groups = 16 (2 channels per group) is an implicit GEMM.
  const EmuRun grouped =
      expect_matches("conv2d n=2 h=9 w=9 c=32 k=32 groups=16 r=3 s=3 pad=1 x=f16 acc=f32");
  EXPECT_FALSE(grouped.kernel.plan.depthwise);
  EXPECT_GT(grouped.counters.mma_instructions, 0u);
  EXPECT_LT(dw.counters.warp_instructions * 4, grouped.counters.warp_instructions);
  const EmuRun wgrad = expect_matches(spec + " pass=wgrad");
  EXPECT_FALSE(wgrad.kernel.plan.depthwise);
  const EmuRun split = run_on_emulator(spec, "32x64x8 w16x32 k2");
  EXPECT_NE(split.error.find("the depthwise kernel sums each output's taps in one thread"),
            std::string::npos)
      << split.error;
}

TEST(ConvConfig, ChannelPaddingIsValidatedAgainstTheSpec) {
  const std::string stem = "conv2d n=1 h=9 w=9 c=3 k=16 r=3 s=3 pad=1 x=f16 acc=f32";
  const EmuRun wrong = run_on_emulator(stem, "32x32x32 w16x16 pc16");
  EXPECT_NE(wrong.error.find("pad_c=16 must be 8 (c=3 rounded up to a 16-byte vector"),
            std::string::npos)
      << wrong.error;
  const EmuRun aligned =
      run_on_emulator("conv2d n=1 h=9 w=9 c=8 k=16 r=3 s=3 x=f16 acc=f32", "32x32x32 w16x16 pc8");
  EXPECT_NE(aligned.error.find("channel padding applies to a convolution fprop with one group"),
            std::string::npos)
      << aligned.error;
  const EmuRun padded = expect_matches(stem, "32x32x32 w16x16 pc8");
  EXPECT_EQ(padded.kernel.plan.a.vec, 8);
  EXPECT_EQ(padded.kernel.plan.pad_from, 3);
  EXPECT_NE(padded.kernel.ptx.find("_pad_channels"), std::string::npos);
  const EmuRun narrow = expect_matches(stem, "32x32x32 w16x16");
  EXPECT_EQ(narrow.kernel.plan.a.vec, 1);
  EXPECT_NE(padded.kernel.plan.kernel_name, narrow.kernel.plan.kernel_name);
}

} // namespace
} // namespace tcjit::codegen::test
