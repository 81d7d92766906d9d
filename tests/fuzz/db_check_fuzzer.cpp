// Fuzz target: a database file checked by `tcjit db check` (KernelsDb::check, kernels_db/
// integrity.h). Any bytes are written as a file (in a private temporary directory) and checked,
// quick and full, which must report damage instead of throwing (only a file that cannot be opened
// may throw DbError). Then the file is opened read-only as `tcjit db ls/stats/export` do: that
// may be refused with a DbError, but every stored row it reads must be decoded or reported,
// never crash. A file that passes the full check holds no implausible decision (kernels_db/
// decision.h): every result and dispatch table read back is judged again.
#include "fuzz_check.h"

#include "kernels_db/kernels_db.h"

#include <sqlite3.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
namespace kdb = tcjit::kernels_db;
using tcjit::fuzz::require;

// A private directory, removed when the process exits normally.
struct ScratchDir {
  fs::path path = fs::temp_directory_path() / ("tcjit-db-check-fuzz-" + std::to_string(::getpid()));
  ScratchDir() { fs::create_directories(path); }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

const fs::path &scratch_dir() {
  static const ScratchDir dir;
  return dir.path;
}

void remove_files(const fs::path &db) {
  std::error_code ec;
  for (const char *suffix : {"", "-wal", "-shm", "-journal"})
    fs::remove(db.string() + suffix, ec);
}

// This build's tuner format (tuner/decision.h) and a fixed clock.
const kdb::DecisionRules kRules{1, 1800000000000};

// Returns whether the check passed.
bool check(const fs::path &path, bool full) {
  try {
    const kdb::CheckReport report = kdb::KernelsDb::check(path, full, kRules);
    require(!report.ok || (report.problems.empty() && report.bad_cubins.empty() &&
                           report.bad_values.empty() && report.bad_dispatch_tables.empty() &&
                           report.implausible.empty()),
            "check says ok while listing damage");
    if (!report.ok)
      require(!report.recovery.empty(), "a failed check without recovery advice");
    return report.ok;
  } catch (const kdb::DbError &e) {
    const bool not_sqlite =
        e.kind() == kdb::DbErrorKind::invalid_argument &&
        std::string(e.what()).find("not a tcjit kernel database") != std::string::npos;
    require(e.kind() == kdb::DbErrorKind::io || e.kind() == kdb::DbErrorKind::not_found ||
                not_sqlite,
            "db check threw for a damaged file instead of reporting it", e.what());
  }
  return false;
}

// The tables and indexes tcjit's migrations create (SQLite names the automatic indexes of
// UNIQUE and PRIMARY KEY constraints sqlite_autoindex_TABLE_N).
bool created_by_tcjit(const std::string &type, const std::string &name) {
  static const std::set<std::string> tables = {
      "problems", "binaries", "results", "dispatch_tables", "dispatch_entries", "problem_binaries"};
  static const std::set<std::string> indexes = {
      "problems_by_hash",       "problems_by_op",
      "binaries_by_lookup",     "binaries_by_age",
      "results_by_problem",     "results_by_age",
      "dispatch_tables_by_age", "problem_binaries_by_binary"};
  if (type == "table")
    return tables.contains(name);
  if (type != "index")
    return false; // a trigger or a view
  if (indexes.contains(name))
    return true;
  for (const std::string &table : tables)
    if (name.starts_with("sqlite_autoindex_" + table + "_"))
      return true;
  return false;
}

// A file that passes `check --full` holds no schema object tcjit did not create (issue 24).
void require_only_tcjit_schema(const fs::path &path) {
  sqlite3 *db = nullptr;
  const std::string uri = "file:" + path.string() + "?mode=ro";
  if (sqlite3_open_v2(uri.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr) ==
      SQLITE_OK) {
    sqlite3_stmt *statement = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT type, name FROM sqlite_master", -1, &statement, nullptr) ==
        SQLITE_OK)
      while (sqlite3_step(statement) == SQLITE_ROW) {
        const auto *type = reinterpret_cast<const char *>(sqlite3_column_text(statement, 0));
        const auto *name = reinterpret_cast<const char *>(sqlite3_column_text(statement, 1));
        require(type && name && created_by_tcjit(type, name),
                "a database that passed the full check holds a schema object tcjit did not "
                "create",
                std::string(type ? type : "?") + " " + (name ? name : "?"));
      }
    sqlite3_finalize(statement);
  }
  sqlite3_close(db);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const fs::path path = scratch_dir() / "fuzz.db";
  remove_files(path);
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char *>(data), static_cast<std::streamsize>(size));
  }
  check(path, false);
  const bool ok = check(path, true);
  if (ok)
    require_only_tcjit_schema(path);
  try {
    kdb::KernelsDb db = kdb::KernelsDb::open(path, {.create_if_missing = false, .read_only = true});
    for (const kdb::ProblemSummary &summary : db.list({})) {
      if (!ok)
        break;
      for (const kdb::ResultRecord &result : db.results(summary.problem.key_text))
        require(!kdb::implausible_result(result, kRules),
                "a database that passed the full check holds an implausible result");
      for (const kdb::DispatchTable &table : db.dispatch_tables(summary.problem.key_text))
        require(!kdb::implausible_dispatch_table(table, kRules),
                "a database that passed the full check holds an implausible dispatch table");
    }
    (void)db.stats();
    std::ostringstream exported;
    const kdb::TransferCounts counts = db.export_jsonl(exported);
    require(!ok || counts.warnings.empty(),
            "a database that passed the full check exports records with invalid stored JSON");
  } catch (const kdb::DbError &e) {
    // A refusal with a message is an acceptable outcome for a damaged file, and for an older
    // schema (read-only opens do not migrate); not for one that passed the full check.
    const std::string what = e.what();
    require(!ok || what.find("cannot be migrated read-only") != std::string::npos,
            "a database that passed the full check cannot be read", what);
  }
  remove_files(path);
  return 0;
}
