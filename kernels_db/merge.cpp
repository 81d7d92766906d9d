#include "kernels_db/merge.h"

#include "kernels_db/binary_store.h"
#include "kernels_db/calibration_store.h"
#include "kernels_db/decision.h"
#include "kernels_db/dispatch.h"
#include "kernels_db/dispatch_store.h"
#include "kernels_db/error.h"
#include "kernels_db/problem_store.h"
#include "kernels_db/result_store.h"
#include "kernels_db/schema.h"
#include "kernels_db/sha256.h"
#include "kernels_db/transaction.h"

#include <functional>
#include <map>
#include <system_error>
#include <utility>

namespace tcjit::kernels_db {
namespace {

bool journal_files_present(const std::filesystem::path &path) {
  std::error_code ec;
  for (const char *suffix : {"-wal", "-shm", "-journal"})
    if (std::filesystem::exists(path.string() + suffix, ec))
      return true;
  return false;
}

// An in-memory copy of the other database, read through a read-only connection. A file that no
// process is using (no -wal, -shm or -journal file next to it) is read with immutable=1, so that
// not even the -wal/-shm files a read-only WAL open creates appear next to it; when one appears
// meanwhile (a writer started), it is read again through an ordinary read-only open.
Connection copy_other(const std::filesystem::path &other) {
  OpenOptions read_only;
  read_only.create_if_missing = false;
  read_only.read_only = true;
  const bool idle = !journal_files_present(other);
  if (idle) {
    read_only.immutable = true;
    Connection source = Connection::open(other, read_only);
    Connection copy = Connection::copy_into_memory(source);
    if (!journal_files_present(other))
      return copy;
    read_only.immutable = false;
  }
  Connection source = Connection::open(other, read_only);
  return Connection::copy_into_memory(source);
}

// The other database, never written or migrated: copied into memory and checked there (not a
// tcjit database, newer, objects tcjit did not create, damaged: refused), then the copy is
// migrated when it is older.
Connection open_other(const std::filesystem::path &other) {
  Connection copy = copy_other(other);
  const int version = checked_schema_version(copy);
  if (version == 0)
    throw DbError(DbErrorKind::invalid_argument, "not a tcjit kernel database", other.string(),
                  "pass a database written by tcjit (`tcjit db stats --db FILE` tells)");
  try {
    refuse_unusable_schema(copy);
    prepare_schema(copy);
    refuse_unusable_schema(copy);
  } catch (const DbError &error) {
    if (error.kind() != DbErrorKind::corrupt)
      throw;
    throw DbError(DbErrorKind::corrupt, "cannot merge this database: " + error.problem(),
                  other.string(),
                  "run `tcjit db check --db " + other.string() + "`; " + error.how_to_fix());
  }
  return copy;
}

// Values of the other database with the wrong storage class or malformed JSON, by table and
// rowid: their rows are not copied (reading them would coerce text into numbers).
using BadRows = std::map<std::pair<std::string, int64_t>, std::string>;

BadRows bad_rows(Connection &other) {
  BadRows rows;
  for (const BadCell &cell : find_bad_cells(other, kSchemaVersion))
    rows.emplace(std::make_pair(cell.table, cell.rowid), cell.column + " " + cell.why);
  return rows;
}

// Why a dispatch table may not decide (invalid or implausible), or nullopt.
std::optional<std::string> decision_problem(const DispatchTable &table,
                                            const DecisionRules &rules) {
  try {
    validate_dispatch_table(table);
  } catch (const DbError &error) {
    if (error.kind() != DbErrorKind::invalid_argument)
      throw;
    return error.problem();
  }
  if (const auto why = implausible_dispatch_table(table, rules))
    return "implausible dispatch table: " + *why;
  return std::nullopt;
}

} // namespace

TransferCounts merge_database(Connection &connection, const std::filesystem::path &other_path,
                              const DecisionRules &rules) {
  std::error_code ec;
  if (std::filesystem::equivalent(connection.path(), other_path, ec))
    throw DbError(DbErrorKind::invalid_argument, "cannot merge a database into itself",
                  other_path.string(), "pass another database file");
  Connection other = open_other(other_path);
  ReadTransaction snapshot(other);
  WriteTransaction transaction(connection);
  TransferCounts counts;
  const BadRows bad = bad_rows(other);
  // True (and the row listed as rejected) when the row must not be copied.
  auto skip = [&](const char *table, int64_t rowid) {
    const auto it = bad.find({table, rowid});
    if (it == bad.end())
      return false;
    counts.rejected.push_back(
        {other_path.string() + " " + table + " row " + std::to_string(rowid), it->second});
    return true;
  };
  auto copy = [&](const char *table, int64_t rowid, const std::function<void()> &body) {
    if (const auto refused = run_record(connection, body)) {
      counts.rejected.push_back(
          {other_path.string() + " " + table + " row " + std::to_string(rowid), *refused});
      return false;
    }
    return true;
  };
  {
    Statement problems = other.prepare("SELECT " + std::string(kProblemColumns) +
                                       ", p.id FROM problems p ORDER BY p.id");
    while (problems.step()) {
      const int64_t rowid = problems.column_int64(kProblemColumnCount);
      if (skip("problems", rowid))
        continue;
      const ProblemRecord problem = read_problem(problems, 0);
      if (!find_problem_id(connection, problem.key_text) &&
          copy("problems", rowid, [&] { upsert_problem(connection, problem); }))
        ++counts.problems;
    }
  }
  {
    Statement binaries = other.prepare(
        "SELECT p.key_text, l.config_json, b.arch, b.toolkit_version, b.compiler_version, b.ptx, "
        "b.cubin, b.cubin_sha256, b.resources_json, b.compile_options, b.compile_ms, "
        "b.created_ms, b.id, b.kernel_identity, l.rowid FROM problem_binaries l "
        "JOIN binaries b ON b.id = l.binary_id JOIN problems p ON p.id = l.problem_id "
        "ORDER BY b.id, l.rowid");
    while (binaries.step()) {
      // One row per link: the binary is stored once (by its identity), each link added to it.
      const int64_t rowid = binaries.column_int64(12);
      if (skip("binaries", rowid) || skip("problem_binaries", binaries.column_int64(14))) {
        ++counts.binaries_rejected;
        continue;
      }
      BinaryRecord binary;
      binary.key = {binaries.column_text(0), binaries.column_text(1), binaries.column_text(2),
                    binaries.column_text(3), binaries.column_text(4)};
      binary.ptx = binaries.column_text(5);
      binary.cubin = binaries.column_blob(6);
      binary.cubin_sha256 = binaries.column_text(7);
      binary.resources_json = binaries.column_text(8);
      binary.compile_options = binaries.column_text(9);
      binary.compile_ms = binaries.column_double(10);
      binary.created_ms = binaries.column_int64(11);
      binary.kernel_identity = binaries.column_text(13);
      if (const auto problem = binary_value_problem(binary.compile_ms, binary.created_ms)) {
        ++counts.binaries_rejected;
        counts.rejected.push_back(
            {other_path.string() + " binaries row " + std::to_string(rowid), *problem});
        continue;
      }
      if (sha256_hex(binary.cubin) != binary.cubin_sha256) {
        ++counts.binaries_rejected;
        counts.rejected.push_back({other_path.string() + " binaries row " + std::to_string(rowid),
                                   "cubin does not match its cubin_sha256 (damaged)"});
        continue;
      }
      // Stored without a MAC (foreign: the runtime rebuilds it before use), never over a binary
      // of ours.
      bool inserted = false;
      if (copy("binaries", rowid, [&] { inserted = insert_foreign_binary(connection, binary); }))
        counts.binaries += inserted ? 1 : 0;
      else
        ++counts.binaries_rejected;
    }
  }
  for (const auto &row : all_results(other)) {
    // Not a structured binding: clang 14 (the fuzz build) cannot capture one in a lambda.
    const int64_t rowid = row.first;
    const ResultRecord &result = row.second;
    if (skip("results", rowid))
      continue;
    if (const auto why = implausible_result(result, rules)) {
      counts.rejected.push_back({other_path.string() + " results row " + std::to_string(rowid),
                                 "implausible result: " + *why});
      continue;
    }
    bool added = false;
    if (copy("results", rowid, [&] { added = insert_result(connection, result); })) {
      if (added)
        ++counts.results_added;
      else
        ++counts.results_already_present;
    }
  }
  for (const DispatchTable &table : all_dispatch_tables(other)) {
    std::optional<std::string> refused = decision_problem(table, rules);
    if (refused) {
      ++counts.dispatch_tables_rejected;
      counts.rejected.push_back({other_path.string() + " dispatch table of '" + table.problem_key +
                                     "' " + table.arch + " " + table.tuner_version,
                                 *refused});
      continue;
    }
    // The faster decision by comparable evidence stays (decision.h better_dispatch_table), not
    // the newer; ours stays when it is as good, unless ours may not decide.
    const auto ours =
        read_dispatch_table(connection, table.problem_key, table.arch, table.tuner_version);
    if (ours && !decision_problem(*ours, rules) && !better_dispatch_table(table, *ours))
      continue;
    if (copy("dispatch_tables", 0, [&] { replace_dispatch_table(connection, table); }))
      ++counts.dispatch_tables;
  }
  for (const StoredCalibration &row : all_calibrations(other)) {
    if (skip("calibrations", row.rowid))
      continue;
    const std::string where =
        other_path.string() + " calibrations row " + std::to_string(row.rowid);
    if (const auto why = implausible_calibration(row.calibration, rules)) {
      counts.rejected.push_back({where, "implausible calibration: " + *why});
      continue;
    }
    bool stored = false;
    if (copy("calibrations", row.rowid,
             [&] { stored = put_calibration_if_newer(connection, row.calibration, rules); }))
      counts.calibrations += stored ? 1 : 0;
  }
  transaction.commit();
  return counts;
}

} // namespace tcjit::kernels_db
