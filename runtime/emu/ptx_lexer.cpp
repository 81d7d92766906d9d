#include "runtime/emu/ptx_lexer.h"

#include "runtime/emu/ptx_error.h"
#include "support/escape_controls.h"

namespace tcjit::emu {

namespace {

bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$' || c == '%' || c == '.';
}

} // namespace

void throw_load_error(std::string_view source_name, int line, const std::string &what) {
  // `what` may quote the file's text: its control characters escaped (\x1b), never raw
  throw device::DeviceError(device::ErrorKind::ModuleLoad, support::escape_controls_keep_lines(
                                                               std::string(source_name) + ":" +
                                                               std::to_string(line) + ": " + what));
}

std::vector<Token> lex_ptx(std::string_view text, std::string_view source_name) {
  std::vector<Token> tokens;
  tokens.reserve(text.size() / 6); // generated PTX: about one token per 6-7 characters
  int line = 1;
  size_t i = 0;
  const size_t n = text.size();
  while (i < n) {
    char c = text[i];
    if (c == '\n') {
      ++line;
      ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && text[i + 1] == '/') {
      while (i < n && text[i] != '\n')
        ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && text[i + 1] == '*') {
      int start = line;
      i += 2;
      while (i + 1 < n && !(text[i] == '*' && text[i + 1] == '/')) {
        if (text[i] == '\n')
          ++line;
        ++i;
      }
      if (i + 1 >= n)
        throw_load_error(source_name, start, "unterminated /* comment");
      i += 2;
      continue;
    }
    if (c == '"') {
      int start = line;
      size_t j = i + 1;
      while (j < n && text[j] != '"') {
        if (text[j] == '\n')
          ++line;
        ++j;
      }
      if (j >= n)
        throw_load_error(source_name, start, "unterminated string");
      tokens.push_back({TokenKind::String, std::string(text.substr(i + 1, j - i - 1)), start});
      i = j + 1;
      continue;
    }
    if (is_word_char(c)) {
      size_t j = i;
      while (j < n) {
        if (is_word_char(text[j])) {
          ++j;
        } else if (text[j] == ':' && j + 1 < n && text[j + 1] == ':') {
          j += 2;
        } else {
          break;
        }
      }
      tokens.push_back({TokenKind::Word, std::string(text.substr(i, j - i)), line});
      i = j;
      continue;
    }
    switch (c) {
    case ',':
    case ';':
    case ':':
    case '{':
    case '}':
    case '[':
    case ']':
    case '(':
    case ')':
    case '<':
    case '>':
    case '+':
    case '-':
    case '=':
    case '|':
    case '!':
    case '@':
      tokens.push_back({TokenKind::Punct, std::string(1, c), line});
      ++i;
      continue;
    }
    throw_load_error(source_name, line, std::string("unexpected character '") + c + "'");
  }
  tokens.push_back({TokenKind::End, "", line});
  return tokens;
}

} // namespace tcjit::emu
