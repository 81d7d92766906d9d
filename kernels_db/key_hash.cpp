#include "kernels_db/key_hash.h"

#include "support/hex16.h"

#include <charconv>

namespace tcjit::kernels_db {

std::string format_key_hash(uint64_t hash) {
  return support::hex16(hash);
}

std::optional<uint64_t> parse_key_hash(std::string_view text) {
  bool prefixed = false;
  if (text.starts_with("0x") || text.starts_with("0X")) {
    text.remove_prefix(2);
    prefixed = true;
  }
  if (text.empty() || text.size() > 16 || (!prefixed && text.size() != 16))
    return std::nullopt;
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (ec != std::errc() || end != text.data() + text.size())
    return std::nullopt;
  return value;
}

} // namespace tcjit::kernels_db
