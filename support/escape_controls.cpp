#include "support/escape_controls.h"

#include <cstdint>

namespace tcjit::support {

namespace {

// The length (2 to 4) of the valid UTF-8 sequence at `i` and its code point; 0 when the bytes
// there are not one (a stray continuation byte, an overlong form, a surrogate, a cut sequence).
size_t utf8_sequence(std::string_view s, size_t i, uint32_t &code) {
  const auto byte = [&](size_t j) { return static_cast<unsigned char>(s[j]); };
  const unsigned char lead = byte(i);
  size_t length = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    code = lead & 0x1Fu;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    code = lead & 0x0Fu;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    code = lead & 0x07u;
  } else {
    return 0;
  }
  if (i + length > s.size())
    return 0;
  for (size_t j = 1; j < length; ++j) {
    if ((byte(i + j) & 0xC0u) != 0x80u)
      return 0;
    code = (code << 6) | (byte(i + j) & 0x3Fu);
  }
  constexpr uint32_t kLowest[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < kLowest[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF))
    return 0;
  return length;
}

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
