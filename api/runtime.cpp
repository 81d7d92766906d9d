// tcjit::Runtime and tcjit::Operation (include/tcjit/tcjit.hpp): the kernel for a spec from
// memory, the kernel database or the code generator (engine::find_or_compile_kernel, as `tcjit
// run`), loaded once into the runtime's device and launched through engine::launch_kernel.
#include "tcjit/tcjit.hpp"

#include "api/served_kernel_error.h"
#include "api/spec_check.h"
#include "api/verify.h"
#include "compiler/codegen/plan/conv_lowering.h"
#include "compiler/codegen/plan/kernel_plan.h"
#include "compiler/codegen/plan/tile_config.h"
#include "compiler/dsl/parser.h"
#include "compiler/reference/bind_dims.h"
#include "compiler/spec/alignment.h"
#include "compiler/spec/printer.h"
#include "compiler/spec/problem_key.h"
#include "compiler/spec/shape.h"
#include "compiler/spec/validate.h"
#include "engine/kernel_cache.h"
#include "engine/kernel_launch.h"
#include "engine/kernel_records.h"
#include "kernels_db/dispatch.h"
#include "kernels_db/kernels_db.h"
#include "runtime/device_factory.h"
#include "tuner/chosen_configs.h"
#include "tuner/cost_model.h"
#include "tuner/measure_cuda.h"
#include "tuner/measure_model.h"
#include "tuner/tune.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>

namespace tcjit {

namespace {

std::string error_text(const std::string &what, const std::string &where,
                       const std::string &how_to_fix) {
  std::string text = "tcjit: " + where + ": " + what;
  if (!how_to_fix.empty())
    text += "\nhow to fix: " + how_to_fix;
  return text;
}

} // namespace

Error::Error(ErrorCode code, std::string what, std::string where, std::string how_to_fix)
    : std::runtime_error(error_text(what, where, how_to_fix)), code_(code),
      problem_(std::move(what)), where_(std::move(where)), how_to_fix_(std::move(how_to_fix)) {}

const char *to_string(Origin origin) {
  switch (origin) {
  case Origin::memory: return "memory";
  case Origin::database: return "database";
  case Origin::compiled_now: return "compiled_now";
  case Origin::tuned_now: return "tuned_now";
  }
  return "unknown";
}

namespace {

// The device with the lock that serializes its use (the emulator is not thread-safe).
struct DeviceContext {
  std::unique_ptr<device::Device> device;
  std::mutex mutex;
};

// A launch on the caller's stream: the device's launches go to `stream` while this lives (the
// device's mutex held), then back to its own stream.
class StreamScope {
public:
  StreamScope(device::Device &dev, void *stream) : dev_(dev), set_(stream != nullptr) {
    if (set_)
      dev_.set_stream(stream);
  }
  StreamScope(const StreamScope &) = delete;
  StreamScope &operator=(const StreamScope &) = delete;
  ~StreamScope() {
    if (set_)
      dev_.set_stream(nullptr);
  }

private:
  device::Device &dev_;
  bool set_;
};

Error device_error(const device::DeviceError &e, const std::string &where) {
  // The device's messages already say how to fix them.
  ErrorCode code = ErrorCode::device;
  if (e.kind() == device::ErrorKind::Unsupported)
    code = ErrorCode::unsupported;
  else if (e.kind() == device::ErrorKind::InvalidArgument ||
           e.kind() == device::ErrorKind::NotFound)
    code = ErrorCode::invalid_argument;
  return Error(code, e.what(), where, "");
}

} // namespace

namespace {

// A measurer that holds the device's lock while it measures (a background tune on a GPU must not
// time its kernels while the application launches), and only then.
class DeviceLockedMeasurer final : public tuner::Measurer {
public:
  DeviceLockedMeasurer(tuner::Measurer &inner, std::mutex &mutex) : inner_(inner), mutex_(mutex) {}
  std::string name() const override { return inner_.name(); }
  bool needs_build() const override { return inner_.needs_build(); }
  tuner::Measurement measure(const tuner::TuneTask &task, const codegen::TileConfig &config,
                             const tuner::BuiltCandidate *built) override {
    std::lock_guard lock(mutex_);
    return inner_.measure(task, config, built);
  }

private:
  tuner::Measurer &inner_;
  std::mutex &mutex_;
};

} // namespace

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

struct Operation::State {
  OpSpec spec;           // may have symbolic sizes: the launch gives them
  bool concrete = false; // no symbolic size: a launch without sizes uses spec as it is
  std::string spec_text;
  ProblemKey key;
  // The kernel launches use: replaced once by the winner of a background tune
  // (MissPolicy::background), so each launch takes one snapshot of it.
  mutable std::atomic<std::shared_ptr<const SharedKernel>> kernel;
  // A spec with size ranges tuned by `tcjit tune`: the kernel of each size bucket (index i serves
  // dispatch->table().entries[i]); sizes in no bucket take `kernel`.
  std::optional<kernels_db::DispatchIndex> dispatch;
  std::vector<std::shared_ptr<const SharedKernel>> dispatch_kernels;
};

Operation::Operation(std::shared_ptr<const State> state, Origin origin)
    : state_(std::move(state)), origin_(origin) {}

const std::string &Operation::spec_text() const {
  return state_->spec_text;
}
const OpSpec &Operation::spec() const {
  return state_->spec;
}
const std::string &Operation::key_text() const {
  return state_->key.text;
}
uint64_t Operation::key_hash() const {
  return state_->key.hash;
}
std::string Operation::key_hash_hex() const {
  return state_->key.hash_hex();
}
std::string Operation::config() const {
  return codegen::to_string(state_->kernel.load()->kernel.config);
}
std::string Operation::kernel_id() const {
  return state_->kernel.load()->identity;
}

ResourceUsage Operation::resources() const {
  ResourceUsage r;
  const std::shared_ptr<const SharedKernel> kernel = state_->kernel.load();
  const engine::MainKernelResources &k = kernel->resources;
  if (k.registers >= 0)
    r.registers = k.registers;
  if (k.spill_bytes >= 0)
    r.spill_bytes = k.spill_bytes;
  r.shared_bytes = k.shared_bytes;
  return r;
}

namespace {

// The spec of a launch with sizes given (or a symbolic spec): the prepared spec with the sizes
// bound, checked against the spec's rules and the kernel's vector widths. Throws Error.
OpSpec bind_launch_sizes(const Operation::State &s, const GemmArgs &args) {
  // The sizes of this launch: the spec's, or the arguments' where the spec leaves them symbolic
  // (or repeats them).
  const GemmSpec &g = s.spec.gemm;
  auto size_of = [&](const char *name, const Dim &dim, int64_t given) -> int64_t {
    if (given < 0)
      throw Error(ErrorCode::invalid_argument,
                  std::string("GemmArgs::") + name + " = " + std::to_string(given) + " is negative",
                  "launch", "pass the size, or 0 for the prepared spec's");
    if (given > 0)
      return given;
    if (dim.is_fixed())
      return dim.value;
    throw Error(ErrorCode::invalid_argument,
                std::string(name) + " is symbolic in the prepared spec (" + s.spec_text + ")",
                "launch", std::string("pass GemmArgs::") + name + " (the size of this launch)");
  };
  OpSpec bound;
  try {
    bound =
        bind_gemm_sizes(s.spec, {size_of("m", g.m, args.m), size_of("n", g.n, args.n),
                                 size_of("k", g.k, args.k), size_of("batch", g.batch, args.batch)});
  } catch (const std::invalid_argument &e) {
    throw Error(ErrorCode::invalid_argument, e.what(), "launch",
                "launch within the sizes the operation was prepared for, or prepare another");
  }
  // The sizes given now obey the spec's rules too (leading dimensions, the kernel's 32-bit sizes,
  // operand sizes).
  if (const std::vector<SpecError> errors = validate_spec(bound); !errors.empty()) {
    std::string text;
    for (const SpecError &e : errors)
      text += "\n  " + (e.key.empty() ? std::string("operation") : e.key) + ": " + e.message;
    throw Error(ErrorCode::invalid_argument,
                "the sizes of this launch make " + print_spec(bound) + " invalid:" + text, "launch",
                "pass sizes the spec allows");
  }
  return bound;
}

// The kernel's vector widths need the alignment they were compiled for. Throws Error.
void check_launch_alignment(const OpSpec &bound, const SharedKernel &kernel) {
  const codegen::KernelPlan &plan = kernel.kernel.plan;
  for (const OperandAlignment &al : analyze_alignment(bound)) {
    const int needed = al.operand == "a"   ? plan.a.vec
                       : al.operand == "b" ? plan.b.vec
                       : al.operand == "c" ? plan.c_vec
                                           : 1;
    if (al.elements < needed)
      throw Error(ErrorCode::invalid_argument,
                  "operand " + al.operand + " of " + print_spec(bound) + " is aligned to " +
                      std::to_string(al.elements) + " elements, but the kernel (" +
                      codegen::to_string(plan.config) + ") loads " + std::to_string(needed) +
                      " at a time",
                  "launch", "prepare the operation with sizes of that alignment (or with these)");
  }
}

// The kernel that runs `bound` (a launch's sizes): its dispatch bucket's, else the operation's.
std::shared_ptr<const SharedKernel> kernel_for(const Operation::State &s, const OpSpec &bound) {
  if (s.dispatch) {
    const GemmSpec &g = bound.gemm;
    if (const kernels_db::DispatchEntry *e =
            s.dispatch->find({g.m.value, g.n.value, g.k.value, g.batch.value}))
      return s.dispatch_kernels[size_t(e - s.dispatch->table().entries.data())];
  }
  return s.kernel.load();
}

// Runs `kernel` for the bound `spec` on its device, on `stream` (under the device's mutex);
// device failures and sizes the kernel cannot take become Error (`how_to_fix` for the latter).
void launch_on_device(const SharedKernel &kernel, const OpSpec &spec,
                      const engine::OperandPointers &ptrs, void *stream, const char *how_to_fix) {
  std::lock_guard lock(kernel.device->mutex);
  try {
    const StreamScope on_stream(*kernel.device->device, stream);
    engine::launch_kernel(*kernel.device->device, kernel.loaded, spec, ptrs);
  } catch (const device::DeviceError &e) {
    throw device_error(e, "launch");
  } catch (const std::invalid_argument &e) {
    throw Error(ErrorCode::invalid_argument, e.what(), "launch", how_to_fix);
  }
}

} // namespace

std::string Operation::config_for(const GemmArgs &sizes) const {
  if (state_->spec.kind != OpKind::gemm)
    return config(); // a convolution's one kernel serves every batch size
  const OpSpec bound = bind_launch_sizes(*state_, sizes);
  return codegen::to_string(kernel_for(*state_, bound)->kernel.config);
}

void Operation::launch_conv(const ConvArgs &args, void *stream) const {
  const State &s = *state_;
  if (s.spec.kind == OpKind::gemm)
    throw Error(ErrorCode::invalid_argument,
                "ConvArgs given to a gemm operation (" + s.spec_text + ")", "launch",
                "launch a gemm with GemmArgs");
  const codegen::ConvRoles roles = codegen::conv_roles(s.spec.conv.pass);
  auto ptr = [&](codegen::ConvTensor t) {
    return t == codegen::ConvTensor::x        ? args.x
           : t == codegen::ConvTensor::filter ? args.filter
                                              : args.y;
  };
  for (const auto &[name, p] : {std::pair{"x", args.x}, {"filter", args.filter}, {"y", args.y}})
    if (p == 0)
      throw Error(ErrorCode::invalid_argument, std::string("a null device pointer for ") + name,
                  "launch", "pass addresses from Runtime::allocate (or cuMemAlloc)");
  if (s.spec.epilogue.bias != BiasKind::none && args.bias == 0)
    throw Error(ErrorCode::invalid_argument, "the spec has a bias but ConvArgs::bias is 0",
                "launch", "pass the bias vector's device address");
  if (args.n < 0)
    throw Error(ErrorCode::invalid_argument,
                "ConvArgs::n = " + std::to_string(args.n) + " is negative", "launch",
                "pass the batch size, or 0 for the prepared spec's");
  const bool as_prepared = s.concrete && args.n == 0;
  OpSpec bound;
  if (!as_prepared) {
    if (args.n == 0)
      throw Error(ErrorCode::invalid_argument,
                  "n is symbolic in the prepared spec (" + s.spec_text + ")", "launch",
                  "pass ConvArgs::n (the batch size of this launch)");
    try {
      bound = bind_conv_batch(s.spec, args.n);
    } catch (const std::invalid_argument &e) {
      throw Error(ErrorCode::invalid_argument, e.what(), "launch",
                  "launch within the batch sizes the operation was prepared for");
    }
  }
  const OpSpec &spec = as_prepared ? s.spec : bound;
  std::shared_ptr<const SharedKernel> kernel = s.kernel.load();
  const engine::OperandPointers ptrs{ptr(roles.a), ptr(roles.b), ptr(roles.c), ptr(roles.c),
                                     args.bias};
  launch_on_device(*kernel, spec, ptrs, stream, "pass a batch size n that fits");
}

void Operation::launch(const GemmArgs &args, void *stream) const {
  const State &s = *state_;
  if (s.spec.kind != OpKind::gemm)
    throw Error(ErrorCode::invalid_argument,
                "GemmArgs given to a " + std::string(to_string(s.spec.kind)) + " operation (" +
                    s.spec_text + ")",
                "launch", "launch a convolution with ConvArgs");
  const bool needs_c = s.spec.epilogue.beta != 0;
  if (args.a == 0 || args.b == 0 || args.d == 0 || (needs_c && args.c == 0))
    throw Error(ErrorCode::invalid_argument,
                "a null device pointer for " + std::string(args.a == 0   ? "a"
                                                           : args.b == 0 ? "b"
                                                           : args.d == 0 ? "d"
                                                                         : "c (beta is not 0)"),
                "launch", "pass addresses from Runtime::allocate (or cuMemAlloc)");
  if (s.spec.epilogue.bias != BiasKind::none && args.bias == 0)
    throw Error(ErrorCode::invalid_argument, "the spec has a bias but GemmArgs::bias is 0",
                "launch", "pass the bias vector's device address");
  // A concrete spec launched as prepared was validated, and its kernel planned, at prepare():
  // nothing to bind or check again on this path.
  const bool as_prepared =
      s.concrete && args.m == 0 && args.n == 0 && args.k == 0 && args.batch == 0;
  std::shared_ptr<const SharedKernel> kernel = s.kernel.load();
  OpSpec bound;
  if (!as_prepared) {
    bound = bind_launch_sizes(s, args);
    kernel = kernel_for(s, bound);
    check_launch_alignment(bound, *kernel);
  }
  const OpSpec &spec = as_prepared ? s.spec : bound;
  const engine::OperandPointers ptrs{args.a, args.b, args.c == 0 ? args.d : args.c, args.d,
                                     args.bias};
  launch_on_device(*kernel, spec, ptrs, stream, "pass sizes the spec allows");
}

struct Runtime::Impl {
  RuntimeOptions options;
  std::shared_ptr<DeviceContext> device = std::make_shared<DeviceContext>();
  std::string arch;
  bool tf32_off = false;
  codegen::Backend backend = codegen::Backend::llvm;
  std::optional<kernels_db::KernelsDb> db;

  std::mutex map_mutex; // guards operations and kernels
  std::unordered_map<std::string, std::shared_ptr<const Operation::State>> operations;
  std::unordered_map<std::string, std::shared_ptr<const SharedKernel>> kernels; // by identity
  std::mutex prepare_mutex; // one lookup/compile at a time

  std::shared_ptr<const Operation::State> find(const std::string &key_text) {
    std::lock_guard lock(map_mutex);
    const auto it = operations.find(key_text);
    return it == operations.end() ? nullptr : it->second;
  }
  std::shared_ptr<const SharedKernel> find_kernel(const std::string &identity) {
    std::lock_guard lock(map_mutex);
    const auto it = kernels.find(identity);
    return it == kernels.end() ? nullptr : it->second;
  }
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
  // joins the worker before any member it uses is destroyed.
  ~Impl() {
    {
      std::lock_guard lock(tuning_mutex);
      stop_tuning = true;
      tuning_queue.clear();
    }
    tuning_changed.notify_all();
    if (tuning_worker.joinable())
      tuning_worker.join();
  }

  // Loads the kernel of `served` into the device, or finds it loaded (by identity).
  std::shared_ptr<const SharedKernel> load(engine::ServedKernel &&served) {
    const std::string identity = codegen::kernel_identity(served.kernel.plan);
    if (auto kernel = find_kernel(identity))
      return kernel;
    auto loaded = std::make_shared<SharedKernel>();
    loaded->identity = identity;
    loaded->kernel = std::move(served.kernel);
    loaded->resources = served.resources;
    loaded->device = device;
    {
      std::lock_guard device_lock(device->mutex);
      try {
        loaded->loaded = engine::load_kernel(*device->device, loaded->kernel, served.cubin);
      } catch (const device::DeviceError &e) {
        throw device_error(e, "prepare");
      }
    }
    std::shared_ptr<const SharedKernel> kernel = std::move(loaded);
    std::lock_guard lock(map_mutex);
    return kernels.emplace(identity, kernel).first->second;
  }

  // Tunes one concrete problem now: measured on a GPU, else predicted by the cost model with each
  // candidate verified on an emulator of its own. Results and the winner go to the database.
  tuner::TuneResult tune(const OpSpec &spec, const ProblemKey &key) {
    tuner::TuneTask task;
    task.spec = spec;
    task.key = key;
    task.arch = arch;
    task.tf32_off = tf32_off;
    task.backend = backend;
    tuner::TuneOptions topt;
    topt.budget.candidates = size_t(options.tune_budget);
    topt.stop = &stop_tuning;
    try {
      if (device->device->info().is_emulator) {
        const std::unique_ptr<device::Device> emu = device::open_device("emu");
        const auto measurer =
            tuner::make_model_measurer(tuner::gpu_model_for_arch(arch), emu.get());
        topt.measurer = measurer.get();
        return tuner::tune_problem(task, topt, db ? &*db : nullptr);
      }
      // Timing needs the GPU to itself: each measurement holds the device's lock, the builds
      // between them do not.
      const auto cuda = tuner::make_cuda_measurer(*device->device);
      DeviceLockedMeasurer measurer(*cuda, device->mutex);
      topt.measurer = &measurer;
      return tuner::tune_problem(task, topt, db ? &*db : nullptr);
    } catch (const kernels_db::DbError &e) {
      throw Error(ErrorCode::database, e.what(), "tune", "check the database (`tcjit db check`)");
    } catch (const device::DeviceError &e) {
      throw device_error(e, "tune");
    } catch (const std::invalid_argument &e) {
      throw Error(ErrorCode::bad_spec, e.what(), "tune", "change the spec as the message says");
    }
  }

  // Queues `state`'s problem for the background worker; its winner replaces its kernel when
  // ready.
  void tune_in_background(std::shared_ptr<const Operation::State> state) {
    {
      std::lock_guard lock(tuning_mutex);
      if (stop_tuning)
        return;
      tuning_queue.push_back(std::move(state));
      if (!tuning_worker.joinable())
        tuning_worker = std::thread([this] { tuning_loop(); });
    }
    tuning_changed.notify_all();
  }

  void tuning_loop() {
    while (true) {
      std::shared_ptr<const Operation::State> state;
      {
        std::unique_lock lock(tuning_mutex);
        tuning_changed.wait(lock, [&] { return stop_tuning || !tuning_queue.empty(); });
        if (stop_tuning)
          return;
        state = std::move(tuning_queue.front());
        tuning_queue.pop_front();
        tuning_busy = true;
      }
      std::string error;
      try {
        tune_and_switch(*state);
      } catch (const std::exception &e) {
        error = state->spec_text + ": " + e.what();
      }
      {
        std::lock_guard lock(tuning_mutex);
        tuning_busy = false;
        if (!error.empty())
          tuning_errors.push_back(std::move(error));
      }
      tuning_changed.notify_all();
    }
  }

  void tune_and_switch(const Operation::State &state) {
    const tuner::TuneResult r = tune(state.spec, state.key);
    if (!r.best || stop_tuning || *r.best == state.kernel.load()->kernel.config)
      return;
    engine::KernelRequest request;
    request.arch = arch;
    request.tf32_off = tf32_off;
    request.backend = backend;
    request.config = *r.best;
    engine::ServedKernel served = [&] {
      std::lock_guard prepare_lock(prepare_mutex);
      return tuner::serve_kernel(state.spec, state.key, request, db ? &*db : nullptr);
    }();
    if (!served.ok())
      throw Error(ErrorCode::internal, served.errors.front(), "tune", "");
    state.kernel.store(load(std::move(served)));
  }

  void wait_for_tunes() {
    std::unique_lock lock(tuning_mutex);
    tuning_changed.wait(lock,
                        [&] { return stop_tuning || (tuning_queue.empty() && !tuning_busy); });
  }

  // The dispatch table `tcjit tune` stored for a spec with size ranges, its kernels loaded; none
  // when there is no valid table (the spec's one kernel serves every size).
  void load_dispatch(Operation::State &state) {
    if (!db || is_concrete(state.spec))
      return;
    std::optional<kernels_db::DispatchTable> table;
    try {
      table = db->find_dispatch_table(state.key.text, arch);
    } catch (const kernels_db::DbError &e) {
      throw Error(ErrorCode::database, e.what(), "prepare",
                  "check the database (`tcjit db check`)");
    }
    if (!table)
      return;
    try {
      state.dispatch.emplace(*table);
    } catch (const kernels_db::DbError &) {
      return; // a table that does not validate is ignored (`tcjit db check` reports it)
    }
    for (const kernels_db::DispatchEntry &entry : state.dispatch->table().entries) {
      engine::KernelRequest request;
      request.arch = arch;
      request.tf32_off = tf32_off;
      request.backend = backend;
      request.config = engine::parse_config_json(entry.config_json);
      request.compile_on_miss = options.on_miss != MissPolicy::fail;
      engine::ServedKernel served;
      if (request.config)
        served = tuner::serve_kernel(state.spec, state.key, request, &*db);
      if (served.missed)
        throw Error(ErrorCode::not_found,
                    "the dispatch table of " + state.spec_text + " names config " +
                        entry.config_json + ", whose kernel is not in the database " + db->path(),
                    "prepare", "re-run `tcjit tune` for it, or use MissPolicy::heuristic");
      if (!request.config || !served.ok()) { // a table this code generator cannot follow
        state.dispatch.reset();
        state.dispatch_kernels.clear();
        return;
      }
      state.dispatch_kernels.push_back(load(std::move(served)));
    }
  }

  std::shared_ptr<const Operation::State> remember(const OpSpec &spec, const ProblemKey &key,
                                                   std::shared_ptr<const SharedKernel> kernel) {
    auto state = std::make_shared<Operation::State>();
    state->spec = spec;
    state->concrete = is_concrete(spec);
    state->spec_text = print_spec(spec);
    state->key = key;
    state->kernel = std::move(kernel);
    load_dispatch(*state);
    std::shared_ptr<const Operation::State> shared = std::move(state);
    std::lock_guard lock(map_mutex);
    operations.emplace(key.text, shared);
    return shared;
  }
};

Runtime::Runtime(const RuntimeOptions &options) : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
  if (options.tune_budget < 1 || options.tune_budget > 100000)
    throw Error(ErrorCode::invalid_argument,
                "RuntimeOptions::tune_budget = " + std::to_string(options.tune_budget) +
                    " is not in 1..100000",
                "Runtime", "give the number of candidates a miss may tune (default 24)");
  if (const auto backend = codegen::parse_backend(options.backend))
    impl_->backend = *backend;
  else
    throw Error(ErrorCode::invalid_argument, "unknown backend '" + options.backend + "'", "Runtime",
                "use \"llvm\" or \"nvrtc\"");
  if (options.device != "auto" && options.device != "emu" && options.device != "cuda")
    throw Error(ErrorCode::invalid_argument, "unknown device '" + options.device + "'", "Runtime",
                "use \"auto\", \"emu\" or \"cuda\"");
  try {
    impl_->device->device = device::open_device(options.device);
  } catch (const device::DeviceError &e) {
    throw device_error(e, "Runtime");
  }
  std::string arch_error;
  impl_->arch = engine::target_arch(options.arch, impl_->device->device->info(), arch_error);
  if (impl_->arch.empty())
    throw Error(ErrorCode::invalid_argument, arch_error, "Runtime",
                "set RuntimeOptions::arch to one of them");
  impl_->tf32_off = tf32_disabled_by_environment();
  if (options.use_database) {
    try {
      impl_->db = options.db_path.empty() ? kernels_db::KernelsDb::open_default()
                                          : kernels_db::KernelsDb::open(options.db_path);
    } catch (const kernels_db::DbError &e) {
      throw Error(ErrorCode::database, e.what(), "Runtime",
                  "check RuntimeOptions::db_path / $TCJIT_DB, or set use_database = false");
    }
  }
}

Runtime::~Runtime() = default; // ~Impl stops and joins the background tuner

void Runtime::wait_for_tuning() {
  impl_->wait_for_tunes();
  std::vector<std::string> errors;
  {
    std::lock_guard lock(impl_->tuning_mutex);
    errors.swap(impl_->tuning_errors);
  }
  if (!errors.empty()) {
    std::string text;
    for (const std::string &e : errors)
      text += (text.empty() ? "" : "\n") + e;
    throw Error(ErrorCode::internal,
                "a background tune failed (the operation kept its kernel): " + text,
                "wait_for_tuning", "");
  }
}
VerifyReport Runtime::verify(const OpSpec &spec, const VerifyRequest &request) {
  Impl &rt = *impl_;
  api::throw_if_invalid(spec, "verify");
  std::lock_guard prepare_lock(rt.prepare_mutex); // the database's use, as prepare()
  std::lock_guard lock(rt.device->mutex);
  return api::verify_on_device(*rt.device->device, rt.db ? &*rt.db : nullptr, rt.arch, rt.tf32_off,
                               rt.backend, spec, request);
}

Runtime::Runtime(Runtime &&) noexcept = default;
Runtime &Runtime::operator=(Runtime &&) noexcept = default;

Operation Runtime::prepare(std::string_view dsl_text) {
  const ParseResult parsed = parse_spec(dsl_text, "<spec>");
  if (!parsed.ok()) {
    std::string rendered;
    for (const Diagnostic &d : parsed.errors)
      rendered += d.render();
    throw Error(ErrorCode::bad_spec, "the spec does not parse:\n" + rendered, "prepare",
                "correct the spec as the diagnostics say (the DSL: docs/dsl.md)");
  }
  OpSpec spec = parsed.entries.front().spec;
  load_custom_activation(spec); // act=custom:FILE from the current directory
  return prepare(spec);
}

Operation Runtime::prepare(const OpSpec &spec) {
  Impl &rt = *impl_;
  api::throw_if_invalid(spec, "prepare");
  const ProblemKey key = make_problem_key(spec, rt.arch, rt.tf32_off);
  if (auto state = rt.find(key.text))
    return Operation(std::move(state), Origin::memory);

  std::lock_guard prepare_lock(rt.prepare_mutex);
  if (auto state = rt.find(key.text)) // prepared by another thread meanwhile
    return Operation(std::move(state), Origin::memory);
  // A kernel already loaded for another problem serves this one when its plan is the one the
  // first chosen config (tuned, else the default chooser's) gives; not a fallback's: that one is
  // taken only when the first spills, which find_or_compile_kernel finds out. The first's identity
  // also names the fallback kernel chosen when it spilled.
  engine::KernelRequest request;
  request.arch = rt.arch;
  request.tf32_off = rt.tf32_off;
  request.backend = rt.backend;
  request.compile_on_miss = rt.options.on_miss != MissPolicy::fail;
  std::string default_id;
  std::vector<codegen::TileConfig> chosen;
  std::string tuned_note;
  try {
    chosen = tuner::chosen_configs(spec, key, request, rt.db ? &*rt.db : nullptr, tuned_note);
  } catch (const kernels_db::DbError &e) {
    throw Error(ErrorCode::database, e.what(), "prepare", "check the database (`tcjit db check`)");
  }
  // Tuning is for concrete problems not tuned yet (a symbolic spec takes the default chooser's
  // config, chosen at nominal sizes).
  const bool tunable = tuned_note.empty() && is_concrete(spec);
  const bool background = tunable && rt.options.on_miss == MissPolicy::background;
  Origin tuned = Origin::compiled_now;
  if (tunable && rt.options.on_miss == MissPolicy::tune) {
    const tuner::TuneResult r = rt.tune(spec, key);
    if (r.best) {
      request.config = *r.best;
      tuned = Origin::tuned_now;
    }
  } else if (!chosen.empty()) {
    default_id =
        codegen::kernel_identity(codegen::plan_kernel(spec, chosen.front(), rt.arch, rt.tf32_off));
    if (auto kernel = rt.find_kernel(default_id)) {
      auto state = rt.remember(spec, key, std::move(kernel));
      if (background)
        rt.tune_in_background(state);
      return Operation(std::move(state), Origin::memory);
    }
  }

  if (!request.config) { // the configs chosen above, not chosen again
    request.chosen = chosen;
    request.chosen_note = tuned_note;
  }
  engine::ServedKernel served;
  try {
    served = tuner::serve_kernel(spec, key, request, rt.db ? &*rt.db : nullptr);
  } catch (const kernels_db::DbError &e) {
    throw Error(ErrorCode::database, e.what(), "prepare", "check the database (`tcjit db check`)");
  } catch (const std::runtime_error &e) {
    throw Error(ErrorCode::internal, e.what(), "prepare", "");
  }
  if (!served.ok())
    throw api::served_kernel_error(
        served, "prepare", ErrorCode::bad_spec,
        "compile and store it first (`tcjit run \"" + print_spec(spec) + "\"" +
            (rt.db ? " --db " + rt.db->path() : std::string()) +
            "` or `tcjit tune`), or open the runtime with MissPolicy::heuristic");

  // A tune stores its winner's kernel, so the lookup after it is a database hit: still tuned now.
  const Origin origin = tuned == Origin::tuned_now                        ? Origin::tuned_now
                        : served.origin == engine::KernelOrigin::database ? Origin::database
                                                                          : Origin::compiled_now;
  std::shared_ptr<const SharedKernel> kernel = rt.load(std::move(served));
  if (!default_id.empty() && default_id != kernel->identity) { // the first spilled: a fallback
    std::lock_guard lock(rt.map_mutex);
    rt.kernels.emplace(default_id, kernel);
  }
  auto state = rt.remember(spec, key, std::move(kernel));
  if (background)
    rt.tune_in_background(state);
  return Operation(std::move(state), origin);
}

std::string Runtime::device_name() const {
  return impl_->device->device->info().name;
}
bool Runtime::device_is_emulator() const {
  return impl_->device->device->info().is_emulator;
}
const std::string &Runtime::arch() const {
  return impl_->arch;
}
std::string Runtime::database_path() const {
  return impl_->db ? impl_->db->path() : "";
}

DeviceAddress Runtime::allocate(size_t bytes) {
  std::lock_guard lock(impl_->device->mutex);
  try {
    return impl_->device->device->allocate(bytes);
  } catch (const device::DeviceError &e) {
    throw device_error(e, "allocate");
  }
}

void Runtime::free(DeviceAddress address) {
  std::lock_guard lock(impl_->device->mutex);
  try {
    impl_->device->device->free(address);
  } catch (const device::DeviceError &e) {
    throw device_error(e, "free");
  }
}

void Runtime::copy_to_device(DeviceAddress dst, const void *src, size_t bytes) {
  std::lock_guard lock(impl_->device->mutex);
  try {
    impl_->device->device->copy_to_device(dst, src, bytes);
  } catch (const device::DeviceError &e) {
    throw device_error(e, "copy_to_device");
  }
}

void Runtime::copy_to_host(void *dst, DeviceAddress src, size_t bytes) {
  std::lock_guard lock(impl_->device->mutex);
  try {
    impl_->device->device->copy_to_host(dst, src, bytes);
  } catch (const device::DeviceError &e) {
    throw device_error(e, "copy_to_host");
  }
}

} // namespace tcjit
