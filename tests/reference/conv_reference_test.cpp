#include "compiler/reference/conv_reference.h"

#include "compiler/reference/output_layout.h"
#include "compiler/reference/random_fill.h"

#include "reference_test_util.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace tcjit {
namespace {

using testing::Buffer;
using testing::buffer_of;
using testing::conv_spec;
using testing::ConvShape;

struct ConvRun {
  Buffer x, filter, y;
  ReferenceResult result;
};

// Runs reference_conv on f32 tensors given in the spec's layouts; the written tensor starts as
// `output_init` (or zeros).
ConvRun run_conv(const OpSpec &spec, std::vector<double> x, std::vector<double> filter,
                 std::vector<double> y, const Buffer *bias = nullptr) {
  ConvRun run{buffer_of(spec.conv.x.dtype, x),
              buffer_of(spec.conv.filter.dtype, filter),
              buffer_of(spec.conv.y.dtype, y),
              {}};
  run.result = reference_conv(
      spec, {run.x.data(), run.filter.data(), run.y.data(), bias ? bias->data() : nullptr},
      MathMode::f32);
  return run;
}

std::vector<double> values_of(const Buffer &b) {
  std::vector<double> v;
  for (int64_t i = 0; i < b.size(); ++i)
    v.push_back(b.get(i));
  return v;
}

std::vector<double> iota(int count, double first = 1) {
  std::vector<double> v;
  for (int i = 0; i < count; ++i)
    v.push_back(first + i);
  return v;
}

TEST(ConvFprop, TwoByTwoFilterOnThreeByThree) {
  // x = [1 2 3; 4 5 6; 7 8 9], filter = [1 2; 3 4]: y[0][0] = 1 + 4 + 12 + 20 = 37, ...
  ConvShape shape;
  shape.h = shape.w = 3;
  shape.r = shape.s = 2;
  const OpSpec spec = conv_spec(shape, ConvPass::fprop);
  const ConvRun run = run_conv(spec, iota(9), {1, 2, 3, 4}, std::vector<double>(4));
  EXPECT_EQ(values_of(run.y), (std::vector<double>{37, 47, 67, 77}));
  EXPECT_EQ(run.result.values, (ReferenceValues{37, 47, 67, 77}));
  EXPECT_EQ(run.result.magnitudes, (ReferenceValues{37, 47, 67, 77}));
}

TEST(ConvFprop, StrideTwoWithPadding) {
  // 4x4 input 1..16, 3x3 ones filter, pad 1, stride 2: window sums of the clipped windows.
  ConvShape shape;
  shape.h = shape.w = 4;
  shape.r = shape.s = 3;
  shape.pad = {0, 1, 1};
  shape.stride = {1, 2, 2};
  const OpSpec spec = conv_spec(shape, ConvPass::fprop);
  const ConvRun run = run_conv(spec, iota(16), std::vector<double>(9, 1.0), std::vector<double>(4));
  // rows 0-1 x cols 0-1; rows 0-1 x cols 1-3; rows 1-3 x cols 0-1; rows 1-3 x cols 1-3
  EXPECT_EQ(values_of(run.y), (std::vector<double>{14, 30, 57, 99}));
}

TEST(ConvFprop, DilationTwo) {
  // 5x5 input x[i][j] = 5i + j + 1, filter [1 2; 3 4] dilated by 2:
  // y[p][q] = x[p][q] + 2 x[p][q+2] + 3 x[p+2][q] + 4 x[p+2][q+2] = 10 x[p][q] + 82.
  ConvShape shape;
  shape.h = shape.w = 5;
  shape.r = shape.s = 2;
  shape.dilation = {1, 2, 2};
  const OpSpec spec = conv_spec(shape, ConvPass::fprop);
  const ConvRun run = run_conv(spec, iota(25), {1, 2, 3, 4}, std::vector<double>(9));
  for (int p = 0; p < 3; ++p)
    for (int q = 0; q < 3; ++q)
      EXPECT_EQ(run.y.get(p * 3 + q), 10 * (5 * p + q + 1) + 82) << p << " " << q;
}

TEST(ConvFprop, TwoGroupsInBothLayouts) {
  // c = 4, k = 2, groups = 2: k0 sees channels 0-1 with [1 1], k1 channels 2-3 with [1 -1].
  // Pixel 0 has x = [1 2 3 4], pixel 1 [5 6 7 8].
  ConvShape shape;
  shape.w = 2;
  shape.c = 4;
  shape.k = 2;
  shape.groups = 2;
  const OpSpec nhwc = conv_spec(shape, ConvPass::fprop);
  const ConvRun channels_last =
      run_conv(nhwc, {1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 1, -1}, std::vector<double>(4));
  EXPECT_EQ(values_of(channels_last.y), (std::vector<double>{3, -1, 11, -1}));
  const OpSpec nchw =
      conv_spec(shape, ConvPass::fprop, DType::f32, TensorLayout::nchw, TensorLayout::kcrs);
  const ConvRun channels_first =
      run_conv(nchw, {1, 5, 2, 6, 3, 7, 4, 8}, {1, 1, 1, -1}, std::vector<double>(4));
  EXPECT_EQ(values_of(channels_first.y), (std::vector<double>{3, 11, -1, -1}));
}

TEST(ConvFprop, EpilogueBiasPerOutputChannelAndBetaReadsY) {
  ConvShape shape;
  shape.w = 2;
  shape.c = 4;
  shape.k = 2;
  shape.groups = 2;
  OpSpec spec = conv_spec(shape, ConvPass::fprop);
  spec.epilogue = {2, 1, BiasKind::col, Activation::none, {}};
  const Buffer bias = buffer_of(DType::f32, {100, 200});
  const ConvRun run = run_conv(spec, {1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 1, -1}, {1, 1, 1, 1}, &bias);
  // 2 * [3 -1 11 -1] + 1 + bias[k]
  EXPECT_EQ(values_of(run.y), (std::vector<double>{107, 199, 123, 199}));
  // 2 sum|x||f| + |y| + |bias|: k1 of pixel 0 has sum|x||f| = 3 + 4, of pixel 1 7 + 8.
  EXPECT_EQ(run.result.magnitudes, (ReferenceValues{107, 215, 123, 231}));
}

TEST(ConvFprop, Depthwise) {
  // c = k = groups = 3 on 3x3 with 3x3 filters, pad 1. x[h][w][ch] = (3h + w + 1) + 100 ch.
  // Channel 0: identity (centre tap 1); channel 1: box sum; channel 2: centre tap -2.
  ConvShape shape;
  shape.h = shape.w = 3;
  shape.c = shape.k = shape.groups = 3;
  shape.r = shape.s = 3;
  shape.pad = {0, 1, 1};
  const OpSpec spec = conv_spec(shape, ConvPass::fprop);
  std::vector<double> x;
  for (int pixel = 0; pixel < 9; ++pixel)
    for (int ch = 0; ch < 3; ++ch)
      x.push_back(pixel + 1 + 100 * ch);
  std::vector<double> filter(27, 0.0); // [k][r][s][1]
  filter[4] = 1;
  for (int tap = 0; tap < 9; ++tap)
    filter[size_t(9 + tap)] = 1;
  filter[18 + 4] = -2;
  const ConvRun run = run_conv(spec, x, filter, std::vector<double>(27));
  auto y = [&](int h, int w, int ch) { return run.y.get((h * 3 + w) * 3 + ch); };
  for (int pixel = 0; pixel < 9; ++pixel) {
    EXPECT_EQ(y(pixel / 3, pixel % 3, 0), pixel + 1);
    EXPECT_EQ(y(pixel / 3, pixel % 3, 2), -2 * (pixel + 201));
  }
  EXPECT_EQ(y(1, 1, 1), 45 + 900);            // the full window
  EXPECT_EQ(y(0, 0, 1), 1 + 2 + 4 + 5 + 400); // the clipped corner
  EXPECT_EQ(y(0, 1, 1), 1 + 2 + 3 + 4 + 5 + 6 + 600);
}

TEST(ConvFprop, Conv3dDepthTapsStrideAndPadding) {
  // 2x2x2 input 1..8, 2x2x2 filters: k0 all ones (sum 36), k1 weighs depth t by t + 1
  // (1 * (1+2+3+4) + 2 * (5+6+7+8) = 62).
  ConvShape cube;
  cube.d = cube.h = cube.w = 2;
  cube.t = cube.r = cube.s = 2;
  cube.k = 2;
  const OpSpec spec =
      conv_spec(cube, ConvPass::fprop, DType::f32, TensorLayout::ndhwc, TensorLayout::ktrsc, true);
  const ConvRun run = run_conv(spec, iota(8), {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2},
                               std::vector<double>(2));
  EXPECT_EQ(values_of(run.y), (std::vector<double>{36, 62}));

  // Depth only: x = [1 2 3], filter [1 10], pad 1, stride 2: y[o] = x[2o-1] + 10 x[2o].
  ConvShape depth;
  depth.d = 3;
  depth.t = 2;
  depth.pad = {1, 0, 0};
  depth.stride = {2, 1, 1};
  const OpSpec strided =
      conv_spec(depth, ConvPass::fprop, DType::f32, TensorLayout::ncdhw, TensorLayout::kctrs, true);
  const ConvRun depth_run = run_conv(strided, {1, 2, 3}, {1, 10}, std::vector<double>(2));
  EXPECT_EQ(values_of(depth_run.y), (std::vector<double>{10, 32}));
}

TEST(ConvDgrad, HandComputedOneDimensional) {
  // fprop y[q] = x[q] f0 + x[q+1] f1, so dx[w] = sum_q dy[q] f[w - q].
  ConvShape shape;
  shape.w = 3;
  shape.s = 2;
  OpSpec spec = conv_spec(shape, ConvPass::dgrad);
  ConvRun run = run_conv(spec, std::vector<double>(3), {2, 3}, {1, 10});
  EXPECT_EQ(values_of(run.x), (std::vector<double>{2, 23, 30}));

  shape.w = 4; // stride 2: each dy feeds two distinct x
  shape.stride = {1, 1, 2};
  spec = conv_spec(shape, ConvPass::dgrad);
  run = run_conv(spec, std::vector<double>(4), {2, 3}, {1, 10});
  EXPECT_EQ(values_of(run.x), (std::vector<double>{2, 3, 20, 30}));

  shape.w = 3; // "same" padding: y[q] = sum_s x[q - 1 + s] f[s]
  shape.s = 3;
  shape.pad = {0, 0, 1};
  shape.stride = {1, 1, 1};
  spec = conv_spec(shape, ConvPass::dgrad);
  run = run_conv(spec, std::vector<double>(3), {1, 2, 3}, {1, 10, 100});
  EXPECT_EQ(values_of(run.x), (std::vector<double>{12, 123, 230}));
}

TEST(ConvDgrad, GroupsAndBiasPerInputChannel) {
  // c = 2, k = 4, groups = 2, 1x1: dx[c0] = dy0 f0 + dy1 f1, dx[c1] = dy2 f2 + dy3 f3.
  ConvShape shape;
  shape.c = 2;
  shape.k = 4;
  shape.groups = 2;
  OpSpec spec = conv_spec(shape, ConvPass::dgrad);
  spec.epilogue.bias = BiasKind::col;
  const Buffer bias = buffer_of(DType::f32, {0.5, -0.5});
  const ConvRun run =
      run_conv(spec, std::vector<double>(2), {1, 2, 3, 4}, {1, 10, 100, 1000}, &bias);
  EXPECT_EQ(values_of(run.x), (std::vector<double>{21.5, 4299.5}));
}

TEST(ConvWgrad, HandComputedOneDimensional) {
  // dw[s] = sum_{n,q} dy[n][q] x[n][q + s].
  ConvShape shape;
  shape.w = 3;
  shape.s = 2;
  OpSpec spec = conv_spec(shape, ConvPass::wgrad);
  ConvRun run = run_conv(spec, {1, 2, 3}, std::vector<double>(2), {1, 10});
  EXPECT_EQ(values_of(run.filter), (std::vector<double>{21, 32}));

  shape.n = 2; // batch 1 adds x = [10 20 30], dy = [1 1]: [30, 50]
  spec = conv_spec(shape, ConvPass::wgrad);
  run = run_conv(spec, {1, 2, 3, 10, 20, 30}, std::vector<double>(2), {1, 10, 1, 1});
  EXPECT_EQ(values_of(run.filter), (std::vector<double>{51, 82}));

  shape.n = 1; // stride 2: y[q] = x[2q] f0 + x[2q+1] f1
  shape.w = 4;
  shape.stride = {1, 1, 2};
  spec = conv_spec(shape, ConvPass::wgrad);
  run = run_conv(spec, {1, 2, 3, 4}, std::vector<double>(2), {1, 10});
  EXPECT_EQ(values_of(run.filter), (std::vector<double>{31, 42}));
}

TEST(ConvWgrad, GroupsPairChannelBlocks) {
  // c = 4, k = 2, groups = 2, 1x1, two pixels: dw[k][c'] = sum_pixels dy[k] x[group(k) c + c'].
  ConvShape shape;
  shape.w = 2;
  shape.c = 4;
  shape.k = 2;
  shape.groups = 2;
  const OpSpec spec = conv_spec(shape, ConvPass::wgrad);
  const ConvRun run =
      run_conv(spec, {1, 2, 3, 4, 5, 6, 7, 8}, std::vector<double>(4), {1, 10, 2, 20});
  // k0: 1*[1 2] + 2*[5 6] = [11 14]; k1: 10*[3 4] + 20*[7 8] = [170 200]
  EXPECT_EQ(values_of(run.filter), (std::vector<double>{11, 14, 170, 200}));
}

TEST(ConvReference, LayoutsDoNotChangeTheLogicalResult) {
  // The same random problem in channels-last and channels-first layouts, for each pass.
  ConvShape shape;
  shape.n = 2;
  shape.d = 3;
  shape.h = 5;
  shape.w = 4;
  shape.c = 4;
  shape.k = 6;
  shape.t = 2;
  shape.r = 3;
  shape.s = 2;
  shape.pad = {1, 1, 0};
  shape.stride = {2, 1, 2};
  shape.dilation = {1, 2, 1};
  shape.groups = 2;
  for (const ConvPass pass : {ConvPass::fprop, ConvPass::dgrad, ConvPass::wgrad}) {
    const OpSpec last =
        conv_spec(shape, pass, DType::f16, TensorLayout::ndhwc, TensorLayout::ktrsc, true);
    const OpSpec first =
        conv_spec(shape, pass, DType::f16, TensorLayout::ncdhw, TensorLayout::kctrs, true);
    // o = (3 + 2 - 1 - 1) / 2 + 1 = 2, p = (5 + 2 - 4 - 1) + 1 = 3, q = (4 - 1 - 1) / 2 + 1 = 2
    const int64_t x_count = 2 * 3 * 5 * 4 * 4, f_count = 6 * 2 * 3 * 2 * 2,
                  y_count = 2 * 2 * 3 * 2 * 6;
    ASSERT_EQ(output_layout(conv_spec(shape, ConvPass::fprop, DType::f16, TensorLayout::ndhwc,
                                      TensorLayout::ktrsc, true))
                  .count,
              y_count);
    Buffer x_last(DType::f16, x_count), f_last(DType::f16, f_count), y_last(DType::f16, y_count);
    fill_random(DType::f16, x_last.data(), x_count, 11);
    fill_random(DType::f16, f_last.data(), f_count, 12);
    fill_random(DType::f16, y_last.data(), y_count, 13);
    // Channels-first copies: move the last axis (channels) to position 1 (filter: after k).
    auto to_channels_first = [](const Buffer &src, int64_t outer, int64_t inner_pixels,
                                int64_t channels) {
      Buffer dst(src.dtype, src.size());
      for (int64_t a = 0; a < outer; ++a)
        for (int64_t pix = 0; pix < inner_pixels; ++pix)
          for (int64_t ch = 0; ch < channels; ++ch)
            dst.set((a * channels + ch) * inner_pixels + pix,
                    src.get((a * inner_pixels + pix) * channels + ch));
      return dst;
    };
    Buffer x_first = to_channels_first(x_last, 2, 3 * 5 * 4, 4);
    Buffer f_first = to_channels_first(f_last, 6, 2 * 3 * 2, 2);
    Buffer y_first = to_channels_first(y_last, 2, y_count / 2 / 6, 6);
    reference_conv(last, {x_last.data(), f_last.data(), y_last.data(), nullptr}, MathMode::f32);
    reference_conv(first, {x_first.data(), f_first.data(), y_first.data(), nullptr}, MathMode::f32);
    const Buffer x_check = to_channels_first(x_last, 2, 3 * 5 * 4, 4);
    const Buffer f_check = to_channels_first(f_last, 6, 2 * 3 * 2, 2);
    const Buffer y_check = to_channels_first(y_last, 2, y_count / 2 / 6, 6);
    EXPECT_EQ(x_check.bytes, x_first.bytes) << to_string(pass);
    EXPECT_EQ(f_check.bytes, f_first.bytes) << to_string(pass);
    EXPECT_EQ(y_check.bytes, y_first.bytes) << to_string(pass);
  }
}

TEST(ConvReference, OutputCoordinatesNameTheComputedTensorsAxes) {
  ConvShape shape;
  shape.h = 3;
  shape.w = 4;
  shape.c = 2;
  shape.k = 5;
  shape.r = shape.s = 1;
  const OutputLayout nchw = output_layout(
      conv_spec(shape, ConvPass::fprop, DType::f16, TensorLayout::nchw, TensorLayout::kcrs));
  // y is 1 x 5 x 3 x 4 (n k p q): element 1*12 + 2*4 + 3 = 23 is k 1, p 2, q 3.
  EXPECT_EQ(output_coordinates(nchw, 23), "n 0, k 1, p 2, q 3");
  const OutputLayout wgrad = output_layout(conv_spec(shape, ConvPass::wgrad));
  EXPECT_EQ(output_coordinates(wgrad, 7), "k 3, r 0, s 0, c 1");
  OpSpec dgrad = conv_spec(shape, ConvPass::dgrad);
  dgrad.epilogue.bias = BiasKind::col;
  const OutputLayout dx = output_layout(dgrad);
  EXPECT_EQ(output_coordinates(dx, 7), "n 0, h 0, w 3, c 1");
  EXPECT_EQ(output_bias_index(dx, 7), 1); // dgrad's bias is per input channel
  EXPECT_EQ(output_buffer_offset(dx, 7), 7);
}

TEST(ConvReference, RejectsSpecsItCannotCompute) {
  ConvShape shape;
  shape.h = shape.w = 3;
  shape.c = 4;
  shape.k = 4;
  shape.r = shape.s = 3;
  const OpSpec good = conv_spec(shape, ConvPass::fprop);
  Buffer x(DType::f32, 36), f(DType::f32, 144), y(DType::f32, 4);
  const ConvBuffers buffers{x.data(), f.data(), y.data(), nullptr};
  EXPECT_NO_THROW(reference_conv(good, buffers, MathMode::f32));
  EXPECT_THROW(reference_conv(good, buffers, MathMode::automatic), std::invalid_argument);
  EXPECT_THROW(reference_conv(good, {x.data(), nullptr, y.data(), nullptr}, MathMode::f32),
               std::invalid_argument);
  auto rejects = [&](OpSpec spec, const std::string &needle) {
    try {
      reference_conv(spec, buffers, MathMode::f32);
      ADD_FAILURE() << "expected a rejection mentioning '" << needle << "'";
    } catch (const std::invalid_argument &e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  OpSpec spec = good;
  spec.conv.n = Dim::any_size();
  rejects(spec, "symbolic");
  spec = good;
  spec.conv.groups = 3;
  rejects(spec, "groups");
  spec = good;
  spec.conv.r = 5;
  rejects(spec, "does not fit");
  spec = good;
  spec.conv.x.layout = TensorLayout::krsc;
  rejects(spec, "filter layout");
  spec = good;
  spec.conv.d = 2;
  rejects(spec, "conv2d");
  spec = good;
  spec.conv.stride = {1, 0, 1};
  rejects(spec, "stride");
  spec = good;
  spec.epilogue.bias = BiasKind::col;
  rejects(spec, "bias");
  spec = good;
  spec.conv.y.dtype = DType::u4;
  rejects(spec, "packed");
}

TEST(ConvReference, Conv2dIgnoresTheDepthEntries) {
  ConvShape shape;
  shape.h = shape.w = 3;
  shape.r = shape.s = 2;
  shape.pad = {5, 0, 0}; // documented as unused for conv2d
  shape.stride = {7, 1, 1};
  const OpSpec spec = conv_spec(shape, ConvPass::fprop);
  const ConvRun run = run_conv(spec, iota(9), {1, 2, 3, 4}, std::vector<double>(4));
  EXPECT_EQ(values_of(run.y), (std::vector<double>{37, 47, 67, 77}));
}

} // namespace
} // namespace tcjit
