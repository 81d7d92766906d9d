#include "compiler/spec/alignment.h"

#include "spec_test_util.h"

#include <gtest/gtest.h>

namespace tcjit {
namespace {

using testing::spec_of;

std::vector<int> elements_of(const std::string &text) {
  std::vector<int> out;
  for (const OperandAlignment &a : analyze_alignment(spec_of(text)))
    out.push_back(a.elements);
  return out;
}

TEST(Alignment, SixteenBytesIsTheWidestVector) {
  EXPECT_EQ(max_vector_elements(DType::f16), 8);
  EXPECT_EQ(max_vector_elements(DType::bf16), 8);
  EXPECT_EQ(max_vector_elements(DType::f32), 4);
  EXPECT_EQ(max_vector_elements(DType::tf32), 4);
  EXPECT_EQ(max_vector_elements(DType::s32), 4);
  EXPECT_EQ(max_vector_elements(DType::s8), 16);
  EXPECT_EQ(max_vector_elements(DType::f64), 2);
}

TEST(Alignment, AlignedGemmGetsFullVectors) {
  EXPECT_EQ(elements_of("gemm m=4096 n=4096 k=4096 a=f16:row b=f16:col c=f16:row"),
            (std::vector<int>{8, 8, 8}));
  EXPECT_EQ(elements_of("gemm m=512 n=512 k=512 a=s8:row b=s8:col c=s32:row"),
            (std::vector<int>{16, 16, 4}));
  EXPECT_EQ(elements_of("gemm m=256 n=256 k=256 a=f64 b=f64 c=f64"), (std::vector<int>{2, 2, 2}));
}

TEST(Alignment, ContiguousExtentLimitsTheVector) {
  // Row-major A is contiguous along k; column-major B along k too; row-major C along n.
  EXPECT_EQ(elements_of("gemm m=64 n=1000 k=4094 a=f16:row b=f16:col c=f16:row"),
            (std::vector<int>{2, 2, 8}));
  EXPECT_EQ(elements_of("gemm m=64 n=1001 k=4095 a=f16:row b=f16:row c=f16:row"),
            (std::vector<int>{1, 1, 1}));
  // Column-major A is contiguous along m.
  EXPECT_EQ(elements_of("gemm m=12 n=64 k=64 a=f16:col b=f16:col c=f16:col"),
            (std::vector<int>{4, 8, 4}));
}

TEST(Alignment, LeadingDimensionCounts) {
  EXPECT_EQ(elements_of("gemm m=64 n=64 k=64 a=f16:row b=f16:col c=f16:row lda=68"),
            (std::vector<int>{4, 8, 8}));
  const auto a = analyze_alignment(spec_of("gemm m=64 n=64 k=64 a=f16 b=f16 lda=66"));
  EXPECT_EQ(a[0].elements, 2);
  EXPECT_EQ(a[0].limited_by, "k=64 / lda=66 is not a multiple of 8");
}

TEST(Alignment, SymbolicContiguousDimensionAllowsOnlyScalars) {
  const auto a = analyze_alignment(spec_of("gemm m=? n=64 k=64 a=f16:col b=f16:col c=f16:row"));
  EXPECT_EQ(a[0].elements, 1);
  EXPECT_NE(a[0].limited_by.find("symbolic"), std::string::npos);
  EXPECT_EQ(a[1].elements, 8); // B col-major is contiguous along k
  EXPECT_EQ(a[2].elements, 8); // C row-major is contiguous along n
  // An explicit leading dimension promises the stride.
  EXPECT_EQ(elements_of("gemm m=? n=64 k=64 a=f16:col b=f16:col lda=4096"),
            (std::vector<int>{8, 8, 8}));
}

TEST(Alignment, ConvChannelsDecide) {
  EXPECT_EQ(elements_of("conv2d n=1 h=8 w=8 c=64 k=64 r=3 s=3 pad=1 x=f16:nhwc"),
            (std::vector<int>{8, 8, 8}));
  EXPECT_EQ(elements_of("conv2d n=1 h=8 w=8 c=3 k=64 r=3 s=3 pad=1 x=f16:nhwc"),
            (std::vector<int>{1, 1, 8}));
  EXPECT_EQ(elements_of("conv2d n=1 h=8 w=8 c=12 k=20 r=3 s=3 pad=1 x=f16:nhwc"),
            (std::vector<int>{4, 4, 4}));
  // Depthwise: one channel per group.
  EXPECT_EQ(elements_of("conv2d n=8 h=28 w=28 c=128 k=128 r=3 s=3 pad=1 groups=128 x=f16:nhwc"),
            (std::vector<int>{1, 1, 1}));
  // Channels-first layouts gather element by element.
  const auto nchw =
      analyze_alignment(spec_of("conv2d n=1 h=8 w=8 c=64 k=64 r=3 s=3 x=f16:nchw y=f16:nchw"));
  EXPECT_EQ(nchw[0].elements, 1);
  EXPECT_EQ(nchw[0].limited_by.rfind("layout nchw", 0), 0u);
}

TEST(Alignment, SignatureForKeys) {
  EXPECT_EQ(alignment_signature(analyze_alignment(
                spec_of("conv2d n=1 h=8 w=8 c=64 k=64 r=3 s=3 pad=1 x=f16:nhwc"))),
            "x8,filter8,y8");
  EXPECT_EQ(alignment_signature(analyze_alignment(spec_of("gemm m=8 n=8 k=6 a=f32 b=f32"))),
            "a2,b4,c4");
}

} // namespace
} // namespace tcjit
