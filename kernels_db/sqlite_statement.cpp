#include "kernels_db/sqlite_statement.h"

#include "kernels_db/error.h"

#include <sqlite3.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <sys/statvfs.h>

namespace tcjit::kernels_db {

void SqliteCloser::operator()(sqlite3 *db) const {
  sqlite3_close_v2(db);
}

void Statement::Finalizer::operator()(sqlite3_stmt *stmt) const {
  sqlite3_finalize(stmt);
}

namespace {

// True when the file system holding `path` (a database file) has no block left for the process.
bool file_system_full(const std::string &path) {
  if (path.empty() || path == ":memory:")
    return false;
  const std::filesystem::path file(path);
  const std::filesystem::path directory =
      file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
  struct statvfs info {};
  return ::statvfs(directory.c_str(), &info) == 0 && info.f_bavail == 0;
}

} // namespace

void throw_sqlite_error(sqlite3 *db, int code, std::string_view operation, std::string_view path) {
  std::string message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(code);
  std::string where;
  if (db != nullptr) {
    const char *file = sqlite3_db_filename(db, "main");
    where = file != nullptr && *file != '\0' ? file : std::string(path.empty() ? ":memory:" : path);
  } else {
    where = std::string(path);
  }
  const std::string file_path = where;
  if (!operation.empty())
    where += (where.empty() ? "" : ", ") + std::string(operation);
  const int primary_code = code & 0xff;
  int system_errno = db != nullptr ? sqlite3_system_errno(db) : 0;
  if (system_errno == 0 && db != nullptr && primary_code == SQLITE_IOERR) {
    // A failed commit does not set sqlite3_system_errno: ask the file, then the file system.
    int last = 0;
    if (sqlite3_file_control(db, "main", SQLITE_FCNTL_LAST_ERRNO, &last) == SQLITE_OK)
      system_errno = last;
    if (system_errno == 0 && file_system_full(file_path))
      system_errno = ENOSPC;
  }
  if ((primary_code == SQLITE_IOERR || primary_code == SQLITE_CANTOPEN) && system_errno != 0) {
    const std::string system = std::strerror(system_errno);
    if (system_errno == ENOSPC || system_errno == EDQUOT)
      throw DbError(DbErrorKind::io, "disk full: " + message + " (" + system + ")", where,
                    "free disk space, or run `tcjit db prune` and `tcjit db vacuum`", code);
    if (system_errno == EACCES || system_errno == EPERM)
      throw DbError(DbErrorKind::io, "permission denied: " + message + " (" + system + ")", where,
                    "check the permissions of the database file and its directory, or choose "
                    "another --db (or $TCJIT_DB)",
                    code);
    if (system_errno == EROFS)
      throw DbError(DbErrorKind::io, "read-only file system: " + message, where,
                    "choose a database on a writable file system with --db (or $TCJIT_DB)", code);
    message += " (" + system + ")";
  }
  const int primary = code & 0xff;
  switch (primary) {
  case SQLITE_BUSY:
  case SQLITE_LOCKED:
    throw DbError(DbErrorKind::busy, "database is locked: " + message, where,
                  "another process kept the database locked for too long; retry, or stop the "
                  "process that holds it",
                  code);
  case SQLITE_NOTADB:
    // Not an SQLite file at all (a workload file, /etc/passwd, random bytes): the caller passed
    // the wrong file, so it is a bad argument (exit 2), and the file is left alone.
    throw DbError(DbErrorKind::invalid_argument,
                  "not a tcjit kernel database (" + message + ": not an SQLite database)", where,
                  "pass the path of a tcjit database with --db (or $TCJIT_DB); the file was not "
                  "changed. If it was a tcjit database, its header is damaged: move it away and "
                  "let tcjit rebuild it (the database is a cache)",
                  code);
  case SQLITE_CORRUPT:
    throw DbError(DbErrorKind::corrupt, "database file is damaged: " + message, where,
                  "run `tcjit db check`; the database is a cache: delete the file (it is rebuilt) "
                  "or restore it with `tcjit db import` from an export",
                  code);
  case SQLITE_CANTOPEN:
  case SQLITE_PERM:
  case SQLITE_READONLY:
  case SQLITE_IOERR:
  case SQLITE_AUTH:
    throw DbError(DbErrorKind::io, "cannot access the database: " + message, where,
                  "check that the file and its directory exist and are writable, or choose "
                  "another --db (or $TCJIT_DB)",
                  code);
  case SQLITE_FULL:
    throw DbError(DbErrorKind::io, "disk full: " + message, where,
                  "free disk space, or run `tcjit db prune` and `tcjit db vacuum`", code);
  case SQLITE_CONSTRAINT:
    throw DbError(DbErrorKind::invalid_argument, "constraint violated: " + message, where,
                  "check the values passed (status, provenance, problem key)", code);
  default:
    throw DbError(DbErrorKind::sqlite, "SQLite error: " + message, where,
                  "this is unexpected; please report it with the command that failed", code);
  }
}

Statement::Statement(sqlite3 *db, std::string_view sql, bool persistent) : db_(db), sql_(sql) {
  sqlite3_stmt *raw = nullptr;
  const int rc = sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()),
                                    persistent ? SQLITE_PREPARE_PERSISTENT : 0, &raw, nullptr);
  stmt_.reset(raw);
  if (rc != SQLITE_OK)
    throw_sqlite_error(db, rc, "prepare");
}

namespace {
void check_bind(sqlite3 *db, int rc) {
  if (rc != SQLITE_OK)
    throw_sqlite_error(db, rc, "bind");
}
} // namespace

void Statement::bind(int index, int64_t value) {
  check_bind(db_, sqlite3_bind_int64(stmt_.get(), index, value));
}
void Statement::bind(int index, double value) {
  check_bind(db_, sqlite3_bind_double(stmt_.get(), index, value));
}
void Statement::bind(int index, std::string_view text) {
  check_bind(db_, sqlite3_bind_text64(stmt_.get(), index, text.data(), text.size(),
                                      SQLITE_TRANSIENT, SQLITE_UTF8));
}
void Statement::bind(int index, std::optional<int64_t> value) {
  if (value)
    bind(index, *value);
  else
    bind_null(index);
}
void Statement::bind(int index, std::optional<double> value) {
  if (value)
    bind(index, *value);
  else
    bind_null(index);
}
void Statement::bind_blob(int index, std::span<const uint8_t> bytes) {
  // A zero-length blob must not bind as NULL.
  static const uint8_t empty = 0;
  const void *data = bytes.empty() ? &empty : bytes.data();
  check_bind(db_, sqlite3_bind_blob64(stmt_.get(), index, data, bytes.size(), SQLITE_TRANSIENT));
}
void Statement::bind_null(int index) {
  check_bind(db_, sqlite3_bind_null(stmt_.get(), index));
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW)
    return true;
  if (rc == SQLITE_DONE)
    return false;
  sqlite3_reset(stmt_.get());
  throw_sqlite_error(db_, rc, "step");
}

void Statement::run() {
  while (step()) {
  }
}

void Statement::reset() {
  sqlite3_reset(stmt_.get());
  sqlite3_clear_bindings(stmt_.get());
}

bool Statement::is_null(int column) const {
  return sqlite3_column_type(stmt_.get(), column) == SQLITE_NULL;
}
int64_t Statement::column_int64(int column) const {
  return sqlite3_column_int64(stmt_.get(), column);
}
double Statement::column_double(int column) const {
  return sqlite3_column_double(stmt_.get(), column);
}
std::string Statement::column_text(int column) const {
  const auto *text = sqlite3_column_text(stmt_.get(), column);
  const int size = sqlite3_column_bytes(stmt_.get(), column);
  return text != nullptr ? std::string(reinterpret_cast<const char *>(text), size) : std::string();
}
std::vector<uint8_t> Statement::column_blob(int column) const {
  const auto *data = static_cast<const uint8_t *>(sqlite3_column_blob(stmt_.get(), column));
  const int size = sqlite3_column_bytes(stmt_.get(), column);
  return data != nullptr ? std::vector<uint8_t>(data, data + size) : std::vector<uint8_t>();
}
std::optional<int64_t> Statement::column_optional_int64(int column) const {
  if (is_null(column))
    return std::nullopt;
  return column_int64(column);
}
std::optional<double> Statement::column_optional_double(int column) const {
  if (is_null(column))
    return std::nullopt;
  return column_double(column);
}

} // namespace tcjit::kernels_db
