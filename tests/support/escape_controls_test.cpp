#include "support/escape_controls.h"

#include <gtest/gtest.h>

namespace tcjit::support {
namespace {

TEST(EscapeControls, Osc52ClipboardSequenceComesOutEscaped) {
  const std::string osc52 = "gemm m=1 \x1b]52;c;ZXZpbA==\x07 n=2";
  EXPECT_EQ(escape_controls(osc52), "gemm m=1 \\x1b]52;c;ZXZpbA==\\x07 n=2");
  EXPECT_EQ(escape_controls_keep_lines(osc52), "gemm m=1 \\x1b]52;c;ZXZpbA==\\x07 n=2");
}

TEST(EscapeControls, C0DelC1AndInvalidUtf8AreEscapedTextIsKept) {
  EXPECT_EQ(escape_controls(std::string("a\0b\x7f", 4)), "a\\x00b\\x7f");
  EXPECT_EQ(escape_controls("line1\nline2\ttab\r"), "line1\\x0aline2\\x09tab\\x0d");
  EXPECT_EQ(escape_controls_keep_lines("line1\nline2\ttab\r"), "line1\nline2\ttab\\x0d");
  EXPECT_EQ(escape_controls("\xc2\x9b"
                            "31m"),
            "\\u009b31m"); // CSI as a UTF-8 character
  EXPECT_EQ(escape_controls("\x9b"
                            "31m"),
            "\\x9b31m"); // CSI as a lone byte (not UTF-8)
  EXPECT_EQ(escape_controls("\xff\xc3"), "\\xff\\xc3");
  EXPECT_EQ(escape_controls("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 C:\\dir"),
            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 C:\\dir");
  EXPECT_EQ(escape_controls(""), "");
}

} // namespace
} // namespace tcjit::support
