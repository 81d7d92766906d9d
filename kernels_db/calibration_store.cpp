#include "kernels_db/calibration_store.h"

#include "kernels_db/canonical_json.h"
#include "kernels_db/error.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace tcjit::kernels_db {
namespace {

bool printable(const std::string &text, size_t most) {
  if (text.empty() || text.size() > most)
    return false;
  for (const unsigned char c : text)
    if (c < 0x20 || c == 0x7f)
      return false;
  return true;
}

// Why the constants text is not a JSON object of finite numbers, or nullopt.
std::optional<std::string> constants_problem(const std::string &text) {
  if (json_nesting_depth(text) > kMaxJsonDepth)
    return "constants nest deeper than " + std::to_string(kMaxJsonDepth);
  const nlohmann::json constants = nlohmann::json::parse(text, nullptr, false);
  if (constants.is_discarded() || !constants.is_object())
    return std::string("constants are not a JSON object");
  if (constants.empty() || constants.size() > kMaxCalibrationConstants)
    return "constants hold " + std::to_string(constants.size()) + " values, not 1 to " +
           std::to_string(kMaxCalibrationConstants);
  for (const auto &[name, value] : constants.items()) {
    if (!printable(name, 64))
      return std::string("a constant's name is not printable text of 1 to 64 bytes");
    if (!value.is_number() || !std::isfinite(value.get<double>()))
      return "constant '" + name + "' is not a finite number";
  }
  return std::nullopt;
}

} // namespace

std::optional<std::string> calibration_value_problem(const CalibrationRecord &c) {
  if (!printable(c.gpu, kMaxCalibrationName))
    return "gpu is not printable text of 1 to " + std::to_string(kMaxCalibrationName) + " bytes";
  if (!printable(c.arch, kMaxCalibrationName))
    return "arch is not printable text of 1 to " + std::to_string(kMaxCalibrationName) + " bytes";
  if (!printable(c.tcjit_version, kMaxCalibrationName) ||
      !printable(c.model_version, kMaxCalibrationName))
    return "tcjit_version or model_version is not printable text of 1 to " +
           std::to_string(kMaxCalibrationName) + " bytes";
  if (const auto why = constants_problem(c.constants_json))
    return why;
  if (c.results < 1)
    return "results " + std::to_string(c.results) + " is not a count of measurements (>= 1)";
  for (const auto &[name, value] :
       {std::pair{"residual_before", c.residual_before}, std::pair{"residual", c.residual}})
    if (!std::isfinite(value) || value < 0)
      return std::string(name) + " " + std::to_string(value) + " is not finite and >= 0";
  if (c.created_ms < 0)
    return "created_ms " + std::to_string(c.created_ms) + " is before 1970";
  return std::nullopt;
}

std::optional<std::string> implausible_calibration(const CalibrationRecord &calibration,
                                                   const DecisionRules &rules) {
  if (auto why = calibration_value_problem(calibration))
    return why;
  if (auto why = future_date_problem("created_ms", calibration.created_ms, rules))
    return why;
  if (rules.calibration_check) {
    std::string all;
    for (const std::string &problem : rules.calibration_check(calibration))
      all += (all.empty() ? "" : "; ") + problem;
    if (!all.empty())
      return all;
  }
  return std::nullopt;
}

std::vector<StoredCalibration> all_calibrations(Connection &connection) {
  Statement statement = connection.prepare(
      "SELECT id, gpu, arch, constants_json, results, residual_before, residual, created_ms, "
      "tcjit_version, model_version, "
      "CASE WHEN typeof(gpu) != 'text' THEN 'gpu' WHEN typeof(arch) != 'text' THEN 'arch' "
      "WHEN typeof(constants_json) != 'text' THEN 'constants_json' "
      "WHEN typeof(results) != 'integer' THEN 'results' "
      "WHEN typeof(residual_before) NOT IN ('real', 'integer') THEN 'residual_before' "
      "WHEN typeof(residual) NOT IN ('real', 'integer') THEN 'residual' "
      "WHEN typeof(created_ms) != 'integer' THEN 'created_ms' "
      "WHEN typeof(tcjit_version) != 'text' THEN 'tcjit_version' "
      "WHEN typeof(model_version) != 'text' THEN 'model_version' ELSE NULL END "
      "FROM calibrations ORDER BY id");
  std::vector<StoredCalibration> rows;
  while (statement.step()) {
    StoredCalibration row;
    row.rowid = statement.column_int64(0);
    CalibrationRecord &c = row.calibration;
    c.gpu = statement.column_text(1);
    c.arch = statement.column_text(2);
    c.constants_json = statement.column_text(3);
    c.results = statement.column_int64(4);
    c.residual_before = statement.column_double(5);
    c.residual = statement.column_double(6);
    c.created_ms = statement.column_int64(7);
    c.tcjit_version = statement.column_text(8);
    c.model_version = statement.column_text(9);
    if (!statement.is_null(10))
      row.bad_storage = statement.column_text(10) + " holds a value of the wrong storage class";
    rows.push_back(std::move(row));
  }
  return rows;
}

void put_calibration(Connection &connection, const CalibrationRecord &input) {
  if (const auto why = calibration_value_problem(input))
    throw DbError(DbErrorKind::invalid_argument, "calibration of '" + input.gpu + "': " + *why,
                  connection.path(), "calibrate again with `tcjit calibrate`");
  auto insert = connection.cached(
      "INSERT INTO calibrations (gpu, arch, constants_json, results, residual_before, residual, "
      "created_ms, tcjit_version, model_version) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) "
      "ON CONFLICT (gpu, arch) DO UPDATE SET constants_json = excluded.constants_json, "
      "results = excluded.results, residual_before = excluded.residual_before, "
      "residual = excluded.residual, created_ms = excluded.created_ms, "
      "tcjit_version = excluded.tcjit_version, model_version = excluded.model_version");
  insert->bind(1, input.gpu);
  insert->bind(2, input.arch);
  insert->bind(3, canonical_json_object(input.constants_json, "calibration constants"));
  insert->bind(4, input.results);
  insert->bind(5, input.residual_before);
  insert->bind(6, input.residual);
  insert->bind(7, input.created_ms);
  insert->bind(8, input.tcjit_version);
  insert->bind(9, input.model_version);
  insert->run();
}

bool put_calibration_if_newer(Connection &connection, const CalibrationRecord &incoming,
                              const DecisionRules &rules) {
  for (const StoredCalibration &row : all_calibrations(connection)) {
    const CalibrationRecord &ours = row.calibration;
    if (ours.gpu != incoming.gpu || ours.arch != incoming.arch)
      continue;
    const bool usable = !row.bad_storage && !implausible_calibration(ours, rules);
    if (usable && ours.created_ms >= incoming.created_ms)
      return false;
  }
  put_calibration(connection, incoming);
  return true;
}

} // namespace tcjit::kernels_db
