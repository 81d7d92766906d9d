#include "kernels_db/clock.h"

#include <charconv>
#include <ctime>

namespace tcjit::kernels_db {

int64_t now_unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string format_utc(int64_t unix_ms) {
  const std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

std::optional<std::chrono::milliseconds> parse_age(std::string_view text) {
  if (text.size() < 2)
    return std::nullopt;
  int64_t count = 0;
  const char *last = text.data() + text.size() - 1;
  const auto [end, ec] = std::from_chars(text.data(), last, count);
  if (ec != std::errc() || end != last || count < 0 || count > 100000)
    return std::nullopt;
  int64_t unit_ms = 0;
  switch (*last) {
  case 's': unit_ms = 1000; break;
  case 'm': unit_ms = 60 * 1000; break;
  case 'h': unit_ms = 3600 * 1000; break;
  case 'd': unit_ms = 24 * 3600 * 1000; break;
  case 'w': unit_ms = 7 * 24 * 3600 * 1000; break;
  default: return std::nullopt;
  }
  return std::chrono::milliseconds(count * unit_ms);
}

} // namespace tcjit::kernels_db
