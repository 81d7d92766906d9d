#include "kernels_db/connection.h"

#include "kernels_db/error.h"

#include <sqlite3.h>

#include <system_error>

namespace tcjit::kernels_db {

Connection Connection::open(const std::filesystem::path &path, const OpenOptions &options) {
  const std::string text = path.string();
  const bool in_memory = text == ":memory:";
  if (!in_memory) {
    std::error_code ec;
    const bool exists = std::filesystem::exists(path, ec);
    if (!exists && (!options.create_if_missing || options.read_only))
      throw DbError(DbErrorKind::not_found, "no database at '" + text + "'", text,
                    "pass the right --db PATH (or set $TCJIT_DB); the database is created by the "
                    "first tuning run or `tcjit db import`");
    if (!exists && path.has_parent_path()) {
      std::filesystem::create_directories(path.parent_path(), ec);
      if (ec)
        throw DbError(DbErrorKind::io,
                      "cannot create directory '" + path.parent_path().string() +
                          "': " + ec.message(),
                      text, "choose a writable location with --db PATH or $TCJIT_DB");
    }
  }
  int flags = SQLITE_OPEN_NOMUTEX;
  flags |= options.read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
  if (options.create_if_missing && !options.read_only)
    flags |= SQLITE_OPEN_CREATE;
  sqlite3 *raw = nullptr;
  const int rc = sqlite3_open_v2(text.c_str(), &raw, flags, nullptr);
  Connection connection;
  connection.db_.reset(raw);
  connection.path_ = text;
  if (rc != SQLITE_OK)
    throw_sqlite_error(raw, rc, "open");
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, static_cast<int>(options.busy_timeout.count()));
  connection.exec("PRAGMA foreign_keys = ON");
  // With WAL, NORMAL keeps the database consistent after a crash or kill -9 (a commit is durable
  // once the OS has it); only a power loss can drop the last commits.
  connection.exec("PRAGMA synchronous = NORMAL");
  return connection;
}

Connection::~Connection() {
  statements_.clear();
}

void Connection::exec(std::string_view sql) {
  std::string text(sql);
  char *error = nullptr;
  const int rc = sqlite3_exec(db_.get(), text.c_str(), nullptr, nullptr, &error);
  sqlite3_free(error);
  if (rc != SQLITE_OK)
    throw_sqlite_error(db_.get(), rc, "exec");
}

StatementLease Connection::cached(std::string_view sql) {
  auto it = statements_.find(std::string(sql));
  if (it == statements_.end())
    it = statements_.emplace(std::string(sql), std::make_unique<Statement>(db_.get(), sql, true))
             .first;
  return StatementLease(*it->second);
}

int64_t Connection::changes() const {
  return sqlite3_changes64(db_.get());
}

int64_t query_int64(Connection &connection, std::string_view sql) {
  Statement statement = connection.prepare(sql);
  if (!statement.step())
    return 0;
  return statement.column_int64(0);
}

} // namespace tcjit::kernels_db
