#include "kernels_db/connection.h"

#include "kernels_db/error.h"

#include <sqlite3.h>

#include <cctype>
#include <cerrno>
#include <string_view>
#include <system_error>

#include <unistd.h>

namespace tcjit::kernels_db {

namespace {

bool exists_path(const std::filesystem::path &path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

// An SQLite URI for `path` (percent-encoding what URIs reserve) with query `query`.
std::string file_uri(const std::string &path, const std::string &query) {
  // "file:///abs/path": an empty authority, so that a path starting with "//" is not one.
  std::string uri = path.starts_with('/') ? "file://" : "file:";
  for (const unsigned char c : path) {
    if (std::isalnum(c) != 0 ||
        std::string_view("/._-~").find(static_cast<char>(c)) != std::string_view::npos) {
      uri += static_cast<char>(c);
    } else {
      static constexpr char kHex[] = "0123456789ABCDEF";
      uri += '%';
      uri += kHex[c >> 4];
      uri += kHex[c & 15];
    }
  }
  return query.empty() ? uri : uri + "?" + query;
}

[[noreturn]] void permission_denied(const std::string &text, const std::string &what) {
  throw DbError(DbErrorKind::io, "permission denied: " + what, text,
                "check the permissions of the file and its directory, or choose another --db "
                "(or $TCJIT_DB)");
}

} // namespace

Connection Connection::open(const std::filesystem::path &path, const OpenOptions &options) {
  const std::string text = path.string();
  const bool in_memory = text == ":memory:";
  if (text.empty())
    throw DbError(DbErrorKind::invalid_argument, "empty database path", "database path",
                  "pass a file path with --db PATH, or leave --db out for the default database");
  bool immutable = false;
  if (!in_memory) {
    std::error_code ec;
    const bool exists = std::filesystem::exists(path, ec);
    if (exists && std::filesystem::is_directory(path, ec))
      throw DbError(DbErrorKind::io, "'" + text + "' is a directory, not a database file", text,
                    "pass a file path, e.g. --db " + (path / "kernels.db").string());
    if (!exists && (!options.create_if_missing || options.read_only))
      throw DbError(DbErrorKind::not_found, "no database at '" + text + "'", text,
                    "pass the right --db PATH (or set $TCJIT_DB); the database is created by the "
                    "first tuning run or `tcjit db import`");
    if (!exists && path.has_parent_path()) {
      std::filesystem::create_directories(path.parent_path(), ec);
      if (ec)
        throw DbError(DbErrorKind::io,
                      (ec == std::errc::permission_denied ? "permission denied: " : "") +
                          std::string("cannot create directory '") + path.parent_path().string() +
                          "': " + ec.message(),
                      text, "choose a writable location with --db PATH or $TCJIT_DB");
    }
    if (exists && ::access(text.c_str(), R_OK) != 0 && errno == EACCES)
      permission_denied(text, "cannot read '" + text + "'");
    const std::filesystem::path parent =
        path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
    const bool directory_writable = ::access(parent.c_str(), W_OK) == 0;
    // A read-only open of a WAL database needs its -shm file, which SQLite cannot create in a
    // directory it may not write: open such a file as immutable instead (unless both -wal and
    // -shm are there). Immutable skips locking and ignores a -wal it cannot read; nobody can be
    // writing to a database in a directory that is not writable.
    immutable = options.read_only && !directory_writable &&
                !(exists_path(text + "-wal") && exists_path(text + "-shm"));
  }
  int flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI;
  flags |= options.read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
  if (options.create_if_missing && !options.read_only)
    flags |= SQLITE_OPEN_CREATE;
  // A read-only open goes through a URI with mode=ro: never creates or writes the file.
  const std::string name = in_memory ? text
                                     : file_uri(text, !options.read_only ? ""
                                                      : immutable        ? "mode=ro&immutable=1"
                                                                         : "mode=ro");
  sqlite3 *raw = nullptr;
  const int rc = sqlite3_open_v2(name.c_str(), &raw, flags, nullptr);
  Connection connection;
  connection.db_.reset(raw);
  connection.path_ = text;
  if (rc != SQLITE_OK)
    throw_sqlite_error(raw, rc, "open", text);
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, static_cast<int>(options.busy_timeout.count()));
  connection.exec("PRAGMA foreign_keys = ON");
  // With WAL, NORMAL keeps the database consistent after a crash or kill -9 (a commit is durable
  // once the OS has it); only a power loss can drop the last commits.
  if (!options.read_only)
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
    throw_sqlite_error(db_.get(), rc, "exec", path_);
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
