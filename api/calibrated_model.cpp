#include "api/calibrated_model.h"

#include "kernels_db/connection.h"
#include "kernels_db/default_path.h"
#include "kernels_db/error.h"
#include "kernels_db/schema.h"
#include "tcjit/tcjit.hpp"
#include "tuner/calibration_file.h"
#include "tuner/calibration_record.h"
#include "tuner/cost_model.h"
#include "tuner/decision.h"

#include <filesystem>

namespace tcjit::api {

namespace kdb = tcjit::kernels_db;

DbCalibrationChoice choose_calibration(kdb::KernelsDb &db, std::string_view arch,
                                       std::string_view device) {
  const kdb::DecisionRules rules = tuner::decision_rules();
  DbCalibrationChoice choice;
  const kdb::StoredCalibration *newest = nullptr;
  std::vector<kdb::StoredCalibration> rows = db.calibrations();
  for (const kdb::StoredCalibration &row : rows) {
    const kdb::CalibrationRecord &c = row.calibration;
    if (c.arch != arch || (!device.empty() && c.gpu != device))
      continue;
    std::optional<std::string> why = row.bad_storage;
    if (!why)
      why = kdb::implausible_calibration(c, rules);
    if (why) {
      choice.refused += std::string(choice.refused.empty() ? "" : "; ") + "calibrations row " +
                        std::to_string(row.rowid) + " of '" + c.gpu + "' " + c.arch + ": " + *why;
      continue;
    }
    if (!newest || c.created_ms > newest->calibration.created_ms)
      newest = &row;
  }
  if (newest && choice.refused.empty())
    choice.calibration = tuner::calibration_from_record(newest->calibration);
  return choice;
}

tuner::GpuModel calibrated_gpu_model(kdb::KernelsDb &db, std::string_view arch,
                                     std::string_view device, const char *where) {
  const tuner::GpuModel &base = tuner::gpu_model_for_arch(arch);
  DbCalibrationChoice choice;
  try {
    choice = choose_calibration(db, arch, device);
  } catch (const kdb::DbError &e) {
    throw Error(ErrorCode::database, e.what(), where, "check the database (`tcjit db check`)");
  }
  if (!choice.refused.empty())
    throw Error(ErrorCode::database,
                "the database's calibration of the cost model for " + std::string(arch) +
                    " is refused (never used): " + choice.refused + " [" + db.path() + "]",
                where,
                "run `tcjit calibrate --db " + db.path() +
                    "` on the GPU's measurements to replace it (or delete the row with sqlite3); "
                    "`tcjit db check` lists every such row");
  return choice.calibration ? tuner::apply_calibration(base, *choice.calibration) : base;
}

tuner::GpuModel calibrated_gpu_model(const std::string &db_path, std::string_view arch,
                                     std::string_view device, const char *where) {
  const tuner::GpuModel &base = tuner::gpu_model_for_arch(arch);
  std::filesystem::path path;
  try {
    path = db_path.empty() ? kdb::default_db_path() : std::filesystem::path(db_path);
  } catch (const kdb::DbError &) {
    return base; // no database location: no calibration
  }
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return base;
  try {
    kdb::OpenOptions options;
    options.create_if_missing = false;
    options.read_only = true;
    {
      // A database from before the calibrations table has none (and a read-only open of it is
      // refused: it would need a migration).
      kdb::Connection raw = kdb::Connection::open(path, options);
      const int version = kdb::read_schema_version(raw);
      if (version >= 1 && version < 6)
        return base;
    }
    kdb::KernelsDb db = kdb::KernelsDb::open(path, options);
    return calibrated_gpu_model(db, arch, device, where);
  } catch (const kdb::DbError &e) {
    if (e.kind() == kdb::DbErrorKind::not_found)
      return base;
    throw Error(e.kind() == kdb::DbErrorKind::invalid_argument ? ErrorCode::invalid_argument
                                                               : ErrorCode::database,
                e.what(), where, "");
  }
}

std::string calibration_side_file(const std::string &db_path) {
  return tuner::calibration_path(db_path.empty() ? kdb::default_db_path()
                                                 : std::filesystem::path(db_path))
      .string();
}

} // namespace tcjit::api
