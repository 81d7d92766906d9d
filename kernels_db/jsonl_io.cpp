#include "kernels_db/jsonl_io.h"

#include "kernels_db/binary_store.h"
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

#include <string>

namespace tcjit::kernels_db {
namespace {

using nlohmann::json;

constexpr const char *kHeaderType = "tcjit-kernels-db";

json tagged(const char *type, json object) {
  object["type"] = type;
  return object;
}

} // namespace

TransferCounts export_jsonl(Connection &connection, std::ostream &out) {
  ReadTransaction snapshot(connection);
  TransferCounts counts;
  out << json{{"type", kHeaderType}, {"schema", kSchemaVersion}}.dump() << '\n';
  {
    Statement statement = connection.prepare("SELECT " + std::string(kProblemColumns) +
                                             " FROM problems p ORDER BY p.id");
    while (statement.step()) {
      out << tagged("problem", problem_to_json(read_problem(statement, 0))).dump() << '\n';
      ++counts.problems;
    }
  }
  {
    Statement statement = connection.prepare(
        "SELECT p.key_text, b.config_json, b.arch, b.toolkit_version, b.compiler_version, b.ptx, "
        "b.cubin, b.cubin_sha256, b.resources_json, b.compile_options, b.compile_ms, "
        "b.created_ms FROM binaries b JOIN problems p ON p.id = b.problem_id ORDER BY b.id");
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
      out << tagged("binary", binary_to_json(binary)).dump() << '\n';
      ++counts.binaries;
    }
  }
  {
    Statement statement = connection.prepare("SELECT p.key_text FROM problems p ORDER BY p.id");
    while (statement.step())
      for (const ResultRecord &result : ranked_results(connection, statement.column_text(0))) {
        out << tagged("result", result_to_json(result)).dump() << '\n';
        ++counts.results_added;
      }
  }
  for (const DispatchTable &table : all_dispatch_tables(connection)) {
    out << tagged("dispatch", dispatch_table_to_json(table)).dump() << '\n';
    ++counts.dispatch_tables;
  }
  out.flush();
  if (!out)
    throw DbError(DbErrorKind::io, "writing the export failed", connection.path(),
                  "check the output file's disk space and permissions");
  return counts;
}

TransferCounts import_jsonl(Connection &connection, std::istream &in) {
  WriteTransaction transaction(connection);
  TransferCounts counts;
  std::string line;
  int64_t line_number = 0;
  bool header_seen = false;
  while (std::getline(in, line)) {
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    const std::string where = "import line " + std::to_string(line_number);
    try {
      const json object = json::parse(line);
      if (!object.is_object() || !object.contains("type") || !object["type"].is_string())
        throw DbError(DbErrorKind::invalid_argument, "a record without a \"type\"", where,
                      "each line must be a JSON object with a \"type\"");
      const std::string type = object["type"].get<std::string>();
      if (type == kHeaderType) {
        const int schema = object.value("schema", 0);
        refuse_newer_schema(schema, where);
        header_seen = true;
      } else if (!header_seen) {
        throw DbError(DbErrorKind::invalid_argument, "missing header line", where,
                      "the file must start with {\"type\":\"tcjit-kernels-db\",...} as written "
                      "by `tcjit db export`");
      } else if (type == "problem") {
        upsert_problem(connection, problem_from_json(object));
        ++counts.problems;
      } else if (type == "binary") {
        const BinaryRecord binary = binary_from_json(object);
        if (!binary.cubin_sha256.empty() && sha256_hex(binary.cubin) != binary.cubin_sha256) {
          ++counts.binaries_rejected; // damaged: lookups would ignore it anyway
        } else {
          upsert_binary(connection, binary);
          ++counts.binaries;
        }
      } else if (type == "result") {
        if (insert_result(connection, result_from_json(object)))
          ++counts.results_added;
        else
          ++counts.results_already_present;
      } else if (type == "dispatch") {
        replace_dispatch_table(connection, dispatch_table_from_json(object));
        ++counts.dispatch_tables;
      } else {
        throw DbError(DbErrorKind::invalid_argument, "unknown record type '" + type + "'", where,
                      "use problem, binary, result or dispatch");
      }
    } catch (const json::exception &error) {
      throw DbError(DbErrorKind::invalid_argument, std::string("not JSON: ") + error.what(), where,
                    "each line must be one JSON object as written by `tcjit db export`");
    } catch (const DbError &error) {
      if (error.kind() != DbErrorKind::invalid_argument && error.kind() != DbErrorKind::not_found)
        throw;
      throw DbError(error.kind(), error.problem(), where, error.how_to_fix());
    }
  }
  if (in.bad())
    throw DbError(DbErrorKind::io, "reading the import failed", connection.path(),
                  "check that the file is readable");
  transaction.commit();
  return counts;
}

} // namespace tcjit::kernels_db
