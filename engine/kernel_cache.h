// Where the kernel for one spec (a GEMM or a convolution) comes from: the kernel cache when a
// binary built by this very compiler exists, else the code generator, now (and then it is stored).
// Shared by `tcjit run` and the embedding API (include/tcjit/tcjit.hpp).
#pragma once

#include "compiler/codegen/pipeline.h"
#include "compiler/spec/problem_key.h"
#include "engine/kernel_compile.h"
#include "kernels_db/kernels_db.h"
#include "runtime/device/device.h"
#include "tcjit/op_spec.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tcjit::engine {

struct KernelRequest {
  std::string arch;                          // a known arch (find_arch)
  bool tf32_off = false;                     // tf32_disabled_by_environment()
  std::optional<codegen::TileConfig> config; // nullopt: the configs in `chosen`
  bool compile_on_miss = true;               // false: a cache miss is an error
  // false: the database's kernels are not looked at (one that did not load was set aside); the
  // kernel is compiled now and stored in its place.
  bool use_stored = true;
  // Which backend writes the kernel (part of the binary's key).
  codegen::Backend backend = codegen::Backend::llvm;
  // Else the configs to try, best first (the tuner's tuner::chosen_configs(), with its note): the
  // first whose cubin neither spills nor needs a stack frame is taken.
  std::vector<codegen::TileConfig> chosen;
  std::string chosen_note;
  // Other problems' keys whose stored kernel of the first config (request.config, else chosen's
  // first) is this spec's kernel (the same identity): the problem of a kernel family's dispatch
  // table that decided the config (tuner/size_family.h). Looked up after the spec's own key.
  std::vector<std::string> stored_under;
};

enum class KernelOrigin { database, compiled_now };

// What the compile of the shipped cubin (now, or recorded in the cache) said about the main
// kernel; -1 when unknown (no compile could run: the driver compiles the PTX at load).
struct MainKernelResources {
  int registers = -1;
  int spill_bytes = -1; // stores + loads
  int stack_bytes = -1; // per thread
  int shared_bytes = 0; // dynamic (the plan's) + static (ptxas's, when known)
};

// The kernel that serves a request: found in the kernel cache, or compiled now.
struct ServedKernel {
  codegen::CompiledKernel kernel; // set when ok()
  // The cubin of kernel.ptx for the request's arch (from the database, or compiled now: ptxas,
  // whole program), empty when there is none. Pass it to load_kernel: a GPU of that arch loads it
  // instead of compiling the PTX. `resources` are this cubin's.
  std::vector<uint8_t> cubin;
  KernelOrigin origin = KernelOrigin::compiled_now;
  MainKernelResources resources;
  std::string how;                 // "hit (database ..., compiled 12.3 ms earlier)", "miss, ..."
  std::vector<std::string> errors; // each a full sentence (no "tcjit run: error: " prefix)
  std::vector<std::string> warnings;
  bool missed = false; // set with errors when compile_on_miss is false and the cache had nothing
  bool internal_error = false; // set with errors when the generated PTX does not compile (a bug)
  // Set with errors that are the spec's: act=custom's function does not compile, or the backend
  // cannot compile it.
  bool user_code_error = false;
  bool ok() const { return errors.empty(); }
};

// The arch kernels are compiled for: `requested` when set, else the device's own ("sm_80").
// Returns "" and sets `error` (what, and how to fix) when that arch is not one tcjit targets.
std::string target_arch(std::string_view requested, const device::DeviceInfo &device,
                        std::string &error);

// A kernel from the database is served as it is only when this user's tcjit stored it (its MAC is
// valid, kernels_db/trust_key.h). A foreign one (imported, merged, copied from another user or
// edited) is compiled again from the spec and its config: when its stored PTX is what this code
// generator writes, it is "rebuilt" (the cubin built now is used); else it is "discarded" with a
// warning. The compiled kernel is stored in its place, unless the database is read-only (then it
// lives in this process only, and `how` says so). A foreign kernel is rebuilt even under
// compile_on_miss = false (it is in the database; it is only checked).
//
// `spec` must be a valid, concrete GEMM or convolution and `key` its make_problem_key(spec,
// request.arch, request.tf32_off). `db` may be null (no cache). Throws kernels_db::DbError when the
// database fails; std::runtime_error when the environment is unusable (see codegen::compile_gemm).
ServedKernel find_or_compile_kernel(const OpSpec &spec, const ProblemKey &key,
                                    const KernelRequest &request, kernels_db::KernelsDb *db);

// After a kernel served from the database (origin database) failed to load on a device: deletes
// its row when the database can be written and returns the warning to report ("... does not load
// (WHY): set aside, compiled again"). Serve the request again with use_stored = false.
std::string set_aside_stored_kernel(const ServedKernel &served, const ProblemKey &key,
                                    const KernelRequest &request, kernels_db::KernelsDb *db,
                                    const std::string &why);

} // namespace tcjit::engine
