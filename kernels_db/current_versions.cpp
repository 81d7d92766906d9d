#include "kernels_db/current_versions.h"

#ifndef TCJIT_DB_TOOLKIT_VERSION
#define TCJIT_DB_TOOLKIT_VERSION "unknown"
#endif
#ifndef TCJIT_DB_COMPILER_VERSION
#define TCJIT_DB_COMPILER_VERSION "unknown"
#endif

namespace tcjit::kernels_db {

CurrentVersions build_versions() {
  return {TCJIT_DB_TOOLKIT_VERSION, TCJIT_DB_COMPILER_VERSION};
}

bool is_current_compiler_version(const std::string &stored, const std::string &current) {
  return stored == current ||
         (stored.size() > current.size() && stored.compare(0, current.size(), current) == 0 &&
          stored[current.size()] == '/');
}

} // namespace tcjit::kernels_db
