// Which stored binaries are trusted: a MAC under this user's key (kernels_db/trust_key.h) marks the
// ones this user's tcjit stored; imports, merges and files copied from another user are foreign,
// and import never replaces a stored binary.
#include "db_test_util.h"

#include "kernels_db/jsonl_io.h"
#include "kernels_db/kernels_db.h"
#include "kernels_db/record_json.h"
#include "kernels_db/sha256.h"
#include "kernels_db/trust_key.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

namespace tcjit::kernels_db {
namespace {

using testing::sample_binary;
using testing::sample_problem;
using testing::TempDir;

// Points $TCJIT_KEY_FILE at `path` for the life of the object.
class KeyFileScope {
public:
  explicit KeyFileScope(const std::filesystem::path &path) {
    const char *old = std::getenv("TCJIT_KEY_FILE");
    if (old)
      old_ = old;
    had_ = old != nullptr;
    ::setenv("TCJIT_KEY_FILE", path.c_str(), 1);
  }
  ~KeyFileScope() {
    if (had_)
      ::setenv("TCJIT_KEY_FILE", old_.c_str(), 1);
    else
      ::unsetenv("TCJIT_KEY_FILE");
  }

private:
  std::string old_;
  bool had_ = false;
};

BinaryQuery query_of(const BinaryRecord &binary) {
  return {binary.key.problem_key, binary.key.config_json, binary.key.arch,
          binary.key.toolkit_version, binary.key.compiler_version};
}

std::string import_line(const BinaryRecord &binary) {
  nlohmann::json object = binary_to_json(binary);
  object["type"] = "binary";
  return "{\"type\":\"tcjit-kernels-db\",\"schema\":4}\n" + object.dump() + "\n";
}

TEST(Trust, ABinaryThisUserStoredIsTrustedOneFromAnotherKeyIsNot) {
  TempDir dir;
  const ProblemRecord problem = sample_problem(1);
  const BinaryRecord binary = sample_binary(problem, 64);
  {
    KeyFileScope key(dir.file("mine.key"));
    KernelsDb db = KernelsDb::open(dir.file("k.db"));
    db.put_problem(problem);
    db.put_binary(binary);
    const BinaryLookup found = db.find_binary(query_of(binary));
    ASSERT_EQ(found.status, LookupStatus::hit);
    EXPECT_TRUE(found.binary->trusted);
    struct stat st {};
    ASSERT_EQ(::stat(dir.file("mine.key").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    EXPECT_EQ(st.st_size, static_cast<off_t>(kTrustKeyBytes));
  }
  KeyFileScope other(dir.file("theirs.key")); // the same file, read by another user's tcjit
  KernelsDb db = KernelsDb::open(dir.file("k.db"));
  const BinaryLookup found = db.find_binary(query_of(binary));
  ASSERT_EQ(found.status, LookupStatus::hit);
  EXPECT_FALSE(found.binary->trusted);
}

TEST(Trust, AnEditedPtxLosesTheMac) {
  TempDir dir;
  KeyFileScope key(dir.file("mine.key"));
  const ProblemRecord problem = sample_problem(1);
  const BinaryRecord binary = sample_binary(problem, 64);
  {
    KernelsDb db = KernelsDb::open(dir.file("k.db"));
    db.put_problem(problem);
    db.put_binary(binary);
  }
  sqlite3 *raw = nullptr;
  ASSERT_EQ(sqlite3_open(dir.file("k.db").c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "UPDATE binaries SET ptx = ptx || ' '", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  KernelsDb db = KernelsDb::open(dir.file("k.db"));
  const BinaryLookup found = db.find_binary(query_of(binary));
  ASSERT_EQ(found.status, LookupStatus::hit);
  EXPECT_FALSE(found.binary->trusted);
}

TEST(Trust, ImportNeverReplacesAStoredBinaryAndRefusesGarbage) {
  TempDir dir;
  KeyFileScope key(dir.file("mine.key"));
  const ProblemRecord problem = sample_problem(1);
  const BinaryRecord binary = sample_binary(problem, 64);
  KernelsDb db = KernelsDb::open(dir.file("k.db"));
  db.put_problem(problem);
  db.put_binary(binary);

  BinaryRecord empty = binary; // an empty cubin with the SHA-256 of the empty string
  empty.cubin.clear();
  empty.cubin_sha256 = sha256_hex(empty.cubin);
  std::istringstream empty_in(import_line(empty));
  const TransferCounts empty_counts = db.import_jsonl(empty_in);
  EXPECT_EQ(empty_counts.binaries, 0);

  BinaryRecord garbage = binary; // 100 bytes that are not a cubin, with a matching hash
  garbage.cubin.assign(100, 0x41);
  garbage.cubin_sha256 = sha256_hex(garbage.cubin);
  std::istringstream garbage_in(import_line(garbage));
  const TransferCounts garbage_counts = db.import_jsonl(garbage_in);
  EXPECT_EQ(garbage_counts.binaries, 0);
  ASSERT_EQ(garbage_counts.rejected.size(), 1u);
  EXPECT_NE(garbage_counts.rejected[0].reason.find("not an ELF file"), std::string::npos);

  const BinaryLookup found = db.find_binary(query_of(binary));
  ASSERT_EQ(found.status, LookupStatus::hit);
  EXPECT_EQ(found.binary->cubin, binary.cubin);
  EXPECT_TRUE(found.binary->trusted);
}

TEST(Trust, ImportedAndMergedBinariesAreForeign) {
  TempDir dir;
  KeyFileScope key(dir.file("mine.key"));
  const ProblemRecord problem = sample_problem(1);
  const BinaryRecord binary = sample_binary(problem, 64);
  std::string exported;
  {
    KernelsDb source = KernelsDb::open(dir.file("source.db"));
    source.put_problem(problem);
    source.put_binary(binary);
    std::ostringstream out;
    source.export_jsonl(out);
    exported = out.str();
  }
  EXPECT_EQ(exported.find("mac"), std::string::npos) << exported;
  KernelsDb imported = KernelsDb::open(dir.file("imported.db"));
  std::istringstream in(exported);
  EXPECT_EQ(imported.import_jsonl(in).binaries, 1);
  EXPECT_FALSE(imported.find_binary(query_of(binary)).binary->trusted);

  KernelsDb merged = KernelsDb::open(dir.file("merged.db"));
  EXPECT_EQ(merged.merge(dir.file("source.db")).binaries, 1);
  EXPECT_FALSE(merged.find_binary(query_of(binary)).binary->trusted);
}

TEST(Trust, AKeyFileOthersCanReadIsRefusedWithAWarning) {
  TempDir dir;
  const std::filesystem::path path = dir.file("open.key");
  std::ofstream(path, std::ios::binary) << std::string(kTrustKeyBytes, 'k');
  ::chmod(path.c_str(), 0644);
  const TrustKey key = load_or_create_trust_key(path);
  EXPECT_TRUE(key.bytes.empty());
  EXPECT_NE(key.warning.find("accessible to group or others"), std::string::npos) << key.warning;

  KeyFileScope scope(path);
  const ProblemRecord problem = sample_problem(1);
  const BinaryRecord binary = sample_binary(problem, 64);
  KernelsDb db = KernelsDb::open(dir.file("k.db"));
  db.put_problem(problem);
  db.put_binary(binary);
  const BinaryLookup found = db.find_binary(query_of(binary));
  ASSERT_EQ(found.status, LookupStatus::hit);
  EXPECT_FALSE(found.binary->trusted);
  ASSERT_EQ(found.warnings.size(), 1u);
  EXPECT_EQ(db.find_binary(query_of(binary)).warnings.size(), 0u); // said once
}

TEST(Trust, TwoCreatorsEndWithOneKey) {
  TempDir dir;
  const std::filesystem::path path = dir.file("sub") / "cache.key";
  const TrustKey first = load_or_create_trust_key(path);
  const TrustKey second = load_or_create_trust_key(path);
  ASSERT_EQ(first.bytes.size(), kTrustKeyBytes) << first.warning;
  EXPECT_EQ(first.bytes, second.bytes);
}

TEST(Trust, AnUnwritableKeyPlaceMeansNoKeyNotAnError) {
  const TrustKey key = load_or_create_trust_key("/proc/tcjit-no-such-dir/cache.key");
  EXPECT_TRUE(key.bytes.empty());
  EXPECT_TRUE(key.warning.empty());
}

TEST(Trust, ADatabaseThatCannotBeWrittenOpensReadOnlyWhenAsked) {
  TempDir dir;
  KeyFileScope key(dir.file("mine.key"));
  const ProblemRecord problem = sample_problem(1);
  {
    KernelsDb db = KernelsDb::open(dir.file("k.db"));
    db.put_problem(problem);
  }
  ::chmod(dir.file("k.db").c_str(), 0444);
  if (::access(dir.file("k.db").c_str(), W_OK) == 0)
    GTEST_SKIP() << "running as root: a mode 0444 file is still writable";
  OpenOptions options;
  options.read_only_if_not_writable = true;
  KernelsDb db = KernelsDb::open(dir.file("k.db"), options);
  EXPECT_TRUE(db.read_only());
  EXPECT_TRUE(db.find_problem(problem.key_text).has_value());
}

} // namespace
} // namespace tcjit::kernels_db
