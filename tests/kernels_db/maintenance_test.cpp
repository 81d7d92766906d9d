// Prune, export/import, merge, check and vacuum.
#include "db_test_util.h"

#include "kernels_db/clock.h"
#include "kernels_db/connection.h"
#include "kernels_db/error.h"
#include "kernels_db/kernels_db.h"
#include "kernels_db/schema.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace tcjit::kernels_db {
namespace {

using testing::sample_binary;
using testing::sample_problem;
using testing::sample_result;
using testing::TempDir;

constexpr int64_t kDay = 24 * 3600 * 1000;

void fill(KernelsDb &db, int problems) {
  for (int i = 0; i < problems; ++i) {
    const ProblemRecord problem = sample_problem(i);
    db.put_problem(problem);
    db.put_binary(sample_binary(problem, 128));
    db.put_binary(sample_binary(problem, 64, "sm_80", "12.3")); // stale toolkit
    db.put_result(sample_result(problem, 128, 10.0 + i));
    ResultRecord failed = sample_result(problem, 256, 0);
    failed.status = ResultStatus::failed;
    failed.timing.reset();
    failed.tflops.reset(); // (100 / 0 us: inf, out of range)
    failed.message = "launch failed";
    db.put_result(failed);
  }
}

TEST(KernelsDbMaintenance, StatsCountStaleBinaries) {
  TempDir dir;
  KernelsDb db = KernelsDb::open(dir.file("kernels.db"));
  fill(db, 3);
  const DbStats stats = db.stats({"12.4", "0.1.0"});
  EXPECT_EQ(stats.problems, 3);
  EXPECT_EQ(stats.binaries, 6);
  EXPECT_EQ(stats.results, 6);
  EXPECT_EQ(stats.stale_binaries, 3);
  EXPECT_EQ(stats.schema_version, kSchemaVersion);
  EXPECT_GT(stats.file_bytes, 0);
  EXPECT_EQ(db.stats({"12.4", "0.2.0"}).stale_binaries, 6);
}

TEST(KernelsDbMaintenance, PruneRemovesStaleBinariesAndOldRows) {
  TempDir dir;
  KernelsDb db = KernelsDb::open(dir.file("kernels.db"));
  fill(db, 3);
  PruneOptions stale;
  stale.stale_versions = CurrentVersions{"12.4", "0.1.0"};
  PruneReport report = db.prune(stale);
  EXPECT_EQ(report.binaries_removed, 3);
  EXPECT_EQ(report.results_removed, 0);
  EXPECT_EQ(db.stats({"12.4", "0.1.0"}).stale_binaries, 0);
  EXPECT_EQ(db.prune({}).binaries_removed, 0); // nothing asked, nothing done

  // Results were measured at 1.7e12 ms (2023); binaries and problems were created now.
  PruneOptions old;
  old.older_than = std::chrono::milliseconds(30 * kDay);
  report = db.prune(old);
  EXPECT_EQ(report.results_removed, 6);
  EXPECT_EQ(report.binaries_removed, 0);
  EXPECT_EQ(report.problems_removed, 0);
  // Later everything is old: problems without rows go too.
  old.now_ms = now_unix_ms();
  old.now_ms += 31 * kDay;
  report = db.prune(old);
  EXPECT_EQ(report.binaries_removed, 3);
  EXPECT_EQ(report.problems_removed, 3);
  EXPECT_EQ(db.stats().problems, 0);
}

// A compiler version with a "/VARIANT" (the backend that wrote the kernel) is current when its
// version is; a lookup still tells the variants apart.
TEST(KernelsDbMaintenance, BackendVariantsOfTheCurrentCompilerAreNotStale) {
  EXPECT_TRUE(is_current_compiler_version("0.1.0", "0.1.0"));
  EXPECT_TRUE(is_current_compiler_version("0.1.0/nvrtc", "0.1.0"));
  EXPECT_FALSE(is_current_compiler_version("0.1.0x/nvrtc", "0.1.0"));
  EXPECT_FALSE(is_current_compiler_version("0.1.01", "0.1.0"));
  EXPECT_FALSE(is_current_compiler_version("0.0.9/nvrtc", "0.1.0"));
  EXPECT_FALSE(is_current_compiler_version("0.1", "0.1.0"));
  TempDir dir;
  KernelsDb db = KernelsDb::open(dir.file("kernels.db"));
  const ProblemRecord problem = sample_problem(1);
  db.put_problem(problem);
  db.put_binary(sample_binary(problem, 128));                                 // current, llvm
  db.put_binary(sample_binary(problem, 128, "sm_80", "12.4", "0.1.0/nvrtc")); // current, nvrtc
  db.put_binary(sample_binary(problem, 128, "sm_80", "12.4", "0.0.9/nvrtc")); // stale
  db.put_binary(sample_binary(problem, 128, "sm_80", "12.4", "0.1.0+x"));     // stale
  EXPECT_EQ(db.stats({"12.4", "0.1.0"}).stale_binaries, 2);
  const auto nvrtc = db.find_binary(
      {problem.key_text, testing::sample_config(128), "sm_80", "12.4", "0.1.0/nvrtc"});
  ASSERT_EQ(nvrtc.status, LookupStatus::hit);
  EXPECT_EQ(nvrtc.binary->key.compiler_version, "0.1.0/nvrtc");
  PruneOptions stale;
  stale.stale_versions = CurrentVersions{"12.4", "0.1.0"};
  EXPECT_EQ(db.prune(stale).binaries_removed, 2);
  EXPECT_EQ(db.stats().binaries, 2);
}

TEST(KernelsDbMaintenance, ExportImportRoundTrip) {
  TempDir dir;
  KernelsDb source = KernelsDb::open(dir.file("a.db"));
  fill(source, 4);
  ProblemRecord wide = sample_problem(50);
  wide.key_hash = 0xffffffffffffffffull;
  wide.spec_text = "gemm m=1 n=2 k=3 # \"quoted\" \\ and unicode µs";
  source.put_problem(wide);
  BinaryRecord empty_cubin = sample_binary(wide, 32);
  empty_cubin.cubin.clear();
  source.put_binary(empty_cubin);
  std::stringstream exported;
  const TransferCounts out = source.export_jsonl(exported);
  EXPECT_EQ(out.problems, 5);
  EXPECT_EQ(out.binaries, 9);
  EXPECT_EQ(out.results_added, 8);

  KernelsDb target = KernelsDb::open(dir.file("b.db"));
  std::stringstream input(exported.str());
  const TransferCounts in = target.import_jsonl(input);
  EXPECT_EQ(in.problems, 5);
  EXPECT_EQ(in.binaries, 9);
  EXPECT_EQ(in.results_added, 8);
  std::stringstream again;
  target.export_jsonl(again);
  EXPECT_EQ(again.str(), exported.str());
  // Importing twice adds no duplicate results.
  std::stringstream input2(exported.str());
  const TransferCounts twice = target.import_jsonl(input2);
  EXPECT_EQ(twice.results_added, 0);
  EXPECT_EQ(twice.results_already_present, 8);
  EXPECT_EQ(target.stats().results, 8);
  const auto found = target.find_problem(wide.key_text);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->spec_text, wide.spec_text);
  EXPECT_EQ(found->key_hash, wide.key_hash);
  EXPECT_EQ(target.find_binary({wide.key_text, std::nullopt, "sm_80", "12.4", "0.1.0"}).status,
            LookupStatus::hit);
}

TEST(KernelsDbMaintenance, ImportKeepsGoodRecordsAndNamesTheBadLine) {
  TempDir dir;
  KernelsDb source = KernelsDb::open(dir.file("a.db"));
  fill(source, 2);
  std::stringstream exported;
  source.export_jsonl(exported);
  KernelsDb target = KernelsDb::open(dir.file("b.db"));
  const std::string text = exported.str();
  const auto bad_line = std::count(text.begin(), text.end(), '\n') + 1;
  std::stringstream broken(text + "{\"type\":\"result\",\"problem\":\"x\"}\n");
  const TransferCounts counts = target.import_jsonl(broken);
  ASSERT_EQ(counts.rejected.size(), 1u);
  EXPECT_EQ(counts.rejected[0].where, "import line " + std::to_string(bad_line));
  EXPECT_NE(counts.rejected[0].reason.find("'config'"), std::string::npos)
      << counts.rejected[0].reason;
  EXPECT_EQ(target.stats().problems, 2); // the good records are kept
  std::stringstream no_header("{\"type\":\"problem\"}\n");
  EXPECT_THROW(target.import_jsonl(no_header), DbError);
  std::stringstream newer("{\"type\":\"tcjit-kernels-db\",\"schema\":99}\n");
  try {
    target.import_jsonl(newer);
    FAIL();
  } catch (const DbError &error) {
    EXPECT_EQ(error.kind(), DbErrorKind::newer_schema);
  }
}

TEST(KernelsDbMaintenance, MergeKeepsEveryMeasurement) {
  TempDir dir;
  KernelsDb a = KernelsDb::open(dir.file("a.db"));
  KernelsDb b = KernelsDb::open(dir.file("b.db"));
  const ProblemRecord shared = sample_problem(0);
  const ProblemRecord only_b = sample_problem(1);
  a.put_problem(shared);
  b.put_problem(shared);
  b.put_problem(only_b);
  const ResultRecord same = sample_result(shared, 128, 10.0);
  a.put_result(same);
  b.put_result(same); // identical: stored once after the merge
  a.put_result(sample_result(shared, 128, 11.0, "NVIDIA A100-SXM4-80GB", 1700000005000));
  b.put_result(sample_result(shared, 128, 9.0, "NVIDIA A100-SXM4-40GB", 1700000006000));
  b.put_result(sample_result(only_b, 64, 3.0));
  b.put_binary(sample_binary(only_b, 64));
  BinaryRecord damaged = sample_binary(shared, 32);
  b.put_binary(damaged);
  {
    Connection raw = Connection::open(dir.file("b.db"));
    raw.exec("UPDATE binaries SET cubin = zeroblob(3) WHERE id IN (SELECT binary_id FROM "
             "problem_binaries WHERE config_json LIKE '%\"tile_m\":32%')");
  }
  const TransferCounts counts = a.merge(dir.file("b.db"));
  EXPECT_EQ(counts.problems, 1);
  EXPECT_EQ(counts.binaries, 1);
  EXPECT_EQ(counts.binaries_rejected, 1);
  EXPECT_EQ(counts.results_added, 2);
  EXPECT_EQ(counts.results_already_present, 1);
  EXPECT_EQ(a.results(shared.key_text).size(), 3u);
  EXPECT_EQ(a.results(only_b.key_text).size(), 1u);
  // "Best" per problem and device is a query over every measurement.
  EXPECT_DOUBLE_EQ(a.best_result(shared.key_text, "sm_80")->timing->median_us, 9.0);
  EXPECT_DOUBLE_EQ(
      a.best_result(shared.key_text, "sm_80", "NVIDIA A100-SXM4-80GB")->timing->median_us, 10.0);
  // Merging again changes nothing.
  const TransferCounts again = a.merge(dir.file("b.db"));
  EXPECT_EQ(again.results_added, 0);
  EXPECT_EQ(again.problems, 0);
  EXPECT_EQ(again.binaries, 0);
  EXPECT_EQ(a.stats().results, 4);
  EXPECT_THROW(a.merge(dir.file("a.db")), DbError);
}

TEST(KernelsDbMaintenance, MergeRefusesANewerDatabase) {
  TempDir dir;
  KernelsDb a = KernelsDb::open(dir.file("a.db"));
  {
    Connection raw = Connection::open(dir.file("newer.db"));
    raw.exec("PRAGMA user_version = 42");
  }
  try {
    a.merge(dir.file("newer.db"));
    FAIL();
  } catch (const DbError &error) {
    EXPECT_EQ(error.kind(), DbErrorKind::newer_schema);
  }
}

TEST(KernelsDbMaintenance, CheckReportsDamageAndHowToRecover) {
  TempDir dir;
  const auto path = dir.file("kernels.db");
  {
    KernelsDb db = KernelsDb::open(path);
    fill(db, 40);
    db.vacuum(); // checkpoint: everything in the main file
  }
  CheckReport report = KernelsDb::check(path);
  EXPECT_TRUE(report.ok);
  EXPECT_EQ(report.check, "quick_check");
  EXPECT_EQ(report.binaries_checked, 80);
  EXPECT_TRUE(KernelsDb::check(path, true).ok);
  // Overwrite pages in the middle of the file.
  const auto size = std::filesystem::file_size(path);
  ASSERT_GT(size, 8192u);
  {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(4096 + 100));
    const std::string garbage(size - 4096 - 200, '\x5a');
    file.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  report = KernelsDb::check(path, true);
  EXPECT_FALSE(report.ok);
  EXPECT_FALSE(report.problems.empty());
  EXPECT_NE(report.recovery.find(".recover"), std::string::npos);
  // Not a database at all: the wrong file was passed, not a damaged database (issue 24).
  std::ofstream(dir.file("text.db")) << std::string(5000, 'x');
  try {
    KernelsDb::check(dir.file("text.db"));
    ADD_FAILURE() << "checked a text file";
  } catch (const DbError &error) {
    EXPECT_EQ(error.kind(), DbErrorKind::invalid_argument);
    EXPECT_NE(error.problem().find("not a tcjit kernel database"), std::string::npos);
  }
  EXPECT_THROW(KernelsDb::check(dir.file("missing.db")), DbError);
  // A newer database is checked structurally, not refused, and fails the check by name.
  {
    Connection raw = Connection::open(dir.file("newer.db"));
    raw.exec("CREATE TABLE t (x); PRAGMA user_version = 9");
  }
  report = KernelsDb::check(dir.file("newer.db"));
  EXPECT_FALSE(report.ok);
  ASSERT_EQ(report.problems.size(), 1u);
  EXPECT_NE(report.problems[0].find("newer"), std::string::npos);
  ASSERT_EQ(report.notes.size(), 1u);
  EXPECT_NE(report.notes[0].find("only the SQLite structure was checked"), std::string::npos);
  EXPECT_NE(report.recovery.find("upgrade tcjit"), std::string::npos);
}

TEST(KernelsDbMaintenance, VacuumShrinksAfterPrune) {
  TempDir dir;
  KernelsDb db = KernelsDb::open(dir.file("kernels.db"));
  fill(db, 50);
  PruneOptions everything;
  everything.older_than = std::chrono::milliseconds(0);
  everything.now_ms = now_unix_ms() + kDay;
  db.prune(everything);
  const VacuumReport report = db.vacuum();
  EXPECT_LT(report.bytes_after, report.bytes_before);
}

} // namespace
} // namespace tcjit::kernels_db
