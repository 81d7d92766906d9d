// FNV-1a (Fowler/Noll/Vo), the one non-cryptographic hash of tcjit: problem key hashes
// (docs/keys.md), the PTX compiler's single-flight key, the tag of a conv kernel's constants.
// Reference and test vectors: http://www.isthe.com/chongo/tech/comp/fnv/
#pragma once

#include <cstdint>
#include <string_view>

namespace tcjit::support {

// 64-bit FNV-1a (offset basis 0xcbf29ce484222325, prime 0x100000001b3) of `bytes`.
uint64_t fnv1a64(std::string_view bytes);

// 32-bit FNV-1a (offset basis 0x811c9dc5, prime 0x01000193) of `bytes`.
uint32_t fnv1a32(std::string_view bytes);

} // namespace tcjit::support
