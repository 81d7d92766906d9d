// RAII wrappers for sqlite3* and sqlite3_stmt*, and the translation of SQLite result codes into
// DbError.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace tcjit::kernels_db {

struct SqliteCloser {
  void operator()(sqlite3 *db) const;
};
using SqliteHandle = std::unique_ptr<sqlite3, SqliteCloser>;

// Throws the DbError that matches an SQLite result code (busy, corrupt, io, ...). An I/O error is
// named by its system error: "disk full" (ENOSPC, EDQUOT, SQLITE_FULL), "permission denied"
// (EACCES, EPERM), "read-only file system" (EROFS). `path` names the file when SQLite has none
// (a failed open).
[[noreturn]] void throw_sqlite_error(sqlite3 *db, int code, std::string_view operation,
                                     std::string_view path = {});

// A prepared statement. Parameters are 1-based, columns 0-based (as in SQLite).
class Statement {
public:
  Statement(sqlite3 *db, std::string_view sql, bool persistent = false);
  Statement(Statement &&) noexcept = default;
  Statement &operator=(Statement &&) noexcept = default;

  void bind(int index, int64_t value);
  void bind(int index, double value);
  void bind(int index, std::string_view text);
  void bind(int index, const char *text) { bind(index, std::string_view(text)); }
  void bind(int index, const std::string &text) { bind(index, std::string_view(text)); }
  void bind(int index, std::optional<int64_t> value);
  void bind(int index, std::optional<double> value);
  void bind_blob(int index, std::span<const uint8_t> bytes);
  void bind_null(int index);

  // Runs one step: true when a row is available, false when done. Throws DbError on failure.
  bool step();
  // Steps until done (for statements that return no rows).
  void run();
  // Resets the statement and clears its bindings, ending its implicit read transaction.
  void reset();

  bool is_null(int column) const;
  int64_t column_int64(int column) const;
  double column_double(int column) const;
  std::string column_text(int column) const;
  std::vector<uint8_t> column_blob(int column) const;
  std::optional<int64_t> column_optional_int64(int column) const;
  std::optional<double> column_optional_double(int column) const;

private:
  struct Finalizer {
    void operator()(sqlite3_stmt *stmt) const;
  };
  sqlite3 *db_ = nullptr;
  std::unique_ptr<sqlite3_stmt, Finalizer> stmt_;
  std::string sql_;
};

// Borrows a cached statement and resets it when done, so that no read transaction stays open.
class StatementLease {
public:
  explicit StatementLease(Statement &statement) : statement_(&statement) {}
  StatementLease(const StatementLease &) = delete;
  StatementLease &operator=(const StatementLease &) = delete;
  ~StatementLease() { statement_->reset(); }

  Statement &operator*() const { return *statement_; }
  Statement *operator->() const { return statement_; }

private:
  Statement *statement_;
};

} // namespace tcjit::kernels_db
