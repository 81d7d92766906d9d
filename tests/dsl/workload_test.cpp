// Workload files: names, weights, comments, blank lines, line endings; parse_spec's "exactly one".
#include "dsl_test_util.h"

namespace tcjit {
namespace {

constexpr std::string_view workload = R"(# A transformer block.

qkv: gemm m=? n=4608 k=1536 a=f16 b=f16:col weight=3   # fused projection
attn.out-1: gemm m=? n=1536 k=1536 a=f16 b=f16:col

   # indented comment
conv2d n=8 h=28 w=28 c=128 k=128 r=3 s=3 pad=1 groups=128 x=f16   weight=10
mlp:gemm m=2048 n=6144 k=1536 a=bf16 b=bf16 act=gelu
)";

TEST(Workload, NamesWeightsCommentsAndBlankLines) {
  const ParseResult result = parse_workload(workload, "block.tcjit");
  ASSERT_TRUE(result.ok()) << rendered(result);
  ASSERT_EQ(result.entries.size(), 4u);
  EXPECT_EQ(result.entries[0].name, "qkv");
  EXPECT_EQ(result.entries[0].weight, 3);
  EXPECT_EQ(result.entries[0].line, 3);
  EXPECT_EQ(result.entries[0].spec.gemm.n, Dim::fixed_size(4608));
  EXPECT_EQ(result.entries[1].name, "attn.out-1");
  EXPECT_EQ(result.entries[1].weight, 1);
  EXPECT_EQ(result.entries[1].line, 4);
  EXPECT_EQ(result.entries[2].name, "");
  EXPECT_EQ(result.entries[2].weight, 10);
  EXPECT_EQ(result.entries[2].line, 7);
  EXPECT_EQ(result.entries[2].spec.kind, OpKind::conv2d);
  EXPECT_EQ(result.entries[3].name, "mlp");
  EXPECT_EQ(result.entries[3].line, 8);
  EXPECT_EQ(result.entries[3].spec.epilogue.act, Activation::gelu);
}

TEST(Workload, EmptyAndCommentOnlyTextsHaveNoEntries) {
  for (const std::string_view text : {"", "\n\n", "# nothing\n   \t\n#", "\xEF\xBB\xBF"}) {
    const ParseResult result = parse_workload(text);
    EXPECT_TRUE(result.ok()) << rendered(result);
    EXPECT_TRUE(result.entries.empty());
  }
}

TEST(Workload, CrLfLineEndingsTabsAndByteOrderMark) {
  const ParseResult result = parse_workload(
      "\xEF\xBB\xBFgemm m=1 n=2 k=3 a=f16 b=f16\r\n\tgemm\tm=4 n=5 k=6 a=f16 b=f16\t\r\n");
  ASSERT_TRUE(result.ok()) << rendered(result);
  ASSERT_EQ(result.entries.size(), 2u);
  EXPECT_EQ(result.entries[0].spec.gemm.k, Dim::fixed_size(3));
  EXPECT_EQ(result.entries[1].spec.gemm.m, Dim::fixed_size(4));
  EXPECT_EQ(result.entries[1].line, 2);
}

TEST(Workload, CommentsMayHoldAnyText) {
  const ParseResult result =
      parse_workload("gemm m=1 n=1 k=1 a=f16 b=f16 #caf\xC3\xA9 \x01\xff weight=7 m=2");
  ASSERT_TRUE(result.ok()) << rendered(result);
  ASSERT_EQ(result.entries.size(), 1u);
  EXPECT_EQ(result.entries[0].weight, 1);
  EXPECT_EQ(result.entries[0].spec.gemm.m, Dim::fixed_size(1));
}

TEST(Workload, GoodLinesAreKeptWhenOthersFail) {
  const ParseResult result = parse_workload("gemm m=1 n=1 k=1 a=f16 b=f16\n"
                                            "gemm m=1 n=1 k=1 a=f16 b=fp16\n"
                                            "gemm m=2 n=2 k=2 a=f16 b=f16\n");
  EXPECT_FALSE(result.ok());
  ASSERT_EQ(result.errors.size(), 1u);
  EXPECT_EQ(result.errors[0].line, 2);
  ASSERT_EQ(result.entries.size(), 2u);
  EXPECT_EQ(result.entries[0].line, 1);
  EXPECT_EQ(result.entries[1].line, 3);
}

TEST(Workload, DuplicateNames) {
  EXPECT_EQ(errors_of("qkv: gemm m=1 n=1 k=1 a=f16 b=f16\n"
                      "qkv: gemm m=2 n=1 k=1 a=f16 b=f16\n"),
            "<input>:2:1: error: duplicate name 'qkv' (first used on line 1)\n"
            "qkv: gemm m=2 n=1 k=1 a=f16 b=f16\n"
            "^~~\n");
}

TEST(Workload, WeightMustBePositive) {
  EXPECT_EQ(errors_of("gemm m=1 n=1 k=1 a=f16 b=f16 weight=0"),
            "<input>:1:37: error: weight=0 is out of range: weights are 1..2147483647\n"
            "gemm m=1 n=1 k=1 a=f16 b=f16 weight=0\n"
            "                                    ^\n");
}

TEST(ParseSpec, ExactlyOneOperation) {
  const ParseResult one = parse_spec("# the spec\n\nfc: gemm m=8 n=8 k=8 a=f16 b=f16 weight=2\n");
  ASSERT_TRUE(one.ok()) << rendered(one);
  ASSERT_EQ(one.entries.size(), 1u);
  EXPECT_EQ(one.entries[0].name, "fc");
  EXPECT_EQ(one.entries[0].weight, 2);
}

TEST(ParseSpec, NoOperation) {
  EXPECT_EQ(rendered(parse_spec("# only a comment\n")),
            "<input>:1:1: error: expected an operation (gemm, conv2d or conv3d), found none\n"
            "# only a comment\n"
            "^\n");
  EXPECT_EQ(rendered(parse_spec("", "cli")),
            "cli:1:1: error: expected an operation (gemm, conv2d or conv3d), found none\n"
            "\n"
            "^\n");
}

TEST(ParseSpec, SeveralOperations) {
  EXPECT_EQ(rendered(parse_spec("gemm m=1 n=1 k=1 a=f16 b=f16\n"
                                "\n"
                                "  x: gemm m=2 n=1 k=1 a=f16 b=f16\n")),
            "<input>:3:6: error: expected exactly one operation, found a second one (the first "
            "is on line 1)\n"
            "  x: gemm m=2 n=1 k=1 a=f16 b=f16\n"
            "     ^~~~\n");
}

TEST(ParseSpec, ABrokenLineIsNotReportedAsMissing) {
  const ParseResult result = parse_spec("gemm m=1 n=1 k=1 a=f16 b=f16 act=relu6");
  ASSERT_EQ(result.errors.size(), 1u);
  EXPECT_EQ(result.errors[0].message, "unknown activation 'relu6' (did you mean 'relu'?)");
}

} // namespace
} // namespace tcjit
