// printf into a std::string: the one formatter of numbers in messages ("%.1f ms", "%.3g").
#pragma once

#include <string>

namespace tcjit::support {

// What std::printf(format, ...) would print, whatever its length.
[[gnu::format(printf, 1, 2)]] std::string string_printf(const char *format, ...);

} // namespace tcjit::support
