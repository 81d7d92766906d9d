// tune_ops (include/tcjit/tools.hpp) and `tcjit tune`: offline tuning of a workload into the
// kernel database (tuner/tune.h) — the device or a replay as the measurer, one problem per
// distinct key, heaviest first, sharding, resumption, claims against concurrent tunes of the same
// problems (tuner/tune_claims.h), the summary table and the JSON.
#include "tcjit/tools.hpp"

#include "api/calibrated_model.h"

#include "compiler/spec/printer.h"
#include "compiler/spec/problem_key.h"
#include "compiler/spec/shape.h"
#include "compiler/target/arch.h"
#include "engine/kernel_cache.h"
#include "kernels_db/clock.h"
#include "kernels_db/kernels_db.h"
#include "kernels_db/record_json.h"
#include "runtime/device_factory.h"
#include "support/string_printf.h"
#include "tuner/cost_model.h"
#include "tuner/measure_cuda.h"
#include "tuner/measure_model.h"
#include "tuner/measure_replay.h"
#include "tuner/size_range.h"
#include "tuner/tune.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>

namespace tcjit {

namespace {

// "I/N" with 0 <= I < N.
bool parse_shard(const std::string &text, size_t &index, size_t &count, std::string &error) {
  const size_t slash = text.find('/');
  auto to_size = [](std::string_view s, size_t &out) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && p == s.data() + s.size() && !s.empty();
  };
  if (slash == std::string::npos || !to_size(std::string_view(text).substr(0, slash), index) ||
      !to_size(std::string_view(text).substr(slash + 1), count) || count == 0 || index >= count) {
    error = "--shard '" + text + "' must be I/N with 0 <= I < N (e.g. --shard 0/4; with Slurm: " +
            "--shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT)";
    return false;
  }
  return true;
}

// One problem of the workload, as tuned.
struct Problem {
  std::string name;   // the workload's name for it, else "line N"
  int64_t weight = 1; // the workload's `weight=N`: heavier problems are tuned first
  tuner::TuneTask task;
  std::vector<tuner::TuneTask> sizes; // a size range: its representative sizes
};

struct ProblemOutcome {
  const Problem *problem = nullptr;
  std::vector<tuner::TuneResult> results; // one per size (one for a concrete problem)
  std::string error;
  int dispatch_entries = 0;
};

const char *provenance_word(kernels_db::ProvenanceKind k) {
  switch (k) {
  case kernels_db::ProvenanceKind::measured: return "measured";
  case kernels_db::ProvenanceKind::predicted: return "predicted";
  case kernels_db::ProvenanceKind::emulated: return "emulated";
  }
  return "?";
}

std::string how_obtained(const tuner::TuneResult &r, const std::string &measurer) {
  if (r.already_tuned)
    return std::string(r.tuned_elsewhere ? "tuned by another process" : "already tuned") + " (" +
           std::to_string(r.reused) + " results" +
           (r.kernel_rebuilt ? "; its kernel was not stored: built again" : "") + ")";
  std::string how = measurer + ", " + std::to_string(r.measured + r.reused) + " of " +
                    std::to_string(r.space_size) + " configs";
  if (r.reused)
    how += " (" + std::to_string(r.reused) + " resumed)";
  if (r.failed)
    how += ", " + std::to_string(r.failed) + " failed";
  if (r.skipped)
    how += ", " + std::to_string(r.skipped) + " skipped (would spill)";
  if (r.interrupted)
    how += ", interrupted";
  return how;
}

double peak_fraction(const tuner::TuneTask &task, double tflops) {
  const tuner::GpuModel &gpu = tuner::gpu_model_for_arch(task.arch);
  const tuner::KernelFeatures k =
      tuner::kernel_features(task.spec, codegen::TileConfig{}, task.tf32_off);
  return tflops * 1e12 / gpu.peak_flops(k.math);
}

nlohmann::json result_json(const tuner::TuneTask &task, const tuner::TuneResult &r,
                           const std::string &measurer) {
  nlohmann::json j;
  j["spec"] = print_spec(task.spec);
  j["key"] = task.key.hash_hex();
  j["arch"] = task.arch;
  j["already_tuned"] = r.already_tuned;
  j["interrupted"] = r.interrupted;
  j["space"] = r.space_size;
  j["pruned"] = r.pruned;
  j["measured"] = r.measured;
  j["resumed"] = r.reused;
  j["failed"] = r.failed;
  j["skipped"] = r.skipped;
  j["how"] = how_obtained(r, measurer);
  if (r.best) {
    j["config"] = codegen::to_string(*r.best);
    j["provenance"] = provenance_word(r.best_measurement.provenance.kind);
    j["time_us"] = r.best_measurement.timing->median_us;
    if (r.best_measurement.tflops) {
      j["tflops"] = *r.best_measurement.tflops;
      j["fraction_of_peak"] = peak_fraction(task, *r.best_measurement.tflops);
    }
  }
  return j;
}

// The name of size i of a problem in the table: its own, plus the sizes of a range's member.
std::string row_name(const ProblemOutcome &o, size_t i) {
  std::string name = o.problem->name;
  if (!o.problem->sizes.empty() && i < o.problem->sizes.size()) {
    const GemmSpec &g = o.problem->sizes[i].spec.gemm;
    name += " m=" + std::to_string(g.m.value) + " n=" + std::to_string(g.n.value) +
            " k=" + std::to_string(g.k.value);
  }
  return name;
}

std::string summary_table(const std::vector<ProblemOutcome> &outcomes,
                          const std::string &measurer) {
  std::string out;
  char buf[4096];
  auto line = [&](int n) {
    out.append(buf, std::min<size_t>(size_t(std::max(n, 0)), sizeof buf - 1));
  };
  int width = 7;
  for (const ProblemOutcome &o : outcomes)
    for (size_t i = 0; i < std::max<size_t>(1, o.results.size()); ++i)
      width = std::max(width, int(std::min<size_t>(48, row_name(o, i).size())));
  line(std::snprintf(buf, sizeof buf, "\n%-*s %-40s %14s %9s %6s  %s\n", width, "problem",
                     "best config", "time", "TFLOP/s", "peak", "how"));
  for (const ProblemOutcome &o : outcomes) {
    if (!o.error.empty()) {
      line(std::snprintf(buf, sizeof buf, "%-*s %s\n", width, o.problem->name.c_str(),
                         ("error: " + o.error).c_str()));
      continue;
    }
    for (size_t i = 0; i < o.results.size(); ++i) {
      const tuner::TuneResult &r = o.results[i];
      const tuner::TuneTask &task =
          o.problem->sizes.empty() ? o.problem->task : o.problem->sizes[i];
      std::string name = row_name(o, i);
      if (name.size() > size_t(width))
        name.resize(size_t(width));
      if (!r.best) {
        line(std::snprintf(buf, sizeof buf, "%-*s %-40s %14s %9s %6s  %s\n", width, name.c_str(),
                           "(none: every config failed)", "-", "-", "-",
                           how_obtained(r, measurer).c_str()));
        continue;
      }
      const tuner::Measurement &m = r.best_measurement;
      const bool predicted = m.provenance.kind == kernels_db::ProvenanceKind::predicted;
      const std::string time =
          support::string_printf("%.2f us", m.timing->median_us) + (predicted ? "*" : " ");
      const double tflops = m.tflops.value_or(0);
      line(std::snprintf(buf, sizeof buf, "%-*s %-40s %14s %9.1f %5.0f%%  %s\n", width,
                         name.c_str(), codegen::to_string(*r.best).c_str(), time.c_str(), tflops,
                         100 * peak_fraction(task, tflops), how_obtained(r, measurer).c_str()));
    }
    if (o.dispatch_entries > 0)
      line(std::snprintf(buf, sizeof buf, "%-*s dispatch table of %d size buckets stored\n", width,
                         "", o.dispatch_entries));
  }
  line(std::snprintf(
      buf, sizeof buf,
      "(* predicted by the cost model, not measured; TFLOP/s and %% of the arch's peak "
      "are of the time shown)\n"));
  return out;
}

Error bad_request(const std::string &what) {
  return Error(ErrorCode::invalid_argument, what, "tune", "");
}

} // namespace

namespace {

// A TuneRequest's values, checked and parsed before anything is opened.
struct CheckedTuneRequest {
  tuner::Budget budget;
  tuner::StrategyKind strategy = tuner::StrategyKind::model_topk;
  size_t shard_index = 0, shard_count = 1;
  codegen::Backend backend = codegen::Backend::llvm;
};

// Throws Error(invalid_argument) naming the first value that is not valid.
CheckedTuneRequest check_tune_request(const TuneRequest &request) {
  CheckedTuneRequest checked;
  std::string error;
  if (!tuner::parse_budget(request.budget, checked.budget, error))
    throw bad_request("--budget: " + error);
  const auto strategy = tuner::parse_strategy(request.strategy);
  if (!strategy)
    throw bad_request("--strategy '" + request.strategy +
                      "' is not one of exhaustive, random, anneal, model-topk");
  checked.strategy = *strategy;
  if (!request.shard.empty() &&
      !parse_shard(request.shard, checked.shard_index, checked.shard_count, error))
    throw bad_request(error);
  if (request.jobs < 0 || request.jobs > 256)
    throw bad_request("--jobs " + std::to_string(request.jobs) + " must be 0 (all cores) to 256");
  if (request.arch != "auto" && !find_arch(request.arch))
    throw bad_request("unknown arch '" + request.arch + "' (tcjit targets " +
                      std::string(known_arch_list()) + ", or auto)");
  const std::optional<codegen::Backend> backend = codegen::parse_backend(request.backend);
  if (!backend)
    throw bad_request("--backend '" + request.backend + "' is not one of llvm, nvrtc");
  checked.backend = *backend;
  if (request.device != "auto" && request.device != "emu" && request.device != "cuda")
    throw bad_request("unknown device '" + request.device + "' (emu, cuda or auto)");
  if (!(request.timeout_seconds >= 0) || request.timeout_seconds > 1e9)
    throw bad_request("--timeout must be between 0 (no limit) and 1e9 seconds");
  return checked;
}

// The workload's distinct problems on `arch`; operations that cannot be tuned go to `skipped`,
// each with why.
std::vector<Problem> workload_problems(const std::vector<WorkloadEntry> &ops,
                                       const std::string &arch, codegen::Backend backend,
                                       std::vector<std::string> &skipped) {
  const bool tf32_off = tf32_disabled_by_environment();
  std::vector<Problem> problems;
  std::map<std::string, size_t> seen;
  for (const WorkloadEntry &e : ops) {
    const std::string where = e.name.empty() ? "line " + std::to_string(e.line) : e.name;
    if (e.spec.kind != OpKind::gemm && !is_concrete(e.spec)) {
      skipped.push_back(where + ": a " + std::string(to_string(e.spec.kind)) +
                        " is tuned at one batch size: give n (e.g. n=32); the kernel "
                        "chosen for it takes n at run time and serves every batch size "
                        "(skipped)");
      continue;
    }
    Problem p;
    p.name = where;
    p.weight = e.weight;
    p.task.spec = e.spec;
    p.task.arch = arch;
    p.task.tf32_off = tf32_off;
    p.task.backend = backend;
    p.task.key = make_problem_key(e.spec, arch, tf32_off);
    if (!is_concrete(e.spec)) {
      std::string why;
      p.sizes = tuner::representative_tasks(p.task, why);
      if (p.sizes.empty()) { // the rest of the workload is still tuned
        skipped.push_back(where + ": " + why + " (skipped)");
        continue;
      }
    }
    if (seen.emplace(p.task.key.text, problems.size()).second)
      problems.push_back(std::move(p));
  }
  return problems;
}

// Tunes sizes `which` of `p` (its one task when concrete) into out.results (one per task), until
// topt.stop is set; returns those that another process is tuning (left, unless
// topt.wait_for_claim). `note` hears why a claim could not be taken.
// `tuned_here`: the keys this run tuned itself (a size range's sizes may repeat another problem).
std::vector<size_t> tune_sizes(const Problem &p, const std::vector<size_t> &which,
                               const tuner::TuneOptions &topt, kernels_db::KernelsDb &db,
                               ProblemOutcome &out, std::set<std::string> &tuned_here,
                               const std::function<void(const std::string &)> &note) {
  std::vector<size_t> held;
  for (size_t s : which) {
    const tuner::TuneTask &task = p.sizes.empty() ? p.task : p.sizes[s];
    tuner::TuneResult &r = out.results[s] = tuner::tune_problem(task, topt, &db);
    if (r.tuned_elsewhere && tuned_here.count(task.key.text))
      r.tuned_elsewhere = false;
    if (!r.claimed_elsewhere && !r.already_tuned)
      tuned_here.insert(task.key.text);
    if (!r.claim_note.empty())
      note(r.claim_note);
    if (r.claimed_elsewhere)
      held.push_back(s);
    if (*topt.stop) {
      if (!topt.wait_for_claim) // (pass 1: every size) the sizes not reached are not reported
        out.results.resize(s + 1);
      break;
    }
  }
  return held;
}

// The finished event's sentence for a problem whose sizes are all tuned; counts a failure.
std::string finish_problem(const Problem &p, ProblemOutcome &out, bool stopped,
                           kernels_db::KernelsDb &db, TuneReport &report) {
  if (!p.sizes.empty() && !stopped)
    out.dispatch_entries = tuner::store_dispatch_table(p.task, p.sizes, out.results, db);
  const tuner::TuneResult &last = out.results.back();
  std::string text;
  if (last.best)
    text = "best " + codegen::to_string(*last.best) + ", " + how_obtained(last, report.measurer);
  else if (last.space_size == 0 && !last.already_tuned)
    text = "no legal config: every one of " + std::to_string(last.pruned) + " was pruned (" +
           last.pruned_summary + ")";
  else
    text = "no usable config (" + how_obtained(last, report.measurer) + ")";
  if (last.best && last.pruned > 0)
    text += "; pruned " + std::to_string(last.pruned) + ": " + last.pruned_summary;
  for (const tuner::TuneResult &r : out.results)
    if (!r.best && !r.interrupted) {
      ++report.failed;
      break;
    }
  return text;
}

// "process 1234" (or "another process" when it wrote no pid).
std::string holder_name(const std::vector<tuner::TuneResult> &results,
                        const std::vector<size_t> &held) {
  for (size_t s : held)
    if (!results[s].claim_holder.empty())
      return "process " + results[s].claim_holder;
  return "another process";
}

// Tunes problems[mine[0]], problems[mine[1]], ... in that order into `db` until `topt.stop` is set,
// reporting each (started, progress, finished) through `emit`; counts the failed in `report`.
// A problem another process is tuning (its claim, tune_claims.h) is left until the others are done,
// then waited for: it is found tuned by that process, or resumed where it stopped.
std::vector<ProblemOutcome> tune_problems(const std::vector<Problem> &problems,
                                          const std::vector<size_t> &mine, tuner::TuneOptions topt,
                                          kernels_db::KernelsDb &db, TuneReport &report,
                                          const std::function<void(TuneEvent)> &emit) {
  const std::atomic<bool> &stop = *topt.stop;
  TuneEvent current;
  topt.on_progress = [&](const tuner::TuneProgress &p) {
    TuneEvent e = current;
    e.kind = TuneEvent::Kind::progress;
    e.done = p.done;
    e.planned = p.planned;
    e.failed = p.failed;
    if (p.best) {
      e.best_config = codegen::to_string(*p.best);
      e.best_us = p.best_seconds * 1e6;
    }
    e.elapsed_seconds = p.elapsed_seconds;
    emit(e);
  };
  auto say = [&](const std::string &text) {
    TuneEvent e;
    e.kind = TuneEvent::Kind::setup;
    e.text = text;
    emit(e);
  };
  std::set<std::string> tuned_here; // the keys this run tuned
  std::set<std::string> noted;      // each note once
  auto note = [&](const std::string &text) {
    if (noted.insert(text).second)
      say("note: " + text);
  };
  auto label = [&](size_t i) {
    return "[" + std::to_string(i + 1) + "/" + std::to_string(mine.size()) + "] " +
           problems[mine[i]].name;
  };
  std::vector<std::optional<ProblemOutcome>> outcomes(mine.size());
  std::vector<std::pair<size_t, std::vector<size_t>>> later; // (position, sizes held elsewhere)
  // Pass 1 runs every size of every problem, pass 2 the sizes that were held by another process.
  for (int pass = 1; pass <= 2 && !stop; ++pass) {
    topt.wait_for_claim = pass == 2;
    const size_t count = pass == 1 ? mine.size() : later.size();
    for (size_t n = 0; n < count && !stop; ++n) {
      const size_t i = pass == 1 ? n : later[n].first;
      const Problem &p = problems[mine[i]];
      current = TuneEvent{};
      current.index = i + 1;
      current.count = mine.size();
      current.name = p.name;
      std::vector<size_t> which(std::max<size_t>(1, p.sizes.size()));
      if (pass == 1) {
        for (size_t s = 0; s < which.size(); ++s)
          which[s] = s;
        outcomes[i] = ProblemOutcome{};
        outcomes[i]->problem = &p;
        outcomes[i]->results.resize(which.size());
        TuneEvent started = current;
        started.kind = TuneEvent::Kind::started;
        emit(started);
      } else {
        which = later[n].second;
        say(label(i) + ": waiting for " + holder_name(outcomes[i]->results, which) +
            ", which is tuning it");
      }
      ProblemOutcome &out = *outcomes[i];
      TuneEvent finished = current;
      finished.kind = TuneEvent::Kind::finished;
      try {
        const std::vector<size_t> held = tune_sizes(p, which, topt, db, out, tuned_here, note);
        if (!held.empty() && !stop) { // pass 1 only: pass 2 waits
          say(label(i) + ": " + holder_name(out.results, held) +
              " is tuning it: coming back to it after the other problems");
          later.emplace_back(i, held);
          continue;
        }
        if (!held.empty()) // stopped before it came back
          break;
        finished.text = finish_problem(p, out, stop, db, report);
      } catch (const std::exception &e) { // the database, a spec the generator refuses, a device
        out.error = e.what();
        ++report.failed;
        finished.text = "error: " + out.error;
      }
      emit(finished);
    }
  }
  std::vector<ProblemOutcome> reported; // the problems finished (or stopped while tuned)
  for (size_t i = 0; i < outcomes.size(); ++i) {
    if (!outcomes[i])
      continue;
    const bool held = std::any_of(outcomes[i]->results.begin(), outcomes[i]->results.end(),
                                  [](const tuner::TuneResult &r) { return r.claimed_elsewhere; });
    if (!held || !outcomes[i]->error.empty())
      reported.push_back(std::move(*outcomes[i]));
  }
  return reported;
}

// The report's JSON (the array of `tcjit tune --json`) and its summary table.
void render_tune_report(const std::vector<ProblemOutcome> &outcomes, TuneReport &report) {
  nlohmann::json all = nlohmann::json::array();
  for (const ProblemOutcome &o : outcomes) {
    nlohmann::json j;
    j["name"] = o.problem->name;
    if (!o.error.empty())
      j["error"] = o.error;
    j["sizes"] = nlohmann::json::array();
    for (size_t i = 0; i < o.results.size(); ++i)
      j["sizes"].push_back(
          result_json(o.problem->sizes.empty() ? o.problem->task : o.problem->sizes[i],
                      o.results[i], report.measurer));
    if (o.dispatch_entries)
      j["dispatch_entries"] = o.dispatch_entries;
    all.push_back(j);
  }
  report.json = kernels_db::dump_json(all, -1);
  report.text = summary_table(outcomes, report.measurer);
}

} // namespace

TuneReport tune_ops(const std::vector<WorkloadEntry> &ops, const TuneRequest &request) {
  const CheckedTuneRequest checked = check_tune_request(request);
  const int64_t run_started_ms = kernels_db::now_unix_ms();
  std::string error;
  // The device measures (cuda) or probes and verifies (the emulator, for the model).
  std::unique_ptr<device::Device> dev;
  if (request.replay.empty()) {
    try {
      dev = device::open_device(request.device, request.timeout_seconds);
    } catch (const device::DeviceError &e) {
      throw Error(ErrorCode::device, e.what(), "tune", "");
    }
  }
  std::string arch = request.arch == "auto" ? "" : request.arch;
  if (dev && !dev->info().is_emulator && !arch.empty() &&
      arch != "sm_" + std::to_string(dev->info().sm_arch))
    throw bad_request("--arch " + arch + " cannot be measured on this GPU (" + dev->info().name +
                      ", sm_" + std::to_string(dev->info().sm_arch) +
                      "); leave --arch auto, or tune for " + arch +
                      " with --device emu (the cost model)");
  if (dev) {
    arch = engine::target_arch(arch, dev->info(), error);
    if (arch.empty())
      throw Error(ErrorCode::unsupported, error, "tune", "");
  } else if (arch.empty()) {
    arch = "sm_80";
  }
  TuneReport report;
  // The cost model that ranks the candidates (and measures them on the emulator): the arch's,
  // with the database's calibration for this GPU (tcjit calibrate) when it has one.
  const tuner::GpuModel model = api::calibrated_gpu_model(
      request.db_path, arch, dev && !dev->info().is_emulator ? dev->info().name : "", "tune");
  const std::string calibrated = model.calibration.empty() ? "" : ", " + model.calibration;
  std::unique_ptr<tuner::Measurer> measurer;
  try {
    if (!request.replay.empty()) {
      measurer = tuner::make_replay_measurer(request.replay);
      report.measurer = "replayed from " + request.replay;
    } else if (!dev->info().is_emulator) {
      measurer = tuner::make_cuda_measurer(*dev);
      report.measurer = "measured on " + dev->info().name +
                        (calibrated.empty() ? "" : " (ranked by the model" + calibrated + ")");
    } else {
      measurer = tuner::make_model_measurer(model, dev.get());
      report.measurer = "model (" + model.name + calibrated + ") + emulator";
    }
  } catch (const std::exception &e) {
    throw Error(ErrorCode::unsupported, e.what(), "tune", "");
  }

  std::vector<Problem> problems = workload_problems(ops, arch, checked.backend, report.skipped);
  // The shard's problems (slices of the workload's order, the same on every machine), the
  // heaviest first: a run that is stopped or runs out of time has spent it where it matters.
  std::vector<size_t> mine =
      tuner::shard_indices(problems.size(), checked.shard_index, checked.shard_count);
  std::stable_sort(mine.begin(), mine.end(),
                   [&](size_t a, size_t b) { return problems[a].weight > problems[b].weight; });
  report.problems = mine.size();

  std::optional<kernels_db::KernelsDb> db;
  try {
    db = request.db_path.empty() ? kernels_db::KernelsDb::open_default()
                                 : kernels_db::KernelsDb::open(request.db_path);
  } catch (const kernels_db::DbError &e) { // not a tcjit database, not a regular file: exit 2
    throw Error(e.kind() == kernels_db::DbErrorKind::invalid_argument ? ErrorCode::invalid_argument
                                                                      : ErrorCode::database,
                e.what(), "tune", "");
  }
  report.db_path = db->path();
  auto emit = [&](TuneEvent event) {
    if (request.on_event)
      request.on_event(event);
  };
  {
    TuneEvent setup;
    setup.kind = TuneEvent::Kind::setup;
    setup.count = mine.size();
    setup.text = std::to_string(mine.size()) + " of " + std::to_string(problems.size()) +
                 " problems" +
                 (checked.shard_count > 1 ? " (shard " + request.shard + ")" : std::string()) +
                 " on " + arch + ", " + report.measurer + ", strategy " + request.strategy +
                 ", budget " + request.budget + " per problem, database " + db->path();
    emit(setup);
  }

  std::atomic<bool> never{false};
  tuner::TuneOptions topt;
  topt.strategy = checked.strategy;
  topt.seed = request.seed;
  topt.budget = checked.budget;
  topt.jobs = request.jobs;
  topt.measurer = measurer.get();
  topt.gpu = &model;
  topt.stop = request.stop ? request.stop : &never;
  topt.retune = request.retune;
  topt.run_started_ms = run_started_ms;
  // Concurrent tunes of this database do not repeat each other's work (tune_claims.h).
  std::string no_claims;
  const std::optional<tuner::ClaimDir> claims =
      tuner::ClaimDir::open(tuner::claims_dir_of(db->path()), no_claims);
  topt.claims = claims ? &*claims : nullptr;
  if (!claims) {
    TuneEvent note;
    note.kind = TuneEvent::Kind::setup;
    note.text = "note: " + no_claims +
                ": tuning without claims (a concurrent tune of the same problems may repeat "
                "their measurements)";
    emit(note);
  }
  const std::vector<ProblemOutcome> outcomes =
      tune_problems(problems, mine, topt, *db, report, emit);
  report.interrupted = *topt.stop;
  render_tune_report(outcomes, report);
  return report;
}

} // namespace tcjit
