#include "support/fnv1a.h"

namespace tcjit::support {
namespace {

template <typename Word> Word fnv1a(std::string_view bytes, Word offset_basis, Word prime) {
  Word h = offset_basis;
  for (unsigned char ch : bytes) {
    h ^= ch;
    h *= prime;
  }
  return h;
}

} // namespace

uint64_t fnv1a64(std::string_view bytes) {
  return fnv1a<uint64_t>(bytes, 0xcbf29ce484222325ull, 0x100000001b3ull);
}

uint32_t fnv1a32(std::string_view bytes) {
  return fnv1a<uint32_t>(bytes, 0x811c9dc5u, 0x01000193u);
}

} // namespace tcjit::support
