// Base64 (OpenSSL) for binaries in JSON Lines exports.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tcjit::kernels_db {

std::string base64_encode(std::span<const uint8_t> bytes);
// nullopt when `text` is not valid base64.
std::optional<std::vector<uint8_t>> base64_decode(std::string_view text);

} // namespace tcjit::kernels_db
