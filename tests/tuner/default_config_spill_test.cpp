// No spills, ever, by default: the cubin the runtime ships for the default config (and its
// fallbacks, engine::find_or_compile_kernel) has zero spill bytes and zero stack, over misaligned
// sizes, every activation, every dtype, every A/B layout and every arch tcjit targets. The full
// cross product is ~4,800 compiles; each (dtype, arch) test takes the 4 layouts and rotates the
// sizes and activations through them so that every value of every dimension is compiled.
#include "compiler/dsl/parser.h"
#include "compiler/spec/problem_key.h"
#include "engine/kernel_cache.h"
#include "tests/common/test_names.h"
#include "tuner/chosen_configs.h"

#include <gtest/gtest.h>

#include <iterator>
#include <string>
#include <tuple>

namespace tcjit::tuner {
namespace {

struct DtypeCase {
  const char *name;
  const char *a, *b; // element types ("f16"); layouts are added per case
  const char *rest;  // c, acc, math
};

constexpr DtypeCase kDtypes[] = {
    {"f16", "f16", "f16", "c=f16:row acc=f32"},
    {"bf16", "bf16", "bf16", "c=bf16:col acc=f32"},
    {"tf32", "f32", "f32", "c=f32:row acc=f32 math=tf32"},
    {"s8", "s8", "s8", "c=s8:row acc=s32"},
    {"f64", "f64", "f64", "c=f64:row acc=f64"},
    {"f32_simt", "f32", "f32", "c=f32:row acc=f32 math=f32"},
};
constexpr const char *kArchs[] = {"sm_80", "sm_86", "sm_89", "sm_90"};
constexpr int kSizes[] = {1, 7, 31, 127, 129, 1000};
constexpr const char *kActs[] = {"none", "relu",      "tanh",     "sigmoid", "elu",
                                 "gelu", "gelu_tanh", "softplus", "swish"};
constexpr const char *kLayouts[][2] = {
    {"row", "col"}, {"col", "row"}, {"row", "row"}, {"col", "col"}};

class DefaultConfigSpill : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(DefaultConfigSpill, ShippedCubinHasNoSpillAndNoStack) {
  const auto [d, arch_index] = GetParam();
  const DtypeCase &dt = kDtypes[d];
  const std::string arch = kArchs[arch_index];
  for (int l = 0; l < 4; ++l) {
    // rotate sizes and activations with the dtype, arch and layout
    const int r = d * 7 + arch_index * 3 + l;
    const int m = kSizes[r % 6], n = kSizes[(r + 2) % 6], k = kSizes[(r + 4) % 6];
    const std::string act = kActs[r % 9];
    const std::string text = "gemm m=" + std::to_string(m) + " n=" + std::to_string(n) +
                             " k=" + std::to_string(k) + " a=" + dt.a + ":" + kLayouts[l][0] +
                             " b=" + dt.b + ":" + kLayouts[l][1] + " " + dt.rest + " act=" + act +
                             " bias=col beta=1";
    SCOPED_TRACE(text + " on " + arch);
    const ParseResult parsed = parse_spec(text);
    ASSERT_TRUE(parsed.ok() && parsed.entries.size() == 1);
    const OpSpec &spec = parsed.entries.front().spec;
    engine::KernelRequest request;
    request.arch = arch;
    const ProblemKey key = make_problem_key(spec, arch, false);
    const engine::ServedKernel src = serve_kernel(spec, key, request, nullptr);
    ASSERT_TRUE(src.ok()) << (src.errors.empty() ? "" : src.errors.front());
    ASSERT_FALSE(src.cubin.empty()) << src.how;
    EXPECT_GT(src.resources.registers, 0) << src.how;
    EXPECT_LE(src.resources.registers, 255) << src.how;
    EXPECT_EQ(src.resources.spill_bytes, 0) << src.how;
    EXPECT_EQ(src.resources.stack_bytes, 0) << src.how;
    EXPECT_TRUE(src.warnings.empty()) << src.warnings.front();
  }
}

INSTANTIATE_TEST_SUITE_P(DtypesByArch, DefaultConfigSpill,
                         ::testing::Combine(::testing::Range(0, 6), ::testing::Range(0, 4)),
                         [](const auto &info) {
                           return std::string(kDtypes[std::get<0>(info.param)].name) + "_" +
                                  kArchs[std::get<1>(info.param)];
                         });

// Convolutions: the default config of real layer shapes (ResNet-50 at batch 32, the C = 3 stem,
// depthwise 3x3/5x5/7x7, strided dgrad, wgrad, conv3d, grouped), every pass and dtype.
constexpr const char *kConvs[] = {
    "conv2d n=32 h=224 w=224 c=3 k=64 r=7 s=7 pad=3 stride=2 x=f16 acc=f32 act=relu bias=col",
    "conv2d n=32 h=56 w=56 c=64 k=64 r=3 s=3 pad=1 x=f16 acc=f32 act=relu bias=col beta=1",
    "conv2d n=32 h=56 w=56 c=256 k=128 r=1 s=1 stride=2 x=bf16 acc=f32",
    "conv2d n=32 h=28 w=28 c=128 k=128 r=3 s=3 pad=1 pass=dgrad x=f16 acc=f32",
    "conv2d n=32 h=56 w=56 c=64 k=128 r=3 s=3 pad=1 stride=2 pass=dgrad x=f16 acc=f32",
    "conv2d n=32 h=14 w=14 c=256 k=256 r=3 s=3 pad=1 pass=wgrad x=f16 acc=f32",
    "conv2d n=32 h=7 w=7 c=512 k=512 r=3 s=3 pad=1 x=f32 acc=f32 math=tf32 act=gelu",
    "conv2d n=32 h=28 w=28 c=128 k=128 r=3 s=3 pad=1 x=s8 acc=s32 alpha=0.02",
    "conv2d n=8 h=28 w=28 c=64 k=64 r=3 s=3 pad=1 x=f64 acc=f64",
    "conv2d n=32 h=56 w=56 c=128 k=128 r=3 s=3 pad=1 groups=32 x=f16 acc=f32 bias=col",
    "conv2d n=32 h=112 w=112 c=32 k=32 r=3 s=3 pad=1 groups=32 x=f16 acc=f32 act=swish bias=col",
    "conv2d n=32 h=28 w=28 c=240 k=240 r=5 s=5 pad=2 groups=240 x=bf16 acc=f32",
    "conv2d n=32 h=14 w=14 c=384 k=384 r=7 s=7 pad=3 groups=384 pass=dgrad x=f16 acc=f32",
    "conv2d n=32 h=56 w=56 c=32 k=32 r=3 s=3 pad=1 groups=32 pass=wgrad x=f16 acc=f32",
    "conv2d n=32 h=56 w=56 c=7 k=256 r=3 s=3 pad=1 x=f16 acc=f32",
    "conv3d n=4 d=16 h=56 w=56 c=64 k=64 t=3 r=3 s=3 pad=1 x=f16 acc=f32",
    "conv3d n=4 d=16 h=28 w=28 c=64 k=64 t=3 r=3 s=3 pad=1 stride=2 pass=dgrad x=bf16 acc=f32",
};

class DefaultConvConfigSpill : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(DefaultConvConfigSpill, ShippedCubinHasNoSpillAndNoStack) {
  const auto [c, arch_index] = GetParam();
  const std::string text = kConvs[c];
  const std::string arch = arch_index == 0 ? "sm_80" : "sm_90";
  SCOPED_TRACE(text + " on " + arch);
  const ParseResult parsed = parse_spec(text);
  ASSERT_TRUE(parsed.ok() && parsed.entries.size() == 1);
  const OpSpec &spec = parsed.entries.front().spec;
  engine::KernelRequest request;
  request.arch = arch;
  const engine::ServedKernel src =
      serve_kernel(spec, make_problem_key(spec, arch, false), request, nullptr);
  ASSERT_TRUE(src.ok()) << (src.errors.empty() ? "" : src.errors.front());
  ASSERT_FALSE(src.cubin.empty()) << src.how;
  EXPECT_LE(src.resources.registers, 255) << src.how;
  EXPECT_EQ(src.resources.spill_bytes, 0) << src.how;
  EXPECT_EQ(src.resources.stack_bytes, 0) << src.how;
  EXPECT_TRUE(src.warnings.empty()) << src.warnings.front();
  // The code generator's own default (what `tcjit compile` prints without --config) too.
  engine::KernelRequest as_default = request;
  as_default.config = codegen::default_tile_config(spec, arch, false);
  const engine::ServedKernel own =
      serve_kernel(spec, make_problem_key(spec, arch, false), as_default, nullptr);
  ASSERT_TRUE(own.ok()) << (own.errors.empty() ? "" : own.errors.front());
  EXPECT_EQ(own.resources.spill_bytes, 0) << own.how;
  EXPECT_EQ(own.resources.stack_bytes, 0) << own.how;
}

INSTANTIATE_TEST_SUITE_P(Layers, DefaultConvConfigSpill,
                         ::testing::Combine(::testing::Range(0, int(std::size(kConvs))),
                                            ::testing::Range(0, 2)),
                         [](const auto &info) {
                           return ::tcjit::test::test_name(kConvs[std::get<0>(info.param)]) +
                                  (std::get<1>(info.param) == 0 ? "_sm_80" : "_sm_90");
                         });

} // namespace
} // namespace tcjit::tuner
