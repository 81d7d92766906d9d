// Schema 5: one binary per kernel identity (and arch and versions), shared by every problem whose
// config plans that kernel; problem_binaries links a problem and config to it. Older files convert
// (binaries of equal PTX become one, without a MAC: rebuilt on first use), and every reader and
// writer (lookups, MAC, import, merge, prune, check) follows the links.
#include "db_test_util.h"

#include "kernels_db/connection.h"
#include "kernels_db/kernels_db.h"
#include "kernels_db/schema.h"
#include "kernels_db/sha256.h"
#include "kernels_db/trust_key.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>

namespace tcjit::kernels_db {
namespace {

using testing::sample_binary;
using testing::sample_problem;
using testing::TempDir;

constexpr const char *kIdentity = "tcjit_gemm_f16_128x128x32|sm_80|ptx78";

// $TCJIT_KEY_FILE in the test's directory for the life of the object.
class KeyScope {
public:
  explicit KeyScope(const TempDir &dir) {
    ::setenv("TCJIT_KEY_FILE", dir.file("user.key").c_str(), 1);
  }
  ~KeyScope() { ::unsetenv("TCJIT_KEY_FILE"); }
};

// The binary of `problem` for the shared kernel: same PTX, cubin and identity for every size.
BinaryRecord shared_binary(const ProblemRecord &problem, const std::string &toolkit = "12.4") {
  BinaryRecord binary = sample_binary(problem, 128, "sm_80", toolkit);
  binary.kernel_identity = kIdentity;
  return binary;
}

BinaryQuery query_of(const ProblemRecord &problem, std::optional<std::string> identity) {
  BinaryQuery query{problem.key_text, testing::sample_config(128), "sm_80", "12.4", "0.1.0"};
  query.kernel_identity = std::move(identity);
  return query;
}

int64_t count(const std::filesystem::path &path, const std::string &sql) {
  Connection raw = Connection::open(path);
  return query_int64(raw, sql);
}

TEST(KernelIdentity, ProblemsOfOneIdentityShareOneBinary) {
  TempDir dir;
  KeyScope key(dir);
  const ProblemRecord m200 = sample_problem(1, "gemm", 200);
  const ProblemRecord m264 = sample_problem(1, "gemm", 264);
  KernelsDb db = KernelsDb::open(dir.file("k.db"));
  db.put_problem(m200);
  db.put_problem(m264);
  db.put_binary(shared_binary(m200));
  db.put_binary(shared_binary(m264));
  EXPECT_EQ(count(dir.file("k.db"), "SELECT COUNT(*) FROM binaries"), 1);
  EXPECT_EQ(count(dir.file("k.db"), "SELECT COUNT(*) FROM problem_binaries"), 2);
  for (const ProblemRecord &problem : {m200, m264}) {
    const auto details = db.show(problem.key_text);
    ASSERT_EQ(details.size(), 1u);
    ASSERT_EQ(details[0].binaries.size(), 1u) << problem.key_text;
    EXPECT_EQ(details[0].binaries[0].kernel_identity, kIdentity);
    EXPECT_EQ(details[0].binaries[0].problems, 2);
    const BinaryLookup found = db.find_binary(query_of(problem, std::nullopt));
    ASSERT_EQ(found.status, LookupStatus::hit);
    EXPECT_TRUE(found.binary->trusted);
    EXPECT_EQ(found.binary->kernel_identity, kIdentity);
  }
  // Without a kernel identity a binary is its problem's and config's alone (as before schema 5).
  db.put_binary(sample_binary(m200, 64));
  db.put_binary(sample_binary(m264, 64));
  EXPECT_EQ(count(dir.file("k.db"), "SELECT COUNT(*) FROM binaries"), 3);
}

TEST(KernelIdentity, ANewSizeFindsTheStoredKernelByIdentityAndIsLinkedToIt) {
  TempDir dir;
  KeyScope key(dir);
  const ProblemRecord m200 = sample_problem(1, "gemm", 200);
  const ProblemRecord m264 = sample_problem(1, "gemm", 264);
  {
    KernelsDb db = KernelsDb::open(dir.file("k.db"));
    db.put_problem(m200);
    db.put_binary(shared_binary(m200));
  }
  KernelsDb fresh = KernelsDb::open(dir.file("k.db")); // another process
  EXPECT_EQ(fresh.find_binary(query_of(m264, std::nullopt)).status, LookupStatus::miss);
  const BinaryLookup found = fresh.find_binary(query_of(m264, kIdentity));
  ASSERT_EQ(found.status, LookupStatus::hit);
  EXPECT_TRUE(found.binary->trusted);
  EXPECT_FALSE(found.binary->linked);
  EXPECT_EQ(found.binary->key.problem_key, m264.key_text);
  EXPECT_EQ(found.binary->ptx, shared_binary(m200).ptx);
  BinaryKey link = found.binary->key;
  EXPECT_TRUE(fresh.link_binary(m264, link, kIdentity));
  EXPECT_EQ(count(dir.file("k.db"), "SELECT COUNT(*) FROM binaries"), 1);
  EXPECT_EQ(fresh.show(m264.key_text).at(0).binaries.size(), 1u);
  const BinaryLookup again = fresh.find_binary(query_of(m264, kIdentity));
  ASSERT_EQ(again.status, LookupStatus::hit);
  EXPECT_TRUE(again.binary->linked);
  EXPECT_FALSE(fresh.link_binary(m264, link, "another identity"));
  // A kernel set aside (it does not load) is deleted for every problem that shares it.
  EXPECT_TRUE(fresh.delete_binary(link));
  EXPECT_EQ(count(dir.file("k.db"), "SELECT COUNT(*) FROM binaries"), 0);
  EXPECT_EQ(count(dir.file("k.db"), "SELECT COUNT(*) FROM problem_binaries"), 0);
}

TEST(KernelIdentity, TheMacCoversTheIdentity) {
  TempDir dir;
  KeyScope key(dir);
  const ProblemRecord problem = sample_problem(1);
  KernelsDb db = KernelsDb::open(dir.file("k.db"));
  db.put_problem(problem);
  db.put_binary(shared_binary(problem));
  {
    Connection raw = Connection::open(dir.file("k.db"));
    raw.exec("UPDATE binaries SET kernel_identity = 'moved'");
  }
  db.clear_cache();
  const BinaryLookup moved = db.find_binary(query_of(problem, std::string("moved")));
  ASSERT_EQ(moved.status, LookupStatus::hit);
  EXPECT_FALSE(moved.binary->trusted); // a binary moved to another identity does not verify
  // Found through the problem's link while the query names another identity: never trusted.
  {
    Connection raw = Connection::open(dir.file("k.db"));
    raw.exec("UPDATE binaries SET kernel_identity = '" + std::string(kIdentity) + "'");
  }
  db.clear_cache();
  EXPECT_TRUE(db.find_binary(query_of(problem, std::string(kIdentity))).binary->trusted);
  const BinaryLookup other = db.find_binary(query_of(problem, std::string("other")));
  ASSERT_EQ(other.status, LookupStatus::hit);
  EXPECT_EQ(other.binary->kernel_identity, kIdentity);
  EXPECT_FALSE(other.binary->trusted);
}

std::vector<uint8_t> bytes_of(const std::string &hex) {
  std::vector<uint8_t> bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    bytes.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return bytes;
}

// A schema 4 row, inserted as tcjit 4 stored it (a MAC, or NULL).
void insert_v4_binary(Connection &raw, int problem_id, const std::string &config,
                      const std::string &ptx, const std::string &cubin_hex, const std::string &mac,
                      int64_t created_ms, int version) {
  const std::string sql =
      "INSERT INTO binaries (problem_id, config_json, arch, toolkit_version, compiler_version, "
      "ptx, cubin, cubin_sha256, created_ms" +
      std::string(version >= 4 ? ", mac" : "") + ") VALUES (" + std::to_string(problem_id) + ", '" +
      config + "', 'sm_80', '12.4', '0.1.0', '" + ptx + "', x'" + cubin_hex + "', '" +
      sha256_hex(bytes_of(cubin_hex)) + "', " + std::to_string(created_ms) +
      (version >= 4 ? ", " + mac : std::string()) + ")";
  raw.exec(sql);
}

void insert_v1_problem(Connection &raw, int id, int m) {
  raw.exec("INSERT INTO problems (id, key_text, key_hash, op, dtype, arch, spec_text, shape_json, "
           "created_ms) VALUES (" +
           std::to_string(id) + ", 'gemm:m" + std::to_string(m) + "', " + std::to_string(id) +
           ", 'gemm', 'f16', 'sm_80', 'gemm m=" + std::to_string(m) + "', '{}', 1)");
}

class KernelIdentityMigration : public ::testing::TestWithParam<int> {};

TEST_P(KernelIdentityMigration, OldFilesConvertToOneBinaryPerPtx) {
  const int version = GetParam();
  TempDir dir;
  KeyScope key(dir);
  const auto path = dir.file("old.db");
  {
    Connection raw = Connection::open(path);
    migrate_to(raw, version);
    insert_v1_problem(raw, 1, 200);
    insert_v1_problem(raw, 2, 264);
    insert_v1_problem(raw, 3, 512);
    // Problems 1 and 2: the same kernel (equal PTX), stored twice; the one with a MAC is kept.
    insert_v4_binary(raw, 1, "{\"tile\":128}", "ptx A", "7f454c4601", "NULL", 20, version);
    insert_v4_binary(raw, 2, "{\"tile\":128}", "ptx A", "7f454c4602", "'00ff'", 10, version);
    insert_v4_binary(raw, 3, "{\"tile\":64}", "ptx B", "7f454c4603", "NULL", 30, version);
    // Damaged rows (edited outside SQLite): a config that is not JSON, a problem that is gone.
    // The conversion drops their links and still completes.
    raw.exec("PRAGMA ignore_check_constraints = ON");
    raw.exec("PRAGMA foreign_keys = OFF");
    insert_v4_binary(raw, 3, "{bad", "ptx C", "7f454c4604", "NULL", 40, version);
    insert_v4_binary(raw, 99, "{\"tile\":64}", "ptx D", "7f454c4605", "NULL", 50, version);
  }
  KernelsDb db = KernelsDb::open(path);
  Connection raw = Connection::open(path);
  EXPECT_EQ(read_schema_version(raw), kSchemaVersion);
  EXPECT_EQ(query_int64(raw, "SELECT COUNT(*) FROM binaries WHERE ptx IN ('ptx A', 'ptx B')"), 2);
  EXPECT_EQ(query_int64(raw, "SELECT COUNT(*) FROM problem_binaries"), 3);
  EXPECT_EQ(query_int64(raw, "SELECT COUNT(*) FROM pragma_foreign_key_check"), 0);
  EXPECT_EQ(query_int64(raw, "SELECT COUNT(*) FROM binaries WHERE mac IS NOT NULL"), 0);
  EXPECT_EQ(query_int64(raw, "SELECT COUNT(DISTINCT binary_id) FROM problem_binaries WHERE "
                             "problem_id IN (1, 2)"),
            1);
  // Kept: the row with a MAC (version 4), else the newest.
  const std::string kept = version >= 4 ? "7f454c4602" : "7f454c4601";
  EXPECT_EQ(
      query_int64(raw, "SELECT COUNT(*) FROM binaries WHERE hex(cubin) = upper('" + kept + "')"),
      1);
  EXPECT_TRUE(foreign_schema_objects(raw, kSchemaVersion).empty());
  EXPECT_TRUE(diagnose_schema(raw).empty());
  // Every problem still finds its binary, untrusted (schema 4's MAC covered the problem key): the
  // runtime rebuilds it before use and stores it under its kernel identity.
  for (const char *problem : {"gemm:m200", "gemm:m264"}) {
    const BinaryLookup found =
        db.find_binary({problem, std::string("{\"tile\":128}"), "sm_80", "12.4", "0.1.0"});
    ASSERT_EQ(found.status, LookupStatus::hit) << problem;
    EXPECT_EQ(found.binary->ptx, "ptx A");
    EXPECT_FALSE(found.binary->trusted);
    EXPECT_TRUE(found.binary->kernel_identity.starts_with("schema4:"));
  }
  EXPECT_EQ(db.show("gemm:m512").at(0).binaries.size(), 1u);
  // The rebuild: stored under its identity, the placeholder binary goes once no link is left.
  BinaryRecord rebuilt;
  rebuilt.key = {"gemm:m200", "{\"tile\":128}", "sm_80", "12.4", "0.1.0"};
  rebuilt.kernel_identity = kIdentity;
  rebuilt.ptx = "ptx A";
  rebuilt.cubin = {0x7f, 'E', 'L', 'F', 9};
  db.put_binary(rebuilt);
  rebuilt.key.problem_key = "gemm:m264";
  db.put_binary(rebuilt);
  EXPECT_EQ(query_int64(raw, "SELECT COUNT(*) FROM binaries WHERE kernel_identity LIKE "
                             "'schema4:%' AND ptx = 'ptx A'"),
            0);
  EXPECT_TRUE(db.find_binary({"gemm:m264", std::string("{\"tile\":128}"), "sm_80", "12.4", "0.1.0"})
                  .binary->trusted);
}

INSTANTIATE_TEST_SUITE_P(FromEachOlderSchema, KernelIdentityMigration, ::testing::Values(1, 3, 4));

TEST(KernelIdentity, ImportAndMergeShareBinariesAndNeverReplaceAStoredOne) {
  TempDir dir;
  KeyScope key(dir);
  const ProblemRecord m200 = sample_problem(1, "gemm", 200);
  const ProblemRecord m264 = sample_problem(1, "gemm", 264);
  std::stringstream exported;
  {
    KernelsDb source = KernelsDb::open(dir.file("source.db"));
    source.put_problem(m200);
    source.put_problem(m264);
    source.put_binary(shared_binary(m200));
    source.put_binary(shared_binary(m264));
    source.export_jsonl(exported);
  }
  {
    KernelsDb imported = KernelsDb::open(dir.file("imported.db"));
    const TransferCounts counts = imported.import_jsonl(exported);
    EXPECT_EQ(counts.binaries, 2); // two problems linked, one binary stored
    EXPECT_EQ(count(dir.file("imported.db"), "SELECT COUNT(*) FROM binaries"), 1);
    EXPECT_EQ(count(dir.file("imported.db"), "SELECT COUNT(*) FROM binaries WHERE mac IS NULL"), 1);
    EXPECT_FALSE(imported.find_binary(query_of(m264, kIdentity)).binary->trusted);
  }
  // A target that has its own binary of that identity keeps it (and its MAC).
  KernelsDb target = KernelsDb::open(dir.file("target.db"));
  target.put_problem(m200);
  BinaryRecord mine = shared_binary(m200);
  mine.ptx += "// mine\n";
  target.put_binary(mine);
  const TransferCounts merged = target.merge(dir.file("source.db"));
  EXPECT_EQ(merged.binaries, 1); // m264 linked to the stored binary; m200 already had one
  EXPECT_EQ(count(dir.file("target.db"), "SELECT COUNT(*) FROM binaries"), 1);
  const BinaryLookup found = target.find_binary(query_of(m264, kIdentity));
  ASSERT_EQ(found.status, LookupStatus::hit);
  EXPECT_TRUE(found.binary->trusted);
  EXPECT_EQ(found.binary->ptx, mine.ptx);
}

TEST(KernelIdentity, PruneDeletesABinaryOnlyWhenNoProblemUsesIt) {
  TempDir dir;
  KeyScope key(dir);
  const ProblemRecord m200 = sample_problem(1, "gemm", 200);
  const ProblemRecord m264 = sample_problem(1, "gemm", 264);
  KernelsDb db = KernelsDb::open(dir.file("k.db"));
  db.put_problem(m200);
  db.put_problem(m264);
  BinaryRecord old = shared_binary(m200);
  old.created_ms = 1000;
  db.put_binary(old);
  {
    // m200's link is old; m264 was linked to the same binary recently.
    Connection raw = Connection::open(dir.file("k.db"));
    raw.exec("UPDATE problem_binaries SET created_ms = 1000");
  }
  db.put_binary(shared_binary(m264)); // linked now; the upsert made the binary new: old again
  {
    Connection raw = Connection::open(dir.file("k.db"));
    raw.exec("UPDATE binaries SET created_ms = 1000");
  }
  PruneOptions options;
  options.older_than = std::chrono::milliseconds(1000);
  options.now_ms = 1'000'000;
  PruneReport report = db.prune(options);
  EXPECT_EQ(report.binaries_removed, 0); // m264 still uses it
  EXPECT_EQ(count(dir.file("k.db"), "SELECT COUNT(*) FROM problem_binaries"), 1);
  {
    Connection raw = Connection::open(dir.file("k.db"));
    raw.exec("UPDATE problem_binaries SET created_ms = 1000");
  }
  report = db.prune(options);
  EXPECT_EQ(report.binaries_removed, 1);
  EXPECT_EQ(count(dir.file("k.db"), "SELECT COUNT(*) FROM binaries"), 0);
  // Stale: gone for every problem at once.
  db.put_binary(shared_binary(m200, "11.0"));
  db.put_binary(shared_binary(m264, "11.0"));
  PruneOptions stale;
  stale.stale_versions = CurrentVersions{"12.4", "0.1.0"};
  EXPECT_EQ(db.prune(stale).binaries_removed, 1);
  EXPECT_EQ(count(dir.file("k.db"), "SELECT COUNT(*) FROM problem_binaries"), 0);
}

TEST(KernelIdentity, CheckFindsADamagedSharedCubinAndBadLinks) {
  TempDir dir;
  KeyScope key(dir);
  const ProblemRecord m200 = sample_problem(1, "gemm", 200);
  {
    KernelsDb db = KernelsDb::open(dir.file("k.db"));
    db.put_problem(m200);
    db.put_binary(shared_binary(m200));
  }
  {
    Connection raw = Connection::open(dir.file("k.db"));
    raw.exec("UPDATE binaries SET cubin = x'7f454c46'");
    raw.exec("PRAGMA ignore_check_constraints = ON");
    raw.exec("UPDATE problem_binaries SET config_json = '{bad'");
  }
  const CheckReport report = KernelsDb::check(dir.file("k.db"));
  EXPECT_EQ(report.binaries_checked, 1);
  ASSERT_EQ(report.bad_cubins.size(), 1u);
  EXPECT_NE(report.bad_cubins[0].find(m200.key_text), std::string::npos) << report.bad_cubins[0];
  ASSERT_EQ(report.bad_values.size(), 1u);
  EXPECT_NE(report.bad_values[0].find("problem_binaries"), std::string::npos);
}

} // namespace
} // namespace tcjit::kernels_db
