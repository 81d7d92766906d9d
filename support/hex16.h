// A 64-bit value as people read hashes: 16 lower-case hex digits, zero-padded (problem key hashes,
// custom activation digests).
#pragma once

#include <cstdint>
#include <string>

namespace tcjit::support {

std::string hex16(uint64_t value);

} // namespace tcjit::support
