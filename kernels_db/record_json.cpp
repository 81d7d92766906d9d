#include "kernels_db/record_json.h"

#include "kernels_db/base64.h"
#include "kernels_db/canonical_json.h"
#include "kernels_db/error.h"
#include "kernels_db/key_hash.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>

namespace tcjit::kernels_db {
namespace {

using nlohmann::json;

// Sets object[name] to the stored JSON text as a value; text that is not JSON (or nests too deep)
// is kept as a string and named in object["invalid_json"].
void put_stored(json &object, const char *name, const std::string &text) {
  if (text.empty()) {
    object[name] = json::object();
    return;
  }
  if (json_nesting_depth(text) <= kMaxJsonDepth) {
    json value = json::parse(text, nullptr, false);
    if (!value.is_discarded()) {
      object[name] = std::move(value);
      return;
    }
  }
  object[name] = text;
  object["invalid_json"].push_back(name);
}

[[noreturn]] void bad_field(std::string_view field, std::string_view expected) {
  throw DbError(DbErrorKind::invalid_argument,
                "field '" + std::string(field) + "' is missing or not " + std::string(expected),
                "JSON record", "fix the record (see docs/kernels_db.md for the format)");
}

const json &field(const json &object, const char *name) {
  if (!object.is_object() || !object.contains(name))
    bad_field(name, "present");
  return object.at(name);
}

std::string text_field(const json &object, const char *name) {
  const json &value = field(object, name);
  if (!value.is_string())
    bad_field(name, "a string");
  return value.get<std::string>();
}

std::string optional_text(const json &object, const char *name) {
  return object.contains(name) ? text_field(object, name) : std::string();
}

int64_t int_field(const json &object, const char *name) {
  const json &value = field(object, name);
  if (!value.is_number_integer() ||
      (value.is_number_unsigned() &&
       value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())))
    bad_field(name, "an integer (64-bit)");
  return value.get<int64_t>();
}

double number_field(const json &object, const char *name) {
  const json &value = field(object, name);
  if (!value.is_number())
    bad_field(name, "a number");
  return value.get<double>();
}

std::optional<double> optional_number(const json &object, const char *name) {
  if (!object.contains(name) || object.at(name).is_null())
    return std::nullopt;
  return number_field(object, name);
}

// A JSON object stored as canonical text (configs, shapes, resources, buckets). A string holding
// JSON text is refused: export writes these as objects.
std::string json_text_field(const json &object, const char *name) {
  const json &value = field(object, name);
  if (!value.is_object())
    bad_field(name, "a JSON object");
  return value.dump();
}

json binary_key_to_json(const BinaryKey &key) {
  json object = {{"problem", key.problem_key},
                 {"arch", key.arch},
                 {"toolkit_version", key.toolkit_version},
                 {"compiler_version", key.compiler_version}};
  put_stored(object, "config", key.config_json);
  return object;
}

} // namespace

json problem_to_json(const ProblemRecord &problem) {
  json object = {{"key", problem.key_text},
                 {"hash", format_key_hash(problem.key_hash)},
                 {"op", problem.op},
                 {"dtype", problem.dtype},
                 {"arch", problem.arch},
                 {"spec", problem.spec_text},
                 {"created_ms", problem.created_ms}};
  put_stored(object, "shape", problem.shape_json);
  return object;
}

ProblemRecord problem_from_json(const json &object) {
  ProblemRecord problem;
  problem.key_text = text_field(object, "key");
  const auto hash = parse_key_hash(text_field(object, "hash"));
  if (!hash)
    bad_field("hash", "16 hex digits");
  problem.key_hash = *hash;
  problem.op = text_field(object, "op");
  problem.dtype = text_field(object, "dtype");
  problem.arch = text_field(object, "arch");
  problem.spec_text = text_field(object, "spec");
  problem.shape_json = json_text_field(object, "shape");
  problem.created_ms = int_field(object, "created_ms");
  return problem;
}

std::string dump_json(const json &value, int indent) {
  return value.dump(indent, ' ', false, json::error_handler_t::replace);
}

json binary_to_json(const BinaryRecord &binary) {
  json object = binary_key_to_json(binary.key);
  object["kernel_identity"] = binary.kernel_identity;
  object["ptx"] = binary.ptx;
  object["cubin_base64"] = base64_encode(binary.cubin);
  object["cubin_sha256"] = binary.cubin_sha256;
  put_stored(object, "resources", binary.resources_json);
  object["compile_options"] = binary.compile_options;
  object["compile_ms"] = binary.compile_ms;
  object["created_ms"] = binary.created_ms;
  return object;
}

json binary_info_to_json(const BinaryInfo &info) {
  json object = binary_key_to_json(info.key);
  object["kernel_identity"] = info.kernel_identity;
  object["shared_by"] = info.problems; // problem/config links to this binary, this one included
  object["cubin_sha256"] = info.cubin_sha256;
  object["cubin_bytes"] = info.cubin_bytes;
  object["ptx_bytes"] = info.ptx_bytes;
  put_stored(object, "resources", info.resources_json);
  object["compile_options"] = info.compile_options;
  object["compile_ms"] = info.compile_ms;
  object["created_ms"] = info.created_ms;
  return object;
}

BinaryRecord binary_from_json(const json &object) {
  BinaryRecord binary;
  binary.key.problem_key = text_field(object, "problem");
  binary.key.config_json = json_text_field(object, "config");
  binary.key.arch = text_field(object, "arch");
  binary.key.toolkit_version = text_field(object, "toolkit_version");
  binary.key.compiler_version = text_field(object, "compiler_version");
  binary.kernel_identity = optional_text(object, "kernel_identity"); // absent before schema 5
  binary.ptx = text_field(object, "ptx");
  auto cubin = base64_decode(text_field(object, "cubin_base64"));
  if (!cubin)
    bad_field("cubin_base64", "valid base64");
  binary.cubin = std::move(*cubin);
  binary.cubin_sha256 = text_field(object, "cubin_sha256");
  binary.resources_json = json_text_field(object, "resources");
  binary.compile_options = optional_text(object, "compile_options");
  binary.compile_ms = number_field(object, "compile_ms");
  binary.created_ms = int_field(object, "created_ms");
  return binary;
}

json result_to_json(const ResultRecord &result) {
  json object = {
      {"problem", result.problem_key},      {"arch", result.arch},
      {"status", to_string(result.status)}, {"provenance", to_string(result.provenance.kind)},
      {"device", result.provenance.device}, {"driver", result.provenance.driver},
      {"model", result.provenance.model},   {"tuner_version", result.tuner_version},
      {"measured_ms", result.measured_ms},  {"message", result.message}};
  put_stored(object, "config", result.config_json);
  object["clock_mhz"] = result.provenance.clock_mhz ? json(*result.provenance.clock_mhz) : json();
  if (result.timing)
    object["time_us"] = {{"median", result.timing->median_us},
                         {"min", result.timing->min_us},
                         {"max", result.timing->max_us},
                         {"stddev", result.timing->stddev_us}};
  else
    object["time_us"] = nullptr;
  object["tflops"] = result.tflops ? json(*result.tflops) : json();
  return object;
}

ResultRecord result_from_json(const json &object) {
  ResultRecord result;
  result.problem_key = text_field(object, "problem");
  result.config_json = json_text_field(object, "config");
  result.arch = text_field(object, "arch");
  result.status = parse_result_status(text_field(object, "status"));
  result.provenance.kind = parse_provenance_kind(text_field(object, "provenance"));
  result.provenance.device = optional_text(object, "device");
  result.provenance.driver = optional_text(object, "driver");
  result.provenance.model = optional_text(object, "model");
  if (object.contains("clock_mhz") && !object.at("clock_mhz").is_null())
    result.provenance.clock_mhz = int_field(object, "clock_mhz");
  result.tuner_version = text_field(object, "tuner_version");
  result.measured_ms = int_field(object, "measured_ms");
  result.message = optional_text(object, "message");
  if (object.contains("time_us") && !object.at("time_us").is_null()) {
    const json &time = object.at("time_us");
    result.timing = Timing{number_field(time, "median"), number_field(time, "min"),
                           number_field(time, "max"), number_field(time, "stddev")};
  }
  result.tflops = optional_number(object, "tflops");
  return result;
}

json dispatch_table_to_json(const DispatchTable &table) {
  json entries = json::array();
  for (const DispatchEntry &entry : table.entries) {
    json item = {{"time_us", entry.time_us}, {"provenance", to_string(entry.provenance)}};
    put_stored(item, "dims", entry.dims_json);
    put_stored(item, "config", entry.config_json);
    entries.push_back(std::move(item));
  }
  return {{"problem", table.problem_key},
          {"arch", table.arch},
          {"tuner_version", table.tuner_version},
          {"created_ms", table.created_ms},
          {"entries", std::move(entries)}};
}

DispatchTable dispatch_table_from_json(const json &object) {
  DispatchTable table;
  table.problem_key = text_field(object, "problem");
  table.arch = text_field(object, "arch");
  table.tuner_version = text_field(object, "tuner_version");
  table.created_ms = int_field(object, "created_ms");
  const json &entries = field(object, "entries");
  if (!entries.is_array())
    bad_field("entries", "an array");
  for (const json &item : entries) {
    DispatchEntry entry;
    entry.dims_json = json_text_field(item, "dims");
    entry.config_json = json_text_field(item, "config");
    entry.time_us = number_field(item, "time_us");
    entry.provenance = parse_provenance_kind(text_field(item, "provenance"));
    table.entries.push_back(std::move(entry));
  }
  return table;
}

json calibration_to_json(const CalibrationRecord &calibration) {
  json object = {{"gpu", calibration.gpu},
                 {"arch", calibration.arch},
                 {"results", calibration.results},
                 {"residual_before", calibration.residual_before},
                 {"residual", calibration.residual},
                 {"created_ms", calibration.created_ms},
                 {"tcjit_version", calibration.tcjit_version},
                 {"model_version", calibration.model_version}};
  put_stored(object, "constants", calibration.constants_json);
  return object;
}

CalibrationRecord calibration_from_json(const json &object) {
  CalibrationRecord calibration;
  calibration.gpu = text_field(object, "gpu");
  calibration.arch = text_field(object, "arch");
  calibration.constants_json = json_text_field(object, "constants");
  calibration.results = int_field(object, "results");
  calibration.residual_before = number_field(object, "residual_before");
  calibration.residual = number_field(object, "residual");
  calibration.created_ms = int_field(object, "created_ms");
  calibration.tcjit_version = text_field(object, "tcjit_version");
  calibration.model_version = text_field(object, "model_version");
  return calibration;
}

} // namespace tcjit::kernels_db
