// What `tcjit db` says an application gets, through the API (include/tcjit/db.hpp): db_show finds
// the spec as written and lists the decision's row first (never a row without a time above a
// timed one), and a prune never leaves a MissPolicy::fail application without a word: the
// decisions stay, their kernels are named as missing, db_rebuild compiles them and the runtime
// then prepares from the database.
#include "tcjit/db.hpp"
#include "tcjit/tcjit.hpp"

#include "compiler/dsl/parser.h"
#include "compiler/spec/problem_key.h"
#include "engine/kernel_records.h"
#include "kernels_db/kernels_db.h"
#include "tuner/chosen_configs.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
namespace kdb = tcjit::kernels_db;
using tcjit::codegen::TileConfig;

constexpr const char *kSpec = "gemm m=128 n=128 k=64 a=f16:row b=f16:col c=f16:row acc=f32";
constexpr const char *kSpecAsWritten = "gemm m=128 n=128 k=64 a=f16 b=f16:col";
const TileConfig kS2{32, 32, 32, 16, 16, 2, 1, 1, 8, 8};
const TileConfig kS3{32, 32, 32, 16, 16, 3, 1, 1, 8, 8};
constexpr const char *kTuner = "tcjit-tuner 1 / 0.1.0 / cuda";

std::string file_bytes(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class DbDecisions : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tcjit_db_decisions_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    spec_ = tcjit::parse_spec(kSpec).entries.front().spec;
    key_ = tcjit::make_problem_key(spec_, "sm_80", false);
    db_ = (dir_ / "k.db").string();
    auto db = kdb::KernelsDb::open(db_);
    db.put_problem(tcjit::engine::problem_record(spec_, key_, "sm_80"));
  }
  void TearDown() override { fs::remove_all(dir_); }

  kdb::ResultRecord result(const TileConfig &config, std::optional<double> us,
                           kdb::ProvenanceKind kind, int64_t measured_ms) const {
    kdb::ResultRecord r;
    r.problem_key = key_.text;
    r.config_json = tcjit::engine::config_json(config);
    r.arch = "sm_80";
    if (us)
      r.timing = kdb::Timing{*us, *us, *us, 0};
    r.provenance.kind = kind;
    if (kind == kdb::ProvenanceKind::measured)
      r.provenance.device = "NVIDIA A100-SXM4-80GB";
    if (kind == kdb::ProvenanceKind::predicted)
      r.provenance.model = "tcjit-cost-model 2";
    r.tuner_version = kTuner;
    r.measured_ms = measured_ms;
    return r;
  }

  // What a tune on a GPU stores: its measurement and the winner's one-bucket dispatch table.
  void store_tune(const TileConfig &config, double us) {
    auto db = kdb::KernelsDb::open(db_);
    db.put_result(result(config, us, kdb::ProvenanceKind::measured, 1700000000000));
    kdb::DispatchTable table;
    table.problem_key = key_.text;
    table.arch = "sm_80";
    table.tuner_version = kTuner;
    table.created_ms = 1700000000000;
    table.entries.push_back(
        {"{}", tcjit::engine::config_json(config), us, kdb::ProvenanceKind::measured});
    db.put_dispatch_table(table);
  }

  std::vector<TileConfig> run_choice() {
    auto db = kdb::KernelsDb::open(db_);
    tcjit::engine::KernelRequest request;
    request.arch = "sm_80";
    std::string note;
    return tcjit::tuner::chosen_configs(spec_, key_, request, &db, note);
  }

  tcjit::RuntimeOptions runtime_options(tcjit::MissPolicy on_miss) const {
    tcjit::RuntimeOptions o;
    o.db_path = db_;
    o.device = "emu";
    o.on_miss = on_miss;
    return o;
  }

  fs::path dir_;
  std::string db_;
  tcjit::OpSpec spec_;
  tcjit::ProblemKey key_;
};

TEST_F(DbDecisions, ShowFindsTheSpecAsWrittenOnTheDatabasesArch) {
  store_tune(kS3, 20.0);
  tcjit::DbShowRequest request{db_, kSpecAsWritten, {}, ""};
  const tcjit::DbProblemDetails details = tcjit::db_show(request);
  EXPECT_EQ(details.problem.key_text, key_.text);
  ASSERT_EQ(details.decisions.size(), 1u);
  EXPECT_EQ(details.decisions[0].config, tcjit::codegen::to_string(kS3));
  request.arch = "sm_80";
  EXPECT_EQ(tcjit::db_show(request).problem.key_hash, key_.hash_hex());

  request.arch = "sm_90"; // stored for sm_80 only
  try {
    tcjit::db_show(request);
    FAIL() << "a spec with no stored problem on sm_90 was shown";
  } catch (const tcjit::Error &e) {
    EXPECT_EQ(e.code(), tcjit::ErrorCode::not_found);
    EXPECT_NE(e.problem().find("no problem for '"), std::string::npos) << e.problem();
    EXPECT_NE(e.problem().find("`tcjit tune \""), std::string::npos) << e.problem();
    EXPECT_NE(e.problem().find("--arch sm_90"), std::string::npos) << e.problem();
  }
  request = {db_, "gemm m=128 n=128 k=64 a=f16 b=f16:cl", {}, ""};
  try {
    tcjit::db_show(request);
    FAIL() << "a spec that does not parse was shown";
  } catch (const tcjit::Error &e) {
    EXPECT_EQ(e.code(), tcjit::ErrorCode::bad_spec);
    EXPECT_NE(e.problem().find("unknown layout 'cl'"), std::string::npos) << e.problem();
  }
}

// A math=auto spec is keyed as a run keys it here (NVIDIA_TF32_OVERRIDE): stored in the other
// mode, it is not the problem a run would use, and the message says why.
TEST_F(DbDecisions, ShowKeysAMathAutoSpecAsARunHereDoes) {
  constexpr const char *kF32 = "gemm m=64 n=64 k=64 a=f32 b=f32:col";
  const tcjit::OpSpec f32 = tcjit::parse_spec(kF32).entries.front().spec;
  const tcjit::ProblemKey tf32_key = tcjit::make_problem_key(f32, "sm_80", false);
  {
    auto db = kdb::KernelsDb::open(db_);
    db.put_problem(tcjit::engine::problem_record(f32, tf32_key, "sm_80"));
  }
  const char *original = std::getenv("NVIDIA_TF32_OVERRIDE");
  const std::string saved = original ? original : "";
  ::unsetenv("NVIDIA_TF32_OVERRIDE");
  EXPECT_EQ(tcjit::db_show({db_, kF32, {}, ""}).problem.key_text, tf32_key.text);
  ::setenv("NVIDIA_TF32_OVERRIDE", "0", 1);
  try {
    tcjit::db_show({db_, kF32, {}, ""});
    ADD_FAILURE() << "the tf32 problem was shown for a run that keys math=auto as f32";
  } catch (const tcjit::Error &e) {
    EXPECT_EQ(e.code(), tcjit::ErrorCode::not_found);
    EXPECT_NE(e.problem().find("with NVIDIA_TF32_OVERRIDE unset"), std::string::npos)
        << e.problem();
  }
  if (original)
    ::setenv("NVIDIA_TF32_OVERRIDE", saved.c_str(), 1);
  else
    ::unsetenv("NVIDIA_TF32_OVERRIDE");
}

// Ties (same median, newer first) and the decision's row: the first listed result is the row the
// decision comes from, and it is what a run chooses.
TEST_F(DbDecisions, TheFirstListedResultIsTheDecisionARunUsesEvenOnATie) {
  {
    auto db = kdb::KernelsDb::open(db_);
    db.put_result(result(kS2, 20.0, kdb::ProvenanceKind::measured, 1700000000000));
    db.put_result(result(kS3, 20.0, kdb::ProvenanceKind::measured, 1700000100000));
    db.put_result(result(kS2, 5.0, kdb::ProvenanceKind::predicted, 1700000200000));
  }
  const tcjit::DbProblemDetails details = tcjit::db_show({db_, key_.text, {}, ""});
  ASSERT_EQ(details.decisions.size(), 1u);
  ASSERT_EQ(details.results.size(), 3u);
  EXPECT_TRUE(details.results[0].decides);
  EXPECT_FALSE(details.results[1].decides);
  EXPECT_EQ(details.results[0].config_json, details.decisions[0].config_json);
  const std::vector<TileConfig> chosen = run_choice();
  ASSERT_FALSE(chosen.empty());
  EXPECT_EQ(tcjit::engine::config_json(chosen.front()), details.decisions[0].config_json);
  EXPECT_EQ(details.decisions[0].config, tcjit::codegen::to_string(kS3)) << "the newer of a tie";
}

// The listing: an emulated row without a time came first; a timed row exists.
TEST_F(DbDecisions, ARowWithoutATimeIsNeverListedAboveATimedOne) {
  {
    auto db = kdb::KernelsDb::open(db_);
    db.put_result(result(kS2, std::nullopt, kdb::ProvenanceKind::emulated, 1700000000000));
    db.put_result(result(kS3, 7.5, kdb::ProvenanceKind::predicted, 1700000000000));
  }
  const tcjit::DbProblemDetails details = tcjit::db_show({db_, key_.text, {}, ""});
  ASSERT_EQ(details.results.size(), 2u);
  ASSERT_TRUE(details.results[0].timing.has_value()) << details.results[0].provenance;
  EXPECT_EQ(details.results[0].provenance, "predicted");
  EXPECT_FALSE(details.results[1].timing.has_value());
}

// `ls` gives each problem's decided config and time, a predicted one marked so.
TEST_F(DbDecisions, ListGivesTheDecidedConfigAndItsTimesOrigin) {
  {
    auto db = kdb::KernelsDb::open(db_);
    kdb::DispatchTable table;
    table.problem_key = key_.text;
    table.arch = "sm_80";
    table.tuner_version = kTuner;
    table.created_ms = 1700000000000;
    table.entries.push_back(
        {"{}", tcjit::engine::config_json(kS2), 3.25, kdb::ProvenanceKind::predicted});
    db.put_dispatch_table(table);
  }
  tcjit::DbListRequest request;
  request.db_path = db_;
  const std::vector<tcjit::DbProblemSummary> listed = tcjit::db_list(request);
  ASSERT_EQ(listed.size(), 1u);
  ASSERT_TRUE(listed[0].decision.has_value());
  EXPECT_EQ(listed[0].decision->config, tcjit::codegen::to_string(kS2));
  EXPECT_DOUBLE_EQ(listed[0].decision->time_us, 3.25);
  EXPECT_EQ(listed[0].decision->provenance, "predicted");
  EXPECT_FALSE(listed[0].best_median_us.has_value()) << "no measured result";
}

// prune --stale after a toolkit upgrade: the dry run writes nothing and names the decided kernel
// it would leave without a binary; the prune keeps the decision and names it too; a
// MissPolicy::fail runtime then says to run `tcjit db rebuild`, which compiles it, and the runtime
// prepares it from the database.
TEST_F(DbDecisions, PruneNamesTheDecidedKernelsItLeavesAndRebuildServesAFailRuntime) {
  store_tune(kS3, 20.0);
  {
    tcjit::Runtime runtime(runtime_options(tcjit::MissPolicy::heuristic));
    const tcjit::Operation op = runtime.prepare(kSpec);
    EXPECT_EQ(op.origin(), tcjit::Origin::compiled_now);
  }
  const tcjit::DbVersions upgraded{"99.0", tcjit::current_db_versions().compiler_version};
  const std::string before = file_bytes(db_);
  tcjit::DbPruneRequest prune{db_, true, "", upgraded, true};
  tcjit::DbPruneReport report = tcjit::db_prune(prune);
  EXPECT_TRUE(report.dry_run);
  EXPECT_EQ(report.binaries_removed, 1);
  ASSERT_EQ(report.rows.size(), 1u);
  EXPECT_EQ(report.rows[0].kind, "binary");
  EXPECT_EQ(report.rows[0].config, tcjit::codegen::to_string(kS3));
  ASSERT_EQ(report.kernels_missing.size(), 1u);
  EXPECT_EQ(file_bytes(db_), before) << "the dry run wrote the database";
  EXPECT_EQ(tcjit::db_stats({db_, {}}).binaries, 1);

  prune.dry_run = false;
  report = tcjit::db_prune(prune);
  EXPECT_EQ(report.binaries_removed, 1);
  ASSERT_EQ(report.kernels_missing.size(), 1u);
  EXPECT_EQ(report.kernels_missing[0].config, tcjit::codegen::to_string(kS3));
  EXPECT_EQ(report.kernels_missing[0].hash, key_.hash_hex());
  EXPECT_EQ(tcjit::db_show({db_, key_.text, {}, ""}).decisions.size(), 1u) << "decision kept";

  try {
    tcjit::Runtime runtime(runtime_options(tcjit::MissPolicy::fail));
    runtime.prepare(kSpec);
    FAIL() << "a fail runtime prepared a kernel that is not stored";
  } catch (const tcjit::Error &e) {
    EXPECT_EQ(e.code(), tcjit::ErrorCode::not_found);
    EXPECT_NE(e.how_to_fix().find("tcjit db rebuild --db " + db_), std::string::npos) << e.what();
  }

  tcjit::DbRebuildReport rebuilt = tcjit::db_rebuild({db_, "", true});
  EXPECT_EQ(rebuilt.compiled, 1) << "dry run: to compile";
  EXPECT_EQ(tcjit::db_stats({db_, {}}).binaries, 0) << "the dry run compiled";
  rebuilt = tcjit::db_rebuild({db_});
  EXPECT_EQ(rebuilt.compiled, 1);
  EXPECT_EQ(rebuilt.failed, 0);
  ASSERT_EQ(rebuilt.kernels.size(), 1u);
  EXPECT_EQ(rebuilt.kernels[0].status, "compiled") << rebuilt.kernels[0].message;
  EXPECT_EQ(rebuilt.kernels[0].config, tcjit::codegen::to_string(kS3));

  tcjit::Runtime runtime(runtime_options(tcjit::MissPolicy::fail));
  const tcjit::Operation op = runtime.prepare(kSpec);
  EXPECT_EQ(op.origin(), tcjit::Origin::database);
  EXPECT_EQ(tcjit::db_rebuild({db_}).present, 1) << "a second rebuild compiles nothing";
  EXPECT_TRUE(tcjit::db_prune({db_, true, "", {}, false}).kernels_missing.empty());
}

} // namespace
