// A fresh process (a new Runtime on the same database) serves a new size of a stored kernel from
// the database, without compiling: binaries are stored once per kernel identity (kernels_db schema
// 5), which is the same for every size of a kernel.
#include "tcjit/tcjit.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>

namespace {

constexpr const char *kM200 = "gemm m=200 n=64 k=64 a=f16:row b=f16:col c=f16:row acc=f32";
constexpr const char *kM264 = "gemm m=264 n=64 k=64 a=f16:row b=f16:col c=f16:row acc=f32";

class SharedKernelDb : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tcjit_api_shared_" + std::to_string(::getpid()) + "_" +
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
  int64_t count(const std::string &table) const {
    sqlite3 *raw = nullptr;
    EXPECT_EQ(sqlite3_open((dir_ / "kernels.db").c_str(), &raw), SQLITE_OK);
    sqlite3_stmt *statement = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(raw, ("SELECT COUNT(*) FROM " + table).c_str(), -1, &statement,
                                 nullptr),
              SQLITE_OK);
    const int64_t n = sqlite3_step(statement) == SQLITE_ROW ? sqlite3_column_int64(statement, 0)
                                                            : -1;
    sqlite3_finalize(statement);
    sqlite3_close(raw);
    return n;
  }
  std::filesystem::path dir_;
};

TEST_F(SharedKernelDb, AFreshRuntimeServesANewSizeOfAStoredKernelWithoutCompiling) {
  std::string config;
  {
    tcjit::Runtime first(options());
    const tcjit::Operation op = first.prepare(kM200);
    EXPECT_EQ(op.origin(), tcjit::Origin::compiled_now);
    config = op.config();
  }
  EXPECT_EQ(count("binaries"), 1);
  tcjit::Runtime second(options()); // another process: nothing in memory
  const tcjit::Operation op = second.prepare(kM264);
  ASSERT_EQ(op.config(), config) << "the default chooser picked another tile for m=264";
  EXPECT_EQ(op.origin(), tcjit::Origin::database); // the code generator was not called
  EXPECT_EQ(count("binaries"), 1);                 // one binary ...
  EXPECT_EQ(count("problem_binaries"), 2);         // ... that both problems use
  tcjit::Runtime third(options());
  EXPECT_EQ(third.prepare(kM264).origin(), tcjit::Origin::database);
}

} // namespace
