// Dispatch tables: the pure bucket lookup and validation (dispatch.h), and their storage:
// put/find/replace, persistence, the schema 2 -> 3 migration, export/import, merge, prune, check.
#include "db_test_util.h"

#include "kernels_db/connection.h"
#include "kernels_db/dispatch.h"
#include "kernels_db/error.h"
#include "kernels_db/kernels_db.h"
#include "kernels_db/record_json.h"
#include "kernels_db/schema.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <sstream>

namespace tcjit::kernels_db {
namespace {

using testing::sample_problem;
using testing::TempDir;

DispatchEntry entry(std::string dims, int tile, double time_us = 10.0,
                    ProvenanceKind provenance = ProvenanceKind::measured) {
  return {std::move(dims), testing::sample_config(tile), time_us, provenance};
}

// gemm m=1..8192 n=4096: three m buckets, the last one predicted.
DispatchTable ranged_table(const std::string &problem_key, const std::string &arch = "sm_80",
                           const std::string &tuner = "0.1.0", int64_t created_ms = 0) {
  DispatchTable table;
  table.problem_key = problem_key;
  table.arch = arch;
  table.tuner_version = tuner;
  table.created_ms = created_ms;
  table.entries = {
      entry(R"({"m":[1,16],"n":[4096,4096]})", 64, 4.0),
      entry(R"({"m":[17,128],"n":[4096,4096]})", 128, 9.0),
      entry(R"({"m":[129,8192],"n":[4096,4096]})", 256, 800.0, ProvenanceKind::predicted)};
  return table;
}

DispatchSizes sizes(int64_t m, int64_t n = 4096, int64_t k = 4096, int64_t batch = 1) {
  return {m, n, k, batch};
}

// The message of the DbError that validating `table` throws ("" when it is valid).
std::string rejection(const DispatchTable &table) {
  try {
    validate_dispatch_table(table);
  } catch (const DbError &error) {
    EXPECT_EQ(error.kind(), DbErrorKind::invalid_argument);
    return error.what();
  }
  return "";
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

// ---- the pure lookup ----------------------------------------------------------------------

TEST(DispatchLookup, FindsTheBucketAtEveryEdge) {
  const DispatchTable table = ranged_table("p");
  const DispatchIndex index(table);
  const std::vector<std::pair<int64_t, int>> expected = {
      {1, 64}, {2, 64}, {16, 64}, {17, 128}, {128, 128}, {129, 256}, {4096, 256}, {8192, 256}};
  for (const auto &[m, tile] : expected) {
    const auto found = lookup_dispatch(table, sizes(m));
    ASSERT_TRUE(found) << "m=" << m;
    EXPECT_EQ(found->config_json, testing::sample_config(tile)) << "m=" << m;
    const DispatchEntry *indexed = index.find(sizes(m));
    ASSERT_NE(indexed, nullptr) << "m=" << m;
    EXPECT_EQ(indexed->config_json, found->config_json);
  }
  // Outside the range, or another n: no bucket.
  for (const DispatchSizes &outside :
       {sizes(0), sizes(8193), sizes(16, 4095), sizes(16, 4097), sizes(-1), sizes(16, -5)}) {
    EXPECT_FALSE(lookup_dispatch(table, outside)) << outside.m << "x" << outside.n;
    EXPECT_EQ(index.find(outside), nullptr);
  }
  // k and batch are not named: any value matches.
  EXPECT_TRUE(lookup_dispatch(table, sizes(16, 4096, 1, 1)));
  EXPECT_TRUE(lookup_dispatch(table, sizes(16, 4096, std::numeric_limits<int64_t>::max(), 64)));
  EXPECT_EQ(lookup_dispatch(table, sizes(200))->provenance, ProvenanceKind::predicted);
}

TEST(DispatchLookup, BucketsInSeveralDimensionsAndCatchAll) {
  DispatchTable table;
  table.problem_key = "p";
  table.arch = "sm_80";
  table.entries = {entry(R"({"m":[1,16],"n":[1,16]})", 1), entry(R"({"m":[1,16],"n":[17,32]})", 2),
                   entry(R"({"m":[17,32],"batch":[2,8]})", 3)};
  EXPECT_EQ(rejection(table), "");
  EXPECT_EQ(lookup_dispatch(table, sizes(16, 16))->config_json, testing::sample_config(1));
  EXPECT_EQ(lookup_dispatch(table, sizes(16, 17))->config_json, testing::sample_config(2));
  EXPECT_FALSE(lookup_dispatch(table, sizes(16, 33)));
  EXPECT_FALSE(lookup_dispatch(table, sizes(17, 1, 1, 1)));
  EXPECT_EQ(lookup_dispatch(table, sizes(17, 1, 1, 2))->config_json, testing::sample_config(3));
  EXPECT_EQ(lookup_dispatch(table, sizes(32, 999, 7, 8))->config_json, testing::sample_config(3));
  EXPECT_FALSE(lookup_dispatch(table, sizes(32, 999, 7, 9)));

  DispatchTable catch_all;
  catch_all.problem_key = "p";
  catch_all.arch = "sm_80";
  catch_all.entries = {entry("{}", 7)};
  EXPECT_EQ(lookup_dispatch(catch_all, sizes(12345, 1, 2, 3))->config_json,
            testing::sample_config(7));
}

TEST(DispatchLookup, BucketTextIsCanonical) {
  EXPECT_EQ(canonical_dispatch_dims(R"( { "n" : [ 4096, 4096 ], "m": [1, 16] } )"),
            R"({"m":[1,16],"n":[4096,4096]})");
  EXPECT_EQ(canonical_dispatch_dims(R"({"batch":[1,1],"k":[64,64]})"),
            R"({"batch":[1,1],"k":[64,64]})");
  EXPECT_EQ(canonical_dispatch_dims("{}"), "{}");
  const DispatchBucket bucket = parse_dispatch_bucket(R"({"k":[8,9]})");
  EXPECT_TRUE(bucket.named[2]);
  EXPECT_FALSE(bucket.named[0]);
  EXPECT_EQ(bucket.lo[2], 8);
  EXPECT_EQ(bucket.hi[2], 9);
}

TEST(DispatchLookup, BadTablesAreRejectedWithClearMessages) {
  auto with = [](std::vector<DispatchEntry> entries) {
    DispatchTable table;
    table.problem_key = "gemm m=1..8192";
    table.arch = "sm_80";
    table.tuner_version = "0.1.0";
    table.entries = std::move(entries);
    return table;
  };
  // Closed intervals: sharing an edge is an overlap.
  std::string message =
      rejection(with({entry(R"({"m":[1,16]})", 1), entry(R"({"m":[16,32]})", 2)}));
  EXPECT_TRUE(contains(message, "dispatch table buckets overlap: entry 0 {\"m\":[1,16]} and "
                                "entry 1 {\"m\":[16,32]} both hold m=16"))
      << message;
  EXPECT_TRUE(contains(message, "gemm m=1..8192")) << message; // names the table
  EXPECT_TRUE(contains(message, "[1,16] and [17,32] do not overlap")) << message;
  // A bucket that does not name a dimension covers all of it.
  message = rejection(with({entry(R"({"m":[1,16],"n":[1,8]})", 1), entry(R"({"m":[8,8]})", 2)}));
  EXPECT_TRUE(contains(message, "both hold m=8 n=1")) << message;
  message = rejection(with({entry("{}", 1), entry("{}", 2)}));
  EXPECT_TRUE(contains(message, "both hold every size")) << message;
  // Overlap between non-adjacent entries is found too.
  message = rejection(
      with({entry(R"({"m":[1,4]})", 1), entry(R"({"m":[5,8]})", 2), entry(R"({"m":[3,3]})", 3)}));
  EXPECT_TRUE(contains(message, "entry 0 {\"m\":[1,4]} and entry 2 {\"m\":[3,3]} both hold m=3"))
      << message;

  const std::vector<std::pair<std::string, std::string>> bad_buckets = {
      {R"({"m":[32,16]})", "'m' [32,16] is empty (lo > hi"},
      {R"({"q":[1,2]})", "unknown dimension 'q'"},
      {R"({"m":[1.5,2]})", "'m' is not [lo, hi] with integer bounds"},
      {R"({"m":[1,2,3]})", "'m' is not [lo, hi] with integer bounds"},
      {R"({"m":16})", "'m' is not [lo, hi] with integer bounds"},
      {R"({"m":["1","2"]})", "'m' is not [lo, hi] with integer bounds"},
      {R"({"m":[-4,2]})", "'m' has a negative bound"},
      {R"({"m":[1,18446744073709551615]})", "above 2^63-1"},
      {R"([1,2])", "not a JSON object"},
      {R"({"m":[1,)", "not JSON"},
      {"", "not JSON"},
  };
  for (const auto &[dims, expected] : bad_buckets) {
    message = rejection(with({entry(dims, 1)}));
    EXPECT_TRUE(contains(message, "entry 0: bad dispatch bucket")) << dims << ": " << message;
    EXPECT_TRUE(contains(message, expected)) << dims << ": " << message;
    EXPECT_THROW(lookup_dispatch(with({entry(dims, 1)}), sizes(1)), DbError);
  }

  message = rejection(with({}));
  EXPECT_TRUE(contains(message, "has no entries")) << message;
  DispatchTable no_key = with({entry("{}", 1)});
  no_key.problem_key.clear();
  EXPECT_TRUE(contains(rejection(no_key), "no problem key"));
  DispatchTable no_arch = with({entry("{}", 1)});
  no_arch.arch.clear();
  EXPECT_TRUE(contains(rejection(no_arch), "no arch"));
  DispatchEntry bad_config = entry(R"({"m":[1,2]})", 1);
  bad_config.config_json = "[1,2]";
  EXPECT_TRUE(contains(rejection(with({bad_config})), "entry 0: config_json must be a JSON object"))
      << rejection(with({bad_config}));
  EXPECT_TRUE(contains(rejection(with({entry("{}", 1, std::nan(""))})), "entry 0: time_us"));
  EXPECT_TRUE(contains(rejection(with({entry("{}", 1, -1.0)})), "non-negative"));
  EXPECT_THROW(DispatchIndex(with({entry(R"({"m":[1,16]})", 1), entry(R"({"m":[2,3]})", 2)})),
               DbError);
}

// ---- storage --------------------------------------------------------------------------------

class DispatchStore : public ::testing::Test {
protected:
  TempDir dir;
  std::filesystem::path path = dir.file("kernels.db");
  ProblemRecord problem = sample_problem(0);
};

TEST_F(DispatchStore, PutFindCanonicalAndOrdered) {
  KernelsDb db = KernelsDb::open(path);
  db.put_problem(problem);
  DispatchTable table = ranged_table(problem.key_text);
  table.entries[0].dims_json = R"( {"n": [4096, 4096], "m": [1, 16]} )";
  table.entries[0].config_json = R"({ "tile_n": 128, "tile_m": 64, "stages": 3 })";
  db.put_dispatch_table(table);

  const auto found = db.find_dispatch_table(problem.key_text, "sm_80");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->problem_key, problem.key_text);
  EXPECT_EQ(found->arch, "sm_80");
  EXPECT_EQ(found->tuner_version, "0.1.0");
  EXPECT_GT(found->created_ms, 0); // 0 means now
  ASSERT_EQ(found->entries.size(), 3u);
  EXPECT_EQ(found->entries[0].dims_json, R"({"m":[1,16],"n":[4096,4096]})");
  EXPECT_EQ(found->entries[0].config_json, R"({"stages":3,"tile_m":64,"tile_n":128})");
  EXPECT_EQ(found->entries[1].dims_json, R"({"m":[17,128],"n":[4096,4096]})");
  EXPECT_DOUBLE_EQ(found->entries[1].time_us, 9.0);
  EXPECT_EQ(found->entries[2].provenance, ProvenanceKind::predicted);
  EXPECT_EQ(lookup_dispatch(*found, sizes(100))->config_json,
            R"({"stages":3,"tile_m":128,"tile_n":128})");

  EXPECT_FALSE(db.find_dispatch_table(problem.key_text, "sm_90"));
  EXPECT_FALSE(db.find_dispatch_table(problem.key_text, "sm_80", "9.9.9"));
  EXPECT_FALSE(db.find_dispatch_table("unknown", "sm_80"));
  EXPECT_EQ(db.show(problem.key_text).at(0).dispatch_tables.size(), 1u);
  EXPECT_EQ(db.list({}).at(0).dispatch_tables, 1);
  const DbStats stats = db.stats();
  EXPECT_EQ(stats.dispatch_tables, 1);
  EXPECT_EQ(stats.dispatch_entries, 3);
}

// The decided table of every problem of one operation on one arch (what the runtime scans for a
// kernel family's tables), one per problem, in the order the problems were stored.
TEST_F(DispatchStore, DecidedTablesOfAnOperationOnAnArch) {
  KernelsDb db = KernelsDb::open(path);
  const ProblemRecord second = sample_problem(1);
  const ProblemRecord conv = sample_problem(2, "conv2d");
  for (const ProblemRecord &p : {problem, second, conv}) {
    db.put_problem(p);
    db.put_dispatch_table(ranged_table(p.key_text));
  }
  DispatchTable newer = ranged_table(problem.key_text);
  newer.tuner_version = "0.2.0";
  db.put_dispatch_table(newer); // a second table of the first problem: still one decides
  DispatchTable other_arch = ranged_table(second.key_text);
  other_arch.arch = "sm_90";
  db.put_dispatch_table(other_arch);

  const std::vector<DispatchTable> gemms = db.decided_dispatch_tables_of_op("gemm", "sm_80", {});
  ASSERT_EQ(gemms.size(), 2u);
  EXPECT_EQ(gemms[0].problem_key, problem.key_text);
  EXPECT_EQ(gemms[1].problem_key, second.key_text);
  EXPECT_EQ(gemms[0].entries.size(), 3u);
  const auto convs = db.decided_dispatch_tables_of_op("conv2d", "sm_80", {});
  ASSERT_EQ(convs.size(), 1u);
  EXPECT_EQ(convs[0].problem_key, conv.key_text);
  const auto on_90 = db.decided_dispatch_tables_of_op("gemm", "sm_90", {});
  ASSERT_EQ(on_90.size(), 1u);
  EXPECT_EQ(on_90[0].problem_key, second.key_text);
  EXPECT_TRUE(db.decided_dispatch_tables_of_op("conv3d", "sm_80", {}).empty());
}

TEST_F(DispatchStore, UnknownProblemAndBadTablesStoreNothing) {
  KernelsDb db = KernelsDb::open(path);
  try {
    db.put_dispatch_table(ranged_table("no such problem"));
    FAIL();
  } catch (const DbError &error) {
    EXPECT_EQ(error.kind(), DbErrorKind::not_found);
    EXPECT_TRUE(contains(error.what(), "dispatch table for unknown problem 'no such problem'"));
    EXPECT_TRUE(contains(error.how_to_fix(), "put_problem"));
  }
  db.put_problem(problem);
  db.put_dispatch_table(ranged_table(problem.key_text));
  DispatchTable overlapping = ranged_table(problem.key_text);
  overlapping.entries[1].dims_json = R"({"m":[16,128],"n":[4096,4096]})";
  try {
    db.put_dispatch_table(overlapping);
    FAIL();
  } catch (const DbError &error) {
    EXPECT_EQ(error.kind(), DbErrorKind::invalid_argument);
    EXPECT_TRUE(contains(error.what(), "both hold m=16 n=4096")) << error.what();
  }
  // The stored table is untouched.
  const auto found = db.find_dispatch_table(problem.key_text, "sm_80");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->entries[1].dims_json, R"({"m":[17,128],"n":[4096,4096]})");
  EXPECT_EQ(db.stats().dispatch_entries, 3);
}

TEST_F(DispatchStore, ReplacesPerTunerVersionAndFindsTheNewest) {
  KernelsDb db = KernelsDb::open(path);
  db.put_problem(problem);
  db.put_dispatch_table(ranged_table(problem.key_text, "sm_80", "0.1.0", 1000));
  DispatchTable replacement;
  replacement.problem_key = problem.key_text;
  replacement.arch = "sm_80";
  replacement.tuner_version = "0.1.0";
  replacement.created_ms = 2000;
  replacement.entries = {entry(R"({"m":[1,8192]})", 32, 5.0)};
  db.put_dispatch_table(replacement);
  auto found = db.find_dispatch_table(problem.key_text, "sm_80");
  ASSERT_TRUE(found);
  ASSERT_EQ(found->entries.size(), 1u);
  EXPECT_EQ(found->created_ms, 2000);
  EXPECT_EQ(db.dispatch_tables(problem.key_text).size(), 1u);
  EXPECT_EQ(db.stats().dispatch_entries, 1); // the old entries went with the old table

  // Another tuner version is another table; the newest wins unless a version is asked for.
  db.put_dispatch_table(ranged_table(problem.key_text, "sm_80", "0.2.0", 3000));
  db.put_dispatch_table(ranged_table(problem.key_text, "sm_90", "0.2.0", 500));
  EXPECT_EQ(db.find_dispatch_table(problem.key_text, "sm_80")->tuner_version, "0.2.0");
  EXPECT_EQ(db.find_dispatch_table(problem.key_text, "sm_80", "0.1.0")->created_ms, 2000);
  EXPECT_EQ(db.find_dispatch_table(problem.key_text, "sm_90")->created_ms, 500);
  const auto all = db.dispatch_tables(problem.key_text);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].created_ms, 3000); // newest first
  EXPECT_EQ(all[2].created_ms, 500);
  EXPECT_EQ(db.stats().dispatch_tables, 3);
}

TEST_F(DispatchStore, PersistsAcrossReopen) {
  {
    KernelsDb db = KernelsDb::open(path);
    db.put_problem(problem);
    db.put_dispatch_table(ranged_table(problem.key_text, "sm_80", "0.1.0", 1234));
  }
  KernelsDb db = KernelsDb::open(path);
  const auto found = db.find_dispatch_table(problem.key_text, "sm_80");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->created_ms, 1234);
  EXPECT_EQ(found->entries.size(), 3u);
  OpenOptions read_only;
  read_only.read_only = true;
  KernelsDb reader = KernelsDb::open(path, read_only);
  EXPECT_EQ(reader.find_dispatch_table(problem.key_text, "sm_80")->entries[2].dims_json,
            R"({"m":[129,8192],"n":[4096,4096]})");
  EXPECT_THROW(reader.put_dispatch_table(ranged_table(problem.key_text)), DbError);
}

TEST_F(DispatchStore, MigratesASchema2Database) {
  {
    Connection connection = Connection::open(path);
    migrate_to(connection, 2);
    connection.exec("INSERT INTO problems (key_text, key_hash, op, dtype, arch, spec_text, "
                    "shape_json, created_ms) VALUES ('old key', 1, 'gemm', 'f16', 'sm_80', 's', "
                    "'{\"m\":1}', 1)");
    EXPECT_EQ(query_int64(connection, "SELECT COUNT(*) FROM sqlite_master WHERE name LIKE "
                                      "'dispatch%'"),
              0);
  }
  OpenOptions read_only;
  read_only.read_only = true;
  try {
    KernelsDb::open(path, read_only);
    FAIL() << "a schema 2 database was opened read-only";
  } catch (const DbError &error) {
    EXPECT_TRUE(
        contains(error.what(), "database schema 2 is older than " + std::to_string(kSchemaVersion)))
        << error.what();
  }
  {
    KernelsDb db = KernelsDb::open(path); // migrates
    ASSERT_TRUE(db.find_problem("old key"));
    EXPECT_FALSE(db.find_dispatch_table("old key", "sm_80"));
    db.put_dispatch_table(ranged_table("old key"));
  }
  Connection connection = Connection::open(path);
  EXPECT_EQ(read_schema_version(connection), kSchemaVersion);
  EXPECT_EQ(query_int64(connection, "SELECT COUNT(*) FROM sqlite_master WHERE name IN "
                                    "('dispatch_tables', 'dispatch_entries', "
                                    "'dispatch_tables_by_age')"),
            3);
  KernelsDb reader = KernelsDb::open(path, read_only);
  EXPECT_EQ(reader.find_dispatch_table("old key", "sm_80")->entries.size(), 3u);
}

TEST_F(DispatchStore, DeletingTheProblemDeletesItsTables) {
  KernelsDb db = KernelsDb::open(path);
  db.put_problem(problem);
  db.put_dispatch_table(ranged_table(problem.key_text));
  {
    Connection raw = Connection::open(path);
    raw.exec("DELETE FROM problems");
    EXPECT_EQ(query_int64(raw, "SELECT COUNT(*) FROM dispatch_tables"), 0);
    EXPECT_EQ(query_int64(raw, "SELECT COUNT(*) FROM dispatch_entries"), 0);
  }
}

TEST_F(DispatchStore, ExportImportRoundTrip) {
  KernelsDb source = KernelsDb::open(path);
  const ProblemRecord other = sample_problem(1);
  source.put_problem(problem);
  source.put_problem(other);
  source.put_result(testing::sample_result(problem, 64, 4.0));
  source.put_dispatch_table(ranged_table(problem.key_text, "sm_80", "0.1.0", 1000));
  source.put_dispatch_table(ranged_table(problem.key_text, "sm_90", "0.1.0", 1001));
  source.put_dispatch_table(ranged_table(other.key_text, "sm_80", "0.1.0", 1002));
  std::stringstream exported;
  const TransferCounts out = source.export_jsonl(exported);
  EXPECT_EQ(out.dispatch_tables, 3);
  EXPECT_TRUE(contains(exported.str(), "{\"schema\":" + std::to_string(kSchemaVersion) +
                                           ",\"type\":\"tcjit-kernels-db\"}"));
  EXPECT_TRUE(contains(exported.str(), "\"type\":\"dispatch\""));
  EXPECT_TRUE(contains(exported.str(), "\"dims\":{\"m\":[1,16],\"n\":[4096,4096]}"));

  KernelsDb target = KernelsDb::open(dir.file("b.db"));
  std::stringstream input(exported.str());
  const TransferCounts in = target.import_jsonl(input);
  EXPECT_EQ(in.problems, 2);
  EXPECT_EQ(in.dispatch_tables, 3);
  std::stringstream again;
  target.export_jsonl(again);
  EXPECT_EQ(again.str(), exported.str());
  // Importing twice replaces each table by itself.
  std::stringstream input2(exported.str());
  target.import_jsonl(input2);
  EXPECT_EQ(target.stats().dispatch_tables, 3);
  EXPECT_EQ(target.stats().dispatch_entries, 9);
  EXPECT_EQ(target.find_dispatch_table(problem.key_text, "sm_90")->created_ms, 1001);
}

TEST_F(DispatchStore, ImportRejectsABadTableNamingTheLineAndKeepsTheRest) {
  KernelsDb db = KernelsDb::open(path);
  const std::string header = "{\"type\":\"tcjit-kernels-db\",\"schema\":3}\n";
  nlohmann::json problem_line = problem_to_json(problem);
  problem_line["type"] = "problem";
  nlohmann::json table_line = {{"type", "dispatch"},
                               {"problem", problem.key_text},
                               {"arch", "sm_80"},
                               {"tuner_version", "0.1.0"},
                               {"created_ms", 5},
                               {"entries",
                                {{{"dims", {{"m", {1, 16}}}},
                                  {"config", {{"tile_m", 64}}},
                                  {"time_us", 1.0},
                                  {"provenance", "measured"}},
                                 {{"dims", {{"m", {2, 3}}}},
                                  {"config", {{"tile_m", 64}}},
                                  {"time_us", 1.0},
                                  {"provenance", "measured"}}}}};
  std::stringstream bad(header + problem_line.dump() + "\n" + table_line.dump() + "\n");
  TransferCounts counts = db.import_jsonl(bad);
  ASSERT_EQ(counts.rejected.size(), 1u);
  EXPECT_EQ(counts.rejected[0].where, "import line 3");
  EXPECT_TRUE(contains(counts.rejected[0].reason, "overlap")) << counts.rejected[0].reason;
  EXPECT_EQ(db.stats().problems, 1);        // the good record is kept
  EXPECT_EQ(db.stats().dispatch_tables, 0); // the bad one left nothing behind
  // A table of a problem that is not there.
  table_line["entries"].erase(1);
  table_line["problem"] = "gemm:not-stored";
  std::stringstream orphan(header + table_line.dump() + "\n");
  counts = db.import_jsonl(orphan);
  ASSERT_EQ(counts.rejected.size(), 1u);
  EXPECT_EQ(counts.rejected[0].where, "import line 2");
  EXPECT_TRUE(contains(counts.rejected[0].reason, "gemm:not-stored")) << counts.rejected[0].reason;
  // Without entries.
  table_line.erase("entries");
  std::stringstream no_entries(header + problem_line.dump() + "\n" + table_line.dump() + "\n");
  counts = db.import_jsonl(no_entries);
  ASSERT_EQ(counts.rejected.size(), 1u);
  EXPECT_TRUE(contains(counts.rejected[0].reason, "'entries'")) << counts.rejected[0].reason;
}

// The faster of two tables of the same (problem, arch, tuner version), not the newer.
TEST_F(DispatchStore, MergeKeepsTheFasterTableAndRejectsInvalidOnes) {
  KernelsDb a = KernelsDb::open(path);
  const auto b_path = dir.file("b.db");
  KernelsDb b = KernelsDb::open(b_path);
  const ProblemRecord second = sample_problem(1);
  const ProblemRecord third = sample_problem(2);
  for (const ProblemRecord &p : {problem, second, third}) {
    a.put_problem(p);
    b.put_problem(p);
  }
  // problem: b's is faster -> taken. second: a's is faster, b's newer -> a's kept. third: only in
  // b, but damaged.
  auto faster = [](DispatchTable table) {
    for (DispatchEntry &e : table.entries)
      e.time_us /= 2;
    return table;
  };
  a.put_dispatch_table(ranged_table(problem.key_text, "sm_80", "0.1.0", 100));
  b.put_dispatch_table(faster(ranged_table(problem.key_text, "sm_80", "0.1.0", 200)));
  b.find_dispatch_table(problem.key_text, "sm_80"); // (reads work on b)
  a.put_dispatch_table(faster(ranged_table(second.key_text, "sm_80", "0.1.0", 250)));
  b.put_dispatch_table(ranged_table(second.key_text, "sm_80", "0.1.0", 300));
  b.put_dispatch_table(ranged_table(third.key_text, "sm_80", "0.1.0", 400));
  b.put_dispatch_table(ranged_table(third.key_text, "sm_90", "0.1.0", 400));
  {
    Connection raw = Connection::open(b_path);
    raw.exec("UPDATE dispatch_entries SET dims_json = '{\"m\":[1,200],\"n\":[4096,4096]}' "
             "WHERE position = 0 AND table_id = (SELECT d.id FROM dispatch_tables d JOIN "
             "problems p ON p.id = d.problem_id WHERE d.arch = 'sm_90')");
  }
  const TransferCounts counts = a.merge(b_path);
  EXPECT_EQ(counts.dispatch_tables, 2); // problem's (faster) and third's sm_80
  EXPECT_EQ(counts.dispatch_tables_rejected, 1);
  EXPECT_EQ(a.find_dispatch_table(problem.key_text, "sm_80")->created_ms, 200);
  EXPECT_EQ(a.find_dispatch_table(second.key_text, "sm_80")->created_ms, 250);
  EXPECT_TRUE(a.find_dispatch_table(third.key_text, "sm_80"));
  EXPECT_FALSE(a.find_dispatch_table(third.key_text, "sm_90"));
  const TransferCounts again = a.merge(b_path);
  EXPECT_EQ(again.dispatch_tables, 0);
  EXPECT_EQ(a.stats().dispatch_tables, 3);
  // `check` sees the invalid table in b.
  const CheckReport report = KernelsDb::check(b_path);
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(report.dispatch_tables_checked, 4);
  ASSERT_EQ(report.bad_dispatch_tables.size(), 1u);
  EXPECT_TRUE(contains(report.bad_dispatch_tables[0], third.key_text + " sm_90 0.1.0: "))
      << report.bad_dispatch_tables[0];
  EXPECT_TRUE(contains(report.bad_dispatch_tables[0], "overlap"));
  EXPECT_TRUE(contains(report.recovery, "dispatch table"));
  EXPECT_TRUE(KernelsDb::check(path).ok);
}

TEST_F(DispatchStore, MergeMigratesASchema2Database) {
  const auto old_path = dir.file("old.db");
  {
    Connection connection = Connection::open(old_path);
    migrate_to(connection, 2);
    connection.exec("INSERT INTO problems (key_text, key_hash, op, dtype, arch, spec_text, "
                    "shape_json, created_ms) VALUES ('old key', 1, 'gemm', 'f16', 'sm_80', 's', "
                    "'{\"m\":1}', 1)");
  }
  KernelsDb db = KernelsDb::open(path);
  const TransferCounts counts = db.merge(old_path);
  EXPECT_EQ(counts.problems, 1);
  EXPECT_EQ(counts.dispatch_tables, 0);
}

TEST_F(DispatchStore, PruneByAgeRemovesTablesAndThenTheirProblems) {
  KernelsDb db = KernelsDb::open(path);
  ProblemRecord old_problem = problem;
  old_problem.created_ms = 1000;
  db.put_problem(old_problem);
  db.put_dispatch_table(ranged_table(problem.key_text, "sm_80", "0.1.0", 0)); // now
  PruneOptions old;
  old.older_than = std::chrono::hours(24);
  PruneReport report = db.prune(old);
  EXPECT_EQ(report.dispatch_tables_removed, 0);
  EXPECT_EQ(report.problems_removed, 0); // it keeps a dispatch table
  db.put_dispatch_table(ranged_table(problem.key_text, "sm_80", "0.1.0", 2000)); // replaced: old
  report = db.prune(old);
  EXPECT_EQ(report.dispatch_tables_removed, 1);
  EXPECT_EQ(report.problems_removed, 1);
  const DbStats stats = db.stats();
  EXPECT_EQ(stats.dispatch_tables, 0);
  EXPECT_EQ(stats.dispatch_entries, 0);
  // --stale never touches dispatch tables.
  db.put_problem(problem);
  db.put_dispatch_table(ranged_table(problem.key_text));
  PruneOptions stale;
  stale.stale_versions = CurrentVersions{"99.0", "9.9.9"};
  EXPECT_EQ(db.prune(stale).dispatch_tables_removed, 0);
  EXPECT_EQ(db.stats().dispatch_tables, 1);
}

} // namespace
} // namespace tcjit::kernels_db
