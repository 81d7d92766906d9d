// A fixture for runtime tests on a database of their own: a fresh directory per test holding the
// database (kernels.db) and the user's MAC key (TCJIT_KEY_FILE), runtime options on the emulator,
// and raw SQL on the file (to plant or count rows behind tcjit's back).
#pragma once

#include "tcjit/tcjit.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>

namespace tcjit::testing {

class DbRuntimeTest : public ::testing::Test {
protected:
  // `prefix` names the test's directory under the temporary folder (with the pid and test name).
  explicit DbRuntimeTest(std::string prefix) : prefix_(std::move(prefix)) {}
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           (prefix_ + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    ::setenv("TCJIT_KEY_FILE", (dir_ / "user.key").c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("TCJIT_KEY_FILE");
    std::filesystem::remove_all(dir_);
  }
  tcjit::RuntimeOptions options() const {
    tcjit::RuntimeOptions o;
    o.db_path = (dir_ / "kernels.db").string();
    o.device = "emu";
    return o;
  }
  // Runs `statement` on the database file; fails the test when SQLite refuses it.
  void sql(const std::string &statement) const {
    sqlite3 *raw = nullptr;
    ASSERT_EQ(sqlite3_open((dir_ / "kernels.db").c_str(), &raw), SQLITE_OK);
    char *error = nullptr;
    const int rc = sqlite3_exec(raw, statement.c_str(), nullptr, nullptr, &error);
    const std::string message = error ? error : "";
    sqlite3_free(error);
    sqlite3_close(raw);
    ASSERT_EQ(rc, SQLITE_OK) << message;
  }
  // The rows of `table` in the database file (-1 when it cannot be read).
  int64_t count(const std::string &table) const {
    sqlite3 *raw = nullptr;
    EXPECT_EQ(sqlite3_open((dir_ / "kernels.db").c_str(), &raw), SQLITE_OK);
    sqlite3_stmt *statement = nullptr;
    EXPECT_EQ(
        sqlite3_prepare_v2(raw, ("SELECT COUNT(*) FROM " + table).c_str(), -1, &statement, nullptr),
        SQLITE_OK);
    const int64_t n =
        sqlite3_step(statement) == SQLITE_ROW ? sqlite3_column_int64(statement, 0) : -1;
    sqlite3_finalize(statement);
    sqlite3_close(raw);
    return n;
  }

  std::string prefix_;
  std::filesystem::path dir_;
};

} // namespace tcjit::testing
