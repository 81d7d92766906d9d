// The eight example lines of the language parse to exactly these OpSpecs.
#include "dsl_test_util.h"

#include "compiler/spec/validate.h"

#include <cmath>

namespace tcjit {
namespace {

OpSpec gemm_spec(Dim m, Dim n, Dim k, MatrixOperand a, MatrixOperand b, MatrixOperand c,
                 DType acc) {
  OpSpec s;
  s.kind = OpKind::gemm;
  s.gemm.m = m;
  s.gemm.n = n;
  s.gemm.k = k;
  s.gemm.a = a;
  s.gemm.b = b;
  s.gemm.c = c;
  s.acc = acc;
  return s;
}

MatrixOperand op(DType t, MatrixLayout l) {
  return MatrixOperand{t, l, std::nullopt};
}

Dim fixed(int64_t v) {
  return Dim::fixed_size(v);
}

TEST(Examples, SquareHalfGemm) {
  const OpSpec expected =
      gemm_spec(fixed(4096), fixed(4096), fixed(4096), op(DType::f16, MatrixLayout::row),
                op(DType::f16, MatrixLayout::col), op(DType::f16, MatrixLayout::row), DType::f32);
  EXPECT_EQ(TCJIT_PARSE_ONE("gemm m=4096 n=4096 k=4096 a=f16:row b=f16:col c=f16:row acc=f32"),
            expected);
}

TEST(Examples, Bf16GemmWithEpilogue) {
  OpSpec expected =
      gemm_spec(fixed(1024), fixed(1000), fixed(2048), op(DType::bf16, MatrixLayout::row),
                op(DType::bf16, MatrixLayout::row), op(DType::f32, MatrixLayout::row), DType::f32);
  expected.epilogue = Epilogue{1.0, 1.0, BiasKind::col, Activation::gelu, {}};
  EXPECT_EQ(TCJIT_PARSE_ONE("gemm m=1024 n=1000 k=2048 a=bf16:row b=bf16:row c=f32:row acc=f32 "
                            "alpha=1 beta=1 bias=col act=gelu"),
            expected);
}

TEST(Examples, SymbolicBatchedTf32Gemm) {
  OpSpec expected =
      gemm_spec(Dim::any_size(), fixed(4096), fixed(4096), op(DType::f32, MatrixLayout::row),
                op(DType::f32, MatrixLayout::col), op(DType::f32, MatrixLayout::row), DType::f32);
  expected.gemm.batch = fixed(8);
  expected.math = MathMode::tf32;
  EXPECT_EQ(TCJIT_PARSE_ONE("gemm m=? n=4096 k=4096 batch=8 a=f32:row b=f32:col c=f32:row "
                            "acc=f32 math=tf32"),
            expected);
}

TEST(Examples, Int8Gemm) {
  const OpSpec expected =
      gemm_spec(fixed(512), fixed(512), fixed(512), op(DType::s8, MatrixLayout::row),
                op(DType::s8, MatrixLayout::col), op(DType::s32, MatrixLayout::row), DType::s32);
  EXPECT_EQ(TCJIT_PARSE_ONE("gemm m=512 n=512 k=512 a=s8:row b=s8:col c=s32:row acc=s32"),
            expected);
}

TEST(Examples, DoubleGemm) {
  const OpSpec expected =
      gemm_spec(fixed(256), fixed(256), fixed(256), op(DType::f64, MatrixLayout::row),
                op(DType::f64, MatrixLayout::row), op(DType::f64, MatrixLayout::row), DType::f64);
  EXPECT_EQ(TCJIT_PARSE_ONE("gemm m=256 n=256 k=256 a=f64:row b=f64:row c=f64:row acc=f64"),
            expected);
}

OpSpec conv2d_f16(int64_t n, int64_t hw, int64_t c, int64_t k) {
  OpSpec s;
  s.kind = OpKind::conv2d;
  s.conv.n = fixed(n);
  s.conv.h = s.conv.w = hw;
  s.conv.c = c;
  s.conv.k = k;
  s.conv.r = s.conv.s = 3;
  s.conv.pad = {0, 1, 1};
  s.conv.x = TensorOperand{DType::f16, TensorLayout::nhwc};
  s.conv.filter = TensorOperand{DType::f16, TensorLayout::krsc};
  s.conv.y = TensorOperand{DType::f16, TensorLayout::nhwc};
  s.acc = DType::f32;
  return s;
}

TEST(Examples, Conv2dFprop) {
  OpSpec expected = conv2d_f16(32, 56, 64, 64);
  expected.epilogue.act = Activation::relu;
  EXPECT_EQ(TCJIT_PARSE_ONE("conv2d n=32 h=56 w=56 c=64 k=64 r=3 s=3 pad=1 stride=1 dilation=1 "
                            "groups=1 x=f16:nhwc filter=f16:krsc y=f16:nhwc acc=f32 act=relu "
                            "pass=fprop"),
            expected);
}

TEST(Examples, DepthwiseConv2d) {
  OpSpec expected = conv2d_f16(8, 28, 128, 128);
  expected.conv.groups = 128;
  const OpSpec parsed = TCJIT_PARSE_ONE("conv2d n=8 h=28 w=28 c=128 k=128 r=3 s=3 pad=1 "
                                        "groups=128 x=f16:nhwc filter=f16:krsc y=f16:nhwc "
                                        "acc=f32");
  EXPECT_EQ(parsed, expected);
  // conv2d keeps the depth entries at their neutral values.
  EXPECT_EQ(parsed.conv.d, 1);
  EXPECT_EQ(parsed.conv.t, 1);
  EXPECT_EQ(parsed.conv.pad[0], 0);
  EXPECT_EQ(parsed.conv.stride[0], 1);
  EXPECT_EQ(parsed.conv.dilation[0], 1);
}

TEST(Examples, Conv3dDgrad) {
  OpSpec expected;
  expected.kind = OpKind::conv3d;
  ConvSpec &c = expected.conv;
  c.n = fixed(2);
  c.d = 16;
  c.h = 32;
  c.w = 32;
  c.c = 32;
  c.k = 64;
  c.t = c.r = c.s = 3;
  c.pad = {1, 1, 1};
  c.pass = ConvPass::dgrad;
  c.x = TensorOperand{DType::bf16, TensorLayout::ndhwc};
  c.filter = TensorOperand{DType::bf16, TensorLayout::ktrsc};
  c.y = TensorOperand{DType::bf16, TensorLayout::ndhwc};
  expected.acc = DType::f32;
  EXPECT_EQ(TCJIT_PARSE_ONE("conv3d n=2 d=16 h=32 w=32 c=32 k=64 t=3 r=3 s=3 pad=1 "
                            "x=bf16:ndhwc filter=bf16:ktrsc y=bf16:ndhwc acc=f32 pass=dgrad"),
            expected);
}

// --- defaults -----------------------------------------------------------------------------------

TEST(Defaults, GemmOperandsAndAccumulator) {
  const OpSpec half = TCJIT_PARSE_ONE("gemm m=64 n=64 k=64 a=f16 b=f16");
  EXPECT_EQ(half.gemm.a, op(DType::f16, MatrixLayout::row));
  EXPECT_EQ(half.gemm.b, op(DType::f16, MatrixLayout::row));
  EXPECT_EQ(half.gemm.c, op(DType::f16, MatrixLayout::row));
  EXPECT_EQ(half.gemm.batch, fixed(1));
  EXPECT_EQ(half.acc, DType::f32);
  EXPECT_EQ(half.math, MathMode::automatic);
  EXPECT_EQ(half.epilogue, Epilogue{});

  EXPECT_EQ(TCJIT_PARSE_ONE("gemm m=1 n=1 k=1 a=bf16 b=bf16").gemm.c.dtype, DType::bf16);
  EXPECT_EQ(TCJIT_PARSE_ONE("gemm m=1 n=1 k=1 a=tf32 b=tf32").gemm.c.dtype, DType::f32);
  EXPECT_EQ(TCJIT_PARSE_ONE("gemm m=1 n=1 k=1 a=tf32 b=tf32").acc, DType::f32);
  EXPECT_EQ(TCJIT_PARSE_ONE("gemm m=1 n=1 k=1 a=f64 b=f64").acc, DType::f64);
  const OpSpec int8 = TCJIT_PARSE_ONE("gemm m=1 n=1 k=1 a=u8 b=u8");
  EXPECT_EQ(int8.gemm.c.dtype, DType::s32);
  EXPECT_EQ(int8.acc, DType::s32);
}

TEST(Defaults, ConvTensorsFollowX) {
  const OpSpec nchw = TCJIT_PARSE_ONE("conv2d n=1 h=8 w=8 c=4 k=4 r=3 s=3 x=bf16:nchw");
  EXPECT_EQ(nchw.conv.filter, (TensorOperand{DType::bf16, TensorLayout::krsc}));
  EXPECT_EQ(nchw.conv.y, (TensorOperand{DType::bf16, TensorLayout::nchw}));
  EXPECT_EQ(nchw.conv.pad, (std::array<int64_t, 3>{0, 0, 0}));
  EXPECT_EQ(nchw.conv.stride, (std::array<int64_t, 3>{1, 1, 1}));
  EXPECT_EQ(nchw.conv.groups, 1);
  EXPECT_EQ(nchw.conv.pass, ConvPass::fprop);
  EXPECT_EQ(nchw.acc, DType::f32);

  const OpSpec three_d = TCJIT_PARSE_ONE("conv3d n=1 d=4 h=8 w=8 c=4 k=4 t=1 r=3 s=3 x=f16");
  EXPECT_EQ(three_d.conv.x.layout, TensorLayout::ndhwc);
  EXPECT_EQ(three_d.conv.filter.layout, TensorLayout::ktrsc);
  EXPECT_EQ(three_d.conv.y.layout, TensorLayout::ndhwc);

  // An output tensor takes x's dtype only where that is a valid output: tf32 -> f32, u8 -> s32.
  EXPECT_EQ(TCJIT_PARSE_ONE("conv2d n=1 h=8 w=8 c=4 k=4 r=3 s=3 x=tf32").conv.y.dtype, DType::f32);
  EXPECT_EQ(TCJIT_PARSE_ONE("conv2d n=1 h=8 w=8 c=4 k=4 r=3 s=3 x=s8").conv.y.dtype, DType::s8);
  EXPECT_EQ(TCJIT_PARSE_ONE("conv2d n=1 h=8 w=8 c=4 k=4 r=3 s=3 x=u8").conv.y.dtype, DType::s32);
  const OpSpec wgrad = TCJIT_PARSE_ONE("conv2d n=1 h=8 w=8 c=4 k=4 r=3 s=3 x=tf32 pass=wgrad");
  EXPECT_EQ(wgrad.conv.y.dtype, DType::tf32);
  EXPECT_EQ(wgrad.conv.filter.dtype, DType::f32);
}

TEST(Defaults, PerDimensionLists) {
  const OpSpec two_d =
      TCJIT_PARSE_ONE("conv2d n=1 h=8 w=8 c=4 k=4 r=3 s=1 pad=1,0 stride=2,1 dilation=1,2 x=f16");
  EXPECT_EQ(two_d.conv.pad, (std::array<int64_t, 3>{0, 1, 0}));
  EXPECT_EQ(two_d.conv.stride, (std::array<int64_t, 3>{1, 2, 1}));
  EXPECT_EQ(two_d.conv.dilation, (std::array<int64_t, 3>{1, 1, 2}));
  const OpSpec three_d = TCJIT_PARSE_ONE(
      "conv3d n=1 d=8 h=8 w=8 c=4 k=4 t=3 r=3 s=3 pad=0,1,2 stride=2 dilation=1,1,2 x=f16");
  EXPECT_EQ(three_d.conv.pad, (std::array<int64_t, 3>{0, 1, 2}));
  EXPECT_EQ(three_d.conv.stride, (std::array<int64_t, 3>{2, 2, 2}));
  EXPECT_EQ(three_d.conv.dilation, (std::array<int64_t, 3>{1, 1, 2}));
}

TEST(Values, SymbolicDimsAndLeadingDimensions) {
  const OpSpec s =
      TCJIT_PARSE_ONE("gemm m=1..8192 n=? k=64 batch=2..4 a=f16:col b=f16 lda=8192 ldb=80 ldc=128");
  EXPECT_EQ(s.gemm.m, Dim::range_of(1, 8192));
  EXPECT_EQ(s.gemm.n, Dim::any_size());
  EXPECT_EQ(s.gemm.batch, Dim::range_of(2, 4));
  EXPECT_EQ(s.gemm.a.ld, 8192);
  EXPECT_EQ(s.gemm.b.ld, 80);
  EXPECT_EQ(s.gemm.c.ld, 128);
  const OpSpec conv = TCJIT_PARSE_ONE("conv2d n=1..64 h=8 w=8 c=4 k=4 r=3 s=3 x=f16");
  EXPECT_EQ(conv.conv.n, Dim::range_of(1, 64));
}

TEST(Values, DoublesAndWords) {
  const OpSpec s =
      TCJIT_PARSE_ONE("gemm m=1 n=1 k=1 a=f16 b=f16 alpha=0.5 beta=-2e-3 bias=row act=gelu_tanh");
  EXPECT_EQ(s.epilogue.alpha, 0.5);
  EXPECT_EQ(s.epilogue.beta, -2e-3);
  EXPECT_EQ(s.epilogue.bias, BiasKind::row);
  EXPECT_EQ(s.epilogue.act, Activation::gelu_tanh);
  // -0 reads as 0, so that equal specs print alike.
  EXPECT_FALSE(std::signbit(TCJIT_PARSE_ONE("gemm m=1 n=1 k=1 a=f16 b=f16 beta=-0").epilogue.beta));
  for (const std::string_view act :
       {"none", "relu", "tanh", "sigmoid", "elu", "gelu", "gelu_tanh", "softplus", "swish"}) {
    const OpSpec with_act = TCJIT_PARSE_ONE("gemm m=1 n=1 k=1 a=f16 b=f16 act=" + std::string(act));
    EXPECT_EQ(to_string(with_act.epilogue.act), act);
  }
  EXPECT_EQ(TCJIT_PARSE_ONE("gemm m=1 n=1 k=1 a=f32 b=f32 math=f32").math, MathMode::f32);
  EXPECT_EQ(TCJIT_PARSE_ONE("gemm m=1 n=1 k=1 a=f32 b=f32 math=auto").math, MathMode::automatic);
  EXPECT_EQ(TCJIT_PARSE_ONE("gemm m=1 n=1 k=1 a=tf32 b=tf32 math=tf32").math, MathMode::tf32);
  EXPECT_EQ(TCJIT_PARSE_ONE("conv2d n=1 h=8 w=8 c=4 k=4 r=3 s=3 x=f16 pass=wgrad").conv.pass,
            ConvPass::wgrad);
}

TEST(Values, KeysInAnyOrderGiveTheSameSpec) {
  EXPECT_EQ(TCJIT_PARSE_ONE("gemm a=f16:row acc=f32 k=64 b=f16:col m=128 n=256"),
            TCJIT_PARSE_ONE("gemm m=128 n=256 k=64 a=f16:row b=f16:col acc=f32"));
}

} // namespace
} // namespace tcjit
