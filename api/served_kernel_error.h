// The one translation of a kernel engine::find_or_compile_kernel could not serve into the
// public Error (include/tcjit/tcjit.hpp).
#pragma once

#include "engine/kernel_cache.h"
#include "tcjit/tcjit.hpp"

#include <string>

namespace tcjit::api {

// The Error at `where` ("prepare", "verify") of `served`, which must not be ok(): its errors, one
// a line. A generated kernel that does not compile (a bug in tcjit) is internal; a cache miss
// when compiling on a miss was off is not_found, with `miss_fix`; the spec's own act=custom
// function is bad_spec; what the code generator refuses for this spec is `refused` (prepare:
// bad_spec, the spec must change; verify: unsupported).
Error served_kernel_error(const engine::ServedKernel &served, const std::string &where,
                          ErrorCode refused, const std::string &miss_fix = "");

} // namespace tcjit::api
