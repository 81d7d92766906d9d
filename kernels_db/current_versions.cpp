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

} // namespace tcjit::kernels_db
