// Splits DSL text into lines and a line into words.
//
// A line ends at "\n" (a "\r" before it is dropped). `#` starts a comment that runs to the end of
// the line. Outside comments a line holds printable ASCII, spaces and tabs; words are separated
// by spaces and tabs.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace tcjit {

// Lines longer than this (in bytes, comment included) are rejected without being read.
inline constexpr size_t max_line_length = 4096;

struct SourceLine {
  std::string_view text; // without the line ending
  int number = 0;        // 1-based
};

// The lines of `text`. A UTF-8 byte-order mark at the start is skipped. Stops after INT_MAX lines.
std::vector<SourceLine> split_lines(std::string_view text);

struct Word {
  std::string_view text;
  int col = 0; // 1-based byte column in the line
};

struct LexedLine {
  std::vector<Word> words;
  // The 1-based column of the first byte outside a comment that is neither printable ASCII nor
  // a space or tab; the line's words are empty then.
  std::optional<int> bad_byte_col;
};

// The words of a line of at most max_line_length bytes.
LexedLine lex_line(std::string_view line);

} // namespace tcjit
