// Which decision serves a problem: the one function the runtime (chosen_configs.h,
// tcjit::Runtime's dispatch lookup) and `tcjit db show` share, so that what `db show` calls the
// decision is exactly what a run uses. Decisions are judged (kernels_db/decision.h) with this
// build's tuner format and the current time: an implausible one is ignored.
#pragma once

#include "kernels_db/decision.h"
#include "kernels_db/dispatch.h"
#include "kernels_db/kernels_db.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tcjit::tuner {

// N in the tuner versions this build writes ("tcjit-tuner N / COMPILER / MEASURER", tune.cpp).
inline constexpr int64_t kTunerFormat = 1;

// This build's tuner format, the current time and the cost model's check of a stored calibration
// (calibration_record_problems).
kernels_db::DecisionRules decision_rules();

struct Decision {
  std::string config_json;
  double time_us = 0;
  kernels_db::ProvenanceKind provenance = kernels_db::ProvenanceKind::measured;
  std::string tuner_version;
  bool from_dispatch_table = false; // else the fastest measured result
  size_t buckets = 0;               // the dispatch table's number of size buckets
};

// What decides the config of a problem on `arch`: the decided dispatch table
// (KernelsDb::decided_dispatch_table), its entry holding `sizes` (the first entry when no size
// is given or none holds it); else the fastest plausible measured result (best_result); nullopt
// when neither exists. `ignored` receives why decisions were passed over.
std::optional<Decision> decide(kernels_db::KernelsDb &db, std::string_view problem_key,
                               std::string_view arch,
                               const std::optional<kernels_db::DispatchSizes> &sizes,
                               std::vector<std::string> *ignored = nullptr);

} // namespace tcjit::tuner
