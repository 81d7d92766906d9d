// The calibrations table (schema 6): the cost model's constants fitted to one GPU's measurements
// (`tcjit calibrate`), one row per (gpu, arch). A row is data like any other: its form is checked
// here (names printable, constants a JSON object of finite numbers, counts and residuals in
// range), its meaning by the caller's DecisionRules::calibration_check (the tuner knows the
// constants' names and ranges); a row that fails either is reported by `db check`, refused by
// import and merge, and never used. Write functions expect the caller to hold a WriteTransaction.
#pragma once

#include "kernels_db/connection.h"
#include "kernels_db/decision.h"
#include "kernels_db/records.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tcjit::kernels_db {

// The most constants a calibration holds, and the longest name of a GPU, arch or version.
inline constexpr size_t kMaxCalibrationConstants = 64;
inline constexpr size_t kMaxCalibrationName = 200;

// Why the calibration's values do not have their form, or nullopt: gpu, arch and versions
// printable text of 1 to kMaxCalibrationName bytes; constants_json a JSON object of 1 to
// kMaxCalibrationConstants members, each a finite number under a printable name; results >= 1;
// residuals finite and >= 0; created_ms >= 0.
std::optional<std::string> calibration_value_problem(const CalibrationRecord &calibration);

// Why the calibration may not be used: its form (above), a date more than kClockSkewMs in the
// future (rules.now_ms), or what rules.calibration_check finds; nullopt when it is usable.
std::optional<std::string> implausible_calibration(const CalibrationRecord &calibration,
                                                   const DecisionRules &rules);

// A stored row: its rowid, its values and, when a column holds the wrong storage class (a file
// edited outside SQLite), which (such a row is never used).
struct StoredCalibration {
  int64_t rowid = 0;
  CalibrationRecord calibration;
  std::optional<std::string> bad_storage;
};

// Every row, in rowid order (export, merge, check, and the cost model's reader).
std::vector<StoredCalibration> all_calibrations(Connection &connection);

// Stores the calibration (constants canonicalized), replacing the row of the same (gpu, arch).
// Throws DbError(invalid_argument) when calibration_value_problem finds a fault.
void put_calibration(Connection &connection, const CalibrationRecord &calibration);

// Stores `incoming` unless the row of the same (gpu, arch) is usable by `rules` and not older
// (created_ms): import and merge keep the newer calibration of a GPU. Returns whether it was
// stored. The caller has judged `incoming`.
bool put_calibration_if_newer(Connection &connection, const CalibrationRecord &incoming,
                              const DecisionRules &rules);

} // namespace tcjit::kernels_db
