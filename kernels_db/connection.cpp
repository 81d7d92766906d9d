#include "kernels_db/connection.h"

#include "kernels_db/error.h"

#include <sqlite3.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <system_error>

#include <sys/stat.h>
#include <sys/statvfs.h>
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

// What a path that exists but is not a regular file is ("a FIFO"), or empty for a regular file.
std::string non_regular_kind(const struct stat &info) {
  if (S_ISREG(info.st_mode))
    return "";
  if (S_ISDIR(info.st_mode))
    return "a directory";
  if (S_ISFIFO(info.st_mode))
    return "a FIFO";
  if (S_ISCHR(info.st_mode))
    return "a character device";
  if (S_ISBLK(info.st_mode))
    return "a block device";
  if (S_ISSOCK(info.st_mode))
    return "a socket";
  return "not a file";
}

// A FIFO, device, socket or directory is refused by stat() before SQLite opens it (opening a FIFO
// blocks until a writer appears; reading a device may never end).
void refuse_non_regular(const std::filesystem::path &path) {
  const std::string text = path.string();
  struct stat info {};
  if (::stat(text.c_str(), &info) != 0)
    return; // missing (or a dangling link): handled as a missing file
  const std::string kind = non_regular_kind(info);
  if (kind.empty())
    return;
  throw DbError(DbErrorKind::invalid_argument,
                "'" + text + "' is " + kind + ", not a regular file (a database is a file)", text,
                S_ISDIR(info.st_mode)
                    ? "pass a file path, e.g. --db " + (path / "kernels.db").string()
                    : "pass the path of a tcjit database file with --db (or $TCJIT_DB)");
}

bool on_read_only_file_system(const std::filesystem::path &path) {
  struct statvfs info {};
  return ::statvfs(path.c_str(), &info) == 0 && (info.f_flag & ST_RDONLY) != 0;
}

// A writing open needs the file and its directory writable (SQLite creates -wal, -shm and
// -journal files next to it). Without this SQLite opens a read-only file silently read-only and
// the first write fails with "unable to open database file (No such file or directory)".
void refuse_read_only_for_writing(const std::filesystem::path &path, bool exists) {
  const std::string text = path.string();
  const std::filesystem::path parent =
      path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  const std::string fix =
      "writing commands (run, tune, import, merge, prune, vacuum) need a writable database: "
      "choose one with --db PATH (or $TCJIT_DB); read-only commands (ls, show, stats, export, "
      "check) work on this one";
  if (on_read_only_file_system(exists ? path : parent))
    throw DbError(DbErrorKind::io,
                  "read-only file system: cannot write the database '" + text + "'", text, fix, 0);
  if (exists && ::access(text.c_str(), W_OK) != 0)
    throw DbError(DbErrorKind::io,
                  "read-only database file: cannot write '" + text + "' (" + std::strerror(errno) +
                      ")",
                  text, fix + "; or make the file writable (chmod u+w)");
  // An existing WAL database whose -wal and -shm files are there and writable can be written in a
  // read-only directory; anything else must create files next to it.
  const bool journal_files_writable = exists && ::access((text + "-wal").c_str(), W_OK) == 0 &&
                                      ::access((text + "-shm").c_str(), W_OK) == 0;
  if (!journal_files_writable && ::access(parent.c_str(), W_OK) != 0)
    throw DbError(DbErrorKind::io,
                  "read-only directory '" + parent.string() + "': cannot " +
                      (exists ? "create the -wal/-shm files of '" : "create '") + text + "' (" +
                      std::strerror(errno) + ")",
                  text, fix + "; or make the directory writable");
}

// Every connection is hardened before it reads the schema: even a schema object that the
// check at open missed never runs (no triggers, no views, no writable_schema or other
// defensive-mode escapes). A read-only connection also distrusts the schema (no SQL function runs
// from it). A writing one cannot: SQLite 3.40 does not mark json_valid() innocuous, and tcjit's own
// CHECK constraints use it ("unsafe use of json_valid()" on every statement); a writing open
// verifies that the schema is exactly tcjit's before its first write, so the only functions the
// schema can call are tcjit's CHECKs.
void harden(sqlite3 *db, const std::string &path, bool read_only) {
  struct Setting {
    int option;
    int value;
  };
  for (const Setting setting :
       {Setting{SQLITE_DBCONFIG_DEFENSIVE, 1},
        Setting{SQLITE_DBCONFIG_TRUSTED_SCHEMA, read_only ? 0 : 1},
        Setting{SQLITE_DBCONFIG_ENABLE_TRIGGER, 0}, Setting{SQLITE_DBCONFIG_ENABLE_VIEW, 0}}) {
    int applied = -1;
    const int rc = sqlite3_db_config(db, setting.option, setting.value, &applied);
    if (rc != SQLITE_OK || applied != setting.value)
      throw DbError(DbErrorKind::sqlite,
                    "cannot harden the SQLite connection (sqlite3_db_config option " +
                        std::to_string(setting.option) + ")",
                    path, "link tcjit with SQLite 3.31 or newer");
  }
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
    refuse_non_regular(path);
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
                      (ec == std::errc::permission_denied       ? "permission denied: "
                       : ec == std::errc::read_only_file_system ? "read-only file system: "
                                                                : "") +
                          std::string("cannot create directory '") + path.parent_path().string() +
                          "': " + ec.message(),
                      text, "choose a writable location with --db PATH or $TCJIT_DB");
    }
    if (exists && ::access(text.c_str(), R_OK) != 0 && errno == EACCES)
      permission_denied(text, "cannot read '" + text + "'");
    if (!options.read_only)
      refuse_read_only_for_writing(path, exists);
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
  const std::string name =
      in_memory ? text
                : file_uri(text, !options.read_only               ? ""
                                 : immutable || options.immutable ? "mode=ro&immutable=1"
                                                                  : "mode=ro");
  sqlite3 *raw = nullptr;
  const int rc = sqlite3_open_v2(name.c_str(), &raw, flags, nullptr);
  Connection connection;
  connection.db_.reset(raw);
  connection.path_ = text;
  connection.in_memory_ = in_memory;
  if (rc != SQLITE_OK)
    throw_sqlite_error(raw, rc, "open", text);
  sqlite3_extended_result_codes(raw, 1);
  harden(raw, text, options.read_only);
  sqlite3_busy_timeout(raw, static_cast<int>(options.busy_timeout.count()));
  connection.exec("PRAGMA foreign_keys = ON");
  // With WAL, NORMAL keeps the database consistent after a crash or kill -9 (a commit is durable
  // once the OS has it); only a power loss can drop the last commits.
  if (!options.read_only)
    connection.exec("PRAGMA synchronous = NORMAL");
  return connection;
}

Connection Connection::copy_into_memory(Connection &source) {
  Connection copy = open(":memory:");
  // An in-memory destination must have the source's page size, or the backup fails.
  copy.exec("PRAGMA page_size = " + std::to_string(query_int64(source, "PRAGMA page_size")));
  sqlite3_backup *backup = sqlite3_backup_init(copy.handle(), "main", source.handle(), "main");
  if (backup == nullptr)
    throw_sqlite_error(copy.handle(), sqlite3_errcode(copy.handle()), "copy into memory",
                       source.path());
  const int step = sqlite3_backup_step(backup, -1);
  const int finish = sqlite3_backup_finish(backup);
  if (step != SQLITE_DONE)
    throw_sqlite_error(source.handle(), step, "copy into memory", source.path());
  if (finish != SQLITE_OK)
    throw_sqlite_error(copy.handle(), finish, "copy into memory", source.path());
  copy.path_ = source.path();
  return copy;
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
