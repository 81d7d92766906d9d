#include "kernels_db/sha256.h"

#include "kernels_db/error.h"

#include <openssl/evp.h>

namespace tcjit::kernels_db {

std::string sha256_hex(std::span<const uint8_t> bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha256(), nullptr) != 1)
    throw DbError(DbErrorKind::sqlite, "OpenSSL SHA-256 failed", "sha256_hex",
                  "check the OpenSSL installation (libssl3)");
  return digest_hex(digest, size);
}

std::string digest_hex(const unsigned char *digest, unsigned int size) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex(size * 2, '0');
  for (unsigned int i = 0; i < size; ++i) {
    hex[2 * i] = kHex[digest[i] >> 4];
    hex[2 * i + 1] = kHex[digest[i] & 0xf];
  }
  return hex;
}

std::string sha256_hex(std::string_view text) {
  return sha256_hex(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(text.data()), text.size()));
}

} // namespace tcjit::kernels_db
