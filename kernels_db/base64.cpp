#include "kernels_db/base64.h"

#include <openssl/evp.h>

namespace tcjit::kernels_db {

std::string base64_encode(std::span<const uint8_t> bytes) {
  std::string text(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int size = EVP_EncodeBlock(reinterpret_cast<unsigned char *>(text.data()), bytes.data(),
                                   static_cast<int>(bytes.size()));
  text.resize(static_cast<size_t>(size));
  return text;
}

std::optional<std::vector<uint8_t>> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0)
    return std::nullopt;
  std::vector<uint8_t> bytes(text.size() / 4 * 3);
  if (text.empty())
    return bytes;
  const int size =
      EVP_DecodeBlock(bytes.data(), reinterpret_cast<const unsigned char *>(text.data()),
                      static_cast<int>(text.size()));
  if (size < 0)
    return std::nullopt;
  // EVP_DecodeBlock counts the padding as zero bytes.
  size_t padding = 0;
  if (text.back() == '=')
    ++padding;
  if (text.size() >= 2 && text[text.size() - 2] == '=')
    ++padding;
  bytes.resize(static_cast<size_t>(size) - padding);
  return bytes;
}

} // namespace tcjit::kernels_db
