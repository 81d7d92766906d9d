// What the kernel cache stores about a spec and its compiled kernel: the rows of kernels_db,
// built from the compiler's values. kernels_db itself knows no compiler; this is where they meet.
#pragma once

#include "compiler/codegen/pipeline.h"
#include "compiler/spec/problem_key.h"
#include "engine/kernel_compile.h"
#include "kernels_db/records.h"
#include "runtime/jit/entry_resources.h"
#include "tcjit/op_spec.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tcjit::engine {

// The version of tcjit's code generator that binaries are tied to: the project version plus a
// fingerprint of compiler/codegen's sources, so a changed code generator never reuses a binary
// the old one built.
std::string compiler_version();
// The compiler version a binary of `backend` is stored under: compiler_version() for llvm,
// "<compiler_version()>/nvrtc" for the CUDA C++ backend, so a lookup for one backend never
// returns the other's kernel (kernels_db::is_current_compiler_version: both are current).
std::string compiler_version(codegen::Backend backend);
// The CUDA toolkit version tcjit was built with.
std::string toolkit_version();

// {"bk":32,"bm":128,...}: canonical JSON (sorted keys, no spaces) of a resolved config.
std::string config_json(const codegen::TileConfig &);

// The config of config_json() text; nullopt when a field is missing or not an integer (the values
// are not validated: validate_tile_config does that).
std::optional<codegen::TileConfig> parse_config_json(std::string_view text);

kernels_db::ProblemRecord problem_record(const OpSpec &, const ProblemKey &, std::string_view arch);
// The binary record of `kernel`: its PTX, and the resources of each of its kernels as the compile
// that produced the shipped cubin reported them (`resources`; empty when no compile ran). Stored
// under the compiler version of the backend that wrote it (cuda_source set: nvrtc).
kernels_db::BinaryRecord binary_record(const ProblemKey &, const codegen::CompiledKernel &,
                                       std::string_view arch,
                                       const std::vector<jit::EntryResources> &resources);

} // namespace tcjit::engine
