// A calibration as the kernel database stores it (kernels_db::CalibrationRecord, schema 6's
// calibrations table): the constants as a flat JSON object of numbers named as `tcjit calibrate`
// prints them ("dram_bytes_per_s", "prologue_cycles", "launch_seconds", "mma_efficiency.f16").
// A row is untrusted input (imported, merged, edited): it is converted back only when every
// name is one the model has and every value passes calibration_problems.
#pragma once

#include "kernels_db/records.h"
#include "tuner/calibration.h"

#include <string>
#include <vector>

namespace tcjit::tuner {

kernels_db::CalibrationRecord calibration_record(const Calibration &calibration);

// What is wrong with the row for the cost model: constants that are not a JSON object of
// numbers, a name the model does not have, and every finding of calibration_problems. Empty when
// calibration_from_record may use it. What DecisionRules::calibration_check runs.
std::vector<std::string> calibration_record_problems(const kernels_db::CalibrationRecord &record);

// The calibration of a row that calibration_record_problems passes. Throws std::invalid_argument
// naming the findings for one it does not pass.
Calibration calibration_from_record(const kernels_db::CalibrationRecord &record);

} // namespace tcjit::tuner
