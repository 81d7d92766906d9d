// The JSON of `tcjit_gpu_bench race --json FILE` (bench/README.md, "bench/gpu": the fields).
#pragma once

#include "bench/gpu_tool/race.h"

#include <nlohmann/json.hpp>

namespace tcjit::bench {

nlohmann::json timing_json(const TimingResult &t);
nlohmann::json problem_json(const ProblemResult &p);
// The whole report: `device` (device_json), the run's options and every problem.
nlohmann::json race_json(const nlohmann::json &device, const RaceOptions &options, bool quick,
                         const std::vector<ProblemResult> &problems);

} // namespace tcjit::bench
