// Connection: one open SQLite database with the pragmas tcjit relies on (busy timeout, foreign
// keys, WAL once the schema is ready) and a cache of prepared statements.
// A Connection is not thread-safe; KernelsDb serializes access to it.
#pragma once

#include "kernels_db/sqlite_statement.h"

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

namespace tcjit::kernels_db {

struct OpenOptions {
  bool create_if_missing = true; // false: a missing file is a DbError(not_found)
  bool read_only = false;
  // KernelsDb::open only: open read-write when the file can be written, else read-only (an existing
  // file that is not writable, in a directory that is not writable, or on a read-only file system:
  // a team's shared cache). KernelsDb::read_only() tells which.
  bool read_only_if_not_writable = false;
  std::chrono::milliseconds busy_timeout{10000};
};

class Connection {
public:
  // Opens (or creates, creating parent directories) the file. Applies busy_timeout and
  // foreign_keys; does not look at the schema. ":memory:" opens a private in-memory database.
  static Connection open(const std::filesystem::path &path, const OpenOptions &options = {});

  Connection(Connection &&) noexcept = default;
  Connection &operator=(Connection &&) noexcept = default;
  ~Connection();

  sqlite3 *handle() const { return db_.get(); }
  const std::string &path() const { return path_; }

  // Runs SQL text that may hold several statements and returns no rows.
  void exec(std::string_view sql);
  // A prepared statement kept for the life of the connection, reset when the lease ends.
  StatementLease cached(std::string_view sql);
  // A one-off statement.
  Statement prepare(std::string_view sql) { return Statement(db_.get(), sql); }
  int64_t changes() const;

private:
  Connection() = default;
  SqliteHandle db_;
  std::string path_;
  // Declared after db_: destroyed (finalized) before the database closes.
  std::unordered_map<std::string, std::unique_ptr<Statement>> statements_;
};

// Reads a single integer pragma or query result (e.g. "PRAGMA user_version").
int64_t query_int64(Connection &connection, std::string_view sql);

} // namespace tcjit::kernels_db
