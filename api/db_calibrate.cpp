// db.hpp: db_calibrate, the cost model fitted to a database's measured results of one GPU
// (tuner/calibration.h) and stored in its calibrations table; a calibration file from before
// schema 6 beside it (tuner/calibration_file.h) is imported first. db_calibrations lists them.
#include "api/calibrated_model.h"
#include "compiler/dsl/parser.h"
#include "compiler/spec/shape.h"
#include "engine/kernel_records.h"
#include "kernels_db/clock.h"
#include "kernels_db/decision.h"
#include "kernels_db/error.h"
#include "kernels_db/kernels_db.h"
#include "tcjit/db.hpp"
#include "tcjit/tcjit.h"
#include "tuner/calibration_file.h"
#include "tuner/calibration_record.h"
#include "tuner/cost_model.h"
#include "tuner/decision.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>

namespace tcjit {
namespace {

namespace kdb = tcjit::kernels_db;

constexpr const char *kWhere = "calibrate";
const char *const kTuneFirst = "tune on a GPU first: tcjit tune --device cuda SPEC_OR_WORKLOAD "
                               "--db PATH, then calibrate again";

// The measured results of every device in the database, as calibration samples, by device name.
struct DeviceSamples {
  std::string arch;
  std::vector<tuner::CalibrationSample> samples;
  int64_t skipped = 0;
};

std::map<std::string, DeviceSamples> measured_samples(kdb::KernelsDb &db) {
  std::map<std::string, DeviceSamples> out;
  const kdb::DecisionRules rules = tuner::decision_rules();
  for (const kdb::ProblemSummary &summary : db.list({})) {
    if (summary.results == 0)
      continue;
    std::optional<OpSpec> spec;
    const ParseResult parsed = parse_spec(summary.problem.spec_text);
    if (parsed.ok() && parsed.entries.size() == 1 && is_concrete(parsed.entries.front().spec))
      spec = parsed.entries.front().spec;
    for (const kdb::ResultRecord &r : db.results(summary.problem.key_text)) {
      if (r.provenance.kind != kdb::ProvenanceKind::measured || r.status != kdb::ResultStatus::ok ||
          !r.timing || r.provenance.device.empty())
        continue;
      DeviceSamples &d = out[r.provenance.device];
      const std::optional<codegen::TileConfig> config = engine::parse_config_json(r.config_json);
      if (!spec || !config || kdb::implausible_result(r, rules) || !(r.timing->median_us > 0) ||
          (!d.arch.empty() && d.arch != r.arch)) {
        ++d.skipped;
        continue;
      }
      d.arch = r.arch;
      d.samples.push_back({*spec, *config, false, r.timing->median_us * 1e-6});
    }
  }
  return out;
}

std::string names_of(const std::map<std::string, DeviceSamples> &devices) {
  std::string out;
  for (const auto &[name, d] : devices)
    out += (out.empty() ? "" : ", ") +
           ("'" + name + "' (" + std::to_string(d.samples.size()) + " results)");
  return out;
}

nlohmann::json report_json(const DbCalibrateReport &r) {
  nlohmann::json constants = nlohmann::json::array();
  for (const DbCalibratedConstant &c : r.constants)
    constants.push_back(
        {{"name", c.name}, {"uncalibrated", c.uncalibrated}, {"calibrated", c.calibrated}});
  return {{"database", r.path},     {"imported_file", r.imported_file},
          {"imported", r.imported}, {"gpu", r.gpu},
          {"arch", r.arch},         {"results", r.results},
          {"skipped", r.skipped},   {"residual_before", r.residual_before},
          {"residual", r.residual}, {"constants", constants},
          {"kept", r.kept},         {"stored", r.stored},
          {"label", r.label}};
}

std::vector<DbCalibratedConstant> constants_of(const tuner::GpuModel &base,
                                               const tuner::CalibratedConstants &k) {
  std::vector<DbCalibratedConstant> out;
  if (k.dram_bytes_per_s > 0)
    out.push_back({"dram_bytes_per_s", base.dram_bytes_per_s, k.dram_bytes_per_s});
  if (k.prologue_cycles > 0)
    out.push_back({"prologue_cycles", base.prologue_cycles, k.prologue_cycles});
  if (k.launch_seconds > 0)
    out.push_back({"launch_seconds", base.launch_seconds, k.launch_seconds});
  for (size_t u = 0; u < math_unit_count; ++u)
    if (k.mma_efficiency[u]) {
      const auto unit = static_cast<tuner::MathKind>(u);
      out.push_back({"mma_efficiency." + std::string(to_string(unit)), base.efficiency(unit),
                     *k.mma_efficiency[u]});
    }
  return out;
}

// Imports the calibration file kept beside the database before schema 6 (<db>.calibration.json):
// each calibration is stored unless the database holds a usable one of its GPU and arch that is
// not older; the file is then renamed <db>.calibration.json.imported. Returns how many were
// stored; nullopt when there is no file.
std::optional<int64_t> import_side_file(kdb::KernelsDb &db, const std::string &file) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec))
    return std::nullopt;
  std::vector<tuner::Calibration> calibrations;
  try {
    calibrations = tuner::read_calibrations(file);
  } catch (const std::runtime_error &e) {
    throw Error(ErrorCode::database, e.what(), kWhere, "");
  }
  const kdb::DecisionRules rules = tuner::decision_rules();
  const std::vector<kdb::StoredCalibration> stored = db.calibrations();
  int64_t imported = 0;
  for (const tuner::Calibration &c : calibrations) {
    bool ours_newer = false;
    for (const kdb::StoredCalibration &row : stored)
      ours_newer = ours_newer ||
                   (row.calibration.gpu == c.gpu && row.calibration.arch == c.arch &&
                    !row.bad_storage && !kdb::implausible_calibration(row.calibration, rules) &&
                    row.calibration.created_ms >= c.created_ms);
    if (ours_newer)
      continue;
    db.put_calibration(tuner::calibration_record(c));
    ++imported;
  }
  std::filesystem::rename(file, file + ".imported", ec);
  if (ec)
    throw Error(ErrorCode::database,
                "imported the calibrations of " + file + " into " + db.path() +
                    " but cannot rename the file: " + ec.message(),
                kWhere, "rename or delete it yourself: it is no longer read");
  return imported;
}

} // namespace

DbCalibrateReport db_calibrate(const DbCalibrateRequest &request) {
  DbCalibrateReport report;
  std::map<std::string, DeviceSamples> devices;
  std::optional<kdb::KernelsDb> db;
  try {
    kdb::OpenOptions options;
    options.create_if_missing = false;
    options.read_only = request.dry_run; // a dry run writes nothing (and imports nothing)
    db.emplace(request.db_path.empty() ? kdb::KernelsDb::open_default(options)
                                       : kdb::KernelsDb::open(request.db_path, options));
    report.path = db->path();
    const std::string side_file = api::calibration_side_file(report.path);
    if (!request.dry_run) {
      if (const std::optional<int64_t> imported = import_side_file(*db, side_file)) {
        report.imported_file = side_file;
        report.imported = *imported;
      }
    }
    devices = measured_samples(*db);
  } catch (const kdb::DbError &e) {
    if (e.kind() == kdb::DbErrorKind::not_found)
      throw Error(ErrorCode::not_found,
                  std::string(e.what()) + " (no database, no measured results)", kWhere,
                  kTuneFirst);
    throw Error(e.kind() == kdb::DbErrorKind::invalid_argument ? ErrorCode::invalid_argument
                                                               : ErrorCode::database,
                e.what(), kWhere, "");
  }
  if (devices.empty())
    throw Error(ErrorCode::not_found,
                "no measured results in " + report.path +
                    " (predicted and emulated results do not calibrate the model)",
                kWhere, kTuneFirst);
  std::string gpu = request.gpu;
  if (gpu.empty()) {
    if (devices.size() > 1)
      throw Error(ErrorCode::invalid_argument,
                  "the database has measured results of several GPUs: " + names_of(devices), kWhere,
                  "name one with --gpu NAME");
    gpu = devices.begin()->first;
  }
  const auto found = devices.find(gpu);
  if (found == devices.end())
    throw Error(ErrorCode::not_found,
                "no measured results of GPU '" + gpu + "' in " + report.path + " (it has " +
                    names_of(devices) + ")",
                kWhere, std::string("name one of those with --gpu, or ") + kTuneFirst);
  const DeviceSamples &d = found->second;
  report.gpu = gpu;
  report.arch = d.arch;
  report.skipped = d.skipped;
  if (d.samples.empty())
    throw Error(ErrorCode::not_found,
                "none of the " + std::to_string(d.skipped) + " measured results of '" + gpu +
                    "' can be fitted (ranged problems, implausible times or unreadable specs)",
                kWhere, kTuneFirst);
  const tuner::GpuModel &base = tuner::gpu_model_for_arch(d.arch);
  const tuner::CalibrationFit fit = tuner::fit_calibration(base, d.samples);
  if (!fit.ok)
    throw Error(ErrorCode::unsupported, "cannot calibrate " + gpu + ": " + fit.why_not, kWhere, "");
  tuner::Calibration c;
  c.gpu = gpu;
  c.arch = d.arch;
  c.constants = fit.constants;
  c.results = int64_t(d.samples.size());
  c.residual_before = fit.residual_before;
  c.residual = fit.residual;
  c.created_ms = kdb::now_unix_ms();
  c.tcjit_version = tcjit_version();
  c.model_version = tuner::cost_model_version();
  report.results = c.results;
  report.residual_before = fit.residual_before;
  report.residual = fit.residual;
  report.constants = constants_of(base, fit.constants);
  report.kept = fit.kept;
  report.label = tuner::calibration_label(c);
  if (!request.dry_run) {
    try {
      db->put_calibration(tuner::calibration_record(c));
    } catch (const kdb::DbError &e) {
      throw Error(ErrorCode::database, e.what(), kWhere, "check the database (`tcjit db check`)");
    }
    report.stored = true;
  }
  report.json = report_json(report).dump();
  return report;
}

} // namespace tcjit

namespace tcjit {

DbCalibrations db_calibrations(const std::string &db_path) {
  DbCalibrations out;
  std::vector<kdb::StoredCalibration> rows;
  try {
    kdb::OpenOptions options;
    options.create_if_missing = false;
    options.read_only = true;
    kdb::KernelsDb db = db_path.empty() ? kdb::KernelsDb::open_default(options)
                                        : kdb::KernelsDb::open(db_path, options);
    out.path = db.path();
    rows = db.calibrations();
  } catch (const kdb::DbError &e) {
    throw Error(e.kind() == kdb::DbErrorKind::not_found          ? ErrorCode::not_found
                : e.kind() == kdb::DbErrorKind::invalid_argument ? ErrorCode::invalid_argument
                                                                 : ErrorCode::database,
                e.what(), "calibrate --show", "");
  }
  const kdb::DecisionRules rules = tuner::decision_rules();
  nlohmann::json all = nlohmann::json::array();
  for (const kdb::StoredCalibration &row : rows) {
    const kdb::CalibrationRecord &r = row.calibration;
    DbCalibration c;
    c.gpu = r.gpu;
    c.arch = r.arch;
    c.results = r.results;
    c.residual_before = r.residual_before;
    c.residual = r.residual;
    c.created_ms = r.created_ms;
    c.tcjit_version = r.tcjit_version;
    c.model_version = r.model_version;
    std::optional<std::string> why = row.bad_storage;
    if (!why)
      why = kdb::implausible_calibration(r, rules);
    if (why) {
      c.refused = "calibrations row " + std::to_string(row.rowid) + ": " + *why;
    } else {
      const tuner::Calibration fitted = tuner::calibration_from_record(r);
      c.constants = constants_of(tuner::gpu_model_for_arch(r.arch), fitted.constants);
      c.label = tuner::calibration_label(fitted);
    }
    nlohmann::json constants = nlohmann::json::array();
    for (const DbCalibratedConstant &k : c.constants)
      constants.push_back(
          {{"name", k.name}, {"uncalibrated", k.uncalibrated}, {"calibrated", k.calibrated}});
    nlohmann::json j = {{"gpu", c.gpu},
                        {"arch", c.arch},
                        {"constants", constants},
                        {"results", c.results},
                        {"residual_before", c.residual_before},
                        {"residual", c.residual},
                        {"created_ms", c.created_ms},
                        {"tcjit_version", c.tcjit_version},
                        {"model_version", c.model_version},
                        {"label", c.label},
                        {"refused", c.refused}};
    c.json = j.dump();
    all.push_back(std::move(j));
    out.calibrations.push_back(std::move(c));
  }
  out.side_file_note = db_calibration_side_file_note(out.path);
  out.json = nlohmann::json{{"database", out.path},
                            {"calibrations", all},
                            {"side_file_note", out.side_file_note}}
                 .dump();
  return out;
}

std::string db_calibration_side_file_note(const std::string &db_path) {
  std::string file;
  try {
    file = api::calibration_side_file(db_path);
  } catch (const kdb::DbError &) {
    return ""; // no database location
  }
  std::error_code ec;
  if (!std::filesystem::exists(file, ec))
    return "";
  return "the calibration file " + file +
         " is no longer read: calibrations are kept in the database now; `tcjit calibrate --db " +
         file.substr(0, file.size() - std::string_view(".calibration.json").size()) +
         "` imports it (and renames it " + file + ".imported)";
}

} // namespace tcjit
