#include "kernels_db/sqlite_blob.h"

#include <sqlite3.h>

#include <memory>

namespace tcjit::kernels_db {
namespace {

struct BlobCloser {
  void operator()(sqlite3_blob *blob) const { sqlite3_blob_close(blob); }
};
using BlobHandle = std::unique_ptr<sqlite3_blob, BlobCloser>;

template <typename Buffer>
void read_into(Connection &connection, const char *table, const char *column, int64_t rowid,
               Buffer &out) {
  sqlite3_blob *raw = nullptr;
  const int rc = sqlite3_blob_open(connection.handle(), "main", table, column, rowid, 0, &raw);
  BlobHandle blob(raw);
  if (rc != SQLITE_OK)
    throw_sqlite_error(connection.handle(), rc, "blob open");
  const int size = sqlite3_blob_bytes(blob.get());
  out.resize(static_cast<size_t>(size));
  if (size == 0)
    return;
  const int read = sqlite3_blob_read(blob.get(), out.data(), size, 0);
  if (read != SQLITE_OK)
    throw_sqlite_error(connection.handle(), read, "blob read");
}

} // namespace

void read_cell(Connection &connection, const char *table, const char *column, int64_t rowid,
               std::vector<uint8_t> &out) {
  read_into(connection, table, column, rowid, out);
}

void read_cell(Connection &connection, const char *table, const char *column, int64_t rowid,
               std::string &out) {
  read_into(connection, table, column, rowid, out);
}

} // namespace tcjit::kernels_db
