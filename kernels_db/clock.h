// Wall-clock timestamps stored in the database: milliseconds since the Unix epoch (UTC).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tcjit::kernels_db {

int64_t now_unix_ms();
// "2026-11-22T01:50:54Z".
std::string format_utc(int64_t unix_ms);
// Parses an age such as "30d", "12h", "45m", "90s" or "2w"; nullopt when malformed.
std::optional<std::chrono::milliseconds> parse_age(std::string_view text);

} // namespace tcjit::kernels_db
