// Schema 6: the cost model's calibrations in the database (one row per GPU and arch). The
// migration from schema 5 keeps every row and adds the table; the rows travel through export,
// import and merge and survive prune; a row without its form (a hand edit, a hostile file) is
// reported by check and refused by import and merge, and a judgement from above
// (DecisionRules::calibration_check) is applied the same way.
#include "db_test_util.h"

#include "kernels_db/calibration_store.h"
#include "kernels_db/connection.h"
#include "kernels_db/kernels_db.h"
#include "kernels_db/schema.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace tcjit::kernels_db {
namespace {

using testing::sample_binary;
using testing::sample_problem;
using testing::sample_result;
using testing::TempDir;

CalibrationRecord sample_calibration(const std::string &gpu = "NVIDIA A100-SXM4-80GB",
                                     int64_t created_ms = 1795000000000) {
  return {gpu,        "sm_80", R"({"mma_efficiency.f16":0.85,"dram_bytes_per_s":1.5e12})",
          18,         0.3,     0.01,
          created_ms, "0.1.0", "tcjit-cost-model 2"};
}

std::string export_text(KernelsDb &db) {
  std::ostringstream out;
  db.export_jsonl(out);
  return out.str();
}

// Everything after the header line.
std::string records_of(const std::string &exported) {
  return exported.substr(exported.find('\n') + 1);
}

// A database with a problem, a binary, results and a dispatch table.
void fill(KernelsDb &db) {
  const ProblemRecord problem = sample_problem(1);
  db.put_problem(problem);
  db.put_binary(sample_binary(problem, 128));
  db.put_result(sample_result(problem, 128, 20.0));
  db.put_result(sample_result(problem, 64, 30.0));
  DispatchTable table;
  table.problem_key = problem.key_text;
  table.arch = "sm_80";
  table.tuner_version = "tcjit-tuner 1 / 0.1.0 / cuda";
  table.entries.push_back(
      {R"({"m":[1,64]})", testing::sample_config(64), 30.0, ProvenanceKind::measured});
  table.created_ms = 1700000000000;
  db.put_dispatch_table(table);
}

TEST(Calibrations, MigrationFromSchema5KeepsEveryRowAndAddsTheTable) {
  TempDir dir;
  const auto path = dir.file("k.db");
  std::string before;
  {
    KernelsDb db = KernelsDb::open(path);
    fill(db);
    before = export_text(db);
  }
  {
    // The file schema 5 wrote: the same rows, no calibrations table.
    Connection raw = Connection::open(path);
    raw.exec("DROP TABLE calibrations; PRAGMA user_version = 5");
    EXPECT_TRUE(foreign_schema_objects(raw, 5).empty());
  }
  KernelsDb db = KernelsDb::open(path);
  {
    Connection raw = Connection::open(path);
    EXPECT_EQ(read_schema_version(raw), 6);
    EXPECT_EQ(kSchemaVersion, 6);
    EXPECT_TRUE(foreign_schema_objects(raw, 6).empty());
  }
  EXPECT_EQ(records_of(export_text(db)), records_of(before));
  EXPECT_TRUE(db.calibrations().empty());
  db.put_calibration(sample_calibration());
  ASSERT_EQ(db.calibrations().size(), 1u);
  EXPECT_TRUE(KernelsDb::check(path, true).ok);
}

TEST(Calibrations, OneRowPerGpuAndArchStoredCanonical) {
  TempDir dir;
  KernelsDb db = KernelsDb::open(dir.file("k.db"));
  db.put_calibration(sample_calibration());
  CalibrationRecord newer = sample_calibration();
  newer.results = 40;
  db.put_calibration(newer);
  db.put_calibration(sample_calibration("NVIDIA H100 80GB HBM3"));
  const std::vector<StoredCalibration> rows = db.calibrations();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].calibration.results, 40);
  EXPECT_EQ(rows[0].calibration.constants_json,
            R"({"dram_bytes_per_s":1500000000000.0,"mma_efficiency.f16":0.85})");
  EXPECT_FALSE(rows[0].bad_storage);
  CalibrationRecord bad = sample_calibration();
  bad.constants_json = R"({"dram_bytes_per_s":"fast"})";
  EXPECT_THROW(db.put_calibration(bad), DbError);
}

TEST(Calibrations, ExportImportRoundTripCarriesThem) {
  TempDir dir;
  KernelsDb db = KernelsDb::open(dir.file("a.db"));
  fill(db);
  db.put_calibration(sample_calibration());
  const std::string exported = export_text(db);
  EXPECT_NE(exported.find(R"("type":"calibration")"), std::string::npos) << exported;
  KernelsDb copy = KernelsDb::open(dir.file("b.db"));
  std::istringstream in(exported);
  const TransferCounts counts = copy.import_jsonl(in);
  EXPECT_TRUE(counts.rejected.empty());
  EXPECT_EQ(counts.calibrations, 1);
  ASSERT_EQ(copy.calibrations().size(), 1u);
  EXPECT_EQ(copy.calibrations()[0].calibration.residual, 0.01);
  EXPECT_EQ(export_text(copy), exported);
  // An older calibration of the same GPU does not replace a newer one.
  CalibrationRecord older = sample_calibration("NVIDIA A100-SXM4-80GB", 1700000000000);
  older.results = 5;
  KernelsDb third = KernelsDb::open(dir.file("c.db"));
  third.put_calibration(older);
  std::istringstream again(exported);
  third.import_jsonl(again);
  EXPECT_EQ(third.calibrations()[0].calibration.results, 18);
}

TEST(Calibrations, ImportRefusesOneWithoutItsFormOrJudgedWrong) {
  TempDir dir;
  KernelsDb db = KernelsDb::open(dir.file("k.db"));
  const std::string header = "{\"type\":\"tcjit-kernels-db\",\"schema\":6}\n";
  const std::string good =
      R"({"type":"calibration","gpu":"G","arch":"sm_80","constants":{"launch_seconds":3e-6},)"
      R"("results":9,"residual_before":0.2,"residual":0.1,"created_ms":1700000000000,)"
      R"("tcjit_version":"0.1.0","model_version":"m"})";
  const auto with = [&](const std::string &from, const std::string &to) {
    std::string line = good;
    line.replace(line.find(from), from.size(), to);
    return line;
  };
  std::istringstream in(header + with(R"({"launch_seconds":3e-6})", R"({"x":"fast"})") + "\n" +
                        with(R"("residual":0.1)", R"("residual":-1)") + "\n" +
                        with(R"("created_ms":1700000000000)", R"("created_ms":99999999999999)") +
                        "\n" + with(R"("gpu":"G")", R"("gpu":"")") + "\n" + good + "\n");
  DecisionRules rules;
  rules.calibration_check = [](const CalibrationRecord &c) {
    return c.gpu == "G" ? std::vector<std::string>{"the model says no"}
                        : std::vector<std::string>{};
  };
  TransferCounts counts = db.import_jsonl(in);
  ASSERT_EQ(counts.rejected.size(), 4u);
  EXPECT_NE(counts.rejected[0].reason.find("constant 'x' is not a finite number"),
            std::string::npos)
      << counts.rejected[0].reason;
  EXPECT_NE(counts.rejected[1].reason.find("residual -1"), std::string::npos);
  EXPECT_NE(counts.rejected[2].reason.find("future"), std::string::npos)
      << counts.rejected[2].reason;
  EXPECT_NE(counts.rejected[3].reason.find("gpu is not printable"), std::string::npos);
  EXPECT_EQ(counts.calibrations, 1);
  std::istringstream judged(header + good + "\n");
  TempDir other;
  KernelsDb fresh = KernelsDb::open(other.file("k.db"));
  counts = fresh.import_jsonl(judged, rules);
  ASSERT_EQ(counts.rejected.size(), 1u);
  EXPECT_NE(counts.rejected[0].reason.find("implausible calibration: the model says no"),
            std::string::npos);
  EXPECT_TRUE(fresh.calibrations().empty());
}

TEST(Calibrations, MergeRefusesAHostileRowAndCheckReportsIt) {
  TempDir dir;
  const auto theirs = dir.file("theirs.db");
  {
    KernelsDb db = KernelsDb::open(theirs);
    fill(db);
    db.put_calibration(sample_calibration("GOOD GPU"));
    db.put_calibration(sample_calibration("INF GPU"));
    db.put_calibration(sample_calibration("TEXT GPU"));
  }
  {
    Connection raw = Connection::open(theirs);
    raw.exec("UPDATE calibrations SET residual = 9e999 WHERE gpu = 'INF GPU'");
    raw.exec("UPDATE calibrations SET results = 'many' WHERE gpu = 'TEXT GPU'");
  }
  const CheckReport check = KernelsDb::check(theirs, true);
  EXPECT_FALSE(check.ok);
  ASSERT_EQ(check.bad_values.size(), 1u);
  EXPECT_EQ(check.bad_values[0], "calibrations row 3: results holds text, not integer");
  KernelsDb ours = KernelsDb::open(dir.file("ours.db"));
  const TransferCounts counts = ours.merge(theirs);
  EXPECT_EQ(counts.calibrations, 1);
  ASSERT_EQ(counts.rejected.size(), 2u);
  EXPECT_NE(counts.rejected[0].reason.find("implausible calibration: residual inf"),
            std::string::npos)
      << counts.rejected[0].reason;
  EXPECT_NE(counts.rejected[1].where.find("calibrations row 3"), std::string::npos);
  ASSERT_EQ(ours.calibrations().size(), 1u);
  EXPECT_EQ(ours.calibrations()[0].calibration.gpu, "GOOD GPU");
  {
    Connection raw = Connection::open(theirs);
    raw.exec("UPDATE calibrations SET results = 18 WHERE gpu = 'TEXT GPU'");
  }
  const CheckReport implausible = KernelsDb::check(theirs, false);
  ASSERT_EQ(implausible.implausible.size(), 1u);
  EXPECT_EQ(
      implausible.implausible[0].rfind("calibrations row 2 of 'INF GPU' sm_80: residual inf", 0),
      0u)
      << implausible.implausible[0];
}

TEST(Calibrations, PruneKeepsThem) {
  TempDir dir;
  KernelsDb db = KernelsDb::open(dir.file("k.db"));
  fill(db);
  db.put_calibration(sample_calibration("OLD GPU", 1000));
  PruneOptions options;
  options.older_than = std::chrono::milliseconds(1);
  db.prune(options);
  ASSERT_EQ(db.calibrations().size(), 1u);
}

} // namespace
} // namespace tcjit::kernels_db
