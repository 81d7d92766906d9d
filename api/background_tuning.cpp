// Tuning behind tcjit::Runtime (include/tcjit/tcjit.hpp): a missed problem tuned now
// (MissPolicy::tune) or queued for the one background thread (MissPolicy::background), whose
// winner replaces the operation's kernel when it is ready; Runtime::wait_for_tuning
// (api/runtime_state.h).
#include "api/runtime_state.h"

#include "compiler/codegen/plan/tile_config.h"
#include "runtime/device_factory.h"
#include "tuner/chosen_configs.h"
#include "tuner/cost_model.h"
#include "tuner/measure_cuda.h"
#include "tuner/measure_model.h"
#include "tuner/size_family.h"
#include "tuner/size_range.h"

#include "compiler/spec/shape.h"

#include <stdexcept>
#include <utility>

namespace tcjit {

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

Runtime::Impl::~Impl() {
  {
    std::lock_guard lock(tuning_mutex);
    stop_tuning = true;
    tuning_queue.clear();
  }
  tuning_changed.notify_all();
  if (tuning_worker.joinable())
    tuning_worker.join();
}

tuner::TuneResult Runtime::Impl::tune(const OpSpec &spec, const ProblemKey &key) {
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
      const std::unique_ptr<device::Device> emu =
          device::open_device("emu", options.emulator_timeout_seconds);
      const auto measurer = tuner::make_model_measurer(tuner::gpu_model_for_arch(arch), emu.get());
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
    throw api::device_error(e, "tune");
  } catch (const std::invalid_argument &e) {
    throw Error(ErrorCode::bad_spec, e.what(), "tune", "change the spec as the message says");
  }
}

bool Runtime::Impl::tune_sizes(const OpSpec &spec, const ProblemKey &key) {
  if (!db || db->read_only() || is_concrete(spec))
    return false;
  try {
    if (tuner::serving_dispatch_table(*db, key.text, arch))
      return false; // tuned already: its own table or its kernel family's
  } catch (const kernels_db::DbError &e) {
    throw Error(ErrorCode::database, e.what(), "prepare", "check the database (`tcjit db check`)");
  }
  tuner::TuneTask ranged;
  ranged.spec = spec;
  ranged.arch = arch;
  ranged.tf32_off = tf32_off;
  ranged.backend = backend;
  if (spec.kind != OpKind::gemm) { // one batch size: the kernel takes n at run time
    const Dim &n = spec.conv.n;
    ranged.spec.conv.n = Dim::fixed_size(n.kind == Dim::Kind::range ? n.hi : 32);
    ranged.key = make_problem_key(ranged.spec, arch, tf32_off);
    return tune(ranged.spec, ranged.key).best.has_value();
  }
  for (Dim *d :
       {&ranged.spec.gemm.m, &ranged.spec.gemm.n, &ranged.spec.gemm.k, &ranged.spec.gemm.batch})
    if (d->kind == Dim::Kind::any)
      *d = Dim::range_of(1, d == &ranged.spec.gemm.batch ? 64 : 4096);
  ranged.key = make_problem_key(ranged.spec, arch, tf32_off);
  std::string why;
  const std::vector<tuner::TuneTask> sizes = tuner::representative_tasks(ranged, why);
  if (sizes.empty())
    throw Error(ErrorCode::bad_spec, why, "prepare", "give the sizes as ranges (m=1..4096)");
  std::vector<tuner::TuneResult> results;
  for (const tuner::TuneTask &size : sizes)
    results.push_back(tune(size.spec, size.key));
  try {
    return tuner::store_dispatch_table(ranged, sizes, results, *db) > 0;
  } catch (const kernels_db::DbError &e) {
    throw Error(ErrorCode::database, e.what(), "tune", "check the database (`tcjit db check`)");
  } catch (const std::invalid_argument &e) {
    throw Error(ErrorCode::internal, e.what(), "tune", "");
  }
}

void Runtime::Impl::tune_in_background(std::shared_ptr<const Operation::State> state) {
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

void Runtime::Impl::tuning_loop() {
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

void Runtime::Impl::tune_and_switch(const Operation::State &state) {
  const tuner::TuneResult r = tune(state.spec, state.key);
  if (!r.best || stop_tuning || *r.best == api::kernel_of(state)->kernel.config)
    return;
  engine::KernelRequest request;
  request.arch = arch;
  request.tf32_off = tf32_off;
  request.backend = backend;
  request.config = *r.best;
  engine::ServedKernel source = [&] {
    std::lock_guard prepare_lock(prepare_mutex);
    return tuner::serve_kernel(state.spec, state.key, request, db ? &*db : nullptr);
  }();
  if (!source.ok())
    throw Error(ErrorCode::internal, source.errors.front(), "tune", "");
  state.kernel.store(load(std::move(source)));
}

void Runtime::Impl::wait_for_tunes() {
  std::unique_lock lock(tuning_mutex);
  tuning_changed.wait(lock, [&] { return stop_tuning || (tuning_queue.empty() && !tuning_busy); });
}

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

} // namespace tcjit
