// `tcjit_gpu_bench model-quality`: for every problem of a kernel database tuned by measurement
// (results of provenance `measured`, status ok, on one arch and device), the cost model's
// predicted time of each measured candidate (tuner::predict_config: the static prediction the
// tuner ranks its space with, on the arch's GPU model with the database's calibration for the
// device if any: api/calibrated_model.h) beside its measured median, and tuner::model_quality of
// the two (Kendall tau-b, the winner's predicted/measured ratio, regret of top-1 and top-k).
#pragma once

#include "tuner/model_quality.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace tcjit::bench {

struct ProblemModelQuality {
  std::string key_hash, spec, arch, device;
  std::string model; // the GPU model predicted with, and its calibration if any
  std::vector<tuner::PredictedAndMeasured> candidates;
  std::vector<std::string> not_predicted; // candidates left out: config and why
  tuner::ModelQuality quality;
};

struct ModelQualityReport {
  std::string db_path;
  std::vector<ProblemModelQuality> problems;
  std::vector<std::string> skipped; // problems with measured results left out, and why
};

// Reads the database (read-only). Throws tcjit::Error as tcjit::db_list does (no database, not a
// tcjit database).
ModelQualityReport model_quality_of_db(const std::string &db_path, size_t k = 8);

nlohmann::json model_quality_json(const ModelQualityReport &report);

} // namespace tcjit::bench
