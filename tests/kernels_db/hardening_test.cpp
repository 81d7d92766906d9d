// Hostile files and records: an out-of-range user_version, another program's database,
// read-only opens that must not write, import records of the wrong type, too deep or with a bad
// cubin hash, merge of values of the wrong storage class, malformed stored JSON.
#include "db_test_util.h"

#include "kernels_db/canonical_json.h"
#include "kernels_db/connection.h"
#include "kernels_db/kernels_db.h"
#include "kernels_db/schema.h"
#include "kernels_db/sha256.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>
#include <sstream>

namespace tcjit::kernels_db {
namespace {

using testing::sample_binary;
using testing::sample_problem;
using testing::sample_result;
using testing::TempDir;

std::string file_bytes(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

OpenOptions read_only() {
  OpenOptions options;
  options.read_only = true;
  options.create_if_missing = false;
  return options;
}

TEST(KernelsDbHardening, OutOfRangeUserVersionIsAClearErrorForEveryOpen) {
  TempDir dir;
  const auto path = dir.file("kernels.db");
  { KernelsDb::open(path); }
  for (const char *value : {"-1", "-2147483648"}) {
    {
      Connection raw = Connection::open(path);
      raw.exec(std::string("PRAGMA user_version = ") + value);
    }
    for (const bool ro : {false, true}) {
      try {
        KernelsDb::open(path, ro ? read_only() : OpenOptions{});
        ADD_FAILURE() << value << " opened";
      } catch (const DbError &error) {
        EXPECT_EQ(error.kind(), DbErrorKind::corrupt);
        EXPECT_TRUE(contains(error.what(), std::string("invalid schema version ") + value))
            << error.what();
        EXPECT_TRUE(contains(error.what(), path.string())) << error.what();
      }
    }
  }
}

TEST(KernelsDbHardening, ForeignDatabaseIsRefusedAndLeftUntouched) {
  TempDir dir;
  const auto path = dir.file("other.db");
  {
    Connection raw = Connection::open(path);
    raw.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); "
             "INSERT INTO notes (text) VALUES ('hello')");
  }
  const std::string before = file_bytes(path);
  for (const bool ro : {true, false}) {
    try {
      KernelsDb::open(path, ro ? read_only() : OpenOptions{});
      ADD_FAILURE() << "opened a foreign database";
    } catch (const DbError &error) {
      EXPECT_TRUE(contains(error.what(), "not a tcjit kernel database")) << error.what();
    }
  }
  EXPECT_EQ(file_bytes(path), before);
  EXPECT_FALSE(std::filesystem::exists(path.string() + "-wal"));
  Connection raw = Connection::open(path);
  Statement mode = raw.prepare("PRAGMA journal_mode");
  ASSERT_TRUE(mode.step());
  EXPECT_EQ(mode.column_text(0), "delete"); // WAL not turned on
}

TEST(KernelsDbHardening, ReadOnlyOpenNeverMigratesOrCreates) {
  TempDir dir;
  const auto path = dir.file("old.db");
  {
    Connection raw = Connection::open(path);
    migrate_to(raw, 1);
  }
  const std::string before = file_bytes(path);
  EXPECT_THROW(KernelsDb::open(path, read_only()), DbError);
  EXPECT_EQ(file_bytes(path), before);
  // An empty file is not a tcjit database either, and stays empty.
  const auto empty = dir.file("empty.db");
  std::ofstream(empty).close();
  try {
    KernelsDb::open(empty, read_only());
    ADD_FAILURE() << "opened an empty file";
  } catch (const DbError &error) {
    EXPECT_TRUE(contains(error.what(), "not a tcjit kernel database")) << error.what();
  }
  EXPECT_EQ(std::filesystem::file_size(empty), 0u);
}

TEST(KernelsDbHardening, DroppedTableIsRefusedAtOpen) {
  TempDir dir;
  const auto path = dir.file("kernels.db");
  { KernelsDb::open(path); }
  {
    Connection raw = Connection::open(path);
    raw.exec("DROP TABLE results");
  }
  try {
    KernelsDb::open(path);
    ADD_FAILURE() << "opened";
  } catch (const DbError &error) {
    EXPECT_EQ(error.kind(), DbErrorKind::corrupt);
    EXPECT_TRUE(contains(error.what(), "table 'results' of schema 1 is missing")) << error.what();
  }
}

// Found by fuzzing `db check` (tests/fuzz/regressions/db_check/renamed_column_passed_check.db:
// two bytes of results.tuner_version changed): a table with the right name but other columns
// passed the full check, and every query on it failed with "no such column ... this is
// unexpected; please report it". Now check reports it and opens refuse it, naming the columns.
TEST(KernelsDbHardening, RenamedColumnFailsTheCheckAndIsRefusedAtOpen) {
  TempDir dir;
  const auto path = dir.file("kernels.db");
  {
    KernelsDb db = KernelsDb::open(path);
    const ProblemRecord problem = sample_problem(1);
    db.put_problem(problem);
    db.put_result(sample_result(problem, 64, 5.0));
  }
  {
    Connection raw = Connection::open(path);
    raw.exec("ALTER TABLE results RENAME COLUMN tuner_version TO \"tuner_v\xa3on\"");
  }
  const CheckReport report = KernelsDb::check(path, true);
  EXPECT_FALSE(report.ok);
  const std::vector<std::string> expected = {
      "table 'results' has no column 'tuner_version' (schema 6)",
      "table 'results' has a column 'tuner_v\\xa3on' that schema 6 does not have"};
  EXPECT_EQ(report.problems, expected);
  for (const bool read_only_open : {false, true}) {
    try {
      KernelsDb::open(path, read_only_open ? read_only() : OpenOptions{});
      ADD_FAILURE() << "opened";
    } catch (const DbError &error) {
      EXPECT_EQ(error.kind(), DbErrorKind::corrupt);
      EXPECT_TRUE(contains(error.what(), "database schema is damaged: table 'results' has no "
                                         "column 'tuner_version' (schema 6)"))
          << error.what();
    }
  }
}

TEST(KernelsDbHardening, DeepJsonIsRefusedWithoutRecursion) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_EQ(json_nesting_depth(deep), 100000);
  EXPECT_EQ(json_nesting_depth(R"({"a":"[[[[","b":[1,{"c":2}]})"), 3);
  EXPECT_THROW(canonical_json(deep, "config"), DbError);
}

class Import : public ::testing::Test {
protected:
  TempDir dir;
  KernelsDb db = KernelsDb::open(dir.file("kernels.db"));
  ProblemRecord problem = sample_problem(0);
  BinaryRecord binary = sample_binary(problem, 128);
  std::string header = R"({"type":"tcjit-kernels-db","schema":3})";

  nlohmann::json exported_binary() {
    KernelsDb source = KernelsDb::open(dir.file("source.db"));
    source.put_problem(problem);
    source.put_binary(binary);
    std::stringstream out;
    source.export_jsonl(out);
    std::string line;
    while (std::getline(out, line)) {
      auto object = nlohmann::json::parse(line);
      if (object["type"] == "binary")
        return object;
    }
    return {};
  }
};

TEST_F(Import, BadRecordsAreRejectedWithLineAndReasonGoodOnesKept) {
  db.put_problem(problem);
  db.put_binary(binary);
  const nlohmann::json good = exported_binary();
  ASSERT_FALSE(good.is_null());
  nlohmann::json empty_hash = good;
  empty_hash["cubin_base64"] = ""; // an empty cubin ...
  empty_hash["cubin_sha256"] = ""; // ... with an empty hash
  nlohmann::json wrong_hash = good;
  wrong_hash["cubin_base64"] = "AAAA";
  nlohmann::json no_hash = good;
  no_hash.erase("cubin_sha256");
  nlohmann::json text_number = good;
  text_number["compile_ms"] = "12.5";
  nlohmann::json problem_line = {
      {"type", "problem"}, {"key", "gemm:new"},   {"hash", "00000000000000aa"},
      {"op", "gemm"},      {"dtype", "f16"},      {"arch", "sm_80"},
      {"spec", "gemm"},    {"shape", {{"m", 1}}}, {"created_ms", 5}};
  nlohmann::json text_int = problem_line;
  text_int["key"] = "gemm:text-int";
  text_int["created_ms"] = "5";
  nlohmann::json shape_string = problem_line;
  shape_string["key"] = "gemm:shape-string";
  shape_string["shape"] = R"({"m":1})";
  const std::string deep_shape = R"({"type":"problem","key":"gemm:deep","hash":"00000000000000ab",)"
                                 R"("op":"gemm","dtype":"f16","arch":"sm_80","spec":"x","shape":)" +
                                 std::string(100000, '[') + std::string(100000, ']') +
                                 R"(,"created_ms":5})";
  std::stringstream input(header + "\n" + empty_hash.dump() + "\n" + wrong_hash.dump() + "\n" +
                          no_hash.dump() + "\n" + text_number.dump() + "\n" + text_int.dump() +
                          "\n" + shape_string.dump() + "\n" + deep_shape + "\n{not json\n" +
                          problem_line.dump() + "\n");
  const TransferCounts counts = db.import_jsonl(input);
  ASSERT_EQ(counts.rejected.size(), 8u);
  const char *reasons[] = {"without a cubin_sha256",
                           "does not match its cubin_sha256",
                           "'cubin_sha256' is missing",
                           "'compile_ms' is missing or not a number",
                           "'created_ms' is missing or not an integer",
                           "'shape' is missing or not a JSON object",
                           "100001 deep",
                           "not JSON"};
  for (size_t i = 0; i < counts.rejected.size(); ++i) {
    EXPECT_EQ(counts.rejected[i].where, "import line " + std::to_string(i + 2));
    EXPECT_TRUE(contains(counts.rejected[i].reason, reasons[i])) << counts.rejected[i].reason;
  }
  EXPECT_EQ(counts.binaries_rejected, 4);
  EXPECT_EQ(counts.problems, 1); // the good record is kept
  EXPECT_TRUE(db.find_problem("gemm:new"));
  EXPECT_FALSE(db.find_problem("gemm:text-int"));
  EXPECT_FALSE(db.find_problem("gemm:deep"));
  // The valid stored cubin was not replaced.
  const BinaryLookup found =
      db.find_binary({problem.key_text, binary.key.config_json, "sm_80", binary.key.toolkit_version,
                      binary.key.compiler_version});
  ASSERT_EQ(found.status, LookupStatus::hit);
  EXPECT_EQ(found.binary->cubin, binary.cubin);
}

TEST(KernelsDbHardening, MergeRejectsTextInNumericColumns) {
  TempDir dir;
  KernelsDb a = KernelsDb::open(dir.file("a.db"));
  const ProblemRecord problem = sample_problem(0);
  {
    KernelsDb b = KernelsDb::open(dir.file("b.db"));
    b.put_problem(problem);
    b.put_result(sample_result(problem, 128, 10.0));
    b.put_result(sample_result(problem, 64, 20.0));
    b.put_binary(sample_binary(problem, 128));
  }
  {
    Connection raw = Connection::open(dir.file("b.db"));
    raw.exec("UPDATE results SET median_us = 'fast' WHERE config_json LIKE '%\"tile_m\":64%'");
    raw.exec("UPDATE binaries SET compile_ms = 'slow'");
  }
  const TransferCounts counts = a.merge(dir.file("b.db"));
  EXPECT_EQ(counts.results_added, 1);
  EXPECT_EQ(counts.binaries, 0);
  ASSERT_EQ(counts.rejected.size(), 2u);
  EXPECT_TRUE(contains(counts.rejected[0].where, "binaries row 1")) << counts.rejected[0].where;
  EXPECT_TRUE(contains(counts.rejected[0].reason, "compile_ms holds text"));
  EXPECT_TRUE(contains(counts.rejected[1].where, "results row 2")) << counts.rejected[1].where;
  EXPECT_TRUE(contains(counts.rejected[1].reason, "median_us holds text"));
  const auto results = a.results(problem.key_text);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_DOUBLE_EQ(results[0].timing->median_us, 10.0); // no 'fast' coerced into 0 us
}

TEST(KernelsDbHardening, MalformedStoredJsonIsReportedNotThrown) {
  TempDir dir;
  const auto path = dir.file("kernels.db");
  const ProblemRecord problem = sample_problem(0);
  {
    KernelsDb db = KernelsDb::open(path);
    db.put_problem(problem);
    db.put_binary(sample_binary(problem, 128));
    db.put_result(sample_result(problem, 128, 10.0));
  }
  {
    Connection raw = Connection::open(path);
    raw.exec("PRAGMA ignore_check_constraints = ON; UPDATE problems SET shape_json = '{bad'; "
             "UPDATE binaries SET resources_json = '[1,'; "
             "UPDATE results SET config_json = 'nope'");
  }
  KernelsDb db = KernelsDb::open(path, read_only());
  std::stringstream out;
  const TransferCounts counts = db.export_jsonl(out);
  EXPECT_EQ(counts.problems, 1);
  EXPECT_EQ(counts.warnings.size(), 3u);
  EXPECT_TRUE(contains(counts.warnings[0], "shape is not valid JSON")) << counts.warnings[0];
  std::string line;
  std::getline(out, line); // header
  std::getline(out, line);
  const auto problem_json = nlohmann::json::parse(line);
  EXPECT_EQ(problem_json["shape"], "{bad");
  EXPECT_EQ(problem_json["invalid_json"], nlohmann::json::array({"shape"}));
  const auto check = KernelsDb::check(path);
  EXPECT_FALSE(check.ok);
  EXPECT_EQ(check.bad_values.size(), 3u);
}

// A value outside its column's CHECK list (written past SQLite, e.g. by a damaged file: the
// fuzzer's `weasured`) fails the full check, naming the row, the value and the allowed ones;
// readers refuse it with a message.
TEST(KernelsDbHardening, ValuesOutsideTheirCheckListFailTheCheck) {
  TempDir dir;
  const auto path = dir.file("kernels.db");
  const ProblemRecord problem = sample_problem(0);
  {
    KernelsDb db = KernelsDb::open(path);
    db.put_problem(problem);
    db.put_result(sample_result(problem, 128, 10.0));
    EXPECT_TRUE(KernelsDb::check(path).ok);
  }
  {
    Connection raw = Connection::open(path);
    raw.exec("PRAGMA ignore_check_constraints = ON; UPDATE results SET provenance = 'weasured', "
             "status = 'fine'");
  }
  const CheckReport check = KernelsDb::check(path);
  EXPECT_FALSE(check.ok);
  ASSERT_EQ(check.bad_values.size(), 2u);
  EXPECT_TRUE(contains(check.bad_values[0],
                       "results row 1: status holds 'fine', not one of 'ok', 'failed', 'illegal'"))
      << check.bad_values[0];
  EXPECT_TRUE(contains(check.bad_values[1], "provenance holds 'weasured', not one of 'measured', "
                                            "'predicted', 'emulated'"))
      << check.bad_values[1];
}

} // namespace
} // namespace tcjit::kernels_db
