#include "support/escape_controls.h"
#include "support/utf8.h"

#include <cstdint>

namespace tcjit::support {

namespace {

void append_hex(std::string &out, const char *prefix, unsigned value) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += prefix;
  out += kHex[(value >> 4) & 15];
  out += kHex[value & 15];
}

std::string escape(std::string_view text, bool keep_lines) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x80) {
      const bool kept =
          (byte >= 0x20 && byte != 0x7f) || (keep_lines && (byte == '\n' || byte == '\t'));
      if (kept)
        out += static_cast<char>(byte);
      else
        append_hex(out, "\\x", byte);
      ++i;
      continue;
    }
    uint32_t code = 0;
    const size_t length = utf8_sequence(text, i, code);
    if (length == 0) {
      append_hex(out, "\\x", byte);
      ++i;
    } else if (code <= 0x9F) { // C1 controls: CSI (U+009B), OSC (U+009D), ...
      append_hex(out, "\\u00", code);
      i += length;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

} // namespace

std::string escape_controls(std::string_view text) {
  return escape(text, false);
}

std::string escape_controls_keep_lines(std::string_view text) {
  return escape(text, true);
}

} // namespace tcjit::support
