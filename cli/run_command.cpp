// `tcjit run`: the main job, a client of tcjit::Runtime::verify (include/tcjit/tools.hpp). For each
// spec: the kernel from the cache (or compiled and stored), run on random inputs, verified against
// the CPU reference, the verified result recorded; a summary table after a workload.
#include "cli/run_command.h"
#include "cli/json_text.h"

#include "cli/db_path_option.h"
#include "cli/exit_codes.h"
#include "cli/numeric_options.h"
#include "cli/progress_estimate.h"
#include "cli/progress_line.h"
#include "cli/spec_input.h"
#include "tcjit/tools.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

namespace tcjit::cli {

namespace {

// 0.416 -> "42%" (as printf's %.0f%%).
std::string percent(double fraction) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(0) << 100.0 * fraction << '%';
  return s.str();
}

// Three significant digits (as printf's %.3g).
std::string three_digits(double v) {
  std::ostringstream s;
  s << std::setprecision(3) << v;
  return s.str();
}

struct RunOptions {
  std::string spec;
  std::string device = "auto";
  std::string arch; // "" = the device's own
  std::string config;
  uint64_t seed = 1;
  std::string db_path; // "" = default
  bool no_cache = false;
  bool allow_long = false; // run on the emulator even when the estimate exceeds 10 minutes
  bool json = false;       // one JSON array on stdout (docs/cli.md) instead of the text report
  std::string backend = "llvm";
  double timeout = kDefaultLaunchTimeoutSeconds; // per emulator launch; 0: none
};

// What one workload entry's run found: the JSON of `--json`, and a row of the summary table.
struct RunRecord {
  nlohmann::json json = nlohmann::json::object();
  std::string name, config, result = "error";
  int64_t elements = 0;
  double worst = 0; // error / tolerance
};

// The live line of an emulator launch: "[2/23] conv3: 1234/2700 blocks (46%), 3s, about 4s left"
// (progress_estimate.h: past the estimate it says so).
std::string progress_text(const std::string &prefix, const Progress &p,
                          const LaunchProgressTrack &track, double timeout) {
  std::string text =
      prefix + ": " + std::to_string(p.done) + "/" + std::to_string(p.total) + " " + p.what;
  if (p.total > 0)
    text += " (" + percent(double(p.done) / double(p.total)) + ")";
  return text + ", " + short_duration(p.elapsed_seconds) + time_left_text(p, track, timeout);
}

// A launch that ran past --timeout (the emulator's "time limit reached"): the spec, the limit and
// how to raise it.
void print_time_limit(const std::string &label, const Error &e, double timeout) {
  std::cerr << "tcjit run: error: " << escape_controls(label) << ": the emulator's launch ran "
            << "longer than the time limit of " << short_duration(timeout) << " (--timeout "
            << timeout << "): a kernel or an act=custom function that does not end, or a problem "
            << "too large for the emulator\n"
            << "tcjit run: error: " << escape_controls(e.problem()) << "\n"
            << "tcjit run: how to fix: raise the limit with --timeout SECONDS (0: no limit), or "
            << "make the problem smaller\n";
}

int run_one(Runtime &runtime, const WorkloadEntry &entry, const RunOptions &opt,
            const std::string &prefix, ProgressLine &progress, std::ostream &out, RunRecord &rec) {
  VerifyRequest request;
  request.config = opt.config;
  request.seed = opt.seed;
  request.allow_long = opt.allow_long;
  request.log = &out;
  auto track = std::make_shared<LaunchProgressTrack>();
  if (!progress.quiet())
    request.on_progress = [&, track](const Progress &p) {
      note_progress(*track, p);
      // the launch's last report: the line goes before the report's next line is printed
      if (p.done == p.total)
        progress.clear();
      else
        progress.show(progress_text(prefix, p, *track, opt.timeout));
    };
  VerifyReport report;
  try {
    report = runtime.verify(entry.spec, request);
  } catch (const Error &e) {
    progress.clear();
    if (e.code() == ErrorCode::device && opt.timeout > 0 &&
        e.problem().find("time limit reached") != std::string::npos)
      print_time_limit(entry.name.empty() ? canonical_text(entry.spec)
                                          : entry.name + ": " + canonical_text(entry.spec),
                       e, opt.timeout);
    else
      print_error("tcjit run", e);
    rec.json["error"] = e.problem();
    return exit_status_of(e);
  }
  progress.clear();
  for (const std::string &w : report.warnings)
    std::cerr << "tcjit run: warning: " << escape_controls(w) << "\n";
  rec.json.update(nlohmann::json::parse(report.json));
  rec.config = report.config;
  rec.elements = report.elements;
  rec.worst = report.worst_error_over_tolerance;
  rec.result = report.ok ? "ok" : "failed";
  return report.ok ? kExitOk : kExitFailure;
}

int run_run(const RunOptions &opt) {
  if (!opt.arch.empty() && !is_target_arch(opt.arch)) {
    std::cerr << "tcjit run: error: unknown arch '" << opt.arch << "' (tcjit targets "
              << target_arch_names() << ")\n";
    return kExitUsage;
  }
  std::vector<WorkloadEntry> entries;
  if (const int status = load_workload(opt.spec, entries); status != kExitOk)
    return status;
  RuntimeOptions options;
  options.device = opt.device;
  options.arch = opt.arch;
  options.db_path = opt.db_path;
  options.use_database = !opt.no_cache;
  options.backend = opt.backend;
  options.emulator_timeout_seconds = opt.timeout;
  std::optional<Runtime> runtime;
  try {
    runtime.emplace(options);
  } catch (const Error &e) { // the device or the database cannot be opened
    // Its fix is the API's (RuntimeOptions): not printed, and the device's told as the flag.
    std::string problem = e.problem();
    const std::string api_fix = "set RuntimeOptions::device to \"emu\" or \"auto\"";
    if (const size_t at = problem.find(api_fix); at != std::string::npos)
      problem.replace(at, api_fix.size(), "use --device emu");
    print_error("tcjit run", Error(e.code(), problem, e.where(), ""), /*with_fix=*/false);
    return exit_status_of(e); // 2 for a --db that is not a tcjit database or not a file
  }
  std::ostream null_stream(nullptr);
  std::ostream &out = opt.json ? null_stream : std::cout;
  ProgressLine progress(opt.json);
  int status = kExitOk;
  std::vector<RunRecord> records;
  for (size_t i = 0; i < entries.size(); ++i) {
    const WorkloadEntry &entry = entries[i];
    if (i > 0)
      out << "\n";
    RunRecord &rec = records.emplace_back();
    rec.name = entry_label(entry);
    rec.json["name"] = rec.name;
    if (entries.size() > 1 || !entry.name.empty())
      out << "== " << rec.name << "\n";
    const std::string prefix =
        entries.size() > 1
            ? "[" + std::to_string(i + 1) + "/" + std::to_string(entries.size()) + "] " + rec.name
            : (entry.name.empty() ? std::string("tcjit run") : entry.name);
    const int one = run_one(*runtime, entry, opt, prefix, progress, out, rec);
    if (!rec.json.contains("result"))
      rec.json["result"] = rec.result;
    rec.json["exit_status"] = one;
    if (one != kExitOk && status == kExitOk)
      status = one;
  }
  if (opt.json) {
    nlohmann::json all = nlohmann::json::array();
    for (const RunRecord &r : records)
      all.push_back(r.json);
    std::cout << json_text(all, 2) << "\n"; // any bytes: invalid UTF-8 replaced
  } else if (records.size() > 1) {
    // The workload's summary: one row per operation.
    size_t width = 7;
    for (const RunRecord &r : records)
      width = std::max(width, r.name.size());
    std::cout << "\n"
              << std::left << std::setw(int(width)) << "problem"
              << "  result  elements  worst err/tol  config\n";
    for (const RunRecord &r : records)
      std::cout << std::left << std::setw(int(width)) << r.name << "  " << std::setw(6) << r.result
                << "  " << std::right << std::setw(8) << r.elements << "  " << std::setw(13)
                << (r.elements ? three_digits(r.worst) : std::string("-")) << "  " << std::left
                << r.config << "\n";
  }
  return status;
}

} // namespace

void add_run_command(CLI::App &app) {
  auto opt = std::make_shared<RunOptions>();
  CLI::App *cmd = app.add_subcommand(
      "run", "Compile (or fetch from the cache) each GEMM or convolution, run it on random inputs, "
             "verify it "
             "against the CPU reference and record the result; exits 3 when any element is "
             "outside the tolerance");
  cmd->add_option("spec", opt->spec,
                  "DSL text (\"gemm m=... \"), a workload file, or - for standard input")
      ->required();
  cmd->add_option("--device", opt->device, "emu (PTX emulator), cuda, or auto (cuda if present)")
      ->check(CLI::IsMember({"auto", "emu", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--arch", opt->arch,
                  "target architecture: " + target_arch_names() +
                      " (default: the device's; the emulator is sm_80)");
  cmd->add_option("--config", opt->config,
                  "tile config over the default, e.g. \"64x64x32 w32x32 s3\" (see tcjit compile)");
  cmd->add_option("--seed", opt->seed, "seed of the random inputs (0 to 2^64-1)")
      ->check(non_negative_seed())
      ->capture_default_str();
  cmd->add_option("--timeout", opt->timeout,
                  "wall-clock seconds one emulator launch may run before the run fails (exit 3); "
                  "0: no limit")
      ->check(launch_timeout_seconds())
      ->capture_default_str();
  cmd->add_option("--db", opt->db_path,
                  "kernel database (default: $TCJIT_DB, else $XDG_CACHE_HOME/tcjit/kernels.db)")
      ->check(non_empty_db_path());
  cmd->add_option("--backend", opt->backend,
                  "llvm or nvrtc: the backend that writes a kernel compiled now (a stored kernel "
                  "of the other backend is not used; act=custom:FILE needs nvrtc)")
      ->check(CLI::IsMember({"llvm", "nvrtc"}))
      ->capture_default_str();
  cmd->add_flag("--no-cache", opt->no_cache, "neither read nor write the kernel database");
  cmd->add_flag("--allow-long", opt->allow_long,
                "run on the emulator even when its time estimate exceeds 10 minutes");
  cmd->add_flag("--json", opt->json,
                "print one JSON array, an object per operation (spec, key, config, cache, "
                "device, verify, counters, result; docs/cli.md), instead of the text report");
  cmd->footer("Example: tcjit run examples/workloads/resnet50.tcjit --device emu");
  cmd->callback([opt]() { throw CLI::RuntimeError(run_run(*opt)); });
}

} // namespace tcjit::cli
