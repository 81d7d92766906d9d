// Diagnostic rendering and exact messages for the common mistakes.
#include "dsl_test_util.h"

namespace tcjit {
namespace {

TEST(Render, CaretUnderTheWord) {
  const Diagnostic d{"w.tcjit", 3, 6, 4, "bad thing", "gemm abcd=1"};
  EXPECT_EQ(d.render(), "w.tcjit:3:6: error: bad thing\n"
                        "gemm abcd=1\n"
                        "     ^~~~\n");
}

TEST(Render, TabsAreKeptSoTheCaretLinesUp) {
  const Diagnostic d{"<input>", 1, 7, 2, "m", "\tgemm\tm=1"};
  EXPECT_EQ(d.render(), "<input>:1:7: error: m\n"
                        "\tgemm\tm=1\n"
                        "\t    \t^~\n");
}

TEST(Render, ControlBytesAndInvalidUtf8ShowAsQuestionMarks) {
  const Diagnostic d{"<input>", 1, 9, 1, "m", std::string("a\0b\xff\x1b[2J\xc3\xa9z", 11)};
  // \0 \xff \x1b become '?'; the valid UTF-8 'é' is one character wide.
  EXPECT_EQ(d.render(), "<input>:1:9: error: m\n"
                        "a?b??[2J\xc3\xa9z\n"
                        "        ^\n");
  const Diagnostic after_utf8{"<input>", 1,   11,
                              1,         "m", std::string("a\0b\xff\x1b[2J\xc3\xa9z", 11)};
  EXPECT_EQ(after_utf8.render(), "<input>:1:11: error: m\n"
                                 "a?b??[2J\xc3\xa9z\n"
                                 "         ^\n");
}

TEST(Render, ColumnPastTheEndAndZeroLength) {
  const Diagnostic d{"f", 2, 5, 0, "x", "ab"};
  EXPECT_EQ(d.render(), "f:2:5: error: x\nab\n  ^\n");
}

TEST(Render, LongLinesShowAWindowAroundTheCaret) {
  const std::string line = std::string(500, 'a') + "WORD" + std::string(500, 'b');
  const Diagnostic d{"f", 1, 501, 4, "x", line};
  const std::string expected = "f:1:501: error: x\n..." + std::string(80, 'a') + "WORD" +
                               std::string(156, 'b') + "...\n" + std::string(83, ' ') + "^~~~\n";
  EXPECT_EQ(d.render(), expected);
}

TEST(Quoted, EscapesAndCuts) {
  EXPECT_EQ(quoted_word("f16"), "'f16'");
  EXPECT_EQ(quoted_word(std::string_view("a\0\xff", 3)), "'a\\x00\\xff'");
  EXPECT_EQ(quoted_word(std::string(50, 'x')), "'" + std::string(40, 'x') + "...'");
}

TEST(Messages, UnknownWordsSuggestTheClosest) {
  EXPECT_EQ(errors_of("gemm m=8 n=8 k=8 a=fp16 b=f16"),
            "<input>:1:20: error: unknown dtype 'fp16' (did you mean 'f16'?)\n"
            "gemm m=8 n=8 k=8 a=fp16 b=f16\n"
            "                   ^~~~\n");
  EXPECT_EQ(errors_of("gemm m=8 n=8 k=8 a=f16 b=f16 alhpa=2"),
            "<input>:1:30: error: unknown key 'alhpa' for gemm (did you mean 'alpha'?)\n"
            "gemm m=8 n=8 k=8 a=f16 b=f16 alhpa=2\n"
            "                             ^~~~~\n");
  EXPECT_EQ(errors_of("conv2d n=1 h=8 w=8 c=8 k=8 r=3 s=3 x=f16:nwhc"),
            "<input>:1:42: error: unknown layout 'nwhc' (did you mean 'nhwc'?)\n"
            "conv2d n=1 h=8 w=8 c=8 k=8 r=3 s=3 x=f16:nwhc\n"
            "                                         ^~~~\n");
  EXPECT_EQ(errors_of("gemm m=8 n=8 k=8 a=float16 b=f16 act=sigmod"),
            "<input>:1:20: error: unknown dtype 'float16' (did you mean 'f16'?)\n"
            "gemm m=8 n=8 k=8 a=float16 b=f16 act=sigmod\n"
            "                   ^~~~~~~\n"
            "<input>:1:38: error: unknown activation 'sigmod' (did you mean 'sigmoid'?)\n"
            "gemm m=8 n=8 k=8 a=float16 b=f16 act=sigmod\n"
            "                                     ^~~~~~\n");
  EXPECT_EQ(errors_of("matmul m=8"), "<input>:1:1: error: unknown operation 'matmul' (did you "
                                     "mean 'gemm'?)\nmatmul m=8\n^~~~~~\n");
}

TEST(Messages, NothingCloseListsTheChoices) {
  EXPECT_EQ(errors_of("gemm m=8 n=8 k=8 a=f16 b=f16 bias=both"),
            "<input>:1:35: error: unknown bias 'both' (use none, row or col)\n"
            "gemm m=8 n=8 k=8 a=f16 b=f16 bias=both\n"
            "                                  ^~~~\n");
  EXPECT_EQ(errors_of("gemm m=8 n=8 k=8 a=f16 b=f16 zzz=1"),
            "<input>:1:30: error: unknown key 'zzz' for gemm (gemm keys: m n k batch a b c lda "
            "ldb ldc acc math sparse bop alpha beta bias act weight)\n"
            "gemm m=8 n=8 k=8 a=f16 b=f16 zzz=1\n"
            "                             ^~~\n");
}

TEST(Messages, AMisspeltRequiredKeyIsNotAlsoMissing) {
  EXPECT_EQ(errors_of("gemm mm=8 n=8 k=8 a=f16 b=f16"),
            "<input>:1:6: error: unknown key 'mm' for gemm (did you mean 'm'?)\n"
            "gemm mm=8 n=8 k=8 a=f16 b=f16\n"
            "     ^~\n");
}

TEST(Messages, SemanticErrorsPointAtTheKeyOrTheOperation) {
  EXPECT_EQ(errors_of("conv2d n=32 h=56 w=56 c=64 k=64 r=3 s=3 groups=3 x=f16"),
            "<input>:1:41: error: groups=3 does not divide c=64\n"
            "conv2d n=32 h=56 w=56 c=64 k=64 r=3 s=3 groups=3 x=f16\n"
            "                                        ^~~~~~~~\n"
            "<input>:1:41: error: groups=3 does not divide k=64\n"
            "conv2d n=32 h=56 w=56 c=64 k=64 r=3 s=3 groups=3 x=f16\n"
            "                                        ^~~~~~~~\n");
  // y is not on the line: the error points at the operation word.
  EXPECT_EQ(errors_of("conv2d n=1 h=8 w=8 c=8 k=8 r=3 s=3 x=f16 filter=bf16"),
            "<input>:1:42: error: filter=bf16 does not match x=f16: in fprop, the multiplied "
            "inputs x and filter must have the same dtype (mixed dtypes are for gemm only)\n"
            "conv2d n=1 h=8 w=8 c=8 k=8 r=3 s=3 x=f16 filter=bf16\n"
            "                                         ^~~~~~~~~~~\n");
  EXPECT_EQ(errors_of("conv2d n=1 h=8 w=8 c=8 k=8 r=3 s=3 x=s32 pass=dgrad"),
            "<input>:1:1: error: y=s32 cannot be a multiplied input (dgrad multiplies y and "
            "filter): use f16, bf16, tf32, f32, f64, s8, u8, e4m3 or e5m2\n"
            "conv2d n=1 h=8 w=8 c=8 k=8 r=3 s=3 x=s32 pass=dgrad\n"
            "^~~~~~\n");
}

TEST(Messages, ErrorsAreReportedInColumnOrder) {
  const ParseResult result = parse_workload("gemm m=0 n=8 k=8 a=f16 b=f16 lda=0 alpha=1 math=f32");
  ASSERT_EQ(result.errors.size(), 3u);
  EXPECT_EQ(result.errors[0].message, "m=0 is out of range: sizes are 1..2147483647");
  EXPECT_EQ(result.errors[0].col, 6);
  EXPECT_EQ(result.errors[1].message,
            "lda=0 is out of range: leading dimensions are 1..2147483647");
  EXPECT_EQ(result.errors[1].col, 30);
  EXPECT_EQ(result.errors[2].message,
            "math=f32 does not apply to f16 inputs: math= selects how f32 inputs are multiplied "
            "(tf32 or full f32); remove it");
  EXPECT_EQ(result.errors[2].col, 44);
}

} // namespace
} // namespace tcjit
