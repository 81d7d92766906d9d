// Problem key hashes are uint64 values chosen by the caller. SQLite integers are int64, so a hash
// is stored bit-for-bit (two's complement) and mapped back on read; people see 16 hex digits.
#pragma once

#include <bit>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tcjit::kernels_db {

inline int64_t hash_to_sql(uint64_t hash) {
  return std::bit_cast<int64_t>(hash);
}
inline uint64_t hash_from_sql(int64_t stored) {
  return std::bit_cast<uint64_t>(stored);
}

// 16 lowercase hex digits, zero-padded.
std::string format_key_hash(uint64_t hash);
// Accepts 16 hex digits, 0x followed by 1..16 hex digits, or nothing else.
std::optional<uint64_t> parse_key_hash(std::string_view text);

} // namespace tcjit::kernels_db
