#include "compiler/dsl/lexer.h"

#include <climits>

namespace tcjit {

std::vector<SourceLine> split_lines(std::string_view text) {
  constexpr std::string_view byte_order_mark = "\xEF\xBB\xBF";
  if (text.starts_with(byte_order_mark))
    text.remove_prefix(byte_order_mark.size());
  std::vector<SourceLine> lines;
  size_t start = 0;
  int number = 1;
  while (start < text.size() && number < INT_MAX) {
    const size_t newline = text.find('\n', start);
    const size_t end = newline == std::string_view::npos ? text.size() : newline;
    std::string_view line = text.substr(start, end - start);
    if (line.ends_with('\r'))
      line.remove_suffix(1);
    lines.push_back(SourceLine{line, number});
    ++number;
    if (newline == std::string_view::npos)
      break;
    start = newline + 1;
  }
  return lines;
}

LexedLine lex_line(std::string_view line) {
  LexedLine lexed;
  const std::string_view code = line.substr(0, line.find('#'));
  for (size_t i = 0; i < code.size(); ++i) {
    const unsigned char byte = static_cast<unsigned char>(code[i]);
    if (byte == '\t' || (byte >= 0x20 && byte < 0x7F))
      continue;
    lexed.bad_byte_col = static_cast<int>(i) + 1;
    return lexed;
  }
  size_t i = 0;
  while (i < code.size()) {
    if (code[i] == ' ' || code[i] == '\t') {
      ++i;
      continue;
    }
    const size_t start = i;
    while (i < code.size() && code[i] != ' ' && code[i] != '\t')
      ++i;
    lexed.words.push_back(Word{code.substr(start, i - start), static_cast<int>(start) + 1});
  }
  return lexed;
}

} // namespace tcjit
