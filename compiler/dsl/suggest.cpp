#include "compiler/dsl/suggest.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace tcjit {

namespace {

char lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [](char x, char y) { return lower(x) == lower(y); });
}

} // namespace

int edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the dynamic-programming table: i-2, i-1 and i.
  const size_t width = b.size() + 1;
  std::vector<int> before(width), previous(width), current(width);
  for (size_t j = 0; j < width; ++j)
    previous[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = static_cast<int>(i);
    for (size_t j = 1; j < width; ++j) {
      const int substitution = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      int best = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + substitution});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
          lower(a[i - 2]) == lower(b[j - 1]))
        best = std::min(best, before[j - 2] + 1);
      current[j] = best;
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::optional<std::string_view> closest_word(std::string_view word,
                                             std::span<const std::string_view> candidates,
                                             std::span<const Alias> aliases) {
  for (const Alias &alias : aliases) {
    if (!equal_ignoring_case(word, alias.spelling))
      continue;
    if (std::find(candidates.begin(), candidates.end(), alias.word) != candidates.end())
      return alias.word;
  }
  const int length = static_cast<int>(std::min<size_t>(word.size(), 1000));
  const int limit = std::min((length + 2) / 3, length - 1);
  std::optional<std::string_view> best;
  int best_distance = limit + 1;
  for (const std::string_view candidate : candidates) {
    const int length_difference = std::abs(static_cast<int>(candidate.size()) - length);
    if (word.size() > 1000 || length_difference >= best_distance)
      continue;
    const int distance = edit_distance(word, candidate);
    if (distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view word, std::span<const std::string_view> candidates,
                         std::span<const Alias> aliases) {
  const std::optional<std::string_view> best = closest_word(word, candidates, aliases);
  if (!best)
    return "";
  return " (did you mean '" + std::string(*best) + "'?)";
}

} // namespace tcjit
