// The race's output check (bench/gpu_tool/race_check.h) on the host: a correct output passes, a
// wrong element in the part checked fails, and past the reference's budget a GEMM is checked on
// its first and last rows, a convolution on its first image, and a wgrad not at all (said so).
#include "bench/gpu_tool/race_check.h"
#include "compiler/reference/conv_reference.h"
#include "compiler/reference/gemm_reference.h"
#include "compiler/reference/numeric_convert.h"
#include "tcjit/tools.hpp"

#include <gtest/gtest.h>

namespace tcjit::bench {
namespace {

OpSpec spec_of(const std::string &text) {
  return parse_ops(text).front().spec;
}

// The correct output of `in` (what a correct kernel writes), in the output's dtype.
std::vector<std::byte> correct_output(const ProblemInputs &in) {
  std::vector<std::byte> out(output_bytes(in.spec));
  ReferenceResult r;
  DType dtype = DType::f16;
  if (in.spec.kind == OpKind::gemm) {
    r = reference_gemm(in.spec,
                       GemmBuffers{in.a.data(), in.b.data(), out.data(),
                                   in.bias.empty() ? nullptr : in.bias.data()},
                       MathMode::tf32);
    dtype = in.spec.gemm.c.dtype;
  } else {
    std::vector<std::byte> x = in.x, w = in.filter, y = in.y;
    r = reference_conv(in.spec, ConvBuffers{x.data(), w.data(), y.data(), nullptr}, MathMode::tf32);
  }
  for (size_t i = 0; i < r.values.size(); ++i)
    write_element(dtype, out.data(), static_cast<int64_t>(i), r.values[i]);
  return out;
}

TEST(GpuBenchCheck, AWholeGemmOutput) {
  const ProblemInputs in =
      random_inputs(spec_of("gemm m=40 n=24 k=32 a=f16 b=f16:col c=f16 bias=col act=gelu"), 1);
  std::vector<std::byte> out = correct_output(in);
  OutputChecker checker(in, 1e9);
  const Verification ok = checker.check(out);
  EXPECT_TRUE(ok.checked);
  EXPECT_TRUE(ok.ok) << ok.worst;
  EXPECT_EQ(ok.part, "all 960 elements");
  write_element(DType::f16, out.data(), 500, 77.0);
  const Verification bad = checker.check(out);
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.mismatches, 1);
  EXPECT_NE(bad.worst.find("row 20"), std::string::npos) << bad.worst; // element 500 = 20 * 24 + 20
}

TEST(GpuBenchCheck, ALargeGemmIsCheckedOnItsFirstAndLastRows) {
  // 64 x 16 x 16: 16384 multiply-adds; a budget of 2048 checks 4 rows at each end.
  const ProblemInputs in = random_inputs(spec_of("gemm m=64 n=16 k=16 a=s8 b=s8:col c=s32"), 2);
  std::vector<std::byte> out = correct_output(in);
  OutputChecker checker(in, 2048);
  const Verification v = checker.check(out);
  EXPECT_TRUE(v.ok) << v.worst;
  EXPECT_EQ(v.part, "rows 0..3 and 60..63 (128 of 1024 elements)");
  EXPECT_EQ(v.elements, 128);
  // A wrong element in a middle row is outside the part checked; in the last rows it is seen.
  write_element(DType::s32, out.data(), 30 * 16 + 1, 12345);
  EXPECT_TRUE(checker.check(out).ok);
  write_element(DType::s32, out.data(), 62 * 16 + 5, 12345);
  const Verification bad = checker.check(out);
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.mismatches, 1);
}

TEST(GpuBenchCheck, ConvolutionsPastTheBudget) {
  const std::string conv = "conv2d n=3 h=6 w=6 c=8 k=8 r=3 s=3 pad=1 x=f16";
  const ProblemInputs fprop = random_inputs(spec_of(conv), 3);
  std::vector<std::byte> out = correct_output(fprop);
  OutputChecker checker(fprop, 100); // less than one image
  const Verification v = checker.check(out);
  EXPECT_TRUE(v.ok) << v.worst;
  EXPECT_EQ(v.part, "image 0 (288 of 864 elements)");
  write_element(DType::f16, out.data(), 5, 99.0); // in image 0
  EXPECT_FALSE(checker.check(out).ok);

  const ProblemInputs wgrad = random_inputs(spec_of(conv + " pass=wgrad"), 4);
  OutputChecker unchecked(wgrad, 100);
  const Verification w = unchecked.check(std::vector<std::byte>(output_bytes(wgrad.spec)));
  EXPECT_FALSE(w.checked);
  EXPECT_NE(w.why_unchecked.find("wgrad"), std::string::npos) << w.why_unchecked;
  EXPECT_THROW(unchecked.check(std::vector<std::byte>(3)), std::invalid_argument);
}

} // namespace
} // namespace tcjit::bench
