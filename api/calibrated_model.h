// The cost model of an arch's GPU with the calibration a database holds for it (tcjit calibrate,
// tuner/calibration_file.h): what explain, tune and the model measurer predict with.
#pragma once

#include "tuner/perf_model.h"

#include <string>
#include <string_view>

namespace tcjit::api {

// The calibration file beside the database `db_path` ("" = the default database's).
std::string calibration_file_of(const std::string &db_path);

// gpu_model_for_arch(arch) with the database's calibration for it applied (see find_calibration:
// `device`'s own when named, else the arch's newest); the uncalibrated model when there is none or
// no database location is known. Throws Error(database, where) for a calibration file that is
// not valid (what is wrong, and: delete it or calibrate again).
tuner::GpuModel calibrated_gpu_model(const std::string &db_path, std::string_view arch,
                                     std::string_view device, const char *where);

} // namespace tcjit::api
