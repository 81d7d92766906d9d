// Golden tests: the canonical key and its hash must never change for the same spec, on any
// machine or compiler. If one of these fails, every cache in the field is invalidated: change
// the key format only on purpose, together with the database schema version.
#include "compiler/spec/problem_key.h"
#include "support/fnv1a.h"

#include "spec_test_util.h"

#include <gtest/gtest.h>

namespace tcjit {
namespace {

using testing::spec_of;

TEST(ProblemKey, GoldenGemm) {
  const ProblemKey key = make_problem_key(
      spec_of("gemm m=4096 n=4096 k=4096 a=f16:row b=f16:col c=f16:row acc=f32"), "sm_80", false);
  EXPECT_EQ(key.text, "gemm m=4096 n=4096 k=4096 batch=1 a=f16:row b=f16:col c=f16:row acc=f32 "
                      "alpha=1 beta=0 bias=none act=none align=a8,b8,c8 arch=sm_80");
  EXPECT_EQ(key.hash, support::fnv1a64(key.text));
  EXPECT_EQ(key.hash_hex().size(), 16u);
}

TEST(ProblemKey, GoldenConv) {
  const ProblemKey key = make_problem_key(
      spec_of("conv2d n=32 h=56 w=56 c=64 k=64 r=3 s=3 pad=1 stride=1 dilation=1 groups=1 "
              "x=f16:nhwc filter=f16:krsc y=f16:nhwc acc=f32 act=relu pass=fprop"),
      "sm_90", false);
  EXPECT_EQ(key.text, "conv2d n=32 h=56 w=56 c=64 k=64 r=3 s=3 pad=1 stride=1 dilation=1 groups=1 "
                      "pass=fprop x=f16:nhwc filter=f16:krsc y=f16:nhwc acc=f32 alpha=1 beta=0 "
                      "bias=none act=relu align=x8,filter8,y8 arch=sm_90");
}

TEST(ProblemKey, GoldenHashes) {
  // Pinned value: FNV-1a 64 of the GoldenGemm key text, computed with an independent Python
  // implementation of FNV-1a (docs/keys.md shows it).
  EXPECT_EQ(make_problem_key(spec_of("gemm m=4096 n=4096 k=4096 a=f16:row b=f16:col c=f16:row"),
                             "sm_80", false)
                .hash_hex(),
            "a1b948a81e94a3b8");
}

TEST(ProblemKey, SameSpecWrittenDifferentlySameKey) {
  const ProblemKey a =
      make_problem_key(spec_of("gemm m=64 n=64 k=64 a=f16:row b=f16:col"), "sm_80", false);
  const ProblemKey b = make_problem_key(
      spec_of("gemm  b=f16:col   k=64 a=f16 n=64 m=64 # comment\n"), "sm_80", false);
  EXPECT_EQ(a.text, b.text);
  EXPECT_EQ(a.hash, b.hash);
}

TEST(ProblemKey, NameAndWeightAreNotPartOfTheKey) {
  const ParseResult r = parse_workload("qkv: gemm m=64 n=64 k=64 a=f16 b=f16 weight=7\n"
                                       "gemm m=64 n=64 k=64 a=f16 b=f16\n");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.entries.size(), 2u);
  EXPECT_EQ(make_problem_key(r.entries[0].spec, "sm_80", false).text,
            make_problem_key(r.entries[1].spec, "sm_80", false).text);
}

TEST(ProblemKey, ArchAlignmentAndMathDistinguishKeys) {
  const OpSpec s = spec_of("gemm m=64 n=64 k=64 a=f16 b=f16");
  EXPECT_NE(make_problem_key(s, "sm_80", false).hash, make_problem_key(s, "sm_86", false).hash);
  const OpSpec odd = spec_of("gemm m=64 n=64 k=62 a=f16 b=f16");
  EXPECT_NE(make_problem_key(odd, "sm_80", false).text.find("align=a2,b8,c8"), std::string::npos);

  // math=auto resolves: TF32 unless NVIDIA_TF32_OVERRIDE=0.
  const OpSpec f32 = spec_of("gemm m=64 n=64 k=64 a=f32 b=f32 math=auto");
  const ProblemKey tf32_key = make_problem_key(f32, "sm_80", false);
  const ProblemKey f32_key = make_problem_key(f32, "sm_80", true);
  EXPECT_NE(tf32_key.text.find("math=tf32"), std::string::npos);
  EXPECT_NE(f32_key.text.find("math=f32"), std::string::npos);
  EXPECT_EQ(
      tf32_key.text,
      make_problem_key(spec_of("gemm m=64 n=64 k=64 a=f32 b=f32 math=tf32"), "sm_80", true).text);
}

} // namespace
} // namespace tcjit
