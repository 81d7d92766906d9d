// Decisions are data, judged, end to end: what `tcjit db show` calls the best config is exactly
// the config a run uses (tuner::chosen_configs, through tuner::decide), after merging two honest
// shard databases; an evil dispatch table (year 9999, 'tcjit-tuner 999 evil') and results of
// -5, 0 or inf microseconds never decide, and `db check` calls them implausible.
#include "tcjit/db.hpp"
#include "tcjit/tcjit.hpp"

#include "compiler/dsl/parser.h"
#include "compiler/spec/problem_key.h"
#include "engine/kernel_records.h"
#include "kernels_db/kernels_db.h"
#include "tuner/chosen_configs.h"
#include "tuner/decision.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <string>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
namespace kdb = tcjit::kernels_db;
using tcjit::codegen::TileConfig;

constexpr const char *kSpec = "gemm m=128 n=128 k=64 a=f16:row b=f16:col c=f16:row acc=f32";
const TileConfig kS2{32, 32, 32, 16, 16, 2, 1, 1, 8, 8};
const TileConfig kS3{32, 32, 32, 16, 16, 3, 1, 1, 8, 8};

class Decisions : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tcjit_decision_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    spec_ = tcjit::parse_spec(kSpec).entries.front().spec;
    key_ = tcjit::make_problem_key(spec_, "sm_80", false);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string file(const std::string &name) const { return (dir_ / name).string(); }

  // What a tune on a GPU stores: every measurement, and the winner's one-bucket dispatch table.
  void store_tune(const std::string &db_path, const TileConfig &config, double us,
                  int64_t created_ms, const std::string &tuner = tuner_version()) {
    auto db = kdb::KernelsDb::open(db_path);
    db.put_problem(tcjit::engine::problem_record(spec_, key_, "sm_80"));
    kdb::ResultRecord result;
    result.problem_key = key_.text;
    result.config_json = tcjit::engine::config_json(config);
    result.arch = "sm_80";
    result.timing = kdb::Timing{us, us * 0.99, us * 1.01, 0.01};
    result.provenance.device = "NVIDIA A100-SXM4-80GB";
    result.tuner_version = tuner;
    result.measured_ms = created_ms;
    db.put_result(result);
    kdb::DispatchTable table;
    table.problem_key = key_.text;
    table.arch = "sm_80";
    table.tuner_version = tuner;
    table.created_ms = created_ms;
    table.entries.push_back(
        {"{}", tcjit::engine::config_json(config), us, kdb::ProvenanceKind::measured});
    db.put_dispatch_table(table);
  }

  static std::string tuner_version() { return "tcjit-tuner 1 / 0.1.0 / cuda"; }

  // The configs a run tries, best first, and its note.
  std::vector<TileConfig> run_choice(const std::string &db_path, std::string &note) {
    auto db = kdb::KernelsDb::open(db_path);
    tcjit::engine::KernelRequest request;
    request.arch = "sm_80";
    return tcjit::tuner::chosen_configs(spec_, key_, request, &db, note);
  }

  fs::path dir_;
  tcjit::OpSpec spec_;
  tcjit::ProblemKey key_;
};

// The issue's case: db show said best s2 (20.62 us) while the app got s3 (20.63 us, the newer).
TEST_F(Decisions, AfterMergingHonestShardsDbShowsBestIsWhatARunUses) {
  store_tune(file("shard0.db"), kS2, 20.62, 1700000000000);
  store_tune(file("shard1.db"), kS3, 20.63, 1700000100000);
  tcjit::db_merge({file("merged.db"), file("shard0.db")});
  tcjit::db_merge({file("merged.db"), file("shard1.db")});

  const tcjit::DbProblemDetails details = tcjit::db_show({file("merged.db"), key_.text, {}});
  ASSERT_EQ(details.decisions.size(), 1u);
  EXPECT_EQ(details.decisions[0].config_json, tcjit::engine::config_json(kS2));
  EXPECT_DOUBLE_EQ(details.decisions[0].time_us, 20.62);
  EXPECT_EQ(details.decisions[0].source, "dispatch table");

  std::string note;
  const std::vector<TileConfig> chosen = run_choice(file("merged.db"), note);
  ASSERT_FALSE(chosen.empty());
  EXPECT_EQ(tcjit::engine::config_json(chosen.front()), details.decisions[0].config_json);
  EXPECT_EQ(note, "tuned (measured)");
}

// The decided config is what runs: a stored kernel of another config (the one the app compiled
// with the default chooser before the shards were merged in, which is also one of the run's
// fallbacks) does not stand in for it under the note "tuned (measured)".
TEST_F(Decisions, TheDecidedConfigRunsNotAStoredKernelOfAnother) {
  TileConfig before_config;
  {
    auto db = kdb::KernelsDb::open(file("app.db"));
    tcjit::engine::KernelRequest request;
    request.arch = "sm_80";
    const tcjit::engine::ServedKernel before =
        tcjit::tuner::serve_kernel(spec_, key_, request, &db);
    ASSERT_TRUE(before.ok()) << before.errors.front();
    before_config = before.kernel.config;
  }
  const TileConfig decided = before_config == kS2 ? kS3 : kS2;
  store_tune(file("shard0.db"), decided, 20.62, 1700000000000);
  tcjit::db_merge({file("app.db"), file("shard0.db")});
  auto db = kdb::KernelsDb::open(file("app.db"));
  tcjit::engine::KernelRequest request;
  request.arch = "sm_80";
  std::string note;
  const std::vector<TileConfig> chosen = run_choice(file("app.db"), note);
  ASSERT_NE(std::find(chosen.begin(), chosen.end(), before_config), chosen.end())
      << "the stored kernel's config is not among the run's fallbacks: the test proves nothing";
  const tcjit::engine::ServedKernel served = tcjit::tuner::serve_kernel(spec_, key_, request, &db);
  ASSERT_TRUE(served.ok()) << served.errors.front();
  EXPECT_EQ(served.kernel.config, decided) << served.how;
  EXPECT_EQ(served.origin, tcjit::engine::KernelOrigin::compiled_now) << served.how;
  EXPECT_NE(served.how.find("tuned (measured)"), std::string::npos) << served.how;
}

// The issue's evil table, merged in or copied: it decides nothing (even after a retune stored an
// honest table) and `db check` reports it.
TEST_F(Decisions, AnEvilDispatchTableNeverDecides) {
  store_tune(file("evil.db"), kS3, 0.01, 253402300799000, "tcjit-tuner 999 evil");
  store_tune(file("mine.db"), kS2, 20.62, 1700000000000);
  const tcjit::DbTransferCounts merged = tcjit::db_merge({file("mine.db"), file("evil.db")});
  EXPECT_EQ(merged.dispatch_tables, 0);
  EXPECT_EQ(merged.dispatch_tables_rejected, 1);
  EXPECT_EQ(merged.results_added, 0); // its result is implausible too

  // A file copied whole holds it: ignored by the run and by `db show`, flagged by `db check`.
  store_tune(file("mine.db"), kS3, 0.01, 253402300799000, "tcjit-tuner 999 evil");
  std::string note;
  EXPECT_EQ(run_choice(file("mine.db"), note).front(), kS2);
  EXPECT_EQ(note, "tuned (measured)");
  const tcjit::DbProblemDetails details = tcjit::db_show({file("mine.db"), key_.text, {}});
  ASSERT_EQ(details.decisions.size(), 1u);
  EXPECT_EQ(details.decisions[0].config_json, tcjit::engine::config_json(kS2));
  const tcjit::DbCheckReport report = tcjit::db_check(file("mine.db"), true);
  EXPECT_FALSE(report.ok);
  ASSERT_EQ(report.implausible.size(), 2u); // the table and its result
  EXPECT_NE(report.implausible[1].find("tcjit-tuner 999 evil"), std::string::npos)
      << report.implausible[1];
}

// A result of -5, 0 or inf microseconds is not adopted as "tuned (measured)".
TEST_F(Decisions, ResultTimesOutOfRangeAreNotAdoptedByARun) {
  for (const double us : {-5.0, 0.0, std::numeric_limits<double>::infinity()}) {
    SCOPED_TRACE(us);
    const std::string path = file("times" + std::to_string(int(us > 1 ? 1 : us)) + ".db");
    {
      auto db = kdb::KernelsDb::open(path);
      db.put_problem(tcjit::engine::problem_record(spec_, key_, "sm_80"));
      kdb::ResultRecord result;
      result.problem_key = key_.text;
      result.config_json = tcjit::engine::config_json(kS3);
      result.arch = "sm_80";
      result.timing = kdb::Timing{us, us, us, 0};
      result.provenance.device = "NVIDIA A100-SXM4-80GB";
      result.tuner_version = tuner_version();
      db.put_result(result);
    }
    std::string note;
    run_choice(path, note);
    EXPECT_EQ(note.find("tuned"), std::string::npos) << note;
    const tcjit::DbProblemDetails details = tcjit::db_show({path, key_.text, {}});
    EXPECT_TRUE(details.decisions.empty());
    ASSERT_EQ(details.results.size(), 1u);
    EXPECT_NE(details.results[0].implausible.find("median_us"), std::string::npos);
    EXPECT_FALSE(tcjit::db_check(path, false).ok);
  }
}

// A ranged spec's dispatch table, looked up by tcjit::Runtime: the evil table (newer, covering
// every size with another config) is ignored, the honest one serves.
TEST_F(Decisions, TheRuntimesDispatchLookupIgnoresAnEvilTable) {
  const std::string text = "gemm m=1..256 n=64 k=64 a=f16:row b=f16:col c=f16:row acc=f32";
  const tcjit::OpSpec ranged = tcjit::parse_spec(text).entries.front().spec;
  const tcjit::ProblemKey key = tcjit::make_problem_key(ranged, "sm_80", false);
  const TileConfig small{32, 32, 32, 16, 16, 3, 1, 1, 8, 8};
  const TileConfig large{64, 64, 32, 32, 32, 3, 1, 1, 8, 8};
  {
    auto db = kdb::KernelsDb::open(file("k.db"));
    db.put_problem(tcjit::engine::problem_record(ranged, key, "sm_80"));
    kdb::DispatchTable table;
    table.problem_key = key.text;
    table.arch = "sm_80";
    table.tuner_version = "tcjit-tuner 1 / 0.1.0 / model";
    table.created_ms = 1700000000000;
    table.entries = {
        {R"({"m":[1,32]})", tcjit::engine::config_json(small), 1.0, kdb::ProvenanceKind::predicted},
        {R"({"m":[33,256]})", tcjit::engine::config_json(large), 2.0,
         kdb::ProvenanceKind::predicted}};
    db.put_dispatch_table(table);
    table.tuner_version = "tcjit-tuner 999 evil";
    table.created_ms = 253402300799000;
    table.entries = {
        {"{}", tcjit::engine::config_json(large), 0.001, kdb::ProvenanceKind::measured}};
    db.put_dispatch_table(table);
  }
  tcjit::RuntimeOptions options;
  options.db_path = file("k.db");
  options.device = "emu";
  tcjit::Runtime rt(options);
  const tcjit::Operation op = rt.prepare(text);
  tcjit::GemmArgs sizes;
  sizes.m = 16;
  EXPECT_EQ(op.config_for(sizes).substr(0, 17), "32x32x32 w16x16 s");
}

} // namespace
