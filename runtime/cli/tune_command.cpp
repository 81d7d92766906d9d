// `tcjit tune`: offline tuning of a workload into the kernel database (tuner/tune.h), with a
// progress display, resumption, sharding across machines and a summary table.
#include "runtime/cli/tune_command.h"
#include "kernels_db/record_json.h"

#include "compiler/dsl/printer.h"
#include "compiler/spec/arch.h"
#include "compiler/spec/problem_key.h"
#include "compiler/spec/shape.h"
#include "kernels_db/kernels_db.h"
#include "runtime/cli/db_path_option.h"
#include "runtime/cli/exit_codes.h"
#include "runtime/cli/spec_input.h"
#include "runtime/device/device_factory.h"
#include "tuner/cost_model.h"
#include "tuner/kernel_source.h"
#include "tuner/measure_cuda.h"
#include "tuner/measure_model.h"
#include "tuner/measure_replay.h"
#include "tuner/size_range.h"
#include "tuner/tune.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <unistd.h>

namespace tcjit::cli {

namespace {

struct TuneCommandOptions {
  std::vector<std::string> workloads;
  std::string db_path;
  std::string arch = "auto";
  std::string device = "auto";
  std::string strategy = "model-topk";
  std::string budget = "100";
  std::string replay;
  int jobs = 0;
  std::string shard;
  uint64_t seed = 1;
  bool json = false;
  bool retune = false;
};

// Set by SIGINT/SIGTERM: the driver finishes the candidate being measured and stops.
std::atomic<bool> g_stop{false};
extern "C" void on_stop_signal(int signal) {
  g_stop.store(true);
  std::signal(signal, SIG_DFL); // a second Ctrl-C ends the process at once
}

std::string fmt(const char *format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string duration_text(double seconds) {
  if (seconds < 60)
    return fmt("%.0fs", seconds);
  if (seconds < 3600)
    return fmt("%.0fm", seconds / 60) + fmt("%02.0fs", std::fmod(seconds, 60));
  return fmt("%.0fh", seconds / 3600) + fmt("%02.0fm", std::fmod(seconds / 60, 60));
}

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

// The line printed while a problem is tuned: over itself on a terminal.
class ProgressDisplay {
public:
  explicit ProgressDisplay(bool json) : tty_(!json && ::isatty(STDERR_FILENO)), quiet_(json) {}

  void start(size_t i, size_t n, const std::string &name) {
    prefix_ = "[" + std::to_string(i) + "/" + std::to_string(n) + "] " + name;
    if (!quiet_ && !tty_)
      std::cerr << "tcjit tune: " << prefix_ << ": started\n";
  }
  void update(const tuner::TuneProgress &p) {
    if (!tty_)
      return;
    std::string line =
        prefix_ + "  candidates " + std::to_string(p.done) + "/" + std::to_string(p.planned);
    if (p.failed)
      line += " (" + std::to_string(p.failed) + " failed)";
    if (p.best)
      line += "  best " + fmt("%.2f us", p.best_seconds * 1e6) + " " + codegen::to_string(*p.best);
    if (p.done > 0 && p.planned > p.done)
      line +=
          "  ETA " + duration_text(p.elapsed_seconds / double(p.done) * double(p.planned - p.done));
    if (line.size() > 160)
      line.resize(160);
    std::cerr << "\r\033[K" << line << std::flush;
  }
  void finish(const std::string &text) {
    if (quiet_)
      return;
    if (tty_)
      std::cerr << "\r\033[K";
    std::cerr << "tcjit tune: " << prefix_ << ": " << text << "\n";
  }

private:
  bool tty_, quiet_;
  std::string prefix_;
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
    return "already tuned (" + std::to_string(r.reused) + " results)";
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

void print_table(const std::vector<ProblemOutcome> &outcomes, const std::string &measurer) {
  int width = 7;
  for (const ProblemOutcome &o : outcomes)
    for (size_t i = 0; i < std::max<size_t>(1, o.results.size()); ++i)
      width = std::max(width, int(std::min<size_t>(48, row_name(o, i).size())));
  std::printf("\n%-*s %-40s %14s %9s %6s  %s\n", width, "problem", "best config", "time", "TFLOP/s",
              "peak", "how");
  for (const ProblemOutcome &o : outcomes) {
    if (!o.error.empty()) {
      std::printf("%-*s %s\n", width, o.problem->name.c_str(), ("error: " + o.error).c_str());
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
        std::printf("%-*s %-40s %14s %9s %6s  %s\n", width, name.c_str(),
                    "(none: every config failed)", "-", "-", "-",
                    how_obtained(r, measurer).c_str());
        continue;
      }
      const tuner::Measurement &m = r.best_measurement;
      const bool predicted = m.provenance.kind == kernels_db::ProvenanceKind::predicted;
      const std::string time = fmt("%.2f us", m.timing->median_us) + (predicted ? "*" : " ");
      const double tflops = m.tflops.value_or(0);
      std::printf("%-*s %-40s %14s %9.1f %5.0f%%  %s\n", width, name.c_str(),
                  codegen::to_string(*r.best).c_str(), time.c_str(), tflops,
                  100 * peak_fraction(task, tflops), how_obtained(r, measurer).c_str());
    }
    if (o.dispatch_entries > 0)
      std::printf("%-*s dispatch table of %d size buckets stored\n", width, "", o.dispatch_entries);
  }
  std::printf("(* predicted by the cost model, not measured; TFLOP/s and %% of the arch's peak "
              "are of the time shown)\n");
}

int run_tune(TuneCommandOptions opt) {
  const char *cmd = "tcjit tune";
  tuner::Budget budget;
  std::string error;
  if (!tuner::parse_budget(opt.budget, budget, error)) {
    std::cerr << cmd << ": error: --budget: " << error << "\n";
    return kExitUsage;
  }
  const auto strategy = tuner::parse_strategy(opt.strategy);
  if (!strategy) {
    std::cerr << cmd << ": error: --strategy '" << opt.strategy
              << "' is not one of exhaustive, random, anneal, model-topk\n";
    return kExitUsage;
  }
  size_t shard_index = 0, shard_count = 1;
  if (!opt.shard.empty() && !parse_shard(opt.shard, shard_index, shard_count, error)) {
    std::cerr << cmd << ": error: " << error << "\n";
    return kExitUsage;
  }
  if (opt.jobs < 0 || opt.jobs > 256) {
    std::cerr << cmd << ": error: --jobs " << opt.jobs << " must be 0 (all cores) to 256\n";
    return kExitUsage;
  }
  if (opt.arch != "auto" && !find_arch(opt.arch)) {
    std::cerr << cmd << ": error: unknown arch '" << opt.arch << "' (tcjit targets "
              << known_arch_list() << ", or auto)\n";
    return kExitUsage;
  }

  // The workload: every argument's entries, one problem per distinct key.
  std::vector<WorkloadEntry> entries;
  for (const std::string &w : opt.workloads) {
    ParseResult parsed;
    if (!load_workload(w, parsed))
      return kExitBadSpec;
    entries.insert(entries.end(), parsed.entries.begin(), parsed.entries.end());
  }

  // The device measures (cuda) or probes and verifies (the emulator, for the model).
  std::unique_ptr<device::Device> dev;
  if (opt.replay.empty()) {
    try {
      dev = device::open_device(opt.device);
    } catch (const device::DeviceError &e) {
      std::cerr << cmd << ": error: " << e.what() << "\n";
      return kExitFailure;
    }
  }
  std::string arch = opt.arch == "auto" ? "" : opt.arch;
  if (dev && !dev->info().is_emulator && !arch.empty() &&
      arch != "sm_" + std::to_string(dev->info().sm_arch)) {
    std::cerr << cmd << ": error: --arch " << arch << " cannot be measured on this GPU ("
              << dev->info().name << ", sm_" << dev->info().sm_arch
              << "); leave --arch auto, or tune for " << arch
              << " with --device emu (the cost model)\n";
    return kExitUsage;
  }
  if (dev) {
    arch = tuner::target_arch(arch, dev->info(), error);
    if (arch.empty()) {
      std::cerr << cmd << ": error: " << error << "\n";
      return kExitFailure;
    }
  } else if (arch.empty()) {
    arch = "sm_80";
  }
  std::unique_ptr<tuner::Measurer> measurer;
  std::string measurer_text;
  try {
    if (!opt.replay.empty()) {
      measurer = tuner::make_replay_measurer(opt.replay);
      measurer_text = "replayed from " + opt.replay;
    } else if (!dev->info().is_emulator) {
      measurer = tuner::make_cuda_measurer(*dev);
      measurer_text = "measured on " + dev->info().name;
    } else {
      measurer = tuner::make_model_measurer(tuner::gpu_model_for_arch(arch), dev.get());
      measurer_text = "model (" + tuner::gpu_model_for_arch(arch).name + ") + emulator";
    }
  } catch (const std::exception &e) {
    std::cerr << cmd << ": error: " << e.what() << "\n";
    return kExitFailure;
  }

  const bool tf32_off = tf32_disabled_by_environment();
  std::vector<Problem> problems;
  std::map<std::string, size_t> seen;
  int status = kExitOk;
  for (const WorkloadEntry &e : entries) {
    const std::string where = e.name.empty() ? "line " + std::to_string(e.line) : e.name;
    if (e.spec.kind != OpKind::gemm && !is_concrete(e.spec)) {
      std::cerr << cmd << ": error: " << where << ": a " << to_string(e.spec.kind)
                << " is tuned at one batch size: give n (e.g. n=32); the kernel chosen for it "
                   "takes n at run time and serves every batch size (skipped)\n";
      status = kExitBadSpec;
      continue;
    }
    Problem p;
    p.name = where;
    p.weight = e.weight;
    p.task.spec = e.spec;
    p.task.arch = arch;
    p.task.tf32_off = tf32_off;
    p.task.key = make_problem_key(e.spec, arch, tf32_off);
    if (!is_concrete(e.spec)) {
      std::string why;
      p.sizes = tuner::representative_tasks(p.task, why);
      if (p.sizes.empty()) { // the rest of the workload is still tuned; the exit status says 1
        std::cerr << cmd << ": error: " << where << ": " << why << " (skipped)\n";
        status = kExitBadSpec;
        continue;
      }
    }
    if (seen.emplace(p.task.key.text, problems.size()).second)
      problems.push_back(std::move(p));
  }
  // The shard's problems (slices of the workload's order, the same on every machine), the
  // heaviest first: a run that is stopped or runs out of time has spent it where it matters.
  std::vector<size_t> mine = tuner::shard_indices(problems.size(), shard_index, shard_count);
  std::stable_sort(mine.begin(), mine.end(),
                   [&](size_t a, size_t b) { return problems[a].weight > problems[b].weight; });

  std::optional<kernels_db::KernelsDb> db;
  try {
    db = opt.db_path.empty() ? kernels_db::KernelsDb::open_default()
                             : kernels_db::KernelsDb::open(opt.db_path);
  } catch (const kernels_db::DbError &e) {
    std::cerr << cmd << ": error: " << e.what() << "\n";
    return kExitFailure;
  }
  if (!opt.json)
    std::cerr << cmd << ": " << mine.size() << " of " << problems.size() << " problems"
              << (shard_count > 1 ? " (shard " + opt.shard + ")" : std::string()) << " on " << arch
              << ", " << measurer_text << ", strategy " << opt.strategy << ", budget " << opt.budget
              << " per problem, database " << db->path() << "\n";

  g_stop = false;
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  ProgressDisplay display(opt.json);
  std::vector<ProblemOutcome> outcomes;
  tuner::TuneOptions topt;
  topt.strategy = *strategy;
  topt.seed = opt.seed;
  topt.budget = budget;
  topt.jobs = opt.jobs;
  topt.measurer = measurer.get();
  topt.stop = &g_stop;
  topt.retune = opt.retune;
  topt.on_progress = [&](const tuner::TuneProgress &p) { display.update(p); };
  for (size_t i = 0; i < mine.size() && !g_stop; ++i) {
    const Problem &p = problems[mine[i]];
    ProblemOutcome out;
    out.problem = &p;
    display.start(i + 1, mine.size(), p.name);
    try {
      const std::vector<tuner::TuneTask> tasks =
          p.sizes.empty() ? std::vector<tuner::TuneTask>{p.task} : p.sizes;
      for (const tuner::TuneTask &t : tasks) {
        out.results.push_back(tuner::tune_problem(t, topt, &*db));
        if (g_stop)
          break;
      }
      if (!p.sizes.empty() && !g_stop)
        out.dispatch_entries = tuner::store_dispatch_table(p.task, p.sizes, out.results, *db);
      const tuner::TuneResult &last = out.results.back();
      std::string text;
      if (last.best)
        text = "best " + codegen::to_string(*last.best) + ", " + how_obtained(last, measurer_text);
      else if (last.space_size == 0 && !last.already_tuned)
        text = "no legal config: every one of " + std::to_string(last.pruned) + " was pruned (" +
               last.pruned_summary + ")";
      else
        text = "no usable config (" + how_obtained(last, measurer_text) + ")";
      if (last.best && last.pruned > 0)
        text += "; pruned " + std::to_string(last.pruned) + ": " + last.pruned_summary;
      display.finish(text);
      for (const tuner::TuneResult &r : out.results)
        if (!r.best && !r.interrupted)
          status = kExitFailure;
    } catch (const kernels_db::DbError &e) {
      out.error = e.what();
      status = kExitFailure;
      display.finish("error: " + out.error);
    } catch (const std::exception &e) { // a spec the generator refuses, a device failure...
      out.error = e.what();
      status = kExitFailure;
      display.finish("error: " + out.error);
    }
    outcomes.push_back(std::move(out));
  }
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);

  if (opt.json) {
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
                        o.results[i], measurer_text));
      if (o.dispatch_entries)
        j["dispatch_entries"] = o.dispatch_entries;
      all.push_back(j);
    }
    std::cout << kernels_db::dump_json(all, 2) << "\n"; // any bytes: invalid UTF-8 replaced
  } else {
    print_table(outcomes, measurer_text);
  }
  if (g_stop) {
    std::cerr << cmd << ": interrupted: every result so far is stored in " << db->path()
              << "; run the same command again to continue\n";
    return 130;
  }
  return status;
}

} // namespace

void add_tune_command(CLI::App &app) {
  auto opt = std::make_shared<TuneCommandOptions>();
  CLI::App *cmd = app.add_subcommand(
      "tune", "Tune each GEMM and convolution of a workload: search tile configs under the arch's "
              "limits, measure "
              "them (a GPU; else predict them with the cost model, each verified on the "
              "emulator), store every result and the winner in the kernel database. Resumable; "
              "Ctrl-C keeps what is done (exit 130)");
  cmd->add_option("workload", opt->workloads,
                  "DSL text (\"gemm m=... \"), workload files, or - for standard input; a size "
                  "range (m=1..8192) tunes representative sizes and stores a dispatch table")
      ->required();
  cmd->add_option("--db", opt->db_path,
                  "kernel database (default: $TCJIT_DB, else $XDG_CACHE_HOME/tcjit/kernels.db)")
      ->check(non_empty_db_path());
  cmd->add_option("--arch", opt->arch,
                  "sm_80, sm_86, sm_89, sm_90, or auto (the device's; the emulator is sm_80)")
      ->capture_default_str();
  cmd->add_option("--device", opt->device,
                  "cuda (measure), emu (model + emulator), or auto (cuda if present)")
      ->check(CLI::IsMember({"auto", "emu", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--strategy", opt->strategy, "exhaustive, random, anneal or model-topk")
      ->capture_default_str();
  cmd->add_option("--budget", opt->budget,
                  "per problem: a count of configs (200) or a time (90s, 10m, 2h)")
      ->capture_default_str();
  cmd->add_option("--jobs", opt->jobs, "threads building candidates (0: all cores)")
      ->capture_default_str();
  cmd->add_option("--shard", opt->shard,
                  "I/N: tune only the I-th of N slices of the workload (0-based), e.g. "
                  "$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT; combine with `tcjit db merge`");
  cmd->add_option("--replay", opt->replay,
                  "answer measurements from a JSON Lines file (`tcjit db export`) instead of a "
                  "device: a simulated tuning run");
  cmd->add_option("--seed", opt->seed, "seed of the random and anneal strategies")
      ->capture_default_str();
  cmd->add_flag("--json", opt->json, "print the results as JSON on standard output");
  cmd->add_flag("--retune", opt->retune,
                "go on past problems already tuned (e.g. with a larger --budget); the results "
                "stored are reused, not measured again");
  cmd->footer("Example: tcjit tune examples/workloads/resnet50.tcjit --budget 8 --db kernels.db");
  cmd->callback([opt]() { throw CLI::RuntimeError(run_tune(*opt)); });
}

} // namespace tcjit::cli
