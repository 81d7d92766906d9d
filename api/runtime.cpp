// tcjit::Runtime (include/tcjit/tcjit.hpp): the device, the database and the kernel cache — the
// kernel for a spec from memory, the kernel database or the code generator
// (engine::find_or_compile_kernel, as `tcjit run`), loaded once into the runtime's device per
// identity, with the dispatch table of a spec with size ranges. Launching is
// operation_launch.cpp's, tuning background_tuning.cpp's (api/runtime_state.h).
#include "api/calibrated_model.h"
#include "api/runtime_state.h"
#include "api/served_kernel_error.h"

#include "api/spec_check.h"
#include "api/verify.h"
#include "compiler/codegen/plan/kernel_plan.h"
#include "compiler/codegen/plan/tile_config.h"
#include "compiler/dsl/parser.h"
#include "compiler/spec/printer.h"
#include "compiler/spec/shape.h"
#include "engine/kernel_launch.h"
#include "engine/kernel_records.h"
#include "runtime/device_factory.h"
#include "tcjit/tools.hpp"
#include "tuner/chosen_configs.h"
#include "tuner/cost_model.h"
#include "tuner/decision.h"
#include "tuner/size_family.h"

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

// What stores a kernel that serves `spec` (a MissPolicy::fail miss): `tcjit run` of a concrete
// spec; for a symbolic GEMM a `tcjit tune` of its sizes as ranges (`?` as 1..4096), whose dispatch
// table serves every spec of its kernel family (docs/tuner.md); for a convolution a `tcjit run` at
// one batch size (its kernel takes n at run time).
std::string miss_fix(const OpSpec &spec, const std::string &db_path) {
  const std::string db = db_path.empty() ? std::string() : " --db " + db_path;
  std::string command;
  if (is_concrete(spec)) {
    command = "tcjit run \"" + print_spec(spec) + "\"" + db;
  } else if (spec.kind == OpKind::gemm) {
    OpSpec ranged = spec;
    for (Dim *d : {&ranged.gemm.m, &ranged.gemm.n, &ranged.gemm.k, &ranged.gemm.batch})
      if (d->kind == Dim::Kind::any)
        *d = Dim::range_of(1, d == &ranged.gemm.batch ? 64 : 4096);
    command = "tcjit tune \"" + print_spec(ranged) + "\"" + db;
  } else {
    OpSpec one = spec;
    one.conv.n = Dim::fixed_size(spec.conv.n.kind == Dim::Kind::range ? spec.conv.n.lo : 1);
    command = "tcjit run \"" + print_spec(one) + "\"" + db;
  }
  return "compile and store it first (`" + command +
         "`: a tuned or stored kernel of the same spec at other sizes serves it), or open the "
         "runtime with MissPolicy::heuristic";
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

namespace api {

Error device_error(const device::DeviceError &e, const std::string &where) {
  // The device's messages already say how to fix them, in the command line's words: "use --device
  // emu" becomes the option an application sets.
  std::string what = e.what();
  const std::string cli_fix = "use --device emu";
  for (size_t at = what.find(cli_fix); at != std::string::npos; at = what.find(cli_fix, at))
    what.replace(at, cli_fix.size(), "set RuntimeOptions::device to \"emu\" or \"auto\"");
  ErrorCode code = ErrorCode::device;
  if (e.kind() == device::ErrorKind::Unsupported)
    code = ErrorCode::unsupported;
  else if (e.kind() == device::ErrorKind::InvalidArgument ||
           e.kind() == device::ErrorKind::NotFound)
    code = ErrorCode::invalid_argument;
  return Error(code, what, where, "");
}

std::shared_ptr<const SharedKernel> AlignedKernels::kernel_for(const OpSpec &spec,
                                                               const std::string &where) {
  std::lock_guard lock(mutex);
  const std::vector<codegen::TileConfig> configs =
      codegen::default_tile_configs(spec, arch, tf32_off);
  if (configs.empty())
    throw Error(ErrorCode::unsupported,
                "no kernel can be compiled for the pointers' alignment (" + print_spec(spec) + ")",
                where, "pass pointers aligned as the operation's kernel needs");
  // The first config's identity names the kernel (a fallback taken when it spills included).
  const std::string first =
      codegen::kernel_identity(codegen::plan_kernel(spec, configs.front(), arch, tf32_off));
  if (const auto it = by_identity.find(first); it != by_identity.end())
    return it->second;
  engine::KernelRequest request;
  request.arch = arch;
  request.tf32_off = tf32_off;
  request.backend = backend;
  request.use_stored = false;
  request.chosen = configs;
  engine::ServedKernel served;
  try {
    served = tuner::serve_kernel(spec, make_problem_key(spec, arch, tf32_off), request, nullptr);
  } catch (const std::runtime_error &e) {
    throw Error(ErrorCode::internal, e.what(), where, "");
  }
  if (!served.ok())
    throw api::served_kernel_error(served, where, ErrorCode::internal);
  auto loaded = std::make_shared<SharedKernel>();
  loaded->identity = codegen::kernel_identity(served.kernel.plan);
  loaded->kernel = std::move(served.kernel);
  loaded->resources = served.resources;
  loaded->device = device;
  {
    std::lock_guard device_lock(device->mutex);
    try {
      loaded->loaded = engine::load_kernel(*device->device, loaded->kernel, served.cubin);
    } catch (const device::DeviceError &e) {
      throw device_error(e, where);
    }
  }
  std::shared_ptr<const SharedKernel> kernel = std::move(loaded);
  by_identity.emplace(first, kernel);
  by_identity.emplace(kernel->identity, kernel);
  return kernel;
}

} // namespace api

using api::device_error;
using api::SharedKernel;

std::shared_ptr<const Operation::State> Runtime::Impl::find(const std::string &key_text) {
  std::lock_guard lock(map_mutex);
  const auto it = operations.find(key_text);
  return it == operations.end() ? nullptr : it->second;
}

std::shared_ptr<const SharedKernel> Runtime::Impl::find_kernel(const std::string &identity) {
  std::lock_guard lock(map_mutex);
  const auto it = kernels.find(identity);
  return it == kernels.end() ? nullptr : it->second;
}

Runtime::Impl::Recompile Runtime::Impl::recompile_for(const OpSpec &spec, const ProblemKey &key,
                                                      const engine::KernelRequest &request) {
  return [this, spec, key, request](const engine::ServedKernel &failed, const std::string &why) {
    engine::KernelRequest again = request;
    again.use_stored = false;
    again.compile_on_miss = true;
    again.config = failed.kernel.config;
    again.chosen.clear();
    try {
      // The runtime has no warning channel: the row is deleted, the kernel compiled again.
      (void)engine::set_aside_stored_kernel(failed, key, request, db ? &*db : nullptr, why);
      return tuner::serve_kernel(spec, key, again, db ? &*db : nullptr);
    } catch (const kernels_db::DbError &e) {
      throw Error(ErrorCode::database, e.what(), "prepare",
                  "check the database (`tcjit db check`)");
    }
  };
}

std::shared_ptr<const SharedKernel> Runtime::Impl::load(engine::ServedKernel &&source,
                                                        const Recompile &recompile) {
  const std::string identity = codegen::kernel_identity(source.kernel.plan);
  if (auto kernel = find_kernel(identity))
    return kernel;
  if (source.origin == engine::KernelOrigin::database && recompile) {
    // A stored kernel that does not load never fails: set aside and compiled again.
    std::string why;
    {
      std::lock_guard device_lock(device->mutex);
      try {
        const engine::LoadedKernel probe =
            engine::load_kernel(*device->device, source.kernel, source.cubin);
        device->device->unload_module(probe.module);
      } catch (const device::DeviceError &e) {
        why = e.what();
      }
    }
    if (!why.empty()) {
      source = recompile(source, why);
      if (!source.ok())
        throw api::served_kernel_error(source, "prepare", ErrorCode::internal);
    }
  }
  auto loaded = std::make_shared<SharedKernel>();
  loaded->identity = identity;
  loaded->kernel = std::move(source.kernel);
  loaded->resources = source.resources;
  loaded->device = device;
  {
    std::lock_guard device_lock(device->mutex);
    try {
      loaded->loaded = engine::load_kernel(*device->device, loaded->kernel, source.cubin);
    } catch (const device::DeviceError &e) {
      throw device_error(e, "prepare");
    }
  }
  std::shared_ptr<const SharedKernel> kernel = std::move(loaded);
  std::lock_guard lock(map_mutex);
  return kernels.emplace(identity, kernel).first->second;
}

void Runtime::Impl::load_dispatch(Operation::State &state) {
  if (!db || is_concrete(state.spec))
    return;
  std::optional<tuner::ServingTable> served;
  try {
    // The spec's decided table, else its kernel family's (tuner/size_family.h: the rules of
    // docs/tuner.md); implausible and invalid ones are ignored (tuner/decision.h).
    served = tuner::serving_dispatch_table(*db, state.key.text, arch);
  } catch (const kernels_db::DbError &e) {
    throw Error(ErrorCode::database, e.what(), "prepare", "check the database (`tcjit db check`)");
  }
  if (!served)
    return;
  try {
    state.dispatch.emplace(served->table);
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
    engine::ServedKernel source;
    if (request.config)
      source = tuner::serve_kernel(state.spec, state.key, request, &*db);
    if (source.missed)
      throw Error(ErrorCode::not_found,
                  "the dispatch table of " +
                      (served->own ? state.spec_text : served->table.problem_key) +
                      " names config " + entry.config_json +
                      ", whose kernel is not in the database " + db->path(),
                  "prepare",
                  "compile the tuned kernels (`tcjit db rebuild --db " + db->path() +
                      "`), or use MissPolicy::heuristic");
    if (!request.config || !source.ok()) { // a table this code generator cannot follow
      state.dispatch.reset();
      state.dispatch_kernels.clear();
      return;
    }
    state.dispatch_kernels.push_back(
        load(std::move(source), recompile_for(state.spec, state.key, request)));
  }
}

std::shared_ptr<const Operation::State>
Runtime::Impl::remember(const OpSpec &spec, const ProblemKey &key,
                        std::shared_ptr<const SharedKernel> kernel,
                        std::shared_future<std::shared_ptr<const api::SharedKernel>> compiling) {
  auto state = std::make_shared<Operation::State>();
  state->spec = spec;
  state->concrete = is_concrete(spec);
  state->spec_text = print_spec(spec);
  state->key = key;
  state->kernel = std::move(kernel);
  state->compiling = std::move(compiling);
  state->aligned = aligned;
  state->arch = arch;
  state->tf32_off = tf32_off;
  state->model = model;
  if (db && state->concrete) {
    try {
      const GemmSpec &g = spec.gemm;
      const std::optional<kernels_db::DispatchSizes> sizes =
          spec.kind == OpKind::gemm ? std::optional<kernels_db::DispatchSizes>(
                                          {g.m.value, g.n.value, g.k.value, g.batch.value})
                                    : std::nullopt;
      const std::optional<tuner::Decision> decision = tuner::decide(*db, key.text, arch, sizes);
      if (decision && decision->provenance == kernels_db::ProvenanceKind::measured) {
        state->decided_config = engine::parse_config_json(decision->config_json);
        state->decided_time_us = decision->time_us;
      }
    } catch (const kernels_db::DbError &e) {
      throw Error(ErrorCode::database, e.what(), "prepare",
                  "check the database (`tcjit db check`)");
    }
  }
  load_dispatch(*state);
  std::shared_ptr<const Operation::State> shared = std::move(state);
  std::lock_guard lock(map_mutex);
  operations.emplace(key.text, shared);
  return shared;
}

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
  if (!(options.emulator_timeout_seconds >= 0) || options.emulator_timeout_seconds > 1e9)
    throw Error(ErrorCode::invalid_argument,
                "RuntimeOptions::emulator_timeout_seconds = " +
                    std::to_string(options.emulator_timeout_seconds) + " is not in 0..1e9",
                "Runtime", "give the seconds one emulator launch may run (0: no limit)");
  if (options.device != "auto" && options.device != "emu" && options.device != "cuda")
    throw Error(ErrorCode::invalid_argument, "unknown device '" + options.device + "'", "Runtime",
                "use \"auto\", \"emu\" or \"cuda\"");
  try {
    impl_->device->device = device::open_device(options.device, options.emulator_timeout_seconds);
  } catch (const device::DeviceError &e) {
    throw device_error(e, "Runtime");
  }
  std::string arch_error;
  impl_->arch = engine::target_arch(options.arch, impl_->device->device->info(), arch_error);
  if (impl_->arch.empty())
    throw Error(ErrorCode::invalid_argument, arch_error, "Runtime",
                "set RuntimeOptions::arch to one of them");
  impl_->tf32_off = tf32_disabled_by_environment();
  api::AlignedKernels &aligned = *impl_->aligned;
  aligned.serve = options.on_miss != MissPolicy::fail;
  aligned.arch = impl_->arch;
  aligned.tf32_off = impl_->tf32_off;
  aligned.backend = impl_->backend;
  aligned.device = impl_->device;
  if (options.use_database) {
    try {
      // A database this process cannot write (a team's shared cache) is used read-only: its
      // decisions are followed, its kernels rebuilt in memory, nothing recorded.
      kernels_db::OpenOptions open_options;
      open_options.read_only_if_not_writable = true;
      impl_->db = options.db_path.empty()
                      ? kernels_db::KernelsDb::open_default(open_options)
                      : kernels_db::KernelsDb::open(options.db_path, open_options);
    } catch (const kernels_db::DbError &e) { // not a tcjit database, not a regular file: exit 2
      throw Error(e.kind() == kernels_db::DbErrorKind::invalid_argument
                      ? ErrorCode::invalid_argument
                      : ErrorCode::database,
                  e.what(), "Runtime",
                  "check RuntimeOptions::db_path / $TCJIT_DB, or set use_database = false");
    }
  }
  // What Operation::predicted_time predicts with: the database's calibration for this device.
  try {
    const device::DeviceInfo info = impl_->device->device->info();
    impl_->model = std::make_shared<const tuner::GpuModel>(
        impl_->db ? api::calibrated_gpu_model(*impl_->db, impl_->arch,
                                              info.is_emulator ? "" : info.name, "Runtime")
                  : tuner::gpu_model_for_arch(impl_->arch));
  } catch (const std::exception &) {
    impl_->model = nullptr; // no model for the arch, or a calibration that may not be used
  }
}

Runtime::~Runtime() = default; // ~Impl stops and joins the background tuner

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

engine::ServedKernel Runtime::Impl::serve(const OpSpec &spec, const ProblemKey &key,
                                          const engine::KernelRequest &request, const char *where) {
  try {
    return tuner::serve_kernel(spec, key, request, db ? &*db : nullptr);
  } catch (const kernels_db::DbError &e) {
    throw Error(ErrorCode::database, e.what(), where, "check the database (`tcjit db check`)");
  } catch (const std::runtime_error &e) {
    throw Error(ErrorCode::internal, e.what(), where, "");
  }
}

namespace {

// A symbolic spec's kernel that must be compiled is compiled on a background thread: prepare()
// returns at once (Operation::ready). Not under MissPolicy::fail (nothing is compiled), nor for
// act=custom (the user's code: its errors belong to prepare()).
bool compiles_in_background(const OpSpec &spec, MissPolicy on_miss) {
  return !is_concrete(spec) && on_miss != MissPolicy::fail &&
         spec.epilogue.act != Activation::custom;
}

} // namespace

Operation Runtime::prepare(const OpSpec &spec) {
  Impl &rt = *impl_;
  api::throw_if_invalid(spec, "prepare");
  api::throw_if_unsupported(spec, rt.arch, rt.tf32_off, "prepare");
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
  // MissPolicy::tune of a symbolic spec: representative sizes tuned first, so that the lookup
  // below finds their dispatch table.
  const bool tuned_sizes = rt.options.on_miss == MissPolicy::tune && rt.tune_sizes(spec, key);
  try {
    chosen = tuner::chosen_configs(spec, key, request, rt.db ? &*rt.db : nullptr, tuned_note);
  } catch (const kernels_db::DbError &e) {
    throw Error(ErrorCode::database, e.what(), "prepare", "check the database (`tcjit db check`)");
  }
  // Tuning here is for concrete problems that no decision serves (tuned_note empty: neither their
  // own nor their kernel family's); a symbolic spec was tuned above (tune_sizes), else takes the
  // default chooser's config, chosen at nominal sizes.
  // A read-only database (a shared cache) records nothing: no tuning either.
  const bool tunable = tuned_note.empty() && is_concrete(spec) && !(rt.db && rt.db->read_only());
  const bool background = tunable && rt.options.on_miss == MissPolicy::background;
  Origin tuned = tuned_sizes ? Origin::tuned_now : Origin::compiled_now;
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
      return Operation(std::move(state), tuned_sizes ? Origin::tuned_now : Origin::memory);
    }
  }

  if (!request.config) { // the configs chosen above, not chosen again
    request.chosen = chosen;
    request.chosen_note = tuned_note;
  }
  engine::ServedKernel served;
  if (tuned != Origin::tuned_now && compiles_in_background(spec, rt.options.on_miss)) {
    engine::KernelRequest stored = request; // the database's kernel, else a compile in background
    stored.compile_on_miss = false;
    served = rt.serve(spec, key, stored, "prepare");
    if (served.missed) {
      auto state =
          rt.remember(spec, key, nullptr, rt.compile_in_background(spec, key, request, default_id));
      return Operation(std::move(state), Origin::compiled_now);
    }
  } else {
    served = rt.serve(spec, key, request, "prepare");
  }
  if (!served.ok())
    throw api::served_kernel_error(
        served, "prepare", ErrorCode::bad_spec,
        // Tuned, but its kernel is not stored for this toolkit and compiler (pruned, or built by
        // another version): the decision stands, its kernel is to be compiled again.
        !tuned_note.empty()
            ? "the problem is tuned but its kernel is not stored for this toolkit and compiler: "
              "compile the tuned kernels (`tcjit db rebuild" +
                  (rt.db ? " --db " + rt.db->path() : std::string()) +
                  "`), or open the runtime with MissPolicy::heuristic"
            : miss_fix(spec, rt.db ? rt.db->path() : std::string()));

  // A tune stores its winner's kernel, so the lookup after it is a database hit: still tuned now.
  Origin origin = tuned == Origin::tuned_now                        ? Origin::tuned_now
                  : served.origin == engine::KernelOrigin::database ? Origin::database
                                                                    : Origin::compiled_now;
  const Runtime::Impl::Recompile recompile = rt.recompile_for(spec, key, request);
  std::shared_ptr<const SharedKernel> kernel =
      rt.load(std::move(served), [&](const engine::ServedKernel &failed, const std::string &why) {
        if (origin == Origin::database)
          origin = Origin::compiled_now; // the stored kernel did not load
        return recompile(failed, why);
      });
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
