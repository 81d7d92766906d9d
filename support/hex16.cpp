#include "support/hex16.h"

#include <cstdio>

namespace tcjit::support {

std::string hex16(uint64_t value) {
  char digits[17];
  std::snprintf(digits, sizeof digits, "%016llx", static_cast<unsigned long long>(value));
  return digits;
}

} // namespace tcjit::support
