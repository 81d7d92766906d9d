#include "kernels_db/integrity.h"

#include "kernels_db/calibration_store.h"
#include "kernels_db/dispatch.h"
#include "kernels_db/dispatch_store.h"
#include "kernels_db/error.h"
#include "kernels_db/result_store.h"
#include "kernels_db/schema.h"
#include "kernels_db/sha256.h"

#include <sqlite3.h>

#include <algorithm>
#include <optional>

namespace tcjit::kernels_db {
namespace {

constexpr const char *kRecovery =
    "the database is a cache: move the file away (and its -wal/-shm files) and let tcjit rebuild "
    "it, or keep what can be read: `sqlite3 DB .recover | sqlite3 NEW.db`, then `tcjit db merge "
    "NEW.db --db FRESH.db`; restore from `tcjit db export` output with `tcjit db import`";

int64_t file_bytes(Connection &connection) {
  return query_int64(connection, "PRAGMA page_count") * query_int64(connection, "PRAGMA page_size");
}

// Every result, dispatch table and binary whose values are out of range, and every decision that
// may not decide (decision.h).
std::vector<std::string> implausible_rows(Connection &connection, int64_t version,
                                          const DecisionRules &rules) {
  std::vector<std::string> rows;
  for (const auto &[rowid, result] : all_results(connection))
    if (const auto why = implausible_result(result, rules))
      rows.push_back("results row " + std::to_string(rowid) + " of '" + result.problem_key + "' " +
                     result.config_json + ": " + *why);
  for (const DispatchTable &table : all_dispatch_tables(connection))
    if (const auto why = implausible_dispatch_table(table, rules))
      rows.push_back("dispatch table of '" + table.problem_key + "' " + table.arch + " " +
                     table.tuner_version + ": " + *why);
  Statement binaries = connection.prepare("SELECT id, compile_ms, created_ms FROM binaries");
  while (binaries.step())
    if (const auto why = binary_value_problem(binaries.column_double(1), binaries.column_int64(2)))
      rows.push_back("binaries row " + std::to_string(binaries.column_int64(0)) + ": " + *why);
  if (version >= 6)
    for (const StoredCalibration &row : all_calibrations(connection))
      if (const auto why = implausible_calibration(row.calibration, rules))
        rows.push_back("calibrations row " + std::to_string(row.rowid) + " of '" +
                       row.calibration.gpu + "' " + row.calibration.arch + ": " + *why);
  return rows;
}

} // namespace

CheckReport check_database(const std::filesystem::path &path, bool full,
                           const DecisionRules &rules) {
  OpenOptions options;
  options.create_if_missing = false;
  options.read_only = true;
  CheckReport report;
  report.check = full ? "integrity_check" : "quick_check";
  std::optional<Connection> opened;
  try {
    opened.emplace(Connection::open(path, options));
  } catch (const DbError &error) {
    if (error.kind() != DbErrorKind::corrupt)
      throw;
    report.ok = false;
    report.problems.push_back(error.problem());
    report.recovery = kRecovery;
    return report;
  }
  Connection &connection = *opened;
  bool readable = true; // the file is an SQLite database whose pages can be read
  try {
    Statement statement =
        connection.prepare(full ? "PRAGMA integrity_check" : "PRAGMA quick_check");
    while (statement.step()) {
      const std::string line = statement.column_text(0);
      if (line != "ok")
        report.problems.push_back(line);
    }
  } catch (const DbError &error) {
    if (error.sqlite_code() != 0 && (error.sqlite_code() & 0xff) == SQLITE_NOTADB)
      throw; // not an SQLite file: "not a tcjit kernel database", the wrong file was passed
    report.problems.push_back(error.problem());
    readable = false;
  }
  int64_t version = -1;
  bool schema_ok = false; // user_version in range and its tables and indexes present
  if (readable) {
    try {
      version = query_int64(connection, "PRAGMA user_version");
      const std::vector<std::string> schema_problems = diagnose_schema(connection);
      // Objects tcjit did not create are findings, but the connection runs none of them (it is
      // hardened): the rows are still checked.
      const std::vector<std::string> not_ours =
          foreign_schema_objects(connection, static_cast<int>(version));
      schema_ok = true;
      for (const std::string &problem : schema_problems) {
        report.problems.push_back(problem);
        schema_ok =
            schema_ok && std::find(not_ours.begin(), not_ours.end(), problem) != not_ours.end();
      }
      if (!not_ours.empty())
        report.recovery =
            "no SQL stored in the file runs, but every open refuses it: if you trust the rest of "
            "the file, drop the objects tcjit did not create with sqlite3 (e.g. `sqlite3 DB "
            "'DROP TRIGGER \"NAME\"'`); otherwise move the file away (and its -wal/-shm files) "
            "and let tcjit rebuild it: the database is a cache";
      if (version > kSchemaVersion) {
        report.notes.push_back("schema " + std::to_string(version) + " is newer than this " +
                               "tcjit knows (" + std::to_string(kSchemaVersion) +
                               "); only the SQLite structure was checked");
        report.recovery = "upgrade tcjit to read this database, or use another --db";
      }
      Statement foreign = connection.prepare("PRAGMA foreign_key_check");
      while (foreign.step())
        report.problems.push_back("row " + std::to_string(foreign.column_int64(1)) + " of " +
                                  foreign.column_text(0) + " refers to a missing " +
                                  foreign.column_text(2) + " row");
    } catch (const DbError &error) {
      report.problems.push_back(error.problem());
    }
  }
  if (schema_ok) {
    try {
      for (const BadCell &cell : find_bad_cells(connection, static_cast<int>(version)))
        report.bad_values.push_back(cell.table + " row " + std::to_string(cell.rowid) + ": " +
                                    cell.column + " " + cell.why);
    } catch (const DbError &error) {
      report.problems.push_back(error.problem());
    }
  }
  if (schema_ok) {
    try {
      // Schema 5: a binary is shared by the problems linked to it (named by the first one, or
      // by its kernel identity when none is linked); before, each binary had its problem.
      Statement binaries = connection.prepare(
          version >= 5 ? "SELECT COALESCE((SELECT p.key_text || ' ' || l.config_json FROM "
                         "problem_binaries l JOIN problems p ON p.id = l.problem_id WHERE "
                         "l.binary_id = b.id ORDER BY l.rowid LIMIT 1), b.kernel_identity), "
                         "b.arch, b.cubin, b.cubin_sha256 FROM binaries b"
                       : "SELECT p.key_text || ' ' || b.config_json, b.arch, b.cubin, "
                         "b.cubin_sha256 FROM binaries b JOIN problems p ON p.id = b.problem_id");
      while (binaries.step()) {
        ++report.binaries_checked;
        if (sha256_hex(binaries.column_blob(2)) != binaries.column_text(3))
          report.bad_cubins.push_back(binaries.column_text(0) + " " + binaries.column_text(1));
      }
    } catch (const DbError &error) {
      report.problems.push_back(error.problem());
    }
  }
  if (schema_ok && version >= 3) {
    try {
      for (const DispatchTable &table : all_dispatch_tables(connection)) {
        ++report.dispatch_tables_checked;
        try {
          validate_dispatch_table(table);
        } catch (const DbError &error) {
          report.bad_dispatch_tables.push_back(table.problem_key + " " + table.arch + " " +
                                               table.tuner_version + ": " + error.problem());
        }
      }
    } catch (const DbError &error) {
      report.problems.push_back(error.problem());
    }
  }
  if (schema_ok && version >= 3 && report.bad_values.empty()) {
    try {
      report.implausible = implausible_rows(connection, version, rules);
    } catch (const DbError &error) {
      report.problems.push_back(error.problem());
    }
  }
  report.ok = report.problems.empty() && report.bad_cubins.empty() &&
              report.bad_dispatch_tables.empty() && report.bad_values.empty() &&
              report.implausible.empty();
  if (!report.problems.empty()) {
    if (report.recovery.empty())
      report.recovery = kRecovery;
  } else {
    if (!report.bad_cubins.empty())
      report.recovery = "lookups ignore these binaries and the tuner rebuilds them; `tcjit db "
                        "prune --stale` with other versions, or rebuilding, replaces them";
    if (!report.bad_dispatch_tables.empty())
      report.recovery += std::string(report.recovery.empty() ? "" : "; ") +
                         "tuning the problem's range again replaces an invalid dispatch table";
    if (!report.bad_values.empty())
      report.recovery += std::string(report.recovery.empty() ? "" : "; ") +
                         "rows with bad values are skipped by `tcjit db merge`: merge the file "
                         "into a fresh database (`tcjit db merge THIS --db FRESH.db`) to drop "
                         "them, or move the file away and let tcjit rebuild it";
    if (!report.implausible.empty())
      report.recovery += std::string(report.recovery.empty() ? "" : "; ") +
                         "implausible decisions are ignored at use; merge the file into a fresh "
                         "database (`tcjit db merge THIS --db FRESH.db`) to drop them, or tune "
                         "the problems again (a calibration: `tcjit calibrate` again)";
  }
  return report;
}

VacuumReport vacuum(Connection &connection) {
  VacuumReport report;
  report.bytes_before = file_bytes(connection);
  connection.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  connection.exec("VACUUM");
  connection.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  report.bytes_after = file_bytes(connection);
  return report;
}

} // namespace tcjit::kernels_db
