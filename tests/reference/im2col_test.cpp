#include "compiler/reference/im2col.h"

#include "compiler/reference/conv_reference.h"
#include "compiler/reference/output_layout.h"
#include "compiler/reference/random_fill.h"

#include "reference_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace tcjit {
namespace {

using testing::Buffer;
using testing::conv_spec;
using testing::ConvShape;

struct NamedShape {
  std::string name;
  ConvShape shape;
  bool three_d;
  TensorLayout activations, filter;
};

std::vector<NamedShape> shapes() {
  std::vector<NamedShape> all;
  ConvShape a; // 2-D nhwc: stride, padding, dilation and two groups at once
  a.n = 2, a.h = 7, a.w = 6, a.c = 4, a.k = 6, a.r = 3, a.s = 2;
  a.pad = {0, 1, 1}, a.stride = {1, 2, 1}, a.dilation = {1, 1, 2}, a.groups = 2;
  all.push_back({"2d nhwc groups 2", a, false, TensorLayout::nhwc, TensorLayout::krsc});
  ConvShape b; // 2-D nchw depthwise
  b.n = 1, b.h = 5, b.w = 5, b.c = 3, b.k = 3, b.r = 3, b.s = 3, b.groups = 3;
  b.pad = {0, 1, 1};
  all.push_back({"2d nchw depthwise", b, false, TensorLayout::nchw, TensorLayout::kcrs});
  ConvShape c; // 2-D nhwc, stride 2 with a 5x5 filter and padding 2: uneven dgrad coverage
  c.n = 1, c.h = 9, c.w = 8, c.c = 3, c.k = 5, c.r = 5, c.s = 5;
  c.pad = {0, 2, 2}, c.stride = {1, 2, 2};
  all.push_back({"2d nhwc stride 2", c, false, TensorLayout::nhwc, TensorLayout::krsc});
  ConvShape d; // 3-D ndhwc
  d.n = 1, d.d = 4, d.h = 4, d.w = 3, d.c = 2, d.k = 4, d.t = 2, d.r = 2, d.s = 3;
  d.pad = {1, 0, 1}, d.stride = {2, 1, 1}, d.dilation = {1, 2, 1};
  all.push_back({"3d ndhwc", d, true, TensorLayout::ndhwc, TensorLayout::ktrsc});
  ConvShape e; // 3-D ncdhw with groups
  e.n = 2, e.d = 3, e.h = 3, e.w = 3, e.c = 4, e.k = 2, e.t = 3, e.r = 1, e.s = 2;
  e.pad = {1, 1, 0}, e.stride = {1, 2, 2}, e.groups = 2;
  all.push_back({"3d ncdhw groups 2", e, true, TensorLayout::ncdhw, TensorLayout::kctrs});
  return all;
}

struct Tensors {
  Buffer x, filter, y, bias;
};

Tensors random_tensors(const OpSpec &spec, uint64_t seed) {
  const OutputLayout y_layout = [&] {
    OpSpec fprop = spec;
    fprop.conv.pass = ConvPass::fprop;
    fprop.epilogue = {};
    return output_layout(fprop);
  }();
  const ConvSpec &c = spec.conv;
  Tensors t{Buffer(c.x.dtype, c.n.value * c.d * c.h * c.w * c.c),
            Buffer(c.filter.dtype, c.k * c.t * c.r * c.s * (c.c / c.groups)),
            Buffer(c.y.dtype, y_layout.count), Buffer(output_dtype(spec), std::max(c.c, c.k))};
  fill_random(c.x.dtype, t.x.data(), t.x.size(), seed);
  fill_random(c.filter.dtype, t.filter.data(), t.filter.size(), seed + 1);
  fill_random(c.y.dtype, t.y.data(), t.y.size(), seed + 2);
  fill_random(output_dtype(spec), t.bias.data(), t.bias.size(), seed + 3);
  return t;
}

void expect_direct_equals_im2col(const OpSpec &spec, MathMode math, const std::string &what) {
  Tensors direct = random_tensors(spec, 100);
  Tensors lowered = direct;
  const ReferenceResult d = reference_conv(
      spec, {direct.x.data(), direct.filter.data(), direct.y.data(), direct.bias.data()}, math);
  const ReferenceResult l = reference_conv_via_im2col(
      spec, {lowered.x.data(), lowered.filter.data(), lowered.y.data(), lowered.bias.data()}, math);
  ASSERT_EQ(d.values.size(), l.values.size()) << what;
  EXPECT_EQ(d.accumulators, l.accumulators) << what; // bit-identical f64 sums
  EXPECT_EQ(d.magnitudes, l.magnitudes) << what;
  EXPECT_EQ(d.values, l.values) << what;
  EXPECT_EQ(direct.x.bytes, lowered.x.bytes) << what;
  EXPECT_EQ(direct.filter.bytes, lowered.filter.bytes) << what;
  EXPECT_EQ(direct.y.bytes, lowered.y.bytes) << what;
  double sum_abs = 0;
  for (const double v : d.accumulators)
    sum_abs += std::fabs(v);
  EXPECT_GT(sum_abs, 0) << what; // the comparison is not vacuous
}

TEST(Im2col, DirectConvEqualsTheIm2colGemmForEveryPass) {
  for (const NamedShape &s : shapes())
    for (const ConvPass pass : {ConvPass::fprop, ConvPass::dgrad, ConvPass::wgrad}) {
      const OpSpec spec = conv_spec(s.shape, pass, DType::f16, s.activations, s.filter, s.three_d);
      expect_direct_equals_im2col(spec, MathMode::f32, s.name + " " + std::string(to_string(pass)));
    }
}

TEST(Im2col, EqualWithTheFullEpilogueAndTf32Inputs) {
  for (const NamedShape &s : shapes())
    for (const ConvPass pass : {ConvPass::fprop, ConvPass::dgrad, ConvPass::wgrad}) {
      OpSpec spec = conv_spec(s.shape, pass, DType::f32, s.activations, s.filter, s.three_d);
      spec.epilogue = {0.5, 0.25, BiasKind::col, Activation::gelu, {}};
      expect_direct_equals_im2col(spec, MathMode::tf32,
                                  s.name + " " + std::string(to_string(pass)) + " epilogue");
    }
}

TEST(Im2col, LoweredGemmHasTheImplicitGemmShape) {
  const NamedShape s = shapes()[0]; // n 2, 7x6 -> 4x6 output, c 4, k 6, 3x2 filter, groups 2
  const OpSpec fprop = conv_spec(s.shape, ConvPass::fprop, DType::f16, s.activations, s.filter);
  Tensors t = random_tensors(fprop, 1);
  const ConvBuffers buffers{t.x.data(), t.filter.data(), t.y.data(), nullptr};
  const Im2colGemm f = lower_conv_to_gemm(fprop, buffers, MathMode::f32);
  EXPECT_EQ(f.gemm.gemm.batch, Dim::fixed_size(2)); // one GEMM per group
  EXPECT_EQ(f.gemm.gemm.m, Dim::fixed_size(2 * 4 * 6));
  EXPECT_EQ(f.gemm.gemm.n, Dim::fixed_size(3));
  EXPECT_EQ(f.gemm.gemm.k, Dim::fixed_size(3 * 2 * 2));
  EXPECT_EQ(f.a.size(), size_t(2 * 48 * 12));
  OpSpec dgrad = fprop;
  dgrad.conv.pass = ConvPass::dgrad;
  const Im2colGemm d = lower_conv_to_gemm(dgrad, buffers, MathMode::f32);
  EXPECT_EQ(d.gemm.gemm.m, Dim::fixed_size(2 * 7 * 6));
  EXPECT_EQ(d.gemm.gemm.n, Dim::fixed_size(2));
  EXPECT_EQ(d.gemm.gemm.k, Dim::fixed_size(3 * 2 * 3));
  OpSpec wgrad = fprop;
  wgrad.conv.pass = ConvPass::wgrad;
  const Im2colGemm w = lower_conv_to_gemm(wgrad, buffers, MathMode::f32);
  EXPECT_EQ(w.gemm.gemm.m, Dim::fixed_size(3));
  EXPECT_EQ(w.gemm.gemm.n, Dim::fixed_size(3 * 2 * 2));
  EXPECT_EQ(w.gemm.gemm.k, Dim::fixed_size(2 * 4 * 6));
}

double dot(const Buffer &a, const Buffer &b) {
  double sum = 0;
  for (int64_t i = 0; i < a.size(); ++i)
    sum += a.get(i) * b.get(i);
  return sum;
}

TEST(ConvAdjoint, FpropDgradAndWgradAreConsistent) {
  // <fprop(x, w), dy> == <x, dgrad(dy, w)> == <w, wgrad(x, dy)>: every pass computes the same
  // trilinear sum over (x, w, dy) triples; only the summation order differs.
  for (const NamedShape &s : shapes()) {
    const OpSpec fprop =
        conv_spec(s.shape, ConvPass::fprop, DType::f64, s.activations, s.filter, s.three_d);
    OpSpec dgrad = fprop, wgrad = fprop;
    dgrad.conv.pass = ConvPass::dgrad;
    wgrad.conv.pass = ConvPass::wgrad;
    const Tensors t = random_tensors(fprop, 7); // t.y serves as dy
    Buffer y = t.y, dx = t.x, dw = t.filter;
    const ReferenceResult forward = reference_conv(
        fprop,
        {const_cast<void *>(t.x.data()), const_cast<void *>(t.filter.data()), y.data(), nullptr},
        MathMode::f32);
    reference_conv(
        dgrad,
        {dx.data(), const_cast<void *>(t.filter.data()), const_cast<void *>(t.y.data()), nullptr},
        MathMode::f32);
    reference_conv(
        wgrad, {const_cast<void *>(t.x.data()), dw.data(), const_cast<void *>(t.y.data()), nullptr},
        MathMode::f32);
    double scale = 0; // sum over all triples of |x w dy|: bounds the rounding differences
    for (size_t i = 0; i < forward.magnitudes.size(); ++i)
      scale += forward.magnitudes[i] * std::fabs(t.y.get(int64_t(i)));
    const double through_y = dot(y, t.y), through_x = dot(t.x, dx), through_w = dot(t.filter, dw);
    EXPECT_NEAR(through_x, through_y, 1e-13 * scale) << s.name;
    EXPECT_NEAR(through_w, through_y, 1e-13 * scale) << s.name;
    EXPECT_GT(std::fabs(through_y), 1e-3 * scale) << s.name; // not trivially zero
  }
}

} // namespace
} // namespace tcjit
