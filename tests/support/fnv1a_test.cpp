#include "support/fnv1a.h"

#include <gtest/gtest.h>

namespace tcjit::support {
namespace {

// From the FNV reference (http://www.isthe.com/chongo/src/fnv/test_fnv.c).
TEST(Fnv1a64, PublishedTestVectors) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ull);
}

TEST(Fnv1a32, PublishedTestVectors) {
  EXPECT_EQ(fnv1a32(""), 0x811c9dc5u);
  EXPECT_EQ(fnv1a32("a"), 0xe40c292cu);
  EXPECT_EQ(fnv1a32("foobar"), 0xbf9cf968u);
}

} // namespace
} // namespace tcjit::support
