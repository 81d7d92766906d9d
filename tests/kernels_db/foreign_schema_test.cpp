// A database someone hands you cannot run SQL (issue 24): every open compares the file's schema
// objects with exactly those tcjit's migrations create, refuses any other one by name, and every
// connection is hardened so that a stored trigger or view never runs. Merge reads its source
// read-only, into memory, and never migrates or writes it. A file that is not a database, a path
// that is not a regular file and a read-only location get their own errors.
#include "db_test_util.h"

#include "kernels_db/connection.h"
#include "kernels_db/error.h"
#include "kernels_db/kernels_db.h"
#include "kernels_db/schema.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

namespace tcjit::kernels_db {
namespace {

using testing::sample_binary;
using testing::sample_problem;
using testing::sample_result;
using testing::TempDir;

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

std::string file_bytes(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

OpenOptions read_only() {
  OpenOptions options;
  options.read_only = true;
  options.create_if_missing = false;
  return options;
}

// SQL run with a plain sqlite3 handle, as `sqlite3 FILE "SQL"` would: not hardened.
void plain_sqlite(const std::filesystem::path &path, const std::string &sql) {
  sqlite3 *db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char *error = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  const std::string message = error != nullptr ? error : "";
  sqlite3_free(error);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << message;
}

// A tcjit database with one problem, one binary and one result.
void make_database(const std::filesystem::path &path) {
  KernelsDb db = KernelsDb::open(path);
  const ProblemRecord problem = sample_problem(1);
  db.put_problem(problem);
  db.put_binary(sample_binary(problem, 64));
  db.put_result(sample_result(problem, 64, 5.0));
}

// The DbError that `body` throws (fails the test when it throws none).
DbError error_of(const std::function<void()> &body) {
  try {
    body();
  } catch (const DbError &error) {
    return error;
  }
  ADD_FAILURE() << "no DbError";
  return DbError(DbErrorKind::sqlite, "", "", "");
}

const char *const kDeleteKernels = "CREATE TRIGGER evil AFTER INSERT ON results BEGIN "
                                   "DELETE FROM binaries; DELETE FROM dispatch_tables; END";
const char *const kPoisonKernels =
    "CREATE TRIGGER poison AFTER INSERT ON binaries BEGIN "
    "UPDATE binaries SET cubin = x'00', cubin_sha256 = 'x' WHERE id = NEW.id; END";
const char *const kEndlessInsert =
    "CREATE TRIGGER slow BEFORE INSERT ON results BEGIN SELECT count(*) FROM (WITH RECURSIVE "
    "c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c); END";

struct Planted {
  const char *sql;
  std::string named; // what the error and `db check` say
};

const std::vector<Planted> &planted_objects() {
  static const std::vector<Planted> all = {
      {kDeleteKernels, "trigger 'evil' on table 'results' was not created by tcjit"},
      {kPoisonKernels, "trigger 'poison' on table 'binaries' was not created by tcjit"},
      {kEndlessInsert, "trigger 'slow' on table 'results' was not created by tcjit"},
      {"CREATE VIEW best AS SELECT * FROM results", "view 'best' was not created by tcjit"},
      {"CREATE INDEX extra ON results(device)",
       "index 'extra' on table 'results' was not created by tcjit"},
      {"CREATE TABLE notes (x)", "table 'notes' was not created by tcjit"},
      {"CREATE VIRTUAL TABLE search USING fts5(x)",
       "virtual table 'search' was not created by tcjit"},
      // tcjit's own index, defined on another column.
      {"DROP INDEX results_by_age; CREATE INDEX results_by_age ON results(device)",
       "index 'results_by_age' on table 'results' was not created by tcjit: its definition "
       "differs from schema 6's"},
  };
  return all;
}

TEST(ForeignSchema, EveryOpenRefusesAndNamesAnObjectTcjitDidNotCreate) {
  for (const Planted &planted : planted_objects()) {
    TempDir dir;
    const auto path = dir.file("kernels.db");
    make_database(path);
    plain_sqlite(path, planted.sql);
    for (const bool ro : {false, true}) {
      const DbError error =
          error_of([&] { KernelsDb::open(path, ro ? read_only() : OpenOptions{}); });
      EXPECT_EQ(error.kind(), DbErrorKind::corrupt) << planted.sql;
      EXPECT_TRUE(contains(error.problem(), planted.named)) << error.what();
      EXPECT_TRUE(contains(error.how_to_fix(), "move the file away")) << error.what();
      EXPECT_TRUE(contains(error.where(), path.string())) << error.what();
    }
    // `db check` lists it as a finding.
    const CheckReport report = KernelsDb::check(path, true);
    EXPECT_FALSE(report.ok) << planted.sql;
    EXPECT_EQ(std::count(report.problems.begin(), report.problems.end(), planted.named), 1)
        << planted.sql << ": " << ::testing::PrintToString(report.problems);
    EXPECT_EQ(report.binaries_checked, 1) << planted.sql; // the rows are still checked
    EXPECT_TRUE(contains(report.recovery, "drop the objects tcjit did not create")) << planted.sql;
  }
}

TEST(ForeignSchema, TheFixDropsTheObjectAndTheFileOpensAgain) {
  TempDir dir;
  const auto path = dir.file("kernels.db");
  make_database(path);
  plain_sqlite(path, kDeleteKernels);
  const DbError error = error_of([&] { KernelsDb::open(path); });
  EXPECT_TRUE(contains(error.how_to_fix(), "DROP TRIGGER \"evil\"")) << error.what();
  plain_sqlite(path, "DROP TRIGGER evil");
  KernelsDb db = KernelsDb::open(path);
  EXPECT_EQ(db.stats().binaries, 1);
  EXPECT_TRUE(KernelsDb::check(path, true).ok);
}

TEST(ForeignSchema, AnOlderSchemaWithATriggerIsRefusedBeforeItIsMigrated) {
  TempDir dir;
  const auto path = dir.file("old.db");
  {
    Connection raw = Connection::open(path);
    migrate_to(raw, 2);
  }
  plain_sqlite(path, "CREATE TRIGGER evil AFTER INSERT ON results BEGIN DELETE FROM binaries; END");
  const DbError error = error_of([&] { KernelsDb::open(path); });
  EXPECT_EQ(error.kind(), DbErrorKind::corrupt);
  EXPECT_TRUE(contains(error.problem(), "trigger 'evil' on table 'results' was not created by "
                                        "tcjit"))
      << error.what();
  Connection raw = Connection::open(path, read_only());
  EXPECT_EQ(read_schema_version(raw), 2);
}

// The belt and braces: a connection that skipped the check (a raw Connection) still never runs a
// stored trigger or view. A progress handler stops a runaway statement, so that a connection
// that did run the endless trigger fails instead of hanging.
TEST(ForeignSchema, AHardenedConnectionNeverRunsAStoredTriggerOrView) {
  TempDir dir;
  const auto path = dir.file("kernels.db");
  make_database(path);
  plain_sqlite(path, std::string(kDeleteKernels) + "; " + kPoisonKernels + "; " + kEndlessInsert +
                         "; CREATE VIEW best AS SELECT * FROM results");
  Connection raw = Connection::open(path);
  int64_t steps = 0;
  sqlite3_progress_handler(
      raw.handle(), 1000,
      [](void *count) { return ++*static_cast<int64_t *>(count) > 100000 ? 1 : 0; }, &steps);
  raw.exec("INSERT INTO results (problem_id, config_json, arch, status, provenance, "
           "tuner_version, measured_ms, content_sha256) VALUES (1, '{}', 'sm_80', 'ok', "
           "'measured', 't', 1, 'other')");
  raw.exec("INSERT INTO binaries (kernel_identity, arch, toolkit_version, compiler_version, ptx, "
           "cubin, cubin_sha256, created_ms) SELECT 'other', arch, toolkit_version, "
           "compiler_version, ptx, cubin, cubin_sha256, 1 FROM binaries");
  EXPECT_LT(steps, 100);
  EXPECT_EQ(query_int64(raw, "SELECT COUNT(*) FROM binaries"), 2);
  EXPECT_EQ(query_int64(raw, "SELECT COUNT(*) FROM binaries WHERE cubin = x'00'"), 0);
  EXPECT_THROW(raw.prepare("SELECT * FROM best"), DbError);
  Connection reader = Connection::open(path, read_only());
  EXPECT_THROW(reader.prepare("SELECT * FROM best"), DbError);
  for (Connection *connection : {&raw, &reader}) {
    const bool ro = connection == &reader;
    for (const auto &[option, expected] :
         std::vector<std::pair<int, int>>{{SQLITE_DBCONFIG_DEFENSIVE, 1},
                                          {SQLITE_DBCONFIG_TRUSTED_SCHEMA, ro ? 0 : 1},
                                          {SQLITE_DBCONFIG_ENABLE_TRIGGER, 0},
                                          {SQLITE_DBCONFIG_ENABLE_VIEW, 0}}) {
      int value = -1;
      ASSERT_EQ(sqlite3_db_config(connection->handle(), option, -1, &value), SQLITE_OK);
      EXPECT_EQ(value, expected) << option << (ro ? " read-only" : " writable");
    }
  }
}

TEST(ForeignSchema, ASchemaOfEveryVersionHasNoForeignObjects) {
  for (int version = 1; version <= kSchemaVersion; ++version) {
    Connection memory = Connection::open(":memory:");
    migrate_to(memory, version);
    EXPECT_TRUE(foreign_schema_objects(memory, version).empty()) << version;
    EXPECT_TRUE(diagnose_schema(memory).empty()) << version;
  }
}

// `merge` reads its source through a read-only connection into memory: an old schema is migrated
// in the copy only, and a source with a trigger is refused; both files stay byte for byte (and
// no -wal/-shm file appears next to them).
TEST(MergeSource, IsNeverWrittenMigratedOrCopiedWithItsSchemaObjects) {
  TempDir dir;
  const auto old = dir.file("old.db");
  {
    Connection raw = Connection::open(old);
    migrate_to(raw, 1);
    raw.exec("INSERT INTO problems (key_text, key_hash, op, dtype, arch, spec_text, created_ms) "
             "VALUES ('gemm:old', 7, 'gemm', 'f16', 'sm_80', 'gemm', 1)");
  }
  const auto trapped = dir.file("trapped.db");
  make_database(trapped);
  plain_sqlite(trapped, kDeleteKernels);
  const auto target = dir.file("kernels.db");
  make_database(target);
  for (const auto &source : {old, trapped}) {
    const std::string before = file_bytes(source);
    KernelsDb db = KernelsDb::open(target);
    if (source == old) {
      EXPECT_EQ(db.merge(source).problems, 1);
    } else {
      const DbError error = error_of([&] { db.merge(source); });
      EXPECT_EQ(error.kind(), DbErrorKind::corrupt);
      EXPECT_TRUE(contains(error.problem(), "trigger 'evil' on table 'results' was not created "
                                            "by tcjit"))
          << error.what();
    }
    EXPECT_EQ(file_bytes(source), before) << source;
    EXPECT_FALSE(std::filesystem::exists(source.string() + "-wal")) << source;
    EXPECT_FALSE(std::filesystem::exists(source.string() + "-shm")) << source;
  }
  Connection raw = Connection::open(old, read_only());
  EXPECT_EQ(read_schema_version(raw), 1);
  EXPECT_TRUE(KernelsDb::check(target, true).ok);
}

TEST(NotADatabase, IsRefusedAsNotATcjitKernelDatabaseAndLeftAlone) {
  TempDir dir;
  const auto workload = dir.file("workload.tcjit");
  std::ofstream(workload) << "gemm m=1024 n=1024 k=1024 a=f16 b=f16\n";
  const auto random = dir.file("random.db");
  {
    std::ofstream out(random, std::ios::binary);
    for (int i = 0; i < 8192; ++i)
      out.put(static_cast<char>((i * 2654435761u) >> 13));
  }
  // A link to (a copy of) /etc/passwd: the copy, so that nothing here can write the real one.
  std::filesystem::copy_file("/etc/passwd", dir.file("passwd"));
  const auto link = dir.file("passwd.db");
  std::filesystem::create_symlink(dir.file("passwd"), link);
  for (const auto &path : {workload, random, link}) {
    const std::string before = file_bytes(path);
    for (const bool ro : {false, true}) {
      const DbError error =
          error_of([&] { KernelsDb::open(path, ro ? read_only() : OpenOptions{}); });
      EXPECT_EQ(error.kind(), DbErrorKind::invalid_argument) << error.what();
      EXPECT_TRUE(contains(error.problem(), "not a tcjit kernel database")) << error.what();
      EXPECT_FALSE(contains(error.what(), "delete the file")) << error.what();
    }
    const DbError check = error_of([&] { KernelsDb::check(path, true); });
    EXPECT_EQ(check.kind(), DbErrorKind::invalid_argument) << check.what();
    KernelsDb target = KernelsDb::open(dir.file("target.db"));
    const DbError merge = error_of([&] { target.merge(path); });
    EXPECT_EQ(merge.kind(), DbErrorKind::invalid_argument) << merge.what();
    EXPECT_TRUE(contains(merge.problem(), "not a tcjit kernel database")) << merge.what();
    EXPECT_EQ(file_bytes(path), before) << path;
    EXPECT_FALSE(std::filesystem::exists(path.string() + "-wal")) << path;
  }
}

// A FIFO, a device, a socket and a directory are refused by stat() before any open. The test
// holds the FIFO open for reading and writing, with bytes in it, so that a build that opens it
// anyway fails this test instead of blocking.
TEST(NotARegularFile, IsRefusedBeforeOpening) {
  TempDir dir;
  const auto fifo = dir.file("fifo.db");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int held = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK);
  ASSERT_GE(held, 0);
  ASSERT_EQ(::write(held, "SQLite format 3", 15), 15);
  const auto socket_path = dir.file("socket.db");
  const int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, socket_path.c_str(), sizeof(address.sun_path) - 1);
  ASSERT_EQ(::bind(sock, reinterpret_cast<sockaddr *>(&address), sizeof(address)), 0);
  const std::vector<std::pair<std::filesystem::path, std::string>> cases = {
      {fifo, "a FIFO"},
      {"/dev/zero", "a character device"},
      {socket_path, "a socket"},
      {dir.path(), "a directory"}};
  for (const auto &[path, kind] : cases) {
    for (const bool ro : {false, true}) {
      const DbError error =
          error_of([&] { KernelsDb::open(path, ro ? read_only() : OpenOptions{}); });
      EXPECT_EQ(error.kind(), DbErrorKind::invalid_argument) << error.what();
      EXPECT_TRUE(contains(error.problem(), "is " + kind + ", not a regular file")) << error.what();
    }
    EXPECT_EQ(error_of([&] { KernelsDb::check(path, false); }).kind(),
              DbErrorKind::invalid_argument);
    KernelsDb target = KernelsDb::open(dir.file("target.db"));
    EXPECT_TRUE(contains(error_of([&] { target.merge(path); }).problem(), "not a regular file"));
  }
  ::close(sock);
  ::close(held);
}

// Runs `body` in a child process whose mount namespace has `directory` bind-mounted read-only
// (an EROFS file system). Returns false when this machine does not allow that.
bool in_read_only_mount(const std::filesystem::path &directory,
                        const std::function<std::string()> &body, std::string &result) {
  int out[2];
  if (::pipe(out) != 0)
    return false;
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(out[0]);
    const uid_t uid = ::geteuid();
    const gid_t gid = ::getegid();
    if (::unshare(CLONE_NEWNS) != 0) {
      if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
        ::_exit(77);
      std::ofstream("/proc/self/setgroups") << "deny";
      std::ofstream("/proc/self/uid_map") << "0 " << uid << " 1";
      std::ofstream("/proc/self/gid_map") << "0 " << gid << " 1";
    }
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ::mount(directory.c_str(), directory.c_str(), nullptr, MS_BIND, nullptr) != 0 ||
        ::mount(nullptr, directory.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) !=
            0)
      ::_exit(77);
    const std::string text = body();
    [[maybe_unused]] const ssize_t written = ::write(out[1], text.data(), text.size());
    ::_exit(0);
  }
  ::close(out[1]);
  char buffer[4096];
  for (ssize_t n; (n = ::read(out[0], buffer, sizeof buffer)) > 0;)
    result.append(buffer, static_cast<size_t>(n));
  ::close(out[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TEST(ReadOnlyLocation, AWritingOpenSaysReadOnlyAndNamesThePath) {
  TempDir dir;
  const auto mounted = dir.file("ro");
  std::filesystem::create_directories(mounted);
  const auto existing = mounted / "kernels.db";
  make_database(existing);
  const auto missing = mounted / "new.db";
  std::string result;
  const bool ran = in_read_only_mount(
      mounted,
      [&] {
        std::string text;
        for (const auto &path : {existing, missing}) {
          try {
            KernelsDb::open(path);
            text += "opened " + path.string() + "\n";
          } catch (const DbError &error) {
            text += error.what() + std::string("\n");
          }
        }
        try { // a read-only command still works there
          KernelsDb db = KernelsDb::open(existing, read_only());
          text += "read-only open: " + std::to_string(db.stats().binaries) + " binaries\n";
        } catch (const DbError &error) {
          text += std::string("read-only open failed: ") + error.what() + "\n";
        }
        return text;
      },
      result);
  if (!ran)
    GTEST_SKIP() << "no read-only bind mount possible here (needs mount namespaces)";
  EXPECT_TRUE(contains(result, "read-only file system: cannot write the database '" +
                                   existing.string() + "'"))
      << result;
  EXPECT_TRUE(contains(result, "read-only file system: cannot write the database '" +
                                   missing.string() + "'"))
      << result;
  EXPECT_FALSE(contains(result, "No such file or directory")) << result;
  EXPECT_TRUE(contains(result, "read-only open: 1 binaries")) << result;
}

TEST(ReadOnlyLocation, AWritingOpenInAReadOnlyDirectorySaysSo) {
  if (::geteuid() == 0)
    GTEST_SKIP() << "root may write any directory";
  TempDir dir;
  const auto locked = dir.file("locked");
  std::filesystem::create_directories(locked);
  make_database(locked / "kernels.db");
  ::chmod(locked.c_str(), 0555);
  const DbError error = error_of([&] { KernelsDb::open(locked / "new.db"); });
  ::chmod(locked.c_str(), 0755);
  EXPECT_EQ(error.kind(), DbErrorKind::io);
  EXPECT_TRUE(contains(error.problem(), "read-only directory '" + locked.string() + "'"))
      << error.what();
}

} // namespace
} // namespace tcjit::kernels_db
