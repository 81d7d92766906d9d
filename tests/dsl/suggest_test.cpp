// Edit distance and did-you-mean.
#include "compiler/dsl/suggest.h"
#include "compiler/dsl/vocabulary.h"

#include <gtest/gtest.h>

#include <array>

namespace tcjit {
namespace {

TEST(EditDistance, CountsEditsAndSwapsIgnoringCase) {
  EXPECT_EQ(edit_distance("", ""), 0);
  EXPECT_EQ(edit_distance("abc", ""), 3);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3);
  EXPECT_EQ(edit_distance("alhpa", "alpha"), 1); // one swap of neighbours
  EXPECT_EQ(edit_distance("fp16", "f16"), 1);
  EXPECT_EQ(edit_distance("F16", "f16"), 0);
}

constexpr std::array<std::string_view, 4> words{"alpha", "beta", "bias", "batch"};

TEST(ClosestWord, PlausibleTyposOnly) {
  EXPECT_EQ(closest_word("alhpa", words), "alpha");
  EXPECT_EQ(closest_word("bais", words), "bias");
  EXPECT_EQ(closest_word("BETA", words), "beta");
  EXPECT_EQ(closest_word("gamma", words), std::nullopt);
  EXPECT_EQ(closest_word("", words), std::nullopt);
  // One letter never suggests another single letter.
  constexpr std::array<std::string_view, 2> letters{"m", "n"};
  EXPECT_EQ(closest_word("x", letters), std::nullopt);
  EXPECT_EQ(closest_word("M", letters), "m");
  EXPECT_EQ(closest_word(std::string(100000, 'a'), words), std::nullopt);
}

TEST(ClosestWord, AliasesOfOtherTools) {
  const std::vector<std::string_view> dtypes = names_of<DType>(all_dtypes);
  EXPECT_EQ(closest_word("half", dtypes, dtype_aliases()), "f16");
  EXPECT_EQ(closest_word("BFloat16", dtypes, dtype_aliases()), "bf16");
  EXPECT_EQ(closest_word("int8", dtypes, dtype_aliases()), "s8");
  EXPECT_EQ(did_you_mean("double", dtypes, dtype_aliases()), " (did you mean 'f64'?)");
  EXPECT_EQ(did_you_mean("complex", dtypes, dtype_aliases()), "");
}

} // namespace
} // namespace tcjit
