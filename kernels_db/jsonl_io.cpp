#include "kernels_db/jsonl_io.h"

#include "kernels_db/binary_store.h"
#include "kernels_db/calibration_store.h"
#include "kernels_db/canonical_json.h"
#include "kernels_db/decision.h"
#include "kernels_db/dispatch_store.h"
#include "kernels_db/error.h"
#include "kernels_db/key_hash.h"
#include "kernels_db/problem_store.h"
#include "kernels_db/record_json.h"
#include "kernels_db/result_store.h"
#include "kernels_db/schema.h"
#include "kernels_db/sha256.h"
#include "kernels_db/transaction.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>
#include <string>

namespace tcjit::kernels_db {
namespace {

using nlohmann::json;

json tagged(const char *type, json object) {
  object["type"] = type;
  return object;
}

// Writes one record; a record with malformed stored JSON gets a warning naming it.
void write_record(std::ostream &out, const char *type, json object, const std::string &name,
                  TransferCounts &counts) {
  if (object.contains("invalid_json")) {
    std::string fields;
    for (const json &field : object["invalid_json"])
      fields += (fields.empty() ? "" : ", ") + field.get<std::string>();
    counts.warnings.push_back(std::string(type) + " " + name + ": stored " + fields +
                              " is not valid JSON; exported as text (import rejects it)");
  }
  out << dump_json(tagged(type, std::move(object))) << '\n';
}

} // namespace

TransferCounts export_jsonl(Connection &connection, std::ostream &out) {
  ReadTransaction snapshot(connection);
  TransferCounts counts;
  out << dump_json(json{{"type", kJsonlHeaderType}, {"schema", kSchemaVersion}}) << '\n';
  {
    Statement statement = connection.prepare("SELECT " + std::string(kProblemColumns) +
                                             " FROM problems p ORDER BY p.id");
    while (statement.step()) {
      const ProblemRecord problem = read_problem(statement, 0);
      write_record(out, "problem", problem_to_json(problem), "'" + problem.key_text + "'", counts);
      ++counts.problems;
    }
  }
  {
    Statement statement = connection.prepare(
        "SELECT p.key_text, l.config_json, b.arch, b.toolkit_version, b.compiler_version, b.ptx, "
        "b.cubin, b.cubin_sha256, b.resources_json, b.compile_options, b.compile_ms, "
        "b.created_ms, b.kernel_identity FROM problem_binaries l "
        "JOIN binaries b ON b.id = l.binary_id JOIN problems p ON p.id = l.problem_id "
        "ORDER BY b.id, l.rowid");
    while (statement.step()) {
      BinaryRecord binary;
      binary.key = {statement.column_text(0), statement.column_text(1), statement.column_text(2),
                    statement.column_text(3), statement.column_text(4)};
      binary.ptx = statement.column_text(5);
      binary.cubin = statement.column_blob(6);
      binary.cubin_sha256 = statement.column_text(7);
      binary.resources_json = statement.column_text(8);
      binary.compile_options = statement.column_text(9);
      binary.compile_ms = statement.column_double(10);
      binary.created_ms = statement.column_int64(11);
      binary.kernel_identity = statement.column_text(12);
      write_record(out, "binary", binary_to_json(binary),
                   "of '" + binary.key.problem_key + "' " + binary.key.arch, counts);
      ++counts.binaries;
    }
  }
  {
    Statement statement = connection.prepare("SELECT p.key_text FROM problems p ORDER BY p.id");
    while (statement.step())
      for (const ResultRecord &result : ranked_results(connection, statement.column_text(0))) {
        write_record(out, "result", result_to_json(result), "of '" + result.problem_key + "'",
                     counts);
        ++counts.results_added;
      }
  }
  for (const DispatchTable &table : all_dispatch_tables(connection)) {
    json object = dispatch_table_to_json(table);
    for (json &entry : object["entries"])
      if (entry.contains("invalid_json"))
        object["invalid_json"] = entry["invalid_json"];
    write_record(out, "dispatch", std::move(object), "of '" + table.problem_key + "'", counts);
    ++counts.dispatch_tables;
  }
  for (const StoredCalibration &row : all_calibrations(connection)) {
    write_record(out, "calibration", calibration_to_json(row.calibration),
                 "of '" + row.calibration.gpu + "' " + row.calibration.arch, counts);
    ++counts.calibrations;
  }
  out.flush();
  if (!out)
    throw DbError(DbErrorKind::io, "writing the export failed", connection.path(),
                  "check the output file's disk space and permissions");
  return counts;
}

namespace {

// Stores one record (after the header) and counts it. Throws DbError(invalid_argument/not_found)
// when it is refused.
void import_record(Connection &connection, const std::string &line, TransferCounts &counts,
                   std::string &type, const DecisionRules &rules) {
  const json object = parse_jsonl_record(line);
  type = object["type"].get<std::string>();
  if (type == "problem") {
    upsert_problem(connection, problem_from_json(object));
    ++counts.problems;
  } else if (type == "binary") {
    const BinaryRecord binary = binary_from_json(object);
    // Checked before it is stored: a cubin that matches its hash, a PTX, an ELF cubin. Stored
    // without a MAC (foreign: the runtime rebuilds it before use), never over a stored binary.
    if (binary.cubin_sha256.empty())
      throw DbError(DbErrorKind::invalid_argument,
                    "binary without a cubin_sha256 (the cubin cannot be verified)", "",
                    "export the binary again with `tcjit db export`");
    if (sha256_hex(binary.cubin) != binary.cubin_sha256)
      throw DbError(DbErrorKind::invalid_argument,
                    "binary whose cubin does not match its cubin_sha256 (damaged)", "",
                    "export the binary again with `tcjit db export`");
    if (const auto problem = binary_value_problem(binary.compile_ms, binary.created_ms))
      throw DbError(DbErrorKind::invalid_argument, "binary: " + *problem, "",
                    "export the binary again with `tcjit db export`");
    if (insert_foreign_binary(connection, binary))
      ++counts.binaries;
  } else if (type == "result") {
    const ResultRecord result = result_from_json(object);
    if (const auto why = implausible_result(result, rules))
      throw DbError(DbErrorKind::invalid_argument, "implausible result: " + *why, "",
                    "only results tcjit measured or predicted are imported; tune again");
    if (insert_result(connection, result))
      ++counts.results_added;
    else
      ++counts.results_already_present;
  } else if (type == "dispatch") {
    const DispatchTable table = dispatch_table_from_json(object);
    if (const auto why = implausible_dispatch_table(table, rules))
      throw DbError(DbErrorKind::invalid_argument, "implausible dispatch table: " + *why, "",
                    "only tables a tcjit tuner stored are imported; tune the range again");
    replace_dispatch_table(connection, table);
    ++counts.dispatch_tables;
  } else if (type == "calibration") {
    const CalibrationRecord calibration = calibration_from_json(object);
    if (const auto why = implausible_calibration(calibration, rules))
      throw DbError(DbErrorKind::invalid_argument, "implausible calibration: " + *why, "",
                    "only calibrations `tcjit calibrate` fitted are imported; calibrate again on "
                    "the GPU's measurements");
    if (put_calibration_if_newer(connection, calibration, rules))
      ++counts.calibrations;
  } else if (type == kJsonlHeaderType) {
    throw DbError(DbErrorKind::invalid_argument, "a second header line", "",
                  "concatenated exports: import each file on its own");
  } else {
    throw DbError(DbErrorKind::invalid_argument, "unknown record type '" + type + "'", "",
                  "use problem, binary, result, dispatch or calibration");
  }
}

} // namespace

void check_jsonl_header(const std::string &line, const std::string &where) {
  const std::string how = "the file must start with {\"type\":\"tcjit-kernels-db\",...} as "
                          "written by `tcjit db export`";
  check_json_depth(line, where);
  const json object = json::parse(line, nullptr, false);
  if (object.is_discarded() || !object.is_object() || !object.contains("type") ||
      object["type"] != kJsonlHeaderType)
    throw DbError(DbErrorKind::invalid_argument, "missing header line", where, how);
  if (!object.contains("schema") || !object["schema"].is_number_integer())
    throw DbError(DbErrorKind::invalid_argument, "header without an integer \"schema\"", where,
                  how);
  const int64_t schema = object["schema"].get<int64_t>();
  if (schema < 1)
    throw DbError(DbErrorKind::invalid_argument,
                  "header schema " + std::to_string(schema) + " is not a tcjit schema version",
                  where, how);
  refuse_newer_schema(static_cast<int>(std::min<int64_t>(schema, 1 << 30)), where);
}

json parse_jsonl_record(const std::string &line) {
  check_json_depth(line, "the record");
  json object;
  try {
    object = json::parse(line);
  } catch (const json::exception &error) {
    throw DbError(DbErrorKind::invalid_argument, std::string("not JSON: ") + error.what(), "",
                  "each line must be one JSON object as written by `tcjit db export`");
  }
  if (!object.is_object() || !object.contains("type") || !object["type"].is_string())
    throw DbError(DbErrorKind::invalid_argument, "a record without a \"type\"", "",
                  "each line must be a JSON object with a \"type\"");
  return object;
}

JsonlRead
read_jsonl(std::istream &in, std::string_view where_prefix,
           const std::function<void(const std::string &where, const std::string &line)> &record) {
  JsonlRead read;
  std::string line;
  while (std::getline(in, line)) {
    ++read.lines;
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    const std::string where = std::string(where_prefix) + std::to_string(read.lines);
    if (!read.header_seen) {
      check_jsonl_header(line, where);
      read.header_seen = true;
      continue;
    }
    record(where, line);
  }
  return read;
}

TransferCounts import_jsonl(Connection &connection, std::istream &in, const DecisionRules &rules) {
  WriteTransaction transaction(connection);
  TransferCounts counts;
  read_jsonl(in, "import line ", [&](const std::string &where, const std::string &line) {
    std::string type;
    const std::optional<std::string> refused =
        run_record(connection, [&] { import_record(connection, line, counts, type, rules); });
    if (refused) {
      if (type == "binary")
        ++counts.binaries_rejected;
      counts.rejected.push_back({where, *refused});
    }
  });
  if (in.bad())
    throw DbError(DbErrorKind::io, "reading the import failed", connection.path(),
                  "check that the file is readable");
  transaction.commit();
  return counts;
}

} // namespace tcjit::kernels_db
