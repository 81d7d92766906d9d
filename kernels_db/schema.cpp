#include "kernels_db/schema.h"

#include "kernels_db/error.h"
#include "kernels_db/transaction.h"

#include <array>
#include <chrono>
#include <string>
#include <thread>

namespace tcjit::kernels_db {
namespace {

// migrations[i] brings a database from user_version i to i + 1.
constexpr std::array<const char *, kSchemaVersion> kMigrations = {
    // 0 -> 1: the tables.
    R"sql(
CREATE TABLE problems (
  id          INTEGER PRIMARY KEY,
  key_text    TEXT    NOT NULL UNIQUE,
  key_hash    INTEGER NOT NULL,          -- uint64 hash, stored bit-for-bit as int64
  op          TEXT    NOT NULL,
  dtype       TEXT    NOT NULL,
  arch        TEXT    NOT NULL,
  spec_text   TEXT    NOT NULL,
  shape_json  TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(shape_json)),
  created_ms  INTEGER NOT NULL
);
CREATE TABLE binaries (
  id                INTEGER PRIMARY KEY,
  problem_id        INTEGER NOT NULL REFERENCES problems(id) ON DELETE CASCADE,
  config_json       TEXT    NOT NULL CHECK (json_valid(config_json)),
  arch              TEXT    NOT NULL,
  toolkit_version   TEXT    NOT NULL,
  compiler_version  TEXT    NOT NULL,
  ptx               TEXT    NOT NULL,
  cubin             BLOB    NOT NULL,
  cubin_sha256      TEXT    NOT NULL,
  resources_json    TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(resources_json)),
  compile_options   TEXT    NOT NULL DEFAULT '',
  compile_ms        REAL    NOT NULL DEFAULT 0,
  created_ms        INTEGER NOT NULL,
  UNIQUE (problem_id, config_json, arch, toolkit_version, compiler_version)
);
CREATE TABLE results (
  id              INTEGER PRIMARY KEY,
  problem_id      INTEGER NOT NULL REFERENCES problems(id) ON DELETE CASCADE,
  config_json     TEXT    NOT NULL CHECK (json_valid(config_json)),
  arch            TEXT    NOT NULL,
  status          TEXT    NOT NULL CHECK (status IN ('ok', 'failed', 'illegal')),
  median_us       REAL,
  min_us          REAL,
  max_us          REAL,
  stddev_us       REAL,
  tflops          REAL,
  provenance      TEXT    NOT NULL CHECK (provenance IN ('measured', 'predicted', 'emulated')),
  device          TEXT    NOT NULL DEFAULT '',
  driver          TEXT    NOT NULL DEFAULT '',
  clock_mhz       INTEGER,
  model           TEXT    NOT NULL DEFAULT '',
  tuner_version   TEXT    NOT NULL,
  measured_ms     INTEGER NOT NULL,
  message         TEXT    NOT NULL DEFAULT '',
  content_sha256  TEXT    NOT NULL UNIQUE   -- identical measurements are stored once
);
)sql",
    // 1 -> 2: indexes for lookups, ls and prune.
    R"sql(
CREATE INDEX problems_by_hash ON problems(key_hash);
CREATE INDEX problems_by_op ON problems(op, dtype, arch);
CREATE INDEX binaries_by_lookup
  ON binaries(problem_id, arch, toolkit_version, compiler_version);
CREATE INDEX binaries_by_age ON binaries(created_ms);
CREATE INDEX results_by_problem ON results(problem_id, arch, status, median_us);
CREATE INDEX results_by_age ON results(measured_ms);
)sql",
    // 2 -> 3: dispatch tables (size buckets -> config) of problems tuned over a size range.
    R"sql(
CREATE TABLE dispatch_tables (
  id             INTEGER PRIMARY KEY,
  problem_id     INTEGER NOT NULL REFERENCES problems(id) ON DELETE CASCADE,
  arch           TEXT    NOT NULL,
  tuner_version  TEXT    NOT NULL,
  created_ms     INTEGER NOT NULL,
  UNIQUE (problem_id, arch, tuner_version)   -- also the index of find_dispatch_table
);
CREATE INDEX dispatch_tables_by_age ON dispatch_tables(created_ms);
CREATE TABLE dispatch_entries (
  table_id     INTEGER NOT NULL REFERENCES dispatch_tables(id) ON DELETE CASCADE,
  position     INTEGER NOT NULL,             -- the entry's index in DispatchTable::entries
  dims_json    TEXT    NOT NULL CHECK (json_valid(dims_json)),
  config_json  TEXT    NOT NULL CHECK (json_valid(config_json)),
  time_us      REAL    NOT NULL,
  provenance   TEXT    NOT NULL CHECK (provenance IN ('measured', 'predicted', 'emulated')),
  PRIMARY KEY (table_id, position)
);
)sql",
};

bool is_wal(Connection &connection) {
  Statement statement = connection.prepare("PRAGMA journal_mode");
  return statement.step() && statement.column_text(0) == "wal";
}

void set_wal(Connection &connection) {
  // Changing the journal mode needs a moment with no other connection; retry while busy.
  for (int attempt = 0;; ++attempt) {
    try {
      Statement statement = connection.prepare("PRAGMA journal_mode = WAL");
      statement.run();
      return;
    } catch (const DbError &error) {
      if (error.kind() != DbErrorKind::busy || attempt >= 200)
        throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void apply_migrations(Connection &connection, int target) {
  WriteTransaction transaction(connection);
  // Read again under the write lock: another process may have migrated meanwhile.
  const int current = read_schema_version(connection);
  refuse_newer_schema(current, connection.path());
  for (int version = current; version < target; ++version)
    connection.exec(kMigrations[version]);
  if (current < target)
    connection.exec("PRAGMA user_version = " + std::to_string(target));
  transaction.commit();
}

} // namespace

int read_schema_version(Connection &connection) {
  return static_cast<int>(query_int64(connection, "PRAGMA user_version"));
}

void refuse_newer_schema(int found, const std::string &path) {
  if (found > kSchemaVersion)
    throw DbError(DbErrorKind::newer_schema,
                  "database created by a newer tcjit (schema " + std::to_string(found) + " > " +
                      std::to_string(kSchemaVersion) + "); upgrade tcjit or use another --db",
                  path, "");
}

void prepare_schema(Connection &connection) {
  const int found = read_schema_version(connection);
  refuse_newer_schema(found, connection.path()); // before anything writes to the file
  if (connection.path() != ":memory:" && !is_wal(connection))
    set_wal(connection);
  if (found < kSchemaVersion)
    apply_migrations(connection, kSchemaVersion);
}

void migrate_to(Connection &connection, int version) {
  if (version < 0 || version > kSchemaVersion)
    throw DbError(DbErrorKind::invalid_argument, "no schema version " + std::to_string(version),
                  connection.path(),
                  "pass a version between 0 and " + std::to_string(kSchemaVersion));
  apply_migrations(connection, version);
}

} // namespace tcjit::kernels_db
