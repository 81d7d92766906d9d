// Decisions are data, judged (kernels_db/decision.h): an implausible decision (unknown or newer
// tuner version, dated in the future, a time that is not finite and > 0) is ignored where it is
// used, flagged by check, refused by import and merge; merge keeps the faster decision; every
// value read is range-checked; the SQL and C++ forms of the judgement agree.
#include "db_test_util.h"

#include "kernels_db/canonical_json.h"
#include "kernels_db/decision.h"
#include "kernels_db/kernels_db.h"
#include "kernels_db/record_json.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <sstream>

namespace tcjit::kernels_db {
namespace {

using testing::sample_problem;
using testing::TempDir;

constexpr const char *kTuner = "tcjit-tuner 1 / 0.1.0 / cuda";
constexpr int64_t kNow = 1800000000000; // 2027-01-15
const DecisionRules kRules{1, kNow};
// The evil table: year 9999, a tuner version tcjit does not know.
constexpr int64_t kYear9999 = 253402300799000;
constexpr const char *kEvilTuner = "tcjit-tuner 999 evil";

// The canonical text of the test config of `tile` (as stored).
std::string sample_config(int tile) {
  return canonical_json(testing::sample_config(tile), "test config");
}

DispatchTable one_bucket_table(const ProblemRecord &problem, int tile, double time_us,
                               int64_t created_ms, const std::string &tuner = kTuner) {
  DispatchTable table;
  table.problem_key = problem.key_text;
  table.arch = "sm_80";
  table.tuner_version = tuner;
  table.created_ms = created_ms;
  table.entries.push_back({"{}", sample_config(tile), time_us, ProvenanceKind::measured});
  return table;
}

ResultRecord result(const ProblemRecord &problem, int tile, double median_us) {
  ResultRecord r = testing::sample_result(problem, tile, median_us);
  r.config_json = sample_config(tile);
  r.tuner_version = kTuner;
  return r;
}

bool contains(const std::vector<std::string> &lines, const std::string &part) {
  for (const std::string &line : lines)
    if (line.find(part) != std::string::npos)
      return true;
  return false;
}

std::string rejections(const TransferCounts &counts) {
  std::string text;
  for (const RejectedRecord &record : counts.rejected)
    text += record.where + ": " + record.reason + "\n";
  return text;
}

// `tcjit run` records each verification as a result without a time ("tcjit run VERSION"): not a
// decision, so not judged by its tuner version; the same text on a timed result is.
TEST(Decision, ARunsVerificationRecordIsNotADecisionButATimedOneIsJudged) {
  const ProblemRecord problem = sample_problem(1);
  ResultRecord verified = result(problem, 1, 10.0);
  verified.tuner_version = "tcjit run 0.1.0+4e5d9e5cba44";
  verified.provenance.kind = ProvenanceKind::emulated;
  verified.timing.reset();
  verified.tflops.reset();
  EXPECT_EQ(implausible_result(verified, kRules), std::nullopt);
  ResultRecord timed = result(problem, 1, 10.0);
  timed.tuner_version = verified.tuner_version;
  const auto why = implausible_result(timed, kRules);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("is not one this tcjit knows"), std::string::npos) << *why;
}

TEST(Decision, TunerFormatIsReadOnlyFromTheTunersOwnForm) {
  EXPECT_EQ(tuner_format_of("tcjit-tuner 1 / 0.1.0 / cuda"), 1);
  EXPECT_EQ(tuner_format_of("tcjit-tuner 12 / 0.1.0+abc / model (cm 3)"), 12);
  for (const char *other :
       {"tcjit-tuner 999 evil", "0.1.0", "test", "tcjit-tuner  / x", "tcjit-tuner 0 / x",
        "tcjit-tuner 1x / y", "tcjit-tuner 1234567890 / x", "Tcjit-tuner 1 / x", ""})
    EXPECT_FALSE(tuner_format_of(other)) << other;
  const ProblemRecord problem = sample_problem(0);
  EXPECT_TRUE(implausible_dispatch_table(one_bucket_table(problem, 64, 1, 1, kEvilTuner), kRules));
  EXPECT_TRUE(implausible_dispatch_table(
      one_bucket_table(problem, 64, 1, 1, "tcjit-tuner 2 / 0.1.0 / cuda"), kRules));
  EXPECT_FALSE(implausible_dispatch_table(one_bucket_table(problem, 64, 1, kNow), kRules));
  // Clock skew: up to an hour ahead is allowed, more is the future.
  EXPECT_FALSE(
      implausible_dispatch_table(one_bucket_table(problem, 64, 1, kNow + kClockSkewMs), kRules));
  EXPECT_TRUE(implausible_dispatch_table(one_bucket_table(problem, 64, 1, kNow + kClockSkewMs + 1),
                                         kRules));
}

class Decisions : public ::testing::Test {
protected:
  TempDir dir;
  ProblemRecord problem = sample_problem(0);
};

// The case: a dispatch table dated in year 9999 from 'tcjit-tuner 999 evil', merged in,
// decided the config (even after a retune stored an honest one).
TEST_F(Decisions, EvilDispatchTableIsIgnoredFlaggedAndNotMerged) {
  {
    KernelsDb evil = KernelsDb::open(dir.file("evil.db"));
    evil.put_problem(problem);
    evil.put_dispatch_table(one_bucket_table(problem, 256, 0.5, kYear9999, kEvilTuner));
  }
  const CheckReport report = KernelsDb::check(dir.file("evil.db"), true, kRules);
  EXPECT_FALSE(report.ok);
  EXPECT_TRUE(contains(report.implausible, kEvilTuner))
      << ::testing::PrintToString(report.implausible);

  KernelsDb db = KernelsDb::open(dir.file("mine.db"));
  db.put_problem(problem);
  db.put_dispatch_table(one_bucket_table(problem, 64, 20.0, kNow - 1000));
  const TransferCounts merged = db.merge(dir.file("evil.db"), kRules);
  EXPECT_EQ(merged.dispatch_tables, 0);
  EXPECT_EQ(merged.dispatch_tables_rejected, 1);
  EXPECT_NE(rejections(merged).find("implausible dispatch table"), std::string::npos)
      << rejections(merged);

  // A copied file holds it anyway: it is stored, and ignored at use.
  db.put_dispatch_table(one_bucket_table(problem, 256, 0.5, kYear9999, kEvilTuner));
  EXPECT_EQ(db.find_dispatch_table(problem.key_text, "sm_80")->tuner_version, kEvilTuner);
  std::vector<std::string> ignored;
  const auto decided = db.decided_dispatch_table(problem.key_text, "sm_80", kRules, &ignored);
  ASSERT_TRUE(decided);
  EXPECT_EQ(decided->entries.front().config_json, sample_config(64));
  EXPECT_TRUE(contains(ignored, kEvilTuner)) << ::testing::PrintToString(ignored);
  EXPECT_TRUE(contains(ignored, "lies in the future")) << ::testing::PrintToString(ignored);
  // A newer tuner format and a date in the future are each enough.
  db.put_dispatch_table(one_bucket_table(problem, 128, 0.5, kNow, "tcjit-tuner 2 / 0.1.0 / cuda"));
  db.put_dispatch_table(
      one_bucket_table(problem, 128, 0.5, kYear9999, "tcjit-tuner 1 / 0.2.0 / cuda"));
  EXPECT_EQ(db.decided_dispatch_table(problem.key_text, "sm_80", kRules)->entries[0].config_json,
            sample_config(64));
}

// Two honest shards tuned the same problem: merge keeps the faster table, not the newer.
TEST_F(Decisions, MergingHonestShardsKeepsTheFasterDecisionInEitherOrder) {
  for (const bool newer_is_slower : {true, false}) {
    SCOPED_TRACE(newer_is_slower ? "the newer is slower" : "the older is slower");
    TempDir shards;
    {
      KernelsDb s2 = KernelsDb::open(shards.file("s2.db"));
      s2.put_problem(problem);
      s2.put_result(result(problem, 2, 20.62));
      s2.put_dispatch_table(one_bucket_table(problem, 2, 20.62, newer_is_slower ? 1000 : 2000));
      KernelsDb s3 = KernelsDb::open(shards.file("s3.db"));
      s3.put_problem(problem);
      s3.put_result(result(problem, 3, 20.63));
      s3.put_dispatch_table(one_bucket_table(problem, 3, 20.63, newer_is_slower ? 2000 : 1000));
    }
    for (const auto &[first, second] : {std::pair{"s2.db", "s3.db"}, std::pair{"s3.db", "s2.db"}}) {
      KernelsDb merged = KernelsDb::open(shards.file(std::string("m-") + first + second));
      merged.merge(shards.file(first), kRules);
      merged.merge(shards.file(second), kRules);
      const auto table = merged.decided_dispatch_table(problem.key_text, "sm_80", kRules);
      ASSERT_TRUE(table);
      EXPECT_EQ(table->entries.front().config_json, sample_config(2)) << first << " " << second;
      EXPECT_EQ(merged.best_result(problem.key_text, "sm_80", std::nullopt, kRules)->config_json,
                sample_config(2));
    }
  }
}

TEST_F(Decisions, BetterTableComparesEvidenceThenTimeThenBreaksTiesDeterministically) {
  DispatchTable measured = one_bucket_table(problem, 2, 30.0, 1000);
  DispatchTable predicted = one_bucket_table(problem, 3, 1.0, 2000);
  predicted.entries[0].provenance = ProvenanceKind::predicted;
  EXPECT_TRUE(better_dispatch_table(measured, predicted));
  EXPECT_FALSE(better_dispatch_table(predicted, measured));
  DispatchTable emulated = predicted;
  emulated.entries[0].provenance = ProvenanceKind::emulated;
  EXPECT_TRUE(better_dispatch_table(emulated, predicted));
  // Same time: the smaller config text, whichever is newer.
  DispatchTable a = one_bucket_table(problem, 2, 20.0, 1000);
  DispatchTable b = one_bucket_table(problem, 3, 20.0, 2000);
  EXPECT_NE(better_dispatch_table(a, b), better_dispatch_table(b, a));
  // Times of other measurers are not compared: the newer decides.
  DispatchTable other = one_bucket_table(problem, 3, 99.0, 3000, "tcjit-tuner 1 / 0.2.0 / cuda");
  EXPECT_TRUE(better_dispatch_table(other, a));
}

// median_us of -5, 0 and inf (and other values out of range) are never the fastest, are refused
// by import and merge, flagged by check; a file check passes exports and re-imports whole.
TEST_F(Decisions, ResultTimesOutOfRangeAreIgnoredRefusedAndFlagged) {
  const double inf = std::numeric_limits<double>::infinity();
  {
    KernelsDb bad = KernelsDb::open(dir.file("bad.db"));
    bad.put_problem(problem);
    bad.put_binary(testing::sample_binary(problem, 64));
    bad.put_binary(testing::sample_binary(problem, 128));
    bad.put_result(result(problem, 64, 30.0));
    int64_t when = 1700000000000;
    for (const double median : {-5.0, 0.0, inf}) { // config 128 "faster" than 64's 30 us
      ResultRecord r = result(problem, 128, median);
      r.timing = Timing{median, median, median, 0};
      r.tflops = std::nullopt;
      r.measured_ms = ++when;
      bad.put_result(r);
    }
    // The fastest config is the plausible one, with rules or without.
    EXPECT_DOUBLE_EQ(bad.best_result(problem.key_text, "sm_80")->timing->median_us, 30.0);
    EXPECT_DOUBLE_EQ(
        bad.best_result(problem.key_text, "sm_80", std::nullopt, kRules)->timing->median_us, 30.0);
    const BinaryLookup found =
        bad.find_binary({problem.key_text, std::nullopt, "sm_80", "12.4", "0.1.0", kRules});
    ASSERT_EQ(found.status, LookupStatus::hit);
    EXPECT_EQ(found.binary->key.config_json, sample_config(64));
  }
  const CheckReport report = KernelsDb::check(dir.file("bad.db"), true, kRules);
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(report.implausible.size(), 3u) << ::testing::PrintToString(report.implausible);
  EXPECT_TRUE(contains(report.implausible, "median_us -5"));
  EXPECT_TRUE(contains(report.implausible, "median_us 0"));
  EXPECT_TRUE(contains(report.implausible, "median_us inf"));

  KernelsDb merged = KernelsDb::open(dir.file("merged.db"));
  const TransferCounts counts = merged.merge(dir.file("bad.db"), kRules);
  EXPECT_EQ(counts.results_added, 1);
  EXPECT_EQ(counts.rejected.size(), 3u) << rejections(counts);
  EXPECT_NE(rejections(counts).find("median_us inf"), std::string::npos) << rejections(counts);
  // What merge kept passes check, and exports and re-imports whole.
  merged.put_dispatch_table(one_bucket_table(problem, 64, 30.0, kNow));
  EXPECT_TRUE(KernelsDb::check(dir.file("merged.db"), true, kRules).ok);
  std::stringstream exported;
  merged.export_jsonl(exported);
  KernelsDb copy = KernelsDb::open(dir.file("copy.db"));
  std::stringstream input(exported.str());
  const TransferCounts imported = copy.import_jsonl(input, kRules);
  EXPECT_TRUE(imported.rejected.empty()) << rejections(imported);
  std::stringstream again;
  copy.export_jsonl(again);
  EXPECT_EQ(again.str(), exported.str());
}

TEST_F(Decisions, ImportRefusesEachValueOutOfRangeNamingIt) {
  KernelsDb db = KernelsDb::open(dir.file("a.db"));
  nlohmann::json problem_line = problem_to_json(problem);
  problem_line["type"] = "problem";
  std::string text = "{\"type\":\"tcjit-kernels-db\",\"schema\":3}\n" + problem_line.dump() + "\n";
  auto result_line = [&](const char *field, nlohmann::json value) {
    nlohmann::json line = result_to_json(result(problem, 64, 10.0));
    line["type"] = "result";
    if (std::string(field).starts_with("time_us."))
      line["time_us"][std::string(field).substr(8)] = value;
    else
      line[field] = value;
    return line.dump() + "\n";
  };
  text += result_line("time_us.median", -5);
  text += result_line("time_us.median", 0);
  text += result_line("time_us.stddev", -1);
  text += result_line("tflops", -3);
  text += result_line("clock_mhz", 0);
  text += result_line("measured_ms", kYear9999);
  text += result_line("tuner_version", kEvilTuner);
  nlohmann::json table = dispatch_table_to_json(one_bucket_table(problem, 64, 0, kNow));
  table["type"] = "dispatch";
  text += table.dump() + "\n";
  table = dispatch_table_to_json(one_bucket_table(problem, 64, 1, kYear9999, kEvilTuner));
  table["type"] = "dispatch";
  text += table.dump() + "\n";
  text += result_line("time_us.median", 10.0); // a good one
  std::stringstream input(text);
  const TransferCounts counts = db.import_jsonl(input, kRules);
  const std::string why = rejections(counts);
  EXPECT_EQ(counts.results_added, 1) << why;
  EXPECT_EQ(counts.rejected.size(), 9u) << why;
  for (const char *named :
       {"median_us -5", "median_us 0", "stddev_us -1", "tflops -3", "clock_mhz 0",
        "measured_ms 253402300799000", "tcjit-tuner 999 evil", "time_us 0", "import line 3"})
    EXPECT_NE(why.find(named), std::string::npos) << named << "\n" << why;
}

// plausible_result_sql (best_result, find_binary's fastest config) and implausible_result judge
// every row alike.
TEST_F(Decisions, SqlAndCxxJudgementsAgree) {
  KernelsDb db = KernelsDb::open(dir.file("a.db"));
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<ResultRecord> rows;
  auto add = [&](auto change) {
    ResultRecord r = result(sample_problem(int(rows.size())), 64, 10.0);
    change(r);
    rows.push_back(r);
  };
  add([](ResultRecord &) {});
  for (const double v : {-5.0, 0.0, inf, -inf, 4e9, 1e-9})
    add([v](ResultRecord &r) { r.timing->median_us = v; });
  add([](ResultRecord &r) { r.timing->min_us = 11; });
  add([](ResultRecord &r) { r.timing->max_us = 9; });
  add([](ResultRecord &r) { r.timing->stddev_us = -1; });
  add([](ResultRecord &r) { r.tflops = -1; });
  add([](ResultRecord &r) { r.tflops = 2e6; });
  add([](ResultRecord &r) { r.provenance.clock_mhz = 0; });
  add([](ResultRecord &r) { r.provenance.clock_mhz = std::nullopt; });
  add([](ResultRecord &r) { r.measured_ms = kNow + kClockSkewMs; });
  add([](ResultRecord &r) { r.measured_ms = kNow + kClockSkewMs + 1; });
  for (const char *version :
       {"tcjit-tuner 999 evil", "tcjit-tuner 2 / a / b", "tcjit-tuner 1 / ", "tcjit-tuner 01 / x",
        "tcjit-tuner 1x / y", "0.1.0", "tcjit-tuner 0 / x", "tcjit-tuner 123456789 / x"})
    add([version](ResultRecord &r) { r.tuner_version = version; });
  for (const ResultRecord &r : rows) {
    SCOPED_TRACE(dump_json(result_to_json(r)) + " " + r.tuner_version);
    ProblemRecord p = sample_problem(int(&r - rows.data()));
    db.put_problem(p);
    db.put_result(r);
    const bool plausible = !implausible_result(r, kRules);
    EXPECT_EQ(db.best_result(p.key_text, "sm_80", std::nullopt, kRules).has_value(), plausible);
  }
}

} // namespace
} // namespace tcjit::kernels_db
