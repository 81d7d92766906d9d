// SHA-256 of binaries (OpenSSL libcrypto), as 64 lowercase hex digits.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace tcjit::kernels_db {

std::string sha256_hex(std::span<const uint8_t> bytes);
std::string sha256_hex(std::string_view text);
// A digest as lowercase hex digits (two per byte).
std::string digest_hex(const unsigned char *digest, unsigned int size);

} // namespace tcjit::kernels_db
