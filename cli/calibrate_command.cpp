// `tcjit calibrate`: a client of tcjit::db_calibrate (include/tcjit/db.hpp): the cost model's
// per-GPU constants fitted to a database's measured results, kept beside the database.
#include "cli/calibrate_command.h"

#include "cli/db_path_option.h"
#include "cli/exit_codes.h"
#include "cli/json_text.h"
#include "cli/spec_input.h"
#include "tcjit/db.hpp"
#include "tcjit/tools.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <memory>

namespace tcjit::cli {

namespace {

struct CalibrateOptions {
  std::string db_path; // "" = default
  std::string gpu;
  bool json = false;
  bool dry_run = false;
};

std::string figure(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%.4g", v);
  return text;
}

int run_calibrate(const CalibrateOptions &opt) {
  DbCalibrateReport r;
  try {
    r = db_calibrate({opt.db_path, opt.gpu, opt.dry_run});
  } catch (const Error &error) {
    print_error("tcjit calibrate", error);
    return exit_status_of(error);
  }
  if (opt.json) {
    std::cout << json_text(nlohmann::json::parse(r.json), 2) << "\n";
    return kExitOk;
  }
  std::cout << "fitted the cost model of " << r.arch << " to " << r.results
            << " measured results of " << escape_controls(r.gpu) << " in "
            << escape_controls(r.path);
  if (r.skipped)
    std::cout << " (" << r.skipped << " not usable, skipped)";
  std::cout << "\nrms log error: " << figure(r.residual_before) << " uncalibrated -> "
            << figure(r.residual) << " calibrated\n";
  for (const DbCalibratedConstant &c : r.constants)
    std::cout << "  " << c.name << ": " << figure(c.uncalibrated) << " -> " << figure(c.calibrated)
              << "\n";
  for (const std::string &k : r.kept)
    std::cout << "  " << k << ": kept (no measurement depends on it)\n";
  if (r.stored)
    std::cout << "stored in " << escape_controls(r.file) << ": explain and tune now predict for "
              << r.arch << " " << escape_controls(r.label) << "\n";
  else
    std::cout << "dry run: nothing stored\n";
  return kExitOk;
}

} // namespace

void add_calibrate_command(CLI::App &app) {
  auto opt = std::make_shared<CalibrateOptions>();
  CLI::App *cmd = app.add_subcommand(
      "calibrate", "Fit the cost model's per-GPU constants (DRAM bandwidth, tensor-core efficiency "
                   "per math unit, per-wave and launch costs) to a database's measured results");
  cmd->add_option("--db", opt->db_path,
                  "database file (default: $TCJIT_DB, $XDG_CACHE_HOME/tcjit/kernels.db or "
                  "~/.cache/tcjit/kernels.db); the calibration is kept beside it in "
                  "<db>.calibration.json")
      ->check(non_empty_db_path());
  cmd->add_option("--gpu", opt->gpu,
                  "the measured GPU's name as the results record it (default: the only one)");
  cmd->add_flag("--json", opt->json, "print JSON for scripts");
  cmd->add_flag("--dry-run", opt->dry_run, "fit and report, store nothing");
  cmd->footer("Example: tcjit calibrate --db k.db --dry-run (after tcjit tune --device cuda "
              "SPEC --db k.db on the GPU)");
  cmd->callback([opt]() { throw CLI::RuntimeError(run_calibrate(*opt)); });
}

} // namespace tcjit::cli
