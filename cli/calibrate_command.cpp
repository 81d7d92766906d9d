// `tcjit calibrate`: a client of tcjit::db_calibrate (include/tcjit/db.hpp): the cost model's
// per-GPU constants fitted to a database's measured results, stored in the database;
// `--show` lists the stored calibrations (db_calibrations).
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
  bool show = false;
};

std::string figure(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%.4g", v);
  return text;
}

// `--show`: every stored calibration, with its constants, or why it is never used.
int run_show(const CalibrateOptions &opt) {
  DbCalibrations all;
  try {
    all = db_calibrations(opt.db_path);
  } catch (const Error &error) {
    print_error("tcjit calibrate --show", error);
    return exit_status_of(error);
  }
  if (!all.side_file_note.empty())
    std::cerr << "tcjit calibrate: note: " << escape_controls(all.side_file_note) << "\n";
  if (opt.json) {
    std::cout << json_text(nlohmann::json::parse(all.json), 2) << "\n";
    return kExitOk;
  }
  if (all.calibrations.empty())
    std::cout << "no calibration in " << escape_controls(all.path)
              << " (tcjit calibrate fits one to a GPU's measured results)\n";
  for (const DbCalibration &c : all.calibrations) {
    std::cout << escape_controls(c.gpu) << " " << escape_controls(c.arch) << ": ";
    if (!c.refused.empty()) {
      std::cout << "refused, never used: " << escape_controls(c.refused)
                << " (tcjit calibrate on the GPU's measurements replaces it)\n";
      continue;
    }
    std::cout << escape_controls(c.label) << ", rms log error " << figure(c.residual_before)
              << " -> " << figure(c.residual) << ", " << escape_controls(c.tcjit_version) << ", "
              << escape_controls(c.model_version) << "\n";
    for (const DbCalibratedConstant &k : c.constants)
      std::cout << "  " << k.name << ": " << figure(k.uncalibrated) << " -> "
                << figure(k.calibrated) << "\n";
  }
  return kExitOk;
}

int run_calibrate(const CalibrateOptions &opt) {
  if (opt.show)
    return run_show(opt);
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
  if (!r.imported_file.empty())
    std::cout << "imported " << r.imported << " calibration(s) of "
              << escape_controls(r.imported_file) << " into the database (the file is renamed "
              << escape_controls(r.imported_file) << ".imported)\n";
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
    std::cout << "stored in " << escape_controls(r.path)
              << ": explain, tune, resolve and predicted_time now predict for " << r.arch << " "
              << escape_controls(r.label) << "\n";
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
                  "~/.cache/tcjit/kernels.db); the calibration is stored in it (one per GPU "
                  "and arch); a <db>.calibration.json of an older tcjit is imported first")
      ->check(non_empty_db_path());
  cmd->add_option("--gpu", opt->gpu,
                  "the measured GPU's name as the results record it (default: the only one)");
  cmd->add_flag("--json", opt->json, "print JSON for scripts");
  cmd->add_flag("--dry-run", opt->dry_run, "fit and report, store (and import) nothing");
  cmd->add_flag("--show", opt->show,
                "list the database's calibrations (constants, provenance, or why one is refused) "
                "and fit nothing");
  cmd->footer("Example: tcjit calibrate --db k.db --dry-run (after tcjit tune --device cuda "
              "SPEC --db k.db on the GPU)");
  cmd->callback([opt]() { throw CLI::RuntimeError(run_calibrate(*opt)); });
}

} // namespace tcjit::cli
