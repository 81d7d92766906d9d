#include "compiler/dsl/diagnostic.h"

#include "support/utf8.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tcjit {

namespace {

// One shown character of a source line and the bytes it stands for.
struct ShownChar {
  size_t first_byte = 0;
  std::string text; // one character: printable ASCII, a tab, a UTF-8 sequence, or '?'
};

// The length of the valid UTF-8 sequence at `i` (2 to 4 bytes), or 0. C1 control characters
// (U+0080 to U+009F), overlong forms and surrogates count as invalid.
size_t utf8_sequence_length(std::string_view s, size_t i) {
  uint32_t code = 0;
  const size_t length = support::utf8_sequence(s, i, code);
  return code <= 0x9F ? 0 : length;
}

std::vector<ShownChar> shown_chars(std::string_view line) {
  std::vector<ShownChar> chars;
  size_t i = 0;
  while (i < line.size()) {
    const unsigned char byte = static_cast<unsigned char>(line[i]);
    if (byte == '\t' || (byte >= 0x20 && byte < 0x7F)) {
      chars.push_back(ShownChar{i, std::string(1, static_cast<char>(byte))});
      ++i;
      continue;
    }
    const size_t length = byte >= 0x80 ? utf8_sequence_length(line, i) : 0;
    if (length == 0) {
      chars.push_back(ShownChar{i, "?"});
      ++i;
      continue;
    }
    chars.push_back(ShownChar{i, std::string(line.substr(i, length))});
    i += length;
  }
  return chars;
}

// The index of the shown character holding byte `offset` (chars.size() past the end).
size_t char_at(const std::vector<ShownChar> &chars, size_t offset) {
  const auto after =
      std::upper_bound(chars.begin(), chars.end(), offset,
                       [](size_t value, const ShownChar &c) { return value < c.first_byte; });
  if (after == chars.begin())
    return 0;
  const size_t index = static_cast<size_t>(after - chars.begin()) - 1;
  if (offset >= chars[index].first_byte + chars[index].text.size())
    return index + 1;
  return index;
}

constexpr size_t window_chars = 240;
constexpr size_t window_lead = 80;

} // namespace

std::string Diagnostic::render() const {
  std::string out =
      file + ":" + std::to_string(line) + ":" + std::to_string(col) + ": error: " + message + "\n";
  const std::vector<ShownChar> chars = shown_chars(source_line);
  const size_t first_byte = col > 1 ? static_cast<size_t>(col) - 1 : 0;
  const size_t byte_count = length > 1 ? static_cast<size_t>(length) : 1;
  const size_t caret_begin = char_at(chars, first_byte);
  const size_t caret_end =
      std::max(caret_begin + 1, char_at(chars, first_byte + byte_count - 1) + 1);

  size_t shown_begin = 0;
  size_t shown_end = chars.size();
  if (chars.size() > window_chars) {
    shown_begin = caret_begin > window_lead ? caret_begin - window_lead : 0;
    shown_end = std::min(chars.size(), shown_begin + window_chars);
  }
  const std::string lead = shown_begin > 0 ? "..." : "";
  std::string caret_line(lead.size(), ' ');
  out += lead;
  for (size_t i = shown_begin; i < shown_end; ++i) {
    out += chars[i].text;
    if (i < caret_begin)
      caret_line += chars[i].text == "\t" ? '\t' : ' ';
  }
  if (shown_end < chars.size())
    out += "...";
  out += "\n";
  const size_t caret_chars = std::max<size_t>(1, std::min(caret_end, shown_end) - caret_begin);
  caret_line += "^";
  caret_line.append(caret_chars - 1, '~');
  out += caret_line + "\n";
  return out;
}

std::string quoted_word(std::string_view word) {
  constexpr size_t longest = 40;
  static constexpr char hex[] = "0123456789abcdef";
  std::string out = "'";
  for (size_t i = 0; i < word.size() && i < longest; ++i) {
    const unsigned char byte = static_cast<unsigned char>(word[i]);
    if (byte >= 0x20 && byte < 0x7F) {
      out += static_cast<char>(byte);
      continue;
    }
    out += "\\x";
    out += hex[byte >> 4];
    out += hex[byte & 0xFu];
  }
  if (word.size() > longest)
    out += "...";
  out += "'";
  return out;
}

} // namespace tcjit
