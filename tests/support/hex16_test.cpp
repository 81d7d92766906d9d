#include "support/hex16.h"

#include <gtest/gtest.h>

namespace tcjit::support {
namespace {

TEST(Hex16, SixteenLowerCaseDigitsZeroPadded) {
  EXPECT_EQ(hex16(0), "0000000000000000");
  EXPECT_EQ(hex16(0xabcdefull), "0000000000abcdef");
  EXPECT_EQ(hex16(0xffffffffffffffffull), "ffffffffffffffff");
}

} // namespace
} // namespace tcjit::support
