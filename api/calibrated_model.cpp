#include "api/calibrated_model.h"

#include "kernels_db/default_path.h"
#include "kernels_db/error.h"
#include "tcjit/tcjit.hpp"
#include "tuner/calibration_file.h"
#include "tuner/cost_model.h"

namespace tcjit::api {

std::string calibration_file_of(const std::string &db_path) {
  const std::filesystem::path db =
      db_path.empty() ? kernels_db::default_db_path() : std::filesystem::path(db_path);
  return tuner::calibration_path(db).string();
}

tuner::GpuModel calibrated_gpu_model(const std::string &db_path, std::string_view arch,
                                     std::string_view device, const char *where) {
  const tuner::GpuModel &base = tuner::gpu_model_for_arch(arch);
  std::string file;
  try {
    file = calibration_file_of(db_path);
  } catch (const kernels_db::DbError &) {
    return base; // no database location: no calibration
  }
  try {
    const std::optional<tuner::Calibration> c =
        tuner::find_calibration(tuner::read_calibrations(file), arch, device);
    return c ? tuner::apply_calibration(base, *c) : base;
  } catch (const std::runtime_error &e) {
    throw Error(ErrorCode::database, e.what(), where, "");
  }
}

} // namespace tcjit::api
