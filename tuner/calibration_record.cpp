#include "tuner/calibration_record.h"

#include <nlohmann/json.hpp>

#include <stdexcept>

namespace tcjit::tuner {
namespace {

constexpr std::string_view kEfficiency = "mma_efficiency.";

// The calibration of the record's values, and what is wrong with the names and forms of its
// constants (calibration_problems judges the values).
Calibration convert(const kernels_db::CalibrationRecord &record, std::vector<std::string> &wrong) {
  Calibration c;
  c.gpu = record.gpu;
  c.arch = record.arch;
  c.results = record.results;
  c.residual_before = record.residual_before;
  c.residual = record.residual;
  c.created_ms = record.created_ms;
  c.tcjit_version = record.tcjit_version;
  c.model_version = record.model_version;
  const nlohmann::json constants = nlohmann::json::parse(record.constants_json, nullptr, false);
  if (constants.is_discarded() || !constants.is_object()) {
    wrong.push_back("constants are not a JSON object");
    return c;
  }
  for (const auto &[name, value] : constants.items()) {
    if (!value.is_number()) {
      wrong.push_back("constant '" + name + "' is not a number");
      continue;
    }
    const double v = value.get<double>();
    if (v == 0) {
      wrong.push_back("constant '" + name + "' is 0 (a constant not determined is left out)");
      continue;
    }
    if (name == "dram_bytes_per_s")
      c.constants.dram_bytes_per_s = v;
    else if (name == "prologue_cycles")
      c.constants.prologue_cycles = v;
    else if (name == "launch_seconds")
      c.constants.launch_seconds = v;
    else if (const auto unit = name.starts_with(kEfficiency)
                                   ? parse_math_kind(name.substr(kEfficiency.size()))
                                   : std::nullopt)
      c.constants.mma_efficiency[static_cast<size_t>(*unit)] = v;
    else
      wrong.push_back("'" + name + "' is not a constant of the cost model (dram_bytes_per_s, " +
                      "prologue_cycles, launch_seconds, mma_efficiency.UNIT)");
  }
  return c;
}

} // namespace

kernels_db::CalibrationRecord calibration_record(const Calibration &c) {
  nlohmann::json constants = nlohmann::json::object();
  if (c.constants.dram_bytes_per_s > 0)
    constants["dram_bytes_per_s"] = c.constants.dram_bytes_per_s;
  if (c.constants.prologue_cycles > 0)
    constants["prologue_cycles"] = c.constants.prologue_cycles;
  if (c.constants.launch_seconds > 0)
    constants["launch_seconds"] = c.constants.launch_seconds;
  for (size_t u = 0; u < math_unit_count; ++u)
    if (c.constants.mma_efficiency[u])
      constants[std::string(kEfficiency) + std::string(to_string(static_cast<MathKind>(u)))] =
          *c.constants.mma_efficiency[u];
  return {c.gpu,      c.arch,       constants.dump(), c.results,      c.residual_before,
          c.residual, c.created_ms, c.tcjit_version,  c.model_version};
}

std::vector<std::string> calibration_record_problems(const kernels_db::CalibrationRecord &record) {
  std::vector<std::string> wrong;
  const Calibration c = convert(record, wrong);
  for (std::string &problem : calibration_problems(c))
    wrong.push_back(std::move(problem));
  return wrong;
}

Calibration calibration_from_record(const kernels_db::CalibrationRecord &record) {
  std::vector<std::string> wrong;
  const Calibration c = convert(record, wrong);
  for (std::string &problem : calibration_problems(c))
    wrong.push_back(std::move(problem));
  if (!wrong.empty()) {
    std::string all;
    for (const std::string &problem : wrong)
      all += (all.empty() ? "" : "; ") + problem;
    throw std::invalid_argument(all);
  }
  return c;
}

} // namespace tcjit::tuner
