// "Did you mean ...?": the closest known word to a misspelt one.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tcjit {

// The optimal-string-alignment distance between a and b, ignoring ASCII case: the fewest
// insertions, deletions, substitutions and swaps of adjacent characters that turn a into b.
int edit_distance(std::string_view a, std::string_view b);

// A spelling from another tool that means a known word (`fp16` for `f16`, `matmul` for `gemm`).
struct Alias {
  std::string_view spelling;
  std::string_view word;
};

// The candidate closest to `word` when it is a plausible typo of it: an alias spelling of a
// candidate (ignoring case), or the first candidate at the smallest edit distance when that
// distance is at most ceil(len/3) and smaller than the word's length.
std::optional<std::string_view> closest_word(std::string_view word,
                                             std::span<const std::string_view> candidates,
                                             std::span<const Alias> aliases = {});

// " (did you mean 'x'?)" for the closest candidate, or "" when none is close.
std::string did_you_mean(std::string_view word, std::span<const std::string_view> candidates,
                         std::span<const Alias> aliases = {});

} // namespace tcjit
