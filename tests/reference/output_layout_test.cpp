// output_buffer_offsets (the offsets of a run of output elements, by stepping coordinates) against
// output_buffer_offset (one division chain per element) and against offsets worked out by hand.
#include "compiler/reference/output_layout.h"

#include "reference_test_util.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace tcjit {
namespace {

using testing::conv_spec;
using testing::ConvShape;
using testing::gemm_spec;
using testing::matrix;

std::vector<int64_t> stepped(const OutputLayout &layout, int64_t first, int64_t count) {
  std::vector<int64_t> offsets(static_cast<size_t>(count), -1);
  output_buffer_offsets(layout, first, count, offsets.data());
  return offsets;
}

TEST(OutputLayout, SteppedOffsetsOfPaddedBatchedMatricesAreWorkedOutByHand) {
  // C: 2 batches of 3x2, column-major with ld 4 (a padding row): elements go batch, col, row;
  // (b, col, row) lies at b * 8 + col * 4 + row
  const OpSpec spec = gemm_spec(3, 2, 4, matrix(DType::f32, MatrixLayout::row),
                                matrix(DType::f32, MatrixLayout::col),
                                matrix(DType::f32, MatrixLayout::col, 4), DType::f32, 2);
  const OutputLayout layout = output_layout(spec);
  EXPECT_EQ(stepped(layout, 0, 12), (std::vector<int64_t>{0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14}));
  EXPECT_EQ(stepped(layout, 5, 3), (std::vector<int64_t>{6, 8, 9}));
}

TEST(OutputLayout, SteppedOffsetsMatchTheOffsetOfEachElementOverEveryWindow) {
  ConvShape shape;
  shape.n = 2;
  shape.h = 5;
  shape.w = 3;
  shape.c = 4;
  shape.k = 6;
  shape.r = shape.s = 3;
  shape.pad = {0, 1, 1};
  ConvShape shape3 = shape;
  shape3.d = 3;
  shape3.t = 2;
  const std::vector<OpSpec> specs = {
      gemm_spec(7, 5, 3, matrix(DType::f16, MatrixLayout::row),
                matrix(DType::f16, MatrixLayout::row), matrix(DType::f16, MatrixLayout::row, 9),
                DType::f32, 3),
      gemm_spec(7, 5, 3, matrix(DType::f16, MatrixLayout::row),
                matrix(DType::f16, MatrixLayout::row), matrix(DType::f16, MatrixLayout::col, 8),
                DType::f32, 2),
      conv_spec(shape, ConvPass::fprop),
      conv_spec(shape, ConvPass::dgrad),
      conv_spec(shape, ConvPass::wgrad, DType::f32, TensorLayout::nhwc, TensorLayout::kcrs),
      conv_spec(shape, ConvPass::fprop, DType::f32, TensorLayout::nchw, TensorLayout::kcrs),
      conv_spec(shape3, ConvPass::fprop, DType::f32, TensorLayout::ndhwc, TensorLayout::ktrsc,
                true),
  };
  for (const OpSpec &spec : specs) {
    const OutputLayout layout = output_layout(spec);
    ASSERT_GT(layout.count, 40);
    for (int64_t first : {int64_t{0}, int64_t{1}, int64_t{4}, int64_t{17}, layout.count - 9})
      for (int64_t count : {int64_t{1}, int64_t{5}, layout.count - first}) {
        const std::vector<int64_t> offsets = stepped(layout, first, count);
        for (int64_t i = 0; i < count; ++i)
          ASSERT_EQ(offsets[static_cast<size_t>(i)], output_buffer_offset(layout, first + i))
              << "rank " << layout.rank << ", element " << first + i << " of a run from " << first;
      }
  }
}

} // namespace
} // namespace tcjit
