#include "kernels_db/schema.h"

#include "kernels_db/error.h"
#include "kernels_db/transaction.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

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
    // 3 -> 4: the MAC of a binary stored by this user's tcjit (kernels_db/trust_key.h); NULL for
    // binaries from elsewhere (import, merge, older schemas), which the runtime rebuilds.
    R"sql(
ALTER TABLE binaries ADD COLUMN mac TEXT;
)sql",
    // 4 -> 5: one binary per PTX. A kernel's PTX depends only on its kernel identity (the code
    // generator's plan identity: the same for every size), so binaries are keyed by (identity,
    // arch, toolkit version, compiler version) and shared by every problem whose config plans that
    // kernel; problem_binaries links a problem and config to its binary. SQL cannot compute a
    // schema 4 row's identity: rows of equal PTX, arch and versions become one binary (the newest
    // with a MAC, else the newest) under the placeholder identity 'schema4:<row id>:...', reached
    // through its links only (rows whose values break a CHECK, edited outside SQLite, are dropped),
    // and without a MAC (schema 4's covered the problem key): the runtime
    // rebuilds it on first use and stores it under its real identity.
    R"sql(
DROP INDEX binaries_by_lookup;
DROP INDEX binaries_by_age;
ALTER TABLE binaries RENAME TO binaries_v4;
CREATE INDEX binaries_v4_by_ptx
  ON binaries_v4(arch, toolkit_version, compiler_version, ptx, mac IS NULL, created_ms, id);
CREATE TABLE binaries (
  id                INTEGER PRIMARY KEY,
  kernel_identity   TEXT    NOT NULL,
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
  mac               TEXT,
  UNIQUE (kernel_identity, arch, toolkit_version, compiler_version)
);
CREATE INDEX binaries_by_age ON binaries(created_ms);
CREATE TABLE problem_binaries (
  problem_id   INTEGER NOT NULL REFERENCES problems(id) ON DELETE CASCADE,
  config_json  TEXT    NOT NULL CHECK (json_valid(config_json)),
  binary_id    INTEGER NOT NULL REFERENCES binaries(id) ON DELETE CASCADE,
  created_ms   INTEGER NOT NULL,
  PRIMARY KEY (problem_id, config_json, binary_id)
);
CREATE INDEX problem_binaries_by_binary ON problem_binaries(binary_id);
INSERT OR IGNORE INTO binaries (id, kernel_identity, arch, toolkit_version, compiler_version,
                                ptx, cubin, cubin_sha256, resources_json, compile_options,
                                compile_ms, created_ms, mac)
  SELECT o.id, 'schema4:' || o.id || ':' || o.created_ms || ':' || o.cubin_sha256, o.arch,
         o.toolkit_version, o.compiler_version, o.ptx, o.cubin, o.cubin_sha256,
         o.resources_json, o.compile_options, o.compile_ms, o.created_ms, NULL
  FROM binaries_v4 o
  WHERE o.id = (SELECT k.id FROM binaries_v4 k
                WHERE k.arch = o.arch AND k.toolkit_version = o.toolkit_version
                  AND k.compiler_version = o.compiler_version AND k.ptx = o.ptx
                ORDER BY k.mac IS NULL, k.created_ms DESC, k.id DESC LIMIT 1);
INSERT OR IGNORE INTO problem_binaries (problem_id, config_json, binary_id, created_ms)
  SELECT problem_id, config_json, kept, created_ms FROM (
    SELECT o.problem_id, o.config_json, o.created_ms,
           (SELECT k.id FROM binaries_v4 k
            WHERE k.arch = o.arch AND k.toolkit_version = o.toolkit_version
              AND k.compiler_version = o.compiler_version AND k.ptx = o.ptx
            ORDER BY k.mac IS NULL, k.created_ms DESC, k.id DESC LIMIT 1) AS kept
    FROM binaries_v4 o WHERE EXISTS (SELECT 1 FROM problems p WHERE p.id = o.problem_id))
  WHERE kept IN (SELECT id FROM binaries);
DROP TABLE binaries_v4;
)sql",
    // 5 -> 6: the cost model's calibrations (tcjit calibrate), one per measured GPU and arch: the
    // fitted constants as a canonical JSON object of numbers, and where they come from.
    R"sql(
CREATE TABLE calibrations (
  id               INTEGER PRIMARY KEY,
  gpu              TEXT    NOT NULL,
  arch             TEXT    NOT NULL,
  constants_json   TEXT    NOT NULL CHECK (json_valid(constants_json)),
  results          INTEGER NOT NULL,
  residual_before  REAL    NOT NULL,
  residual         REAL    NOT NULL,
  created_ms       INTEGER NOT NULL,
  tcjit_version    TEXT    NOT NULL,
  model_version    TEXT    NOT NULL,
  UNIQUE (gpu, arch)
);
)sql",
};

// The tables and indexes each schema version adds (see kMigrations).
struct SchemaObject {
  const char *kind;
  const char *name;
  int version;
  int dropped = 0; // the version whose migration removes it; 0: never
};
constexpr SchemaObject kSchemaObjects[] = {
    {"table", "problems", 1},
    {"table", "binaries", 1},
    {"table", "results", 1},
    {"index", "problems_by_hash", 2},
    {"index", "problems_by_op", 2},
    {"index", "binaries_by_lookup", 2, 5},
    {"index", "binaries_by_age", 2},
    {"index", "results_by_problem", 2},
    {"index", "results_by_age", 2},
    {"table", "dispatch_tables", 3},
    {"index", "dispatch_tables_by_age", 3},
    {"table", "dispatch_entries", 3},
    {"table", "problem_binaries", 5},
    {"index", "problem_binaries_by_binary", 5},
    {"table", "calibrations", 6},
};

// Whether schema `version` has `object`.
bool in_schema(const SchemaObject &object, int64_t version) {
  return object.version <= version && (object.dropped == 0 || version < object.dropped);
}

// The storage classes (typeof) a column may hold, and whether its text must be valid JSON.
struct ColumnRule {
  const char *table;
  const char *column;
  const char *types; // e.g. "integer or real"
  bool json;
  int version;
  // The column's CHECK (... IN (...)) list, as SQL ("'ok', 'failed'"); null when it has none. A
  // file changed outside SQLite skips the CHECK, and a reader refuses such a value.
  const char *values = nullptr;
  int dropped = 0; // the version whose migration removes the column; 0: never
};
constexpr ColumnRule kColumnRules[] = {
    {"problems", "key_text", "text", false, 1},
    {"problems", "key_hash", "integer", false, 1},
    {"problems", "shape_json", "text", true, 1},
    {"problems", "created_ms", "integer", false, 1},
    {"binaries", "config_json", "text", true, 1, nullptr, 5},
    {"binaries", "kernel_identity", "text", false, 5},
    {"binaries", "cubin", "blob", false, 1},
    {"binaries", "cubin_sha256", "text", false, 1},
    {"binaries", "resources_json", "text", true, 1},
    {"binaries", "compile_ms", "real or integer", false, 1},
    {"binaries", "created_ms", "integer", false, 1},
    {"binaries", "mac", "text or null", false, 4},
    {"results", "config_json", "text", true, 1},
    {"results", "median_us", "real or integer or null", false, 1},
    {"results", "min_us", "real or integer or null", false, 1},
    {"results", "max_us", "real or integer or null", false, 1},
    {"results", "stddev_us", "real or integer or null", false, 1},
    {"results", "tflops", "real or integer or null", false, 1},
    {"results", "clock_mhz", "integer or null", false, 1},
    {"results", "measured_ms", "integer", false, 1},
    {"results", "status", "text", false, 1, "'ok', 'failed', 'illegal'"},
    {"results", "provenance", "text", false, 1, "'measured', 'predicted', 'emulated'"},
    {"dispatch_tables", "created_ms", "integer", false, 3},
    {"dispatch_entries", "dims_json", "text", true, 3},
    {"dispatch_entries", "config_json", "text", true, 3},
    {"dispatch_entries", "time_us", "real or integer", false, 3},
    {"dispatch_entries", "provenance", "text", false, 3, "'measured', 'predicted', 'emulated'"},
    {"problem_binaries", "problem_id", "integer", false, 5},
    {"problem_binaries", "config_json", "text", true, 5},
    {"problem_binaries", "binary_id", "integer", false, 5},
    {"calibrations", "gpu", "text", false, 6},
    {"calibrations", "arch", "text", false, 6},
    {"calibrations", "constants_json", "text", true, 6},
    {"calibrations", "results", "integer", false, 6},
    {"calibrations", "residual_before", "real or integer", false, 6},
    {"calibrations", "residual", "real or integer", false, 6},
    {"calibrations", "created_ms", "integer", false, 6},
    {"calibrations", "tcjit_version", "text", false, 6},
    {"calibrations", "model_version", "text", false, 6},
    {"problem_binaries", "created_ms", "integer", false, 5},
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

// A user_version 0 file that already holds tables is someone else's database: never add ours.
void refuse_foreign(Connection &connection, int version) {
  if (version != 0)
    return;
  const std::vector<std::string> objects = schema_objects(connection);
  if (objects.empty())
    return;
  std::string names;
  for (const std::string &name : objects)
    names += (names.empty() ? "" : ", ") + name;
  throw DbError(DbErrorKind::invalid_argument,
                "not a tcjit kernel database (user_version 0 and other tables: " + names + ")",
                connection.path(),
                "pass a tcjit database with --db (or $TCJIT_DB); tcjit does not "
                "add its tables to another program's database");
}

void apply_migrations(Connection &connection, int target) {
  WriteTransaction transaction(connection);
  // Read again under the write lock: another process may have migrated meanwhile.
  const int current = checked_schema_version(connection);
  refuse_foreign(connection, current);
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

int checked_schema_version(Connection &connection) {
  const int64_t found = query_int64(connection, "PRAGMA user_version");
  if (found < 0)
    throw DbError(DbErrorKind::corrupt,
                  "invalid schema version " + std::to_string(found) +
                      " (PRAGMA user_version; a tcjit database has 0 to " +
                      std::to_string(kSchemaVersion) + ")",
                  connection.path(),
                  "the file was changed by another program or is damaged; run `tcjit db check`, "
                  "or move it away and let tcjit create a new one");
  refuse_newer_schema(static_cast<int>(found), connection.path());
  return static_cast<int>(found);
}

std::vector<std::string> schema_objects(Connection &connection) {
  Statement statement = connection.prepare(
      "SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name");
  std::vector<std::string> names;
  while (statement.step())
    names.push_back(statement.column_text(0));
  return names;
}

namespace {

// The column names of `table` in the file, in order.
std::vector<std::string> table_columns(Connection &connection, const std::string &table) {
  Statement statement = connection.prepare("SELECT name FROM pragma_table_info('" + table + "')");
  std::vector<std::string> names;
  while (statement.step())
    names.push_back(statement.column_text(0));
  return names;
}

// The columns of every table of each schema version, read from new in-memory databases migrated
// to it: the migrations are the one source of truth. Built once per process.
using TableColumns = std::vector<std::pair<std::string, std::vector<std::string>>>;
const TableColumns &expected_columns(int version) {
  static const std::array<TableColumns, kSchemaVersion + 1> all = [] {
    std::array<TableColumns, kSchemaVersion + 1> columns;
    for (int v = 1; v <= kSchemaVersion; ++v) {
      Connection memory = Connection::open(":memory:");
      apply_migrations(memory, v);
      for (const SchemaObject &object : kSchemaObjects)
        if (std::string_view(object.kind) == "table" && in_schema(object, v))
          columns[v].emplace_back(object.name, table_columns(memory, object.name));
    }
    return columns;
  }();
  return all[static_cast<size_t>(version)];
}

// A column name for a message: bytes outside printable ASCII as \xNN (a damaged file's names
// can hold anything).
std::string printable(const std::string &name) {
  std::string text;
  for (const unsigned char c : name) {
    if (c >= 0x20 && c < 0x7f) {
      text += static_cast<char>(c);
      continue;
    }
    static constexpr char kHex[] = "0123456789abcdef";
    text += "\\x";
    text += kHex[c >> 4];
    text += kHex[c & 15];
  }
  return text;
}

// One row of sqlite_master.
struct SchemaEntry {
  std::string type, name, table, sql;
};

// SQL text without comments, with each run of whitespace one space: a comment or layout change in
// kMigrations does not make an older file's objects foreign. Quoted text is kept as is.
std::string normalized_sql(const std::string &sql) {
  std::string text;
  bool space = false;
  for (size_t i = 0; i < sql.size();) {
    const char c = sql[i];
    if (c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') {
      i = sql.find('\n', i);
      i = i == std::string::npos ? sql.size() : i;
      space = true;
    } else if (c == '/' && i + 1 < sql.size() && sql[i + 1] == '*') {
      const size_t end = sql.find("*/", i + 2);
      i = end == std::string::npos ? sql.size() : end + 2;
      space = true;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      ++i;
      space = true;
    } else {
      if (space && !text.empty())
        text += ' ';
      space = false;
      const char close = c == '[' ? ']' : c;
      if (c == '\'' || c == '"' || c == '`' || c == '[') {
        const size_t end = sql.find(close, i + 1);
        const size_t stop = end == std::string::npos ? sql.size() : end + 1;
        text.append(sql, i, stop - i);
        i = stop;
      } else {
        text += c;
        ++i;
      }
    }
  }
  return text;
}

std::vector<SchemaEntry> schema_entries(Connection &connection) {
  Statement statement =
      connection.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid");
  std::vector<SchemaEntry> entries;
  while (statement.step())
    entries.push_back({statement.column_text(0), statement.column_text(1), statement.column_text(2),
                       normalized_sql(statement.column_text(3))});
  return entries;
}

// Exactly the sqlite_master rows that kMigrations create for each schema version (tables, their
// automatic indexes, indexes), read from new in-memory databases migrated to it. Built once.
const std::vector<SchemaEntry> &reference_schema(int version) {
  static const std::array<std::vector<SchemaEntry>, kSchemaVersion + 1> all = [] {
    std::array<std::vector<SchemaEntry>, kSchemaVersion + 1> entries;
    for (int v = 1; v <= kSchemaVersion; ++v) {
      Connection memory = Connection::open(":memory:");
      apply_migrations(memory, v);
      entries[v] = schema_entries(memory);
    }
    return entries;
  }();
  return all[static_cast<size_t>(version)];
}

// "trigger 'evil' on table 'results'", "table 'notes'", "virtual table 'fts'".
std::string describe(const SchemaEntry &entry) {
  const bool is_virtual = entry.type == "table" && entry.sql.starts_with("CREATE VIRTUAL TABLE");
  std::string text =
      (is_virtual ? "virtual table" : printable(entry.type)) + " '" + printable(entry.name) + "'";
  if (entry.type != "table" && entry.type != "view")
    text += " on table '" + printable(entry.table) + "'";
  return text;
}

struct ForeignSchema {
  std::vector<std::string> foreign;   // objects tcjit never creates, named
  std::vector<std::string> redefined; // tcjit's names with another definition
  std::vector<std::string> drops;     // SQL that removes the foreign objects
};

ForeignSchema find_foreign_schema(Connection &connection, int version) {
  ForeignSchema found;
  const std::vector<SchemaEntry> &reference = reference_schema(version);
  for (const SchemaEntry &entry : schema_entries(connection)) {
    const auto ours = std::find_if(reference.begin(), reference.end(), [&](const SchemaEntry &r) {
      return r.type == entry.type && r.name == entry.name;
    });
    if (ours == reference.end()) {
      found.foreign.push_back(describe(entry) + " was not created by tcjit");
      std::string quoted;
      for (const char c : entry.name)
        quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
      const bool is_virtual = entry.sql.starts_with("CREATE VIRTUAL TABLE");
      found.drops.push_back("DROP " +
                            std::string(is_virtual || entry.type == "table" ? "TABLE"
                                        : entry.type == "index"             ? "INDEX"
                                        : entry.type == "view"              ? "VIEW"
                                                                            : "TRIGGER") +
                            " \"" + printable(quoted) + "\"");
    } else if (ours->table != entry.table || ours->sql != entry.sql) {
      found.redefined.push_back(describe(entry) + " was not created by tcjit: its definition " +
                                "differs from schema " + std::to_string(version) + "'s");
    }
  }
  return found;
}

} // namespace

std::vector<std::string> foreign_schema_objects(Connection &connection, int version) {
  if (version < 1 || version > kSchemaVersion)
    return {};
  ForeignSchema found = find_foreign_schema(connection, version);
  found.foreign.insert(found.foreign.end(), found.redefined.begin(), found.redefined.end());
  return found.foreign;
}

void refuse_unusable_schema(Connection &connection) {
  const int64_t version = query_int64(connection, "PRAGMA user_version");
  if (version >= 1 && version <= kSchemaVersion) {
    const ForeignSchema found = find_foreign_schema(connection, static_cast<int>(version));
    if (!found.foreign.empty()) {
      std::string names, drops;
      for (const std::string &name : found.foreign)
        names += (names.empty() ? "" : "; ") + name;
      for (const std::string &drop : found.drops)
        drops += (drops.empty() ? "" : "; ") + drop;
      throw DbError(DbErrorKind::corrupt,
                    "refusing a database with schema objects tcjit did not create (SQL stored in "
                    "the file must never run): " +
                        names,
                    connection.path(),
                    "if you trust the rest of the file, drop them with sqlite3: `sqlite3 '" +
                        connection.path() + "' '" + drops +
                        "'`; otherwise move the file away (with its -wal and -shm files) and let "
                        "tcjit rebuild it: the database is a cache");
    }
  }
  const std::vector<std::string> problems = diagnose_schema(connection);
  if (problems.empty())
    return;
  std::string text;
  for (const std::string &problem : problems)
    text += (text.empty() ? "" : "; ") + problem;
  const bool foreign = text.starts_with("not a tcjit");
  throw DbError(foreign ? DbErrorKind::invalid_argument : DbErrorKind::corrupt,
                foreign ? text : "database schema is damaged: " + text, connection.path(),
                foreign ? "pass a tcjit database with --db (or $TCJIT_DB)"
                        : "run `tcjit db check`; the database is a cache: move the file away "
                          "and let tcjit rebuild it, or restore it from a `tcjit db export`");
}

std::vector<std::string> diagnose_schema(Connection &connection) {
  std::vector<std::string> problems;
  const int64_t version = query_int64(connection, "PRAGMA user_version");
  const std::vector<std::string> objects = schema_objects(connection);
  auto has = [&](const std::string &name) {
    return std::find(objects.begin(), objects.end(), name) != objects.end();
  };
  if (version < 0 || version > kSchemaVersion) {
    problems.push_back(
        "wrong user_version " + std::to_string(version) +
        (version > kSchemaVersion
             ? ": schema newer than this tcjit knows (" + std::to_string(kSchemaVersion) + ")"
             : ": not a tcjit schema version (0 to " + std::to_string(kSchemaVersion) + ")"));
    return problems;
  }
  int ours = 0;
  for (const SchemaObject &object : kSchemaObjects)
    ours += has(object.name) ? 1 : 0;
  if (version == 0) {
    if (objects.empty())
      problems.push_back("not a tcjit kernel database: it has no tables (user_version 0)");
    else if (ours == 0)
      problems.push_back("not a tcjit kernel database: user_version 0 and only other tables");
    else
      problems.push_back("wrong user_version 0: the file holds tcjit tables");
    return problems;
  }
  const ForeignSchema foreign = find_foreign_schema(connection, static_cast<int>(version));
  problems.insert(problems.end(), foreign.foreign.begin(), foreign.foreign.end());
  for (const SchemaObject &object : kSchemaObjects) {
    if (in_schema(object, version) && !has(object.name))
      problems.push_back(std::string(object.kind) + " '" + object.name + "' of schema " +
                         std::to_string(object.version) + " is missing");
    else if (object.version > version && object.dropped == 0 && has(object.name))
      problems.push_back("wrong user_version " + std::to_string(version) + ": the file has " +
                         object.kind + " '" + object.name + "' of schema " +
                         std::to_string(object.version));
  }
  // Every query names its columns: a table of the right name with other columns (a damaged or
  // edited CREATE TABLE) would fail them halfway with "no such column".
  for (const auto &[table, expected] : expected_columns(static_cast<int>(version))) {
    if (!has(table))
      continue;
    const std::vector<std::string> found = table_columns(connection, table);
    for (const std::string &column : expected)
      if (std::find(found.begin(), found.end(), column) == found.end())
        problems.push_back("table '" + table + "' has no column '" + column + "' (schema " +
                           std::to_string(version) + ")");
    for (const std::string &column : found)
      if (std::find(expected.begin(), expected.end(), column) == expected.end())
        problems.push_back("table '" + table + "' has a column '" + printable(column) +
                           "' that schema " + std::to_string(version) + " does not have");
  }
  // A redefinition that the column checks did not already name (another constraint, type,
  // default or index column).
  const size_t listed = problems.size();
  for (const std::string &redefined : foreign.redefined) {
    const size_t quote = redefined.find('\'');
    const std::string name = redefined.substr(0, redefined.find('\'', quote + 1) + 1);
    bool named = false;
    for (size_t i = 0; i < listed; ++i)
      named = named || problems[i].starts_with(name);
    if (!named)
      problems.push_back(redefined);
  }
  return problems;
}

std::vector<BadCell> find_bad_cells(Connection &connection, int version) {
  std::vector<BadCell> cells;
  for (const ColumnRule &rule : kColumnRules) {
    if (rule.version > version || (rule.dropped != 0 && version >= rule.dropped))
      continue;
    const std::string column = rule.column;
    std::string allowed;
    for (const char *type : {"text", "integer", "real", "blob", "null"})
      if (std::string_view(rule.types).find(type) != std::string_view::npos)
        allowed += std::string(allowed.empty() ? "" : ", ") + "'" + type + "'";
    const std::string bad_json =
        rule.json ? "(typeof(" + column + ") = 'text' AND NOT json_valid(" + column + "))"
                  : std::string("0");
    const std::string bad_value = rule.values ? "(typeof(" + column + ") = 'text' AND " + column +
                                                    " NOT IN (" + rule.values + "))"
                                              : std::string("0");
    const std::string sql = "SELECT rowid, typeof(" + column + "), " + bad_json + ", " + bad_value +
                            ", CAST(" + column + " AS TEXT) FROM " + rule.table + " WHERE typeof(" +
                            column + ") NOT IN (" + allowed + ") OR " + bad_json + " OR " +
                            bad_value;
    Statement statement = connection.prepare(sql);
    while (statement.step()) {
      BadCell cell{rule.table, statement.column_int64(0), column, ""};
      if (statement.column_int64(2) != 0)
        cell.why = "not valid JSON";
      else if (statement.column_int64(3) != 0)
        cell.why = "holds '" + printable(statement.column_text(4)) + "', not one of " + rule.values;
      else
        cell.why = "holds " + statement.column_text(1) + ", not " + rule.types;
      cells.push_back(std::move(cell));
    }
  }
  return cells;
}

void refuse_newer_schema(int found, const std::string &path) {
  if (found > kSchemaVersion)
    throw DbError(DbErrorKind::newer_schema,
                  "database created by a newer tcjit (schema " + std::to_string(found) + " > " +
                      std::to_string(kSchemaVersion) + "); upgrade tcjit or use another --db",
                  path, "");
}

void prepare_schema(Connection &connection) {
  // Before anything writes to the file: its version and its tables, read in one read transaction
  // (one snapshot). Two separate reads could straddle another process's first migration (version
  // 0 read before it committed, its tables after) and take a new tcjit database for a foreign one.
  int found = 0;
  connection.exec("BEGIN");
  try {
    found = checked_schema_version(connection);
    refuse_foreign(connection, found);
    if (found > 0)
      refuse_unusable_schema(connection); // before WAL or a migration writes to the file
  } catch (...) {
    connection.exec("ROLLBACK");
    throw;
  }
  connection.exec("COMMIT");
  if (!connection.in_memory() && !is_wal(connection))
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
