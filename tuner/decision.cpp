#include "tuner/decision.h"

#include "kernels_db/clock.h"
#include "tuner/calibration_record.h"

namespace tcjit::tuner {

kernels_db::DecisionRules decision_rules() {
  return {kTunerFormat, kernels_db::now_unix_ms(), calibration_record_problems};
}

std::optional<Decision> decide(kernels_db::KernelsDb &db, std::string_view problem_key,
                               std::string_view arch,
                               const std::optional<kernels_db::DispatchSizes> &sizes,
                               std::vector<std::string> *ignored) {
  const kernels_db::DecisionRules rules = decision_rules();
  if (const auto table = db.decided_dispatch_table(problem_key, arch, rules, ignored)) {
    const kernels_db::DispatchIndex index(*table); // decided tables are valid
    const kernels_db::DispatchEntry *entry = sizes ? index.find(*sizes) : nullptr;
    if (!entry)
      entry = &table->entries.front();
    Decision decision;
    decision.config_json = entry->config_json;
    decision.time_us = entry->time_us;
    decision.provenance = entry->provenance;
    decision.tuner_version = table->tuner_version;
    decision.from_dispatch_table = true;
    decision.buckets = table->entries.size();
    return decision;
  }
  const auto best = db.best_result(problem_key, arch, std::nullopt, rules);
  if (!best || best->provenance.kind != kernels_db::ProvenanceKind::measured || !best->timing)
    return std::nullopt;
  Decision decision;
  decision.config_json = best->config_json;
  decision.time_us = best->timing->median_us;
  decision.provenance = best->provenance.kind;
  decision.tuner_version = best->tuner_version;
  return decision;
}

} // namespace tcjit::tuner
