// UTF-8 decoding of one sequence, for code that checks or escapes text byte by byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tcjit::support {

// The length (2 to 4) of the valid UTF-8 sequence at `i` and its code point; 0 when the bytes
// there are not one (a stray continuation byte, an overlong form, a surrogate, a cut sequence).
size_t utf8_sequence(std::string_view s, size_t i, uint32_t &code);

} // namespace tcjit::support
