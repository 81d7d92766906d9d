#include "support/string_printf.h"

#include <cstdarg>
#include <cstdio>

namespace tcjit::support {

std::string string_printf(const char *format, ...) {
  std::va_list args;
  va_start(args, format);
  std::va_list args_again;
  va_copy(args_again, args);
  const int length = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  std::string text;
  if (length > 0) {
    text.resize(static_cast<size_t>(length));
    std::vsnprintf(text.data(), text.size() + 1, format, args_again);
  }
  va_end(args_again);
  return text;
}

} // namespace tcjit::support
