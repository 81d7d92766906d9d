// Reads a whole BLOB or TEXT cell through sqlite3_blob straight into the caller's buffer, without
// the temporary copy that sqlite3_column_blob makes of values spanning overflow pages.
#pragma once

#include "kernels_db/connection.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tcjit::kernels_db {

void read_cell(Connection &connection, const char *table, const char *column, int64_t rowid,
               std::vector<uint8_t> &out);
void read_cell(Connection &connection, const char *table, const char *column, int64_t rowid,
               std::string &out);

} // namespace tcjit::kernels_db
