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

// A binary's compiler version is the compiler's, optionally followed by "/VARIANT" (the backend
// that wrote the kernel, e.g. "0.1.0+abc/nvrtc"): the variant keeps the binaries of different
// backends apart in lookups, and a binary is current when its version without the variant is the
// current one.
bool is_current_compiler_version(const std::string &stored, const std::string &current);

// The same test in SQL, on the columns toolkit_version and compiler_version with the current
// toolkit version bound to ?1 and the current compiler version to ?2: true for a stale binary.
inline constexpr const char *kStaleBinarySql =
    "(toolkit_version <> ?1 OR (compiler_version <> ?2 AND "
    "substr(compiler_version, 1, length(?2) + 1) <> ?2 || '/'))";
} // namespace tcjit::kernels_db
