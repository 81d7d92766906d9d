#include "bench/gpu_tool/model_quality_db.h"

#include "api/calibrated_model.h"
#include "compiler/spec/shape.h"
#include "engine/kernel_records.h"
#include "tcjit/db.hpp"
#include "tcjit/tools.hpp"
#include "tuner/cost_model.h"

#include <map>
#include <optional>
#include <utility>

namespace tcjit::bench {

namespace {

bool is_measured_ok(const DbResult &r) {
  return r.status == "ok" && r.provenance == "measured" && r.timing && r.timing->median_us > 0;
}

std::optional<ProblemModelQuality>
problem_quality(const std::string &db_path, const DbProblem &problem, const std::string &arch,
                const std::string &device, const std::vector<const DbResult *> &results, size_t k,
                std::vector<std::string> &skipped) {
  const std::string label = problem.key_hash + " (" + problem.spec_text + ") on " + device;
  ProblemModelQuality q;
  q.key_hash = problem.key_hash;
  q.spec = problem.spec_text;
  q.arch = arch;
  q.device = device;
  const OpSpec spec = parse_ops(problem.spec_text, "<database>").front().spec;
  if (!is_concrete(spec)) {
    skipped.push_back(label + ": its sizes are symbolic (a range's results are stored under its "
                              "representative sizes' problems)");
    return std::nullopt;
  }
  const tuner::GpuModel gpu = api::calibrated_gpu_model(db_path, arch, device, "model-quality");
  q.model = gpu.name + (gpu.calibration.empty() ? ", uncalibrated" : ", " + gpu.calibration);
  const bool tf32_off = tf32_disabled_by_environment();
  for (const DbResult *r : results) {
    const std::optional<codegen::TileConfig> config = engine::parse_config_json(r->config_json);
    if (!config) {
      q.not_predicted.push_back(r->config_json + ": the config does not parse");
      continue;
    }
    const tuner::Prediction p = tuner::predict_config(gpu, spec, *config, tf32_off);
    if (!p.launchable || !(p.seconds > 0)) {
      q.not_predicted.push_back(r->config + ": the model cannot launch it (" + p.why_not + ")");
      continue;
    }
    q.candidates.push_back({r->config, p.seconds * 1e6, r->timing->median_us});
  }
  if (q.candidates.empty()) {
    skipped.push_back(label + ": no measured candidate the model predicts");
    return std::nullopt;
  }
  q.quality = tuner::model_quality(q.candidates, k);
  return q;
}

nlohmann::json optional_json(const std::optional<double> &v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

} // namespace

ModelQualityReport model_quality_of_db(const std::string &db_path, size_t k) {
  ModelQualityReport report;
  report.db_path = db_path;
  DbListRequest list;
  list.db_path = db_path;
  for (const DbProblemSummary &summary : db_list(list)) {
    if (summary.results == 0)
      continue;
    DbShowRequest show;
    show.db_path = db_path;
    show.key = summary.problem.key_hash;
    const DbProblemDetails details = db_show(show);
    // One problem per arch and device it was measured on.
    std::map<std::pair<std::string, std::string>, std::vector<const DbResult *>> groups;
    for (const DbResult &r : details.results)
      if (is_measured_ok(r))
        groups[{r.arch, r.device}].push_back(&r);
    for (const auto &[where, results] : groups) {
      try {
        std::optional<ProblemModelQuality> q = problem_quality(
            db_path, summary.problem, where.first, where.second, results, k, report.skipped);
        if (q)
          report.problems.push_back(std::move(*q));
      } catch (const std::exception &e) {
        report.skipped.push_back(summary.problem.key_hash + " on " + where.second + ": " +
                                 e.what());
      }
    }
  }
  return report;
}

nlohmann::json model_quality_json(const ModelQualityReport &report) {
  nlohmann::json problems = nlohmann::json::array();
  for (const ProblemModelQuality &p : report.problems) {
    nlohmann::json candidates = nlohmann::json::array();
    for (const tuner::PredictedAndMeasured &c : p.candidates)
      candidates.push_back(
          {{"config", c.config}, {"predicted_us", c.predicted_us}, {"measured_us", c.measured_us}});
    const tuner::ModelQuality &q = p.quality;
    problems.push_back({{"key_hash", p.key_hash},
                        {"spec", p.spec},
                        {"arch", p.arch},
                        {"device", p.device},
                        {"model", p.model},
                        {"candidates", q.candidates},
                        {"kendall_tau_b", optional_json(q.kendall_tau_b)},
                        {"measured_best", q.measured_best},
                        {"measured_best_us", q.measured_best_us},
                        {"winner_predicted_us", q.winner_predicted_us},
                        {"winner_predicted_over_measured", q.winner_ratio},
                        {"model_top1", q.model_top1},
                        {"regret_top1", q.regret_top1},
                        {"regret_top_k", q.regret_topk},
                        {"k", q.k},
                        {"per_candidate", candidates},
                        {"not_predicted", p.not_predicted}});
  }
  return {{"database", report.db_path},
          {"what", "per problem tuned by measurement: the cost model's predicted times of the "
                   "measured candidates against their measured medians"},
          {"problems", problems},
          {"skipped", report.skipped}};
}

} // namespace tcjit::bench
