// One case of the parameterised codegen tests (backend_diff, fp8, sparse): a spec and the config
// words it is compiled with, printed by gtest as "SPEC [CONFIG]".
#pragma once

#include <ostream>
#include <string>

namespace tcjit {

struct Case {
  const char *spec;
  const char *config; // "" = default
};

inline void PrintTo(const Case &c, std::ostream *os) {
  *os << c.spec << (*c.config ? std::string(" [") + c.config + "]" : std::string());
}

} // namespace tcjit
