// db.hpp: db_calibrate, the cost model fitted to a database's measured results of one GPU
// (tuner/calibration.h) and kept beside the database (tuner/calibration_file.h).
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
#include "tuner/cost_model.h"
#include "tuner/decision.h"

#include <nlohmann/json.hpp>

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
  return {{"database", r.path},
          {"file", r.file},
          {"gpu", r.gpu},
          {"arch", r.arch},
          {"results", r.results},
          {"skipped", r.skipped},
          {"residual_before", r.residual_before},
          {"residual", r.residual},
          {"constants", constants},
          {"kept", r.kept},
          {"stored", r.stored},
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

} // namespace

DbCalibrateReport db_calibrate(const DbCalibrateRequest &request) {
  DbCalibrateReport report;
  std::map<std::string, DeviceSamples> devices;
  try {
    kdb::OpenOptions options;
    options.create_if_missing = false;
    options.read_only = true;
    kdb::KernelsDb db = request.db_path.empty() ? kdb::KernelsDb::open_default(options)
                                                : kdb::KernelsDb::open(request.db_path, options);
    report.path = db.path();
    devices = measured_samples(db);
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
  report.file = api::calibration_file_of(report.path);
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
      tuner::write_calibrations(report.file,
                                tuner::with_calibration(tuner::read_calibrations(report.file), c));
    } catch (const std::runtime_error &e) {
      throw Error(ErrorCode::database, e.what(), kWhere, "");
    }
    report.stored = true;
  }
  report.json = report_json(report).dump();
  return report;
}

} // namespace tcjit
