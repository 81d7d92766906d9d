// A located error message about DSL text, rendered like a compiler's.
#pragma once

#include <string>
#include <string_view>

namespace tcjit {

struct Diagnostic {
  std::string file;        // "<input>" when not from a file
  int line = 0;            // 1-based
  int col = 0;             // 1-based byte column of the offending word
  int length = 1;          // caret underline length, in bytes
  std::string message;     // e.g. "unknown dtype 'fp16' (did you mean 'f16'?)"
  std::string source_line; // the whole source line (the first 4096 bytes of an over-long one)

  // "file:line:col: error: message\n<source line>\n    ^~~~\n". The source line is shown with
  // control characters and invalid UTF-8 replaced by '?', and, when longer than 240 characters,
  // as a window around the caret between "...".
  std::string render() const;
};

// `word` between single quotes, for messages: bytes outside printable ASCII are written as \xNN
// and words longer than 40 bytes are cut with "...".
std::string quoted_word(std::string_view word);

} // namespace tcjit
