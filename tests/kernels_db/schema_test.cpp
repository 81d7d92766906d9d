// Schema version, forward migration, refusal of newer databases, pragmas, default path.
#include "db_test_util.h"

#include "kernels_db/connection.h"
#include "kernels_db/default_path.h"
#include "kernels_db/error.h"
#include "kernels_db/kernels_db.h"
#include "kernels_db/schema.h"
#include "kernels_db/sha256.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

namespace tcjit::kernels_db {
namespace {

using testing::TempDir;

std::string file_digest(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return sha256_hex(bytes);
}

std::string query_text(Connection &connection, const char *sql) {
  Statement statement = connection.prepare(sql);
  return statement.step() ? statement.column_text(0) : std::string();
}

TEST(KernelsDbSchema, NewDatabaseHasCurrentVersionWalAndForeignKeys) {
  TempDir dir;
  const auto path = dir.file("sub/dir/kernels.db"); // parent directories are created
  KernelsDb db = KernelsDb::open(path);
  Connection connection = Connection::open(path);
  EXPECT_EQ(read_schema_version(connection), kSchemaVersion);
  EXPECT_EQ(query_text(connection, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(query_int64(connection, "PRAGMA foreign_keys"), 1);
  EXPECT_EQ(query_int64(connection, "SELECT COUNT(*) FROM sqlite_master WHERE name IN "
                                    "('problems', 'binaries', 'results')"),
            3);
}

TEST(KernelsDbSchema, MigratesAnOlderDatabaseForwardAndKeepsItsRows) {
  TempDir dir;
  const auto path = dir.file("old.db");
  {
    Connection connection = Connection::open(path);
    migrate_to(connection, 1);
    EXPECT_EQ(read_schema_version(connection), 1);
    connection.exec("INSERT INTO problems (key_text, key_hash, op, dtype, arch, spec_text, "
                    "shape_json, created_ms) VALUES ('k', 1, 'gemm', 'f16', 'sm_80', 's', "
                    "'{\"m\":1}', 1)");
    EXPECT_EQ(query_int64(connection, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' "
                                      "AND name = 'problems_by_hash'"),
              0);
  }
  KernelsDb db = KernelsDb::open(path);
  Connection connection = Connection::open(path);
  EXPECT_EQ(read_schema_version(connection), kSchemaVersion);
  EXPECT_EQ(query_int64(connection, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' "
                                    "AND name = 'problems_by_hash'"),
            1);
  ASSERT_TRUE(db.find_problem("k").has_value());
  // Opening again is a no-op.
  KernelsDb again = KernelsDb::open(path);
  EXPECT_EQ(read_schema_version(connection), kSchemaVersion);
}

TEST(KernelsDbSchema, RefusesANewerDatabaseWithoutTouchingIt) {
  TempDir dir;
  const auto path = dir.file("newer.db");
  {
    Connection connection = Connection::open(path);
    connection.exec("CREATE TABLE future (x); PRAGMA user_version = 99");
  }
  const std::string before = file_digest(path);
  try {
    KernelsDb::open(path);
    FAIL() << "a newer database was opened";
  } catch (const DbError &error) {
    EXPECT_EQ(error.kind(), DbErrorKind::newer_schema);
    const std::string expected = "created by a newer tcjit (schema 99 > " +
                                 std::to_string(kSchemaVersion) +
                                 "); upgrade tcjit or use another --db";
    EXPECT_NE(std::string(error.what()).find(expected), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find(path.string()), std::string::npos);
  }
  EXPECT_EQ(file_digest(path), before);
  EXPECT_FALSE(std::filesystem::exists(path.string() + "-wal"));
  Connection connection = Connection::open(path);
  EXPECT_EQ(read_schema_version(connection), 99);
  EXPECT_EQ(query_text(connection, "PRAGMA journal_mode"), "delete");
}

TEST(KernelsDbSchema, ReadOnlyOpenRefusesToMigrate) {
  TempDir dir;
  const auto path = dir.file("old.db");
  {
    Connection connection = Connection::open(path);
    migrate_to(connection, 1);
  }
  OpenOptions read_only;
  read_only.read_only = true;
  EXPECT_THROW(KernelsDb::open(path, read_only), DbError);
  KernelsDb::open(path); // migrates
  KernelsDb reader = KernelsDb::open(path, read_only);
  EXPECT_FALSE(reader.find_problem("none"));
  EXPECT_THROW(reader.put_problem(testing::sample_problem(0)), DbError);
}

TEST(KernelsDbSchema, MissingFileIsNotCreatedWhenAskedNotTo) {
  TempDir dir;
  OpenOptions options;
  options.create_if_missing = false;
  try {
    KernelsDb::open(dir.file("missing.db"), options);
    FAIL();
  } catch (const DbError &error) {
    EXPECT_EQ(error.kind(), DbErrorKind::not_found);
    EXPECT_NE(error.how_to_fix().find("--db"), std::string::npos);
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("missing.db")));
}

TEST(KernelsDbSchema, UncreatableDirectoryGivesAClearError) {
  TempDir dir;
  std::ofstream(dir.file("plain_file")) << "x";
  try {
    KernelsDb::open(dir.file("plain_file/sub/kernels.db"));
    FAIL();
  } catch (const DbError &error) {
    EXPECT_EQ(error.kind(), DbErrorKind::io);
    EXPECT_NE(std::string(error.what()).find("cannot create directory"), std::string::npos);
  }
}

TEST(KernelsDbSchema, DefaultPathFollowsTheEnvironment) {
  const char *saved_db = std::getenv("TCJIT_DB");
  const char *saved_xdg = std::getenv("XDG_CACHE_HOME");
  const char *saved_home = std::getenv("HOME");
  const std::string db = saved_db ? saved_db : "", xdg = saved_xdg ? saved_xdg : "",
                    home = saved_home ? saved_home : "";
  ::setenv("TCJIT_DB", "/x/explicit.db", 1);
  EXPECT_EQ(default_db_path(), "/x/explicit.db");
  ::unsetenv("TCJIT_DB");
  ::setenv("XDG_CACHE_HOME", "/x/cache", 1);
  EXPECT_EQ(default_db_path(), "/x/cache/tcjit/kernels.db");
  ::unsetenv("XDG_CACHE_HOME");
  ::setenv("HOME", "/x/home", 1);
  EXPECT_EQ(default_db_path(), "/x/home/.cache/tcjit/kernels.db");
  ::unsetenv("HOME");
  EXPECT_THROW(default_db_path(), DbError);
  auto restore = [](const char *name, const char *saved, const std::string &value) {
    if (saved)
      ::setenv(name, value.c_str(), 1);
    else
      ::unsetenv(name);
  };
  restore("TCJIT_DB", saved_db, db);
  restore("XDG_CACHE_HOME", saved_xdg, xdg);
  restore("HOME", saved_home, home);
}

} // namespace
} // namespace tcjit::kernels_db
