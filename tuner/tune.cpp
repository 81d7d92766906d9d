#include "tuner/tune.h"

#include "compiler/codegen/plan/epilogue_loop.h"
#include "compiler/codegen/plan/kernel_plan.h"
#include "compiler/codegen/plan/llvm_overrides.h"
#include "compiler/reference/gemm_reference.h"
#include "compiler/target/arch.h"
#include "engine/custom_activation.h"

#include "engine/kernel_records.h"
#include "tuner/cost_model.h"
#include "tuner/decision.h"
#include "tuner/heuristic.h"
#include "tuner/ranking.h"
#include "tuner/search_space.h"

#include <charconv>
#include <chrono>
#include <cmath>
#include <deque>
#include <future>
#include <limits>
#include <map>
#include <stdexcept>
#include <thread>

namespace tcjit::tuner {

namespace {

using codegen::TileConfig;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// One candidate on its way from the strategy to the database.
struct Pending {
  size_t index = 0;
  std::optional<Measurement> reused; // an earlier run's result
  std::future<BuiltCandidate> build; // valid when built now
};

kernels_db::ResultRecord result_record(const TuneTask &task, const TileConfig &config,
                                       const Measurement &m, const std::string &version) {
  kernels_db::ResultRecord r;
  r.problem_key = task.key.text;
  r.config_json = engine::config_json(config);
  r.arch = task.arch;
  r.status = m.status;
  if (m.status == kernels_db::ResultStatus::ok) {
    r.timing = m.timing;
    r.tflops = m.tflops;
  }
  r.provenance = m.provenance;
  r.tuner_version = version;
  r.message = m.message;
  return r;
}

Measurement measurement_of(const kernels_db::ResultRecord &r) {
  Measurement m;
  m.status = r.status;
  m.provenance = r.provenance;
  m.timing = r.timing;
  m.tflops = r.tflops;
  m.message = r.message;
  return m;
}

// The finished tune's winner: the config of the dispatch table this tuner version stored for the
// problem (a tune stores it last, after the winner's kernel), with its result. nullptr when the
// problem is not finished (never tuned, or stopped).
// `decided_ms`: when that table was stored.
const kernels_db::ResultRecord *finished_winner(kernels_db::KernelsDb &db, const TuneTask &task,
                                                const std::string &version,
                                                const std::vector<kernels_db::ResultRecord> &mine,
                                                int64_t &decided_ms) {
  const auto table = db.find_dispatch_table(task.key.text, task.arch, version);
  if (!table || table->entries.size() != 1 ||
      kernels_db::implausible_dispatch_table(*table, decision_rules()))
    return nullptr;
  decided_ms = table->created_ms;
  const std::string &config = table->entries.front().config_json; // both stored canonical
  for (const kernels_db::ResultRecord &r : mine)
    if (r.status == kernels_db::ResultStatus::ok && r.timing && r.config_json == config)
      return &r;
  return nullptr;
}

// Takes the problem's claim when `options` has a claims directory: `claim` held, or `result` says
// why not (claimed elsewhere, stopped while waiting; a claim refused is noted and not needed).
// Returns false when the problem must not be tuned now; `waited` when another process held it.
bool claim_problem(const TuneTask &task, const std::string &version, const TuneOptions &options,
                   Claim &claim, bool &waited, TuneResult &result) {
  waited = false;
  if (!options.claims)
    return true;
  const std::string name = claim_name(task.key.text, task.arch, version);
  ClaimAttempt attempt = try_claim(*options.claims, name);
  if (attempt.state == ClaimState::busy && options.wait_for_claim) {
    waited = true;
    attempt = wait_for_claim(*options.claims, name, options.stop);
  }
  switch (attempt.state) {
  case ClaimState::taken: claim = std::move(attempt.claim); return true;
  case ClaimState::refused:
    result.claim_note = attempt.why + ": tuned without a claim (a concurrent tune of this problem "
                                      "may repeat its measurements)";
    return true;
  case ClaimState::busy:
    result.claimed_elsewhere = true;
    result.claim_holder = attempt.holder;
    return false;
  case ClaimState::stopped: // still held by the other process
    result.interrupted = true;
    result.claimed_elsewhere = true;
    result.claim_holder = attempt.holder;
    return false;
  }
  return false;
}

// Marks the problem tuned: a dispatch table of one bucket that holds every size.
void store_decision(kernels_db::KernelsDb &db, const TuneTask &task, const std::string &version,
                    const codegen::TileConfig &best, const Measurement &m) {
  kernels_db::DispatchTable table;
  table.problem_key = task.key.text;
  table.arch = task.arch;
  table.tuner_version = version;
  kernels_db::DispatchEntry e;
  e.dims_json = "{}";
  e.config_json = engine::config_json(best);
  e.time_us = m.timing ? m.timing->median_us : 0;
  e.provenance = m.provenance.kind;
  table.entries.push_back(std::move(e));
  db.put_dispatch_table(table);
}

} // namespace

bool parse_budget(std::string_view text, Budget &out, std::string &error) {
  if (text.empty()) {
    error = "an empty budget";
    return false;
  }
  double value = 0;
  const char *first = text.data(), *last = text.data() + text.size();
  auto [p, ec] = std::from_chars(first, last, value);
  if (ec != std::errc() || !(value > 0) || !std::isfinite(value)) {
    error = "budget '" + std::string(text) +
            "' is not a positive number of candidates (200) or a time (90s, 10m, 2h)";
    return false;
  }
  const std::string_view unit(p, size_t(last - p));
  Budget b;
  if (unit.empty()) {
    if (value != std::floor(value) || value > 1e7) {
      error = "budget '" + std::string(text) + "': a count of candidates must be a whole number " +
              "up to 10000000";
      return false;
    }
    b.candidates = size_t(value);
  } else if (unit == "s" || unit == "m" || unit == "h") {
    b.seconds = value * (unit == "s" ? 1 : unit == "m" ? 60 : 3600);
  } else {
    error = "budget '" + std::string(text) + "': unknown unit '" + std::string(unit) +
            "' (use s, m or h, or no unit for a count of candidates)";
    return false;
  }
  out = b;
  return true;
}

void store_binary(kernels_db::KernelsDb &db, const TuneTask &task, const BuiltCandidate &built) {
  kernels_db::BinaryRecord record =
      engine::binary_record(task.key, built.kernel, task.arch, built.cubin.resources);
  if (!built.cubin.cubin.empty()) {
    record.cubin = built.cubin.cubin;
    record.compile_options += " + " + built.cubin.stage + " -arch=" + task.arch;
  }
  db.put_problem(engine::problem_record(task.spec, task.key, task.arch));
  db.put_binary(record);
}

// Whether the kernel of `config` is stored for the current toolkit and compiler: the binary of its
// kernel identity, else the one linked to the task's problem (as the runtime looks it up).
bool kernel_stored(kernels_db::KernelsDb &db, const TuneTask &task,
                   const codegen::TileConfig &config) {
  const std::string identity =
      codegen::kernel_identity(codegen::plan_kernel(task.spec, config, task.arch, task.tf32_off));
  return db.find_binary({task.key.text,
                         engine::config_json(config),
                         task.arch,
                         engine::toolkit_version(),
                         engine::compiler_version(task.backend),
                         {},
                         identity})
             .status == kernels_db::LookupStatus::hit;
}

std::string tuner_version(const Measurer &measurer) {
  std::string v = "tcjit-tuner " + std::to_string(kTunerFormat) + " / " +
                  engine::compiler_version() + " / " + measurer.name();
  if (measurer.name() == "model")
    v += " (" + cost_model_version() + ")";
  return v;
}

std::vector<size_t> shard_indices(size_t count, size_t index, size_t shards) {
  if (shards == 0 || index >= shards)
    throw std::invalid_argument("shard " + std::to_string(index) + "/" + std::to_string(shards) +
                                ": the index must be in 0.." +
                                (shards ? std::to_string(shards - 1) : std::string("N-1")));
  // Slice i holds [i*count/shards, (i+1)*count/shards): sizes differ by at most one.
  const size_t begin = index * count / shards, end = (index + 1) * count / shards;
  std::vector<size_t> out;
  for (size_t i = begin; i < end; ++i)
    out.push_back(i);
  return out;
}

TuneResult tune_problem(const TuneTask &task, const TuneOptions &options,
                        kernels_db::KernelsDb *db) {
  if (!options.measurer)
    throw std::invalid_argument("tune_problem: no measurer");
  // A bad TCJIT_EPILOGUE_UNROLL fails every build: refused here, before any candidate's failure
  // is stored (a stored failure is reused by the next run, which would then skip the config).
  codegen::epilogue_unroll_requested();
  codegen::llvm_overrides(); // and a bad TCJIT_LLC_OPT
  // Likewise a bad TCJIT_REFERENCE_SIMD fails every verification against the CPU reference.
  reference_simd_kernel();
  const auto start = Clock::now();
  TuneResult result;
  if (const auto errors = codegen::check_codegen_support(task.spec, task.arch, task.tf32_off);
      !errors.empty())
    throw std::invalid_argument(errors.front().field + ": " + errors.front().message);
  // act=custom: refused by the LLVM backend, and checked once here rather than failing every
  // candidate (and storing each as illegal).
  if (task.spec.epilogue.act == Activation::custom) {
    if (task.backend == codegen::Backend::llvm)
      throw std::invalid_argument("backend: act=custom:" + task.spec.epilogue.custom.path +
                                  " is a CUDA C++ function: only the CUDA C++ backend compiles it; "
                                  "use --backend nvrtc");
    const DType epi = task.spec.acc == DType::f64 ? DType::f64 : DType::f32;
    if (const auto errors = engine::check_custom_activation(task.spec.epilogue.custom, epi,
                                                            find_arch(task.arch)->sm_version);
        !errors.empty())
      throw std::invalid_argument(errors.front().field + ": " + errors.front().message);
  }
  Measurer &measurer = *options.measurer;
  // A capped space is another search: its results are kept apart, and its winner does not
  // decide for the problem (a size range's table does, for the range).
  const bool capped = task.max_vec_a > 0 || task.max_vec_b > 0;
  const std::string version =
      tuner_version(measurer) + (capped ? " / vectors <= " + std::to_string(task.max_vec_a) + "," +
                                              std::to_string(task.max_vec_b)
                                        : std::string());
  result.tuner_version = version;
  Claim claim; // held until the decision is stored (released on return, or by the OS on a crash)
  bool waited = false;
  if (!claim_problem(task, version, options, claim, waited, result)) {
    result.seconds = seconds_since(start);
    return result;
  }
  const auto tuning_start = Clock::now(); // the wait for a claim is not the budget's
  const GpuModel &gpu = options.gpu ? *options.gpu : gpu_model_for_arch(task.arch);

  // What earlier runs of this tuner version stored.
  std::map<std::string, Measurement> known;
  if (db) {
    db->put_problem(engine::problem_record(task.spec, task.key, task.arch));
    std::vector<kernels_db::ResultRecord> mine;
    for (kernels_db::ResultRecord &r : db->results(task.key.text))
      if (r.arch == task.arch && r.tuner_version == version)
        mine.push_back(std::move(r));
    int64_t decided_ms = 0;
    const kernels_db::ResultRecord *winner = finished_winner(*db, task, version, mine, decided_ms);
    // --retune goes past a decision older than this run; one stored since was retuned during
    // this run (by a concurrent tune of the problem, whose claim this one waited for).
    const bool decided_since = options.run_started_ms > 0 && decided_ms >= options.run_started_ms;
    if (winner && (!options.retune || decided_since)) {
      result.already_tuned = true;
      result.tuned_elsewhere = decided_since;
      result.best = engine::parse_config_json(winner->config_json);
      result.best_measurement = measurement_of(*winner);
      result.reused = mine.size();
      if (result.best && !db->read_only() && !kernel_stored(*db, task, *result.best)) {
        // A decision without its kernel (`tcjit db prune`, a toolkit upgrade): the kernel is built
        // again, so that the problem is served as tuned (what `tcjit db rebuild` does for all).
        const BuiltCandidate built =
            build_candidate(task.spec, *result.best, task.arch, task.tf32_off, task.backend);
        if (built.usable()) {
          store_binary(*db, task, built);
          result.kernel_rebuilt = true;
        }
      }
      result.seconds = seconds_since(start);
      return result;
    }
    for (const kernels_db::ResultRecord &r : mine)
      known.emplace(r.config_json, measurement_of(r));
  }

  SpaceOptions space_options = options.space.value_or(SpaceOptions{});
  space_options.max_vec_a = task.max_vec_a;
  space_options.max_vec_b = task.max_vec_b;
  const SearchSpace space =
      enumerate_space(task.spec, task.arch, task.tf32_off, gpu, space_options);
  result.space_size = space.legal.size();
  result.pruned = space.pruned.size();
  result.pruned_summary = space.pruned_summary();
  // The strategies take a cost per config, lower first: the rank of its static prediction.
  std::vector<double> cost(space.legal.size(), std::numeric_limits<double>::infinity());
  {
    const std::vector<RankedConfig> ranked =
        rank_by_model(task.spec, space.legal, task.tf32_off, gpu);
    for (size_t r = 0; r < ranked.size(); ++r)
      cost[ranked[r].index] = double(r);
  }
  // The default chooser's config (what the runtime compiles untuned) is measured first by the
  // strategies that follow the model's order: the tuned config is then never slower than the
  // untuned default because the model ranked the default low. (The first GPU run of bench/gpu, an
  // H200: conv1's 8 best-predicted configs all ran at about half the default's speed.)
  for (const TileConfig &chosen : heuristic_configs(task.spec, task.arch, task.tf32_off, 1))
    for (size_t i = 0; i < space.legal.size(); ++i)
      if (space.legal[i] == chosen)
        cost[i] = -1;
  std::unique_ptr<Strategy> strategy =
      make_strategy(options.strategy, space.legal, cost, options.seed);

  const int jobs =
      options.jobs > 0 ? options.jobs : std::max(1, int(std::thread::hardware_concurrency()));
  const size_t limit = options.budget.candidates > 0 ? options.budget.candidates
                                                     : std::numeric_limits<size_t>::max();
  TuneProgress progress;
  progress.planned = std::min(limit, space.legal.size());
  std::optional<BuiltCandidate> best_built;
  std::deque<Pending> pending;
  size_t proposed = 0;
  bool exhausted = false;
  // A candidate that spills teaches the rest of the run: configs estimated to need at least as
  // many registers are skipped unbuilt (they would spill too).
  int spill_threshold = std::numeric_limits<int>::max();
  // A budget spent without one usable config is extended (up to 4 times) until one is found.
  const size_t hard_limit = limit == std::numeric_limits<size_t>::max() ? limit : limit * 4;
  size_t usable = 0;
  auto out_of_time = [&] {
    return options.budget.seconds > 0 && seconds_since(tuning_start) >= options.budget.seconds;
  };
  auto stopped = [&] { return options.stop && options.stop->load(); };

  while (true) {
    // Keep every build thread busy ahead of the measurer.
    while (!exhausted && !stopped() && !out_of_time() &&
           (proposed < limit || (usable == 0 && pending.empty() && proposed < hard_limit)) &&
           pending.size() < size_t(jobs) + 1) {
      const std::optional<size_t> index = strategy->next();
      if (!index) {
        exhausted = true;
        break;
      }
      const TileConfig &config = space.legal[*index];
      auto it = known.find(engine::config_json(config));
      if (it == known.end() && measurer.needs_build() &&
          estimated_registers(task.spec, config, task.tf32_off) >= spill_threshold) {
        ++result.skipped;
        strategy->report(*index, std::numeric_limits<double>::infinity());
        continue;
      }
      ++proposed;
      Pending p;
      p.index = *index;
      if (it != known.end()) {
        p.reused = it->second;
      } else if (measurer.needs_build()) {
        p.build = std::async(std::launch::async, [&task, config] {
          return build_candidate(task.spec, config, task.arch, task.tf32_off, task.backend);
        });
      }
      pending.push_back(std::move(p));
    }
    if (pending.empty())
      break;
    if (stopped() || out_of_time()) {
      result.interrupted = stopped();
      break; // the builds in flight finish as `pending` is destroyed; nothing half-written
    }
    Pending p = std::move(pending.front());
    pending.pop_front();
    const TileConfig &config = space.legal[p.index];
    CandidateOutcome outcome;
    outcome.config = config;
    std::optional<BuiltCandidate> built;
    if (p.reused) {
      outcome.measurement = *p.reused;
      outcome.reused = true;
      ++result.reused;
    } else {
      if (p.build.valid()) {
        built = p.build.get();
        outcome.build_ms = built->build_ms;
      }
      // (Only a spill at the 255-register cap says "too many registers"; a stack frame at fewer
      // registers has another cause.)
      if (built && built->failure_rule == "spills" && built->facts.registers >= 255)
        spill_threshold =
            std::min(spill_threshold, estimated_registers(task.spec, config, task.tf32_off));
      if (built && !built->usable()) {
        outcome.measurement.status = built->failure_rule == "compile"
                                         ? kernels_db::ResultStatus::illegal
                                         : kernels_db::ResultStatus::failed;
        outcome.measurement.provenance.kind = kernels_db::ProvenanceKind::predicted;
        outcome.measurement.provenance.model = version;
        outcome.measurement.message = built->failure_rule + ": " + built->failure;
      } else {
        outcome.measurement = measurer.measure(task, config, built ? &*built : nullptr);
      }
      ++result.measured;
      if (db)
        db->put_result(result_record(task, config, outcome.measurement, version));
    }
    const Measurement &m = outcome.measurement;
    const bool ok = m.status == kernels_db::ResultStatus::ok && m.timing;
    if (!ok)
      ++result.failed;
    else
      ++usable;
    strategy->report(p.index, ok ? m.seconds() : std::numeric_limits<double>::infinity());
    if (ok && (!result.best || m.seconds() < result.best_measurement.seconds())) {
      result.best = config;
      result.best_measurement = m;
      if (built)
        best_built = std::move(built);
      else
        best_built.reset();
    }
    result.outcomes.push_back(std::move(outcome));
    progress.done = result.outcomes.size();
    progress.failed = result.failed;
    progress.best = result.best;
    progress.best_seconds = result.best ? result.best_measurement.seconds() : 0;
    progress.elapsed_seconds = seconds_since(tuning_start);
    if (options.on_progress)
      options.on_progress(progress);
  }
  if (!result.interrupted && stopped())
    result.interrupted = true;
  // The winner's kernel marks the problem tuned (a run stopped early leaves it to the next run).
  if (db && result.best && !result.interrupted) {
    if (measurer.needs_build()) {
      if (!best_built)
        best_built =
            build_candidate(task.spec, *result.best, task.arch, task.tf32_off, task.backend);
      if (best_built->usable())
        store_binary(*db, task, *best_built);
    }
    if (!capped)
      store_decision(*db, task, version, *result.best, result.best_measurement);
  }
  result.seconds = seconds_since(start);
  return result;
}

} // namespace tcjit::tuner
