#include "support/string_printf.h"

#include <gtest/gtest.h>

#include <string>

namespace tcjit::support {
namespace {

TEST(StringPrintf, FormatsLikePrintf) {
  EXPECT_EQ(string_printf("%.1f ms", 12.345), "12.3 ms");
  EXPECT_EQ(string_printf("%.0f%%", 46.4), "46%");
  EXPECT_EQ(string_printf("%.3g", 1234567.0), "1.23e+06");
  EXPECT_EQ(string_printf("%s=%d", "k", 7), "k=7");
}

TEST(StringPrintf, EmptyAndLongResults) {
  EXPECT_EQ(string_printf("%s", ""), "");
  // Longer than any fixed buffer the old per-file helpers had (64 bytes).
  const std::string long_text(300, 'x');
  EXPECT_EQ(string_printf("%s!", long_text.c_str()), long_text + "!");
  EXPECT_EQ(string_printf("%.1f", 1e100).size(), 103u);
}

} // namespace
} // namespace tcjit::support
