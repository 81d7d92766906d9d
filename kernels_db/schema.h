// The database schema: its version (PRAGMA user_version) and the forward migrations that bring an
// older database up to date. A database newer than this build is refused, untouched.
#pragma once

#include "kernels_db/connection.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tcjit::kernels_db {

// The schema version this build writes and understands.
inline constexpr int kSchemaVersion = 6;

// PRAGMA user_version, unchecked (any 32-bit value a file may hold).
int read_schema_version(Connection &connection);

// PRAGMA user_version, validated before use: throws DbError(corrupt) naming the file and the value
// when it is negative, DbError(newer_schema) when it is above kSchemaVersion.
int checked_schema_version(Connection &connection);

// The names of every table and index of the file (sqlite_master, internal ones excluded).
std::vector<std::string> schema_objects(Connection &connection);

// What is wrong with the file's schema objects for its user_version, one sentence each: not a
// tcjit database (no tables, or only other tables), schema objects tcjit did not create (see
// foreign_schema_objects), a table or index of its schema version
// missing, objects of a later schema version present (a wrong user_version), user_version out of
// range, a table without a column of its schema version or with one it does not have (the
// expected columns are read from the migrations, applied once per process to in-memory
// databases). Empty when the schema matches. Reads only.
std::vector<std::string> diagnose_schema(Connection &connection);

// The schema objects of the file that tcjit's migrations do not create for `version` (1 to
// kSchemaVersion), one sentence each: any trigger, view, virtual table, other table or other index
// ("trigger 'evil' on table 'results' was not created by tcjit"), then tcjit's own tables and
// indexes whose definition (SQL text without comments, table) differs. The reference is built
// once per process by applying the migrations to in-memory databases. Reads only.
std::vector<std::string> foreign_schema_objects(Connection &connection, int version);

// Throws unless the file's schema is exactly tcjit's for its user_version (1 to kSchemaVersion,
// or 0 with no objects): DbError(corrupt) naming every schema object tcjit did not create, with
// how to drop them (or move the file away: the database is a cache); DbError(invalid_argument)
// "not a tcjit kernel database" for another program's file; DbError(corrupt) for any other
// finding of diagnose_schema. Reads only; every open calls it before anything is written.
void refuse_unusable_schema(Connection &connection);

// A stored value that does not have the storage class or JSON form its column needs (e.g. text in
// a REAL column, a malformed shape_json): `table` row `rowid`, `column`, and why.
struct BadCell {
  std::string table;
  int64_t rowid = 0;
  std::string column;
  std::string why;
};
// Every such cell of the tables of schema `version` (1..kSchemaVersion). Reads only.
std::vector<BadCell> find_bad_cells(Connection &connection, int version);

// Throws DbError(newer_schema) when `found` > kSchemaVersion:
// "created by a newer tcjit (schema N > M); upgrade tcjit or use another --db".
void refuse_newer_schema(int found, const std::string &path);

// Refuses a newer database and one with schema objects tcjit did not create (before writing
// anything), switches it to WAL and applies the missing migrations in one write transaction
// (safe when several processes open a new database at once).
void prepare_schema(Connection &connection);

// Applies migrations up to `version` only (tests use it to build old databases).
void migrate_to(Connection &connection, int version);

} // namespace tcjit::kernels_db
