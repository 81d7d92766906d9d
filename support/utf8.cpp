#include "support/utf8.h"

namespace tcjit::support {

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

} // namespace tcjit::support
