// JSON forms of the records, used by export/import, `--json` output and result content hashes.
// Configs and shapes appear as JSON values (not strings); cubins as base64.
#pragma once

#include "kernels_db/records.h"

#include <nlohmann/json_fwd.hpp>

namespace tcjit::kernels_db {

// The JSON columns a record holds (shape, config, resources, dims) appear as JSON values. A stored
// text that is not JSON (a damaged or hand-edited file) appears as a string instead, and the
// record names it: "invalid_json": ["shape"]. These functions never throw for stored values.
nlohmann::json problem_to_json(const ProblemRecord &problem);
nlohmann::json binary_to_json(const BinaryRecord &binary); // with ptx and cubin (base64)
nlohmann::json binary_info_to_json(const BinaryInfo &info);
nlohmann::json result_to_json(const ResultRecord &result);
// {"problem","arch","tuner_version","created_ms","entries":[{"dims","config","time_us",
// "provenance"}]}; buckets and configs as JSON values.
nlohmann::json dispatch_table_to_json(const DispatchTable &table);
// {"gpu","arch","constants":{NAME: number},"results","residual_before","residual","created_ms",
// "tcjit_version","model_version"}.
nlohmann::json calibration_to_json(const CalibrationRecord &calibration);

// Serializes `value` (indent < 0: one line); text that is not UTF-8 (e.g. a damaged key) is
// written with U+FFFD replacement characters instead of failing.
std::string dump_json(const nlohmann::json &value, int indent = -1);

// Throw DbError(invalid_argument) naming the missing or malformed field. Every field must have its
// JSON type: strings are strings, integers integers, numbers numbers, shape/config/resources/dims
// JSON objects (a string holding JSON is refused, nothing is coerced).
ProblemRecord problem_from_json(const nlohmann::json &json);
BinaryRecord binary_from_json(const nlohmann::json &json);
ResultRecord result_from_json(const nlohmann::json &json);
DispatchTable dispatch_table_from_json(const nlohmann::json &json);
CalibrationRecord calibration_from_json(const nlohmann::json &json);

} // namespace tcjit::kernels_db
