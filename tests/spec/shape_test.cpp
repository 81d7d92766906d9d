#include "compiler/spec/shape.h"

#include "spec_test_util.h"

#include <gtest/gtest.h>

namespace tcjit {
namespace {

using testing::spec_of;

TEST(ConvOutputDims, FollowsTheCudnnFormula) {
  ConvSpec c;
  c.h = 56;
  c.w = 56;
  c.r = 3;
  c.s = 3;
  c.pad = {0, 1, 1};
  EXPECT_EQ(conv_output_dims(c).p, 56); // (56 + 2 - 2 - 1) / 1 + 1
  EXPECT_EQ(conv_output_dims(c).q, 56);
  c.stride = {1, 2, 2};
  EXPECT_EQ(conv_output_dims(c).p, 28); // (56 + 2 - 2 - 1) / 2 + 1 = 27 + 1
  c.dilation = {1, 2, 3};
  c.stride = {1, 1, 1};
  EXPECT_EQ(conv_output_dims(c).p, 54); // (56 + 2 - 4 - 1) + 1
  EXPECT_EQ(conv_output_dims(c).q, 52); // (56 + 2 - 6 - 1) + 1
  c.h = 1;
  c.pad = {0, 0, 0};
  c.dilation = {1, 1, 1};
  EXPECT_EQ(conv_output_dims(c).p, 0); // a 3-tall filter does not fit 1 row
}

TEST(ImplicitGemm, GemmIsItself) {
  const OpSpec s = spec_of("gemm m=100 n=200 k=300 batch=4 a=f16 b=f16");
  const ImplicitGemm g = implicit_gemm(s);
  EXPECT_EQ(g.m, Dim::fixed_size(100));
  EXPECT_EQ(g.n, Dim::fixed_size(200));
  EXPECT_EQ(g.k, Dim::fixed_size(300));
  EXPECT_EQ(g.batch, Dim::fixed_size(4));
  EXPECT_EQ(flop_count(s).value(), 2.0 * 100 * 200 * 300 * 4);
}

TEST(ImplicitGemm, ConvFprop) {
  const OpSpec s = spec_of("conv2d n=32 h=56 w=56 c=64 k=64 r=3 s=3 pad=1 x=f16:nhwc");
  const ImplicitGemm g = implicit_gemm(s);
  EXPECT_EQ(g.m, Dim::fixed_size(32 * 56 * 56));
  EXPECT_EQ(g.n, Dim::fixed_size(64));
  EXPECT_EQ(g.k, Dim::fixed_size(3 * 3 * 64));
  EXPECT_EQ(g.groups, 1);
}

TEST(ImplicitGemm, Conv3dDgradAndWgrad) {
  const std::string base = "conv3d n=2 d=16 h=32 w=32 c=32 k=64 t=3 r=3 s=3 pad=1 x=bf16:ndhwc ";
  const ImplicitGemm d = implicit_gemm(spec_of(base + "pass=dgrad"));
  EXPECT_EQ(d.m, Dim::fixed_size(2 * 16 * 32 * 32));
  EXPECT_EQ(d.n, Dim::fixed_size(32));
  EXPECT_EQ(d.k, Dim::fixed_size(27 * 64));
  const ImplicitGemm w = implicit_gemm(spec_of(base + "pass=wgrad"));
  EXPECT_EQ(w.m, Dim::fixed_size(64));
  EXPECT_EQ(w.n, Dim::fixed_size(27 * 32));
  EXPECT_EQ(w.k, Dim::fixed_size(2 * 16 * 32 * 32));
}

TEST(ImplicitGemm, GroupedConvDividesChannels) {
  const OpSpec s = spec_of("conv2d n=8 h=28 w=28 c=128 k=128 r=3 s=3 pad=1 groups=128 x=f16");
  const ImplicitGemm g = implicit_gemm(s);
  EXPECT_EQ(g.groups, 128);
  EXPECT_EQ(g.n, Dim::fixed_size(1));
  EXPECT_EQ(g.k, Dim::fixed_size(9));
  EXPECT_EQ(flop_count(s).value(), 2.0 * (8 * 28 * 28) * 1 * 9 * 128);
}

TEST(ImplicitGemm, SymbolicBatchStaysSymbolic) {
  const OpSpec s = spec_of("conv2d n=? h=8 w=8 c=32 k=32 r=1 s=1 x=f16");
  EXPECT_EQ(implicit_gemm(s).m.kind, Dim::Kind::any);
  EXPECT_FALSE(is_concrete(s));
  EXPECT_FALSE(flop_count(s).has_value());
  const OpSpec r = spec_of("gemm m=1..8192 n=64 k=64 a=f16 b=f16");
  EXPECT_EQ(implicit_gemm(r).m, Dim::range_of(1, 8192));
}

TEST(OperandSizes, HonourLeadingDimensionsAndBatch) {
  const OpSpec s = spec_of("gemm m=3 n=5 k=7 batch=2 a=f32:col b=f32:row lda=4 bias=row");
  const OperandSizes z = operand_sizes(s);
  EXPECT_EQ(z.a, 2 * 7 * 4); // col-major 3x7 with lda 4: 7 columns of 4
  EXPECT_EQ(z.b, 2 * 7 * 5);
  EXPECT_EQ(z.c, 2 * 3 * 5);
  EXPECT_EQ(z.bias, 3);
}

TEST(MinBytes, CountsEachOperandOnce) {
  const OpSpec s = spec_of("gemm m=64 n=32 k=16 a=f16 b=f16 c=f32");
  EXPECT_EQ(min_bytes(s).value(), 64 * 16 * 2 + 16 * 32 * 2 + 64 * 32 * 4);
  const OpSpec beta = spec_of("gemm m=64 n=32 k=16 a=f16 b=f16 c=f32 beta=1");
  EXPECT_EQ(min_bytes(beta).value(), 64 * 16 * 2 + 16 * 32 * 2 + 2 * 64 * 32 * 4);
}

} // namespace
} // namespace tcjit
