// The kernel database and doctor APIs (include/tcjit/db.hpp, include/tcjit/doctor.hpp): what
// `tcjit db` and `tcjit doctor` do, done by an application on a database the runtime filled. Only
// public headers, as an embedding application.
#include "tcjit/db.hpp"
#include "tcjit/doctor.hpp"
#include "tcjit/tcjit.hpp"
#include "tests/api/expect_error.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <sstream>
#include <string>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;

using tcjit::testing::expect_error;

class DbApi : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tcjit_db_api_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    db_ = (dir_ / "kernels.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A problem with a binary, as the runtime stores it on a miss.
  std::string store_one_kernel() {
    tcjit::RuntimeOptions options;
    options.device = "emu";
    options.db_path = db_;
    tcjit::Runtime rt(options);
    return rt.prepare("gemm m=64 n=48 k=64 a=f16:row b=f16:col c=f16:row acc=f32").key_text();
  }

  fs::path dir_;
  std::string db_;
};

TEST_F(DbApi, ListShowBinaryAndStatsReadWhatTheRuntimeStored) {
  const std::string key = store_one_kernel();
  tcjit::DbListRequest list;
  list.db_path = db_;
  const std::vector<tcjit::DbProblemSummary> problems = tcjit::db_list(list);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].problem.key_text, key);
  EXPECT_EQ(problems[0].problem.key_hash.size(), 16u);
  EXPECT_EQ(problems[0].binaries, 1);
  EXPECT_EQ(nlohmann::json::parse(problems[0].problem.json)["key"], key);
  list.op = "conv2d";
  EXPECT_TRUE(tcjit::db_list(list).empty());

  // by its hash, with the versions the runtime stores binaries with: current
  const tcjit::DbProblemDetails details =
      tcjit::db_show({db_, problems[0].problem.key_hash, std::nullopt});
  EXPECT_EQ(details.problem.key_text, key);
  ASSERT_EQ(details.binaries.size(), 1u);
  EXPECT_FALSE(details.binaries[0].stale);
  EXPECT_EQ(nlohmann::json::parse(details.binaries[0].json)["stale"], false);
  // other versions make it stale
  const tcjit::DbProblemDetails other = tcjit::db_show({db_, key, tcjit::DbVersions{"1.0", "0"}});
  EXPECT_TRUE(other.binaries.at(0).stale);

  tcjit::DbBinaryRequest binary;
  binary.db_path = db_;
  binary.key = key;
  const tcjit::DbBinaryFound found = tcjit::db_binary(binary);
  EXPECT_NE(found.ptx.find(".entry"), std::string::npos);
  EXPECT_EQ(found.arch, details.problem.arch);

  const tcjit::DbStats stats = tcjit::db_stats({db_, std::nullopt});
  EXPECT_EQ(stats.problems, 1);
  EXPECT_EQ(stats.binaries, 1);
  EXPECT_EQ(stats.stale_binaries, 0);
  EXPECT_EQ(stats.current.compiler_version, tcjit::current_db_versions().compiler_version);
  EXPECT_TRUE(tcjit::db_check(db_, false).ok);
}

TEST_F(DbApi, ExportImportAndPruneMoveTheRows) {
  store_one_kernel();
  std::stringstream jsonl;
  const tcjit::DbTransferCounts exported = tcjit::db_export({db_, ""}, jsonl);
  EXPECT_EQ(exported.problems, 1);
  EXPECT_EQ(exported.binaries, 1);
  const std::string copy = (dir_ / "copy.db").string();
  const tcjit::DbTransferCounts imported = tcjit::db_import({copy, "-"}, jsonl);
  EXPECT_EQ(imported.problems, 1);
  EXPECT_EQ(imported.binaries, 1);
  EXPECT_TRUE(imported.rejected.empty());
  // every binary is stale for versions nobody stores
  const tcjit::DbPruneReport pruned =
      tcjit::db_prune({copy, true, "", tcjit::DbVersions{"x", "y"}});
  EXPECT_EQ(pruned.binaries_removed, 1);
  EXPECT_EQ(tcjit::db_stats({copy, std::nullopt}).binaries, 0);
}

TEST_F(DbApi, BadRequestsAndMissingRowsAreErrorsOfTheirKind) {
  store_one_kernel();
  tcjit::DbListRequest negative;
  negative.db_path = db_;
  negative.limit = -1;
  expect_error([&] { tcjit::db_list(negative); }, tcjit::ErrorCode::invalid_argument,
               "--limit -1 is negative");
  tcjit::DbListRequest bad_where;
  bad_where.db_path = db_;
  bad_where.where = "m >=";
  expect_error([&] { tcjit::db_list(bad_where); }, tcjit::ErrorCode::invalid_argument, "");
  expect_error(
      [&] {
        tcjit::db_show({db_, "not-a-key", std::nullopt});
      },
      tcjit::ErrorCode::not_found, "no problem with key or hash 'not-a-key'");
  // Text that starts with an operation is a spec: one that does not parse is the spec's error.
  expect_error(
      [&] {
        tcjit::db_show({db_, "gemm m=1", std::nullopt});
      },
      tcjit::ErrorCode::bad_spec, "");
  expect_error(
      [&] {
        tcjit::db_prune({db_, false, "", std::nullopt});
      },
      tcjit::ErrorCode::invalid_argument, "nothing to prune");
  expect_error(
      [&] {
        tcjit::db_prune({db_, false, "soon", std::nullopt});
      },
      tcjit::ErrorCode::invalid_argument, "'soon' is not an age");
  tcjit::DbBinaryRequest bad_config;
  bad_config.db_path = db_;
  tcjit::DbListRequest all;
  all.db_path = db_;
  bad_config.key = tcjit::db_list(all).at(0).problem.key_text;
  bad_config.config = "64x64";
  expect_error([&] { tcjit::db_binary(bad_config); }, tcjit::ErrorCode::invalid_argument,
               "not a tile config");
  // reading never creates a database
  expect_error(
      [&] {
        tcjit::db_stats({(dir_ / "none.db").string(), std::nullopt});
      },
      tcjit::ErrorCode::not_found, "");
  EXPECT_FALSE(fs::exists(dir_ / "none.db"));
}

TEST(DoctorApi, ReportsTheToolkitAndADatabaseNotCreatedYet) {
  const std::string path = (fs::temp_directory_path() / "tcjit_doctor_api_none.db").string();
  fs::remove(path);
  const tcjit::DoctorReport report = tcjit::doctor(path);
  EXPECT_FALSE(report.compiler_version.empty());
  EXPECT_EQ(report.database.path, path);
  EXPECT_FALSE(report.database.exists);
  EXPECT_TRUE(report.database.error.empty());
  EXPECT_FALSE(fs::exists(path));
  // each toolkit piece is found (with where) or says what was tried
  for (const tcjit::DoctorToolkitPiece *piece :
       {&report.ptxas, &report.libdevice, &report.nvjitlink, &report.nvrtc})
    EXPECT_TRUE(piece->found() ? !piece->source.empty() : !piece->missing.empty());
  EXPECT_EQ(report.driver_found, report.driver_problem.empty());
}

} // namespace
