// The versions a binary must match to be used: those of the running tcjit build. kernels_db knows
// no compiler or device, so these defaults come from the build system (the CUDA toolkit found at
// configure time and the tcjit project version); the layers above pass their own when they know
// better (e.g. the toolkit version reported by NVRTC at run time).
#pragma once

#include <string>

namespace tcjit::kernels_db {

struct CurrentVersions {
  std::string toolkit_version;  // CUDA toolkit, e.g. "12.4.131"
  std::string compiler_version; // tcjit compiler, e.g. "0.1.0"
};

CurrentVersions build_versions();

} // namespace tcjit::kernels_db
