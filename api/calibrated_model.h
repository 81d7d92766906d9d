// The cost model of an arch's GPU with the calibration its database holds for it (`tcjit
// calibrate`, the database's calibrations table, kernels_db/calibration_store.h): what explain,
// tune, resolve, Operation::predicted_time and the model measurer predict with.
#pragma once

#include "kernels_db/kernels_db.h"
#include "tuner/calibration.h"
#include "tuner/perf_model.h"

#include <optional>
#include <string>
#include <string_view>

namespace tcjit::api {

// The calibration the database holds for a prediction on `arch`: with `device` named, that GPU's
// only (another GPU of the same arch is not it); else the arch's newest. Every such row is
// judged (tuner::decision_rules: its form, its date, the model's names and ranges) and `refused`
// says what is wrong with one that may not be used ("calibrations row 3 of 'GPU' sm_80:
// mma_efficiency.f16 40 is not in [0.01, 1]"); a refused row is never used.
struct DbCalibrationChoice {
  std::optional<tuner::Calibration> calibration;
  std::string refused;
};
DbCalibrationChoice choose_calibration(kernels_db::KernelsDb &db, std::string_view arch,
                                       std::string_view device);

// gpu_model_for_arch(arch) with `db`'s chosen calibration applied; the uncalibrated model when
// there is none. Throws Error(database, where) for a refused row (what, the row, and how to fix:
// calibrate again, `tcjit db check`).
tuner::GpuModel calibrated_gpu_model(kernels_db::KernelsDb &db, std::string_view arch,
                                     std::string_view device, const char *where);

// The same for the database at `db_path` ("" = the default database), opened read-only: the
// uncalibrated model when no database location is known, the file does not exist or predates
// the calibrations table (schema 6). Throws Error(invalid_argument) for a file that is not a
// tcjit database, Error(database) for one that cannot be read and for a refused row.
tuner::GpuModel calibrated_gpu_model(const std::string &db_path, std::string_view arch,
                                     std::string_view device, const char *where);

// "<db>.calibration.json": where tcjit kept calibrations before schema 6
// (tuner/calibration_file.h).
std::string calibration_side_file(const std::string &db_path);

} // namespace tcjit::api
