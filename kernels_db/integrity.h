// Integrity checks (`tcjit db check`) and compaction (`tcjit db vacuum`).
#pragma once

#include "kernels_db/connection.h"
#include "kernels_db/decision.h"

#include <filesystem>
#include <string>
#include <vector>

namespace tcjit::kernels_db {

struct CheckReport {
  bool ok = true;
  std::string check;                 // "quick_check" or "integrity_check"
  std::vector<std::string> problems; // what is damaged
  std::vector<std::string> notes;    // what was not checked, and why
  int64_t binaries_checked = 0;
  std::vector<std::string> bad_cubins; // "KEY config arch" of cubins whose sha256 mismatches
  int64_t dispatch_tables_checked = 0;
  std::vector<std::string> bad_dispatch_tables; // "KEY arch tuner: why" of invalid tables
  // "TABLE row N: COLUMN why" of values with the wrong storage class or malformed JSON.
  std::vector<std::string> bad_values;
  // "results row N of 'KEY' CONFIG: why", "dispatch table of 'KEY' ARCH TUNER: why" and
  // "calibrations row N of 'GPU' ARCH: why": rows with values out of range, decisions that may not
  // decide (decision.h) and calibrations that may not be used (calibration_store.h); ignored at
  // use.
  std::vector<std::string> implausible;
  std::string recovery; // how to recover, when !ok
};

// Opens the file read-only without touching the schema (so a damaged or newer database can be
// checked), runs PRAGMA quick_check (integrity_check when `full`), checks the user_version and
// the schema objects against it (a dropped table or index, a wrong user_version, a schema newer
// than this build, not a tcjit database: each is a problem), foreign_key_check and, when the
// schema is readable, verifies every cubin's SHA-256, the storage class and JSON of every typed
// and JSON column, and validates every dispatch table (kernels_db/dispatch.h: buckets well formed
// and disjoint), and judges every result, dispatch table and binary by `rules` (decision.h:
// values in range, no implausible decision). Every schema object tcjit did not create (trigger,
// view, other table or index, a redefined tcjit table) is a problem, named. Never throws for
// damage; throws DbError(not_found/io) when the file cannot be opened and
// DbError(invalid_argument) for a path that is not a regular file or a file that is not an SQLite
// database ("not a tcjit kernel database").
CheckReport check_database(const std::filesystem::path &path, bool full,
                           const DecisionRules &rules);

// Checkpoints the WAL and rebuilds the file (VACUUM). Returns bytes before and after.
struct VacuumReport {
  int64_t bytes_before = 0;
  int64_t bytes_after = 0;
};
VacuumReport vacuum(Connection &connection);

} // namespace tcjit::kernels_db
