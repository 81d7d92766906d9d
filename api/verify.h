// Runtime::verify (include/tcjit/tools.hpp): the kernel the runtime would use for a concrete spec,
// run on random inputs on the runtime's device and checked against the CPU reference; the result
// is recorded in the kernel database. What `tcjit run` does for each operation.
#pragma once

#include "compiler/codegen/pipeline.h"
#include "kernels_db/kernels_db.h"
#include "runtime/device/device.h"
#include "tcjit/tools.hpp"

#include <string>

namespace tcjit::api {

// `device` must be held by the caller alone (its lock); `db` may be null (no cache). Throws Error.
VerifyReport verify_on_device(device::Device &device, kernels_db::KernelsDb *db,
                              const std::string &arch, bool tf32_off, codegen::Backend backend,
                              const OpSpec &spec, const VerifyRequest &request);

} // namespace tcjit::api
