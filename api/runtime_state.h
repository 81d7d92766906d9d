// The state behind tcjit::Runtime and tcjit::Operation (include/tcjit/tcjit.hpp), shared by the
// three files that implement them, one job each:
//   runtime.cpp            Runtime: the device, the database and the kernel cache — prepare() finds
//                          a problem's kernel in memory, the database or the code generator, loads
//                          it once per identity, with the dispatch table of a spec with size
//                          ranges, and compiles the kernels for less-aligned pointers
//   operation_launch.cpp   Operation: a prepared kernel launched at the sizes given, after the
//                          checks of its sizes and pointers (in C++'s or the C API's words)
//   background_tuning.cpp  tuning a missed problem now (MissPolicy::tune) or on the background
//                          thread (MissPolicy::background), and switching its operation to the
//                          winner
//   background_compile.cpp a symbolic spec's kernel compiled after prepare() returned
//   predicted_time.cpp     Operation::predicted_time: the decision's measured time or the cost
//                          model's
#pragma once

#include "tcjit/tcjit.hpp"

#include "compiler/spec/problem_key.h"
#include "engine/kernel_cache.h"
#include "engine/kernel_launch.h"
#include "engine/workspace_pool.h"
#include "kernels_db/dispatch.h"
#include "kernels_db/kernels_db.h"
#include "runtime/device/device.h"
#include "tuner/perf_model.h"
#include "tuner/tune.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace tcjit {
namespace api {

// The device with the lock that serializes its use (the emulator is not thread-safe), and the
// workspaces of launches that bring none (guarded by the lock; freed before the device closes).
struct DeviceContext {
  std::unique_ptr<device::Device> device;
  std::mutex mutex;
  engine::WorkspacePool workspaces;

  DeviceContext() = default;
  DeviceContext(const DeviceContext &) = delete;
  DeviceContext &operator=(const DeviceContext &) = delete;
  ~DeviceContext() {
    if (device)
      workspaces.release(*device);
  }
};

// A device failure as Error at `where` (the device's messages already say how to fix them).
Error device_error(const device::DeviceError &e, const std::string &where);

// One compiled kernel loaded into the runtime's device, shared by every operation whose plan has
// its identity (codegen::kernel_identity: the same PTX whatever the sizes).
struct SharedKernel {
  std::string identity;
  codegen::CompiledKernel kernel;
  engine::MainKernelResources resources;
  std::shared_ptr<DeviceContext> device;
  engine::LoadedKernel loaded;

  SharedKernel() = default;
  SharedKernel(const SharedKernel &) = delete;
  SharedKernel &operator=(const SharedKernel &) = delete;
  ~SharedKernel() {
    if (!device || loaded.module.id == 0)
      return;
    std::lock_guard lock(device->mutex);
    try {
      device->device->unload_module(loaded.module);
    } catch (const device::DeviceError &) {
      // Nothing to report from a destructor; the module dies with the device.
    }
  }
};

// Kernels for base pointers less aligned than an operation's kernel reads and writes in vectors
// (cuBLASLt likewise picks kernels by the pointers' actual alignment): the default chooser's config
// for the spec with that alignment, compiled on the first launch that needs it (not stored in the
// database: the spec's own kernel is what tuning is for), loaded once per identity and kept by the
// runtime for every operation it prepared. Under MissPolicy::fail there is none: such a launch is
// refused.
struct AlignedKernels {
  bool serve = true; // false under MissPolicy::fail
  std::string arch;
  bool tf32_off = false;
  codegen::Backend backend = codegen::Backend::llvm;
  std::shared_ptr<DeviceContext> device;
  std::mutex mutex; // guards by_identity; one compile at a time
  std::unordered_map<std::string, std::shared_ptr<const SharedKernel>> by_identity;

  // The kernel of `spec` (a spec whose alignment the pointers have), compiled and loaded on first
  // use (runtime.cpp). Throws Error at `where`.
  std::shared_ptr<const SharedKernel> kernel_for(const OpSpec &spec, const std::string &where);
};

} // namespace api

struct Operation::State {
  OpSpec spec;           // may have symbolic sizes: the launch gives them
  bool concrete = false; // no symbolic size: a launch without sizes uses spec as it is
  std::string spec_text;
  ProblemKey key;
  // The kernel launches use: replaced once by the winner of a background tune
  // (MissPolicy::background), so each launch takes one snapshot of it.
  mutable std::atomic<std::shared_ptr<const api::SharedKernel>> kernel;
  // A spec with size ranges tuned by `tcjit tune`: the kernel of each size bucket (index i serves
  // dispatch->table().entries[i]); sizes in no bucket take `kernel`.
  std::optional<kernels_db::DispatchIndex> dispatch;
  std::vector<std::shared_ptr<const api::SharedKernel>> dispatch_kernels;
  // The runtime's kernels for less-aligned pointers (shared by its operations).
  std::shared_ptr<api::AlignedKernels> aligned;

  // A symbolic spec's kernel compiled on a background thread (prepare() returned before it):
  // `kernel` stays null until api::kernel_of() takes the result (background_compile.cpp).
  std::shared_future<std::shared_ptr<const api::SharedKernel>> compiling;
  // What Operation::predicted_time needs: the arch and precision the kernel was built for, and
  // the config and measured time of the database's decision for a concrete problem (when it has
  // one; predicted_time uses it while it is the kernel's config).
  std::string arch;
  bool tf32_off = false;
  std::optional<codegen::TileConfig> decided_config;
  double decided_time_us = 0;
  // The arch's cost model with the database's calibration for the device (the runtime's, see
  // Runtime::Impl::model); null: the arch's uncalibrated model.
  std::shared_ptr<const tuner::GpuModel> model;
};

namespace api {

// The kernel an operation launches: its kernel, or — while a background compile runs — the
// compile's, waited for. Throws the compile's Error when it failed (background_compile.cpp).
std::shared_ptr<const SharedKernel> kernel_of(const Operation::State &state);
// A test's hook: called by each background compile before it starts (nullptr: none), so that a
// test can hold compiles and observe that prepare() returned without one.
void set_background_compile_hook(std::function<void()> hook);

// The words a launch's errors use for its arguments: the C++ API's (`GemmArgs::a`, where
// "launch") or a C function's (parameter `a` of tcjit_launch_gemm).
struct LaunchVocabulary {
  std::string where = "launch";
  std::string args = "GemmArgs";              // "" : C parameters
  std::string allocate = "Runtime::allocate"; // what gives device memory
  std::string arg(const std::string &name) const {
    return args.empty() ? "parameter " + name : args + "::" + name;
  }
  // The caller's workspace: Workspace::address / ::bytes, or the C parameters workspace /
  // workspace_bytes.
  std::string workspace_arg(bool bytes) const {
    return args.empty() ? (bytes ? "parameter workspace_bytes" : "parameter workspace")
                        : (bytes ? "Workspace::bytes" : "Workspace::address");
  }
  // The call that tells the bytes a launch's workspace needs.
  std::string workspace_query(bool conv) const {
    return args.empty()
               ? (conv ? "tcjit_operation_workspace_bytes_conv" : "tcjit_operation_workspace_bytes")
               : (conv ? "Operation::workspace_bytes_conv" : "Operation::workspace_bytes");
  }
};

// Operation::config_for with the errors in `words` (operation_launch.cpp).
std::string config_for(const Operation::State &state, const GemmArgs &sizes,
                       const LaunchVocabulary &words);
// Operation::predicted_time / predicted_time_conv with the errors in `words` (predicted_time.cpp).
std::optional<TimeEstimate> predicted_time(const Operation::State &state, const GemmArgs &sizes,
                                           const LaunchVocabulary &words);
std::optional<TimeEstimate> predicted_time_conv(const Operation::State &state,
                                                const ConvArgs &sizes,
                                                const LaunchVocabulary &words);
// The spec of a GEMM launch with these sizes, checked against the prepared spec (Error in `words`)
// and the kernel that runs it (its dispatch bucket's, else the operation's) (operation_launch.cpp).
OpSpec bind_gemm_launch(const Operation::State &state, const GemmArgs &sizes,
                        const LaunchVocabulary &words);
std::shared_ptr<const SharedKernel> kernel_for_sizes(const Operation::State &state,
                                                     const OpSpec &bound);

// Operation::launch / launch_conv with the errors in `words` (operation_launch.cpp). `workspace`:
// the caller's (address 0: the device's pool).
void launch_gemm(const Operation::State &state, const GemmArgs &args, void *stream,
                 const LaunchVocabulary &words, const Workspace &workspace = {});
void launch_conv(const Operation::State &state, const ConvArgs &args, void *stream,
                 const LaunchVocabulary &words, const Workspace &workspace = {});
// Operation::workspace_bytes / workspace_bytes_conv with the errors in `words`.
size_t gemm_workspace_bytes(const Operation::State &state, const GemmArgs &sizes,
                            const LaunchVocabulary &words);
size_t conv_workspace_bytes(const Operation::State &state, int64_t n,
                            const LaunchVocabulary &words);

} // namespace api

// The C API's way to an Operation's state (a friend of Operation).
struct OperationAccess {
  static const Operation::State &state(const Operation &op) { return *op.state_; }
};

struct Runtime::Impl {
  RuntimeOptions options;
  std::shared_ptr<api::DeviceContext> device = std::make_shared<api::DeviceContext>();
  std::string arch;
  bool tf32_off = false;
  codegen::Backend backend = codegen::Backend::llvm;
  std::optional<kernels_db::KernelsDb> db;
  // What Operation::predicted_time predicts with: the arch's cost model with the database's
  // calibration (api/calibrated_model.h) for the device (a GPU by its name; the emulator: the
  // arch's newest), read once when the runtime opens; null: the arch's uncalibrated model (no
  // model for the arch, or the calibration may not be used: `tcjit explain` says why).
  std::shared_ptr<const tuner::GpuModel> model;

  std::mutex map_mutex; // guards operations and kernels
  std::unordered_map<std::string, std::shared_ptr<const Operation::State>> operations;
  std::unordered_map<std::string, std::shared_ptr<const api::SharedKernel>> kernels; // by identity
  std::shared_ptr<api::AlignedKernels> aligned = std::make_shared<api::AlignedKernels>();
  std::mutex prepare_mutex; // one lookup/compile at a time

  // The kernel cache (runtime.cpp).
  std::shared_ptr<const Operation::State> find(const std::string &key_text);
  std::shared_ptr<const api::SharedKernel> find_kernel(const std::string &identity);
  // Loads the kernel of `source` into the device, or finds it loaded (by identity).
  // A kernel served from the database that does not load on the device is set aside and replaced
  // by recompile(source, why) (when given).
  using Recompile =
      std::function<engine::ServedKernel(const engine::ServedKernel &, const std::string &)>;
  std::shared_ptr<const api::SharedKernel> load(engine::ServedKernel &&source,
                                                const Recompile &recompile = {});
  // The recompile of a stored kernel of `spec` that does not load: its row set aside, compiled
  // again with its config.
  Recompile recompile_for(const OpSpec &spec, const ProblemKey &key,
                          const engine::KernelRequest &request);
  // The dispatch table `tcjit tune` stored for a spec with size ranges, its kernels loaded; none
  // when there is no valid table (the spec's one kernel serves every size).
  void load_dispatch(Operation::State &state);
  // The operation of a problem, remembered with its kernel (and dispatch table).
  // `compiling`: the background compile of a symbolic spec's kernel (then `kernel` is null).
  std::shared_ptr<const Operation::State>
  remember(const OpSpec &spec, const ProblemKey &key,
           std::shared_ptr<const api::SharedKernel> kernel,
           std::shared_future<std::shared_ptr<const api::SharedKernel>> compiling = {});
  // The kernel of `request` served (found or compiled), as an Error at `where` when a layer below
  // throws.
  engine::ServedKernel serve(const OpSpec &spec, const ProblemKey &key,
                             const engine::KernelRequest &request, const char *where);
  // Compiles the kernel of a symbolic spec on a background thread and loads it (aliased under
  // `default_id` too when a fallback config was taken) (background_compile.cpp).
  std::shared_future<std::shared_ptr<const api::SharedKernel>>
  compile_in_background(const OpSpec &spec, const ProblemKey &key,
                        const engine::KernelRequest &request, const std::string &default_id);

  // Background tunes (MissPolicy::background): one worker thread takes the operations queued by
  // prepare() one at a time; wait_for_tuning() waits until the queue is done, ~Impl stops it.
  std::mutex tuning_mutex; // guards the queue, tuning_busy and tuning_errors
  std::condition_variable tuning_changed;
  std::deque<std::shared_ptr<const Operation::State>> tuning_queue;
  bool tuning_busy = false;
  std::vector<std::string> tuning_errors;
  std::atomic<bool> stop_tuning{false};
  std::thread tuning_worker;

  Impl() = default;
  Impl(const Impl &) = delete;
  Impl &operator=(const Impl &) = delete;
  // Stops the background tune after the candidate it is measuring (what it stored is kept) and
  // joins the worker before any member it uses is destroyed (background_tuning.cpp).
  ~Impl();

  // Tuning (background_tuning.cpp). Tunes one concrete problem now: measured on a GPU, else
  // predicted by the cost model with each candidate verified on an emulator of its own. Results
  // and the winner go to the database.
  tuner::TuneResult tune(const OpSpec &spec, const ProblemKey &key);
  // MissPolicy::tune of a symbolic spec that no tuned dispatch table serves (its own or its
  // kernel family's, tuner/size_family.h): a GEMM's representative sizes tuned as `tcjit tune` of
  // a range does (`?` as 1..4096, batch 1..64) and their dispatch table stored; a convolution
  // tuned at one batch size (the range's upper end, 32 for `?`). false when nothing was tuned
  // (served already, no writable database).
  bool tune_sizes(const OpSpec &spec, const ProblemKey &key);
  // Queues `state`'s problem for the background worker; its winner replaces its kernel when
  // ready.
  void tune_in_background(std::shared_ptr<const Operation::State> state);
  void tuning_loop();
  void tune_and_switch(const Operation::State &state);
  void wait_for_tunes();

  // The background compiles started (compile_in_background), waited for before any member they use
  // is destroyed: declared last, so destroyed first.
  struct BackgroundCompiles {
    std::mutex mutex;
    std::vector<std::shared_future<std::shared_ptr<const api::SharedKernel>>> running;
    BackgroundCompiles() = default;
    BackgroundCompiles(const BackgroundCompiles &) = delete;
    BackgroundCompiles &operator=(const BackgroundCompiles &) = delete;
    ~BackgroundCompiles() {
      for (const auto &compile : running)
        compile.wait();
    }
  };
  BackgroundCompiles background_compiles;
};

} // namespace tcjit
