// The database schema: its version (PRAGMA user_version) and the forward migrations that bring an
// older database up to date. A database newer than this build is refused, untouched.
#pragma once

#include "kernels_db/connection.h"

namespace tcjit::kernels_db {

// The schema version this build writes and understands.
inline constexpr int kSchemaVersion = 3;

int read_schema_version(Connection &connection);

// Throws DbError(newer_schema) when `found` > kSchemaVersion:
// "created by a newer tcjit (schema N > M); upgrade tcjit or use another --db".
void refuse_newer_schema(int found, const std::string &path);

// Refuses a newer database, switches it to WAL and applies the missing migrations in one write
// transaction (safe when several processes open a new database at once).
void prepare_schema(Connection &connection);

// Applies migrations up to `version` only (tests use it to build old databases).
void migrate_to(Connection &connection, int version);

} // namespace tcjit::kernels_db
