// `tcjit tune`: a client of tcjit::tune_ops (include/tcjit/tools.hpp), with a progress display,
// Ctrl-C that keeps what is done, and the summary table.
#include "cli/tune_command.h"
#include "cli/json_text.h"

#include "cli/db_path_option.h"
#include "cli/exit_codes.h"
#include "cli/numeric_options.h"
#include "cli/progress_line.h"
#include "cli/spec_input.h"
#include "tcjit/tools.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <atomic>
#include <csignal>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

namespace tcjit::cli {

namespace {

// 20.6234 -> "20.62 us".
std::string microseconds(double us) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(2) << us << " us";
  return s.str();
}

struct TuneCommandOptions {
  std::vector<std::string> workloads;
  TuneRequest request;
  bool json = false;
};

// Set by SIGINT/SIGTERM: the driver finishes the candidate being measured and stops.
std::atomic<bool> g_stop{false};
extern "C" void on_stop_signal(int signal) {
  g_stop.store(true);
  std::signal(signal, SIG_DFL); // a second Ctrl-C ends the process at once
}

// The display of tune_ops's events: the plan, then per problem a live line on a terminal (plain
// "started" lines elsewhere) and its outcome.
void show_event(ProgressLine &line, const TuneEvent &e) {
  const std::string prefix =
      "[" + std::to_string(e.index) + "/" + std::to_string(e.count) + "] " + e.name;
  switch (e.kind) {
  case TuneEvent::Kind::setup: line.print("tcjit tune: " + e.text); return;
  case TuneEvent::Kind::started:
    if (!line.on_terminal())
      line.print("tcjit tune: " + prefix + ": started");
    return;
  case TuneEvent::Kind::progress: {
    std::string text =
        prefix + "  candidates " + std::to_string(e.done) + "/" + std::to_string(e.planned);
    if (e.failed)
      text += " (" + std::to_string(e.failed) + " failed)";
    if (!e.best_config.empty())
      text += "  best " + microseconds(e.best_us) + " " + e.best_config;
    if (e.done > 0 && e.planned > e.done)
      text += "  ETA " +
              short_duration(e.elapsed_seconds / double(e.done) * double(e.planned - e.done));
    line.show(text);
    return;
  }
  case TuneEvent::Kind::finished: line.print("tcjit tune: " + prefix + ": " + e.text); return;
  }
}

int run_tune(TuneCommandOptions opt) {
  const char *cmd = "tcjit tune";
  // The workload: every argument's entries (tune_ops keeps one problem per distinct key).
  std::vector<WorkloadEntry> entries;
  for (const std::string &w : opt.workloads) {
    std::vector<WorkloadEntry> parsed;
    if (const int status = load_workload(w, parsed); status != kExitOk)
      return status;
    entries.insert(entries.end(), parsed.begin(), parsed.end());
  }
  ProgressLine line(opt.json, /*plain_interval_seconds=*/30);
  TuneRequest &request = opt.request;
  request.stop = &g_stop;
  request.on_event = [&](const TuneEvent &e) { show_event(line, e); };
  g_stop = false;
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  TuneReport report;
  try {
    report = tune_ops(entries, request);
  } catch (const Error &e) {
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    line.clear();
    print_error(cmd, e);
    return e.code() == ErrorCode::invalid_argument ? kExitUsage : kExitFailure;
  }
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  line.clear();
  for (const std::string &s : report.skipped)
    std::cerr << cmd << ": error: " << escape_controls(s) << "\n";
  if (opt.json)
    std::cout << json_text(nlohmann::json::parse(report.json), 2) << "\n";
  else
    std::cout << report.text;
  if (report.interrupted) {
    std::cerr << cmd << ": interrupted: every result so far is stored in " << report.db_path
              << "; run the same command again to continue\n";
    return 130;
  }
  if (report.failed > 0)
    return kExitFailure;
  return report.skipped.empty() ? kExitOk : kExitBadSpec;
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
  cmd->add_option("--db", opt->request.db_path,
                  "kernel database (default: $TCJIT_DB, else $XDG_CACHE_HOME/tcjit/kernels.db)")
      ->check(non_empty_db_path());
  cmd->add_option("--arch", opt->request.arch,
                  target_arch_names() + ", or auto (the device's; the emulator is sm_80)")
      ->capture_default_str();
  cmd->add_option("--device", opt->request.device,
                  "cuda (measure), emu (model + emulator), or auto (cuda if present)")
      ->check(CLI::IsMember({"auto", "emu", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--strategy", opt->request.strategy, "exhaustive, random, anneal or model-topk")
      ->capture_default_str();
  cmd->add_option("--budget", opt->request.budget,
                  "per problem: a count of configs (200) or a time (90s, 10m, 2h)")
      ->capture_default_str();
  cmd->add_option("--jobs", opt->request.jobs, "threads building candidates (0: all cores)")
      ->capture_default_str();
  cmd->add_option("--shard", opt->request.shard,
                  "I/N: tune only the I-th of N slices of the workload (0-based), e.g. "
                  "$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT; combine with `tcjit db merge`");
  cmd->add_option("--replay", opt->request.replay,
                  "answer measurements from a JSON Lines file (`tcjit db export`) instead of a "
                  "device: a simulated tuning run");
  cmd->add_option("--backend", opt->request.backend,
                  "llvm or nvrtc: the backend that builds the candidates (and the kernels stored; "
                  "act=custom:FILE needs nvrtc)")
      ->check(CLI::IsMember({"llvm", "nvrtc"}))
      ->capture_default_str();
  cmd->add_option("--seed", opt->request.seed,
                  "seed of the random and anneal strategies (0 to 2^64-1)")
      ->check(non_negative_seed())
      ->capture_default_str();
  opt->request.timeout_seconds = kDefaultLaunchTimeoutSeconds;
  cmd->add_option("--timeout", opt->request.timeout_seconds,
                  "wall-clock seconds one emulator launch (a candidate's probe or verification) "
                  "may run before it fails; 0: no limit")
      ->check(launch_timeout_seconds())
      ->capture_default_str();
  cmd->add_flag("--json", opt->json, "print the results as JSON on standard output");
  cmd->add_flag("--retune", opt->request.retune,
                "go on past problems already tuned (e.g. with a larger --budget); the results "
                "stored are reused, not measured again");
  cmd->footer("Example: tcjit tune examples/workloads/resnet50.tcjit --budget 8 --db kernels.db");
  cmd->callback([opt]() { throw CLI::RuntimeError(run_tune(*opt)); });
}

} // namespace tcjit::cli
