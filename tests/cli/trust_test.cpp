// `tcjit run` launches only kernels this user's tcjit built or rebuilt: a planted kernel (PTX,
// cubin and SHA-256 consistent), a damaged PTX, a database copied from another user and a
// read-only shared cache all end in a verified run.
#include "kernels_db/connection.h"
#include "kernels_db/schema.h"
#include "kernels_db/sha256.h"
#include "kernels_db/trust_key.h"
#include "run_tool.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace tcjit::testing {
namespace {

const std::string kSpec = shell_quote("gemm m=32 n=32 k=32 a=f16 b=f16:col c=f16 acc=f32");

class RunTrust : public ::testing::Test {
public:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tcjit_trust_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "cache");
  }
  void TearDown() override {
    ::chmod((dir_ / "cache").c_str(), 0755);
    std::filesystem::remove_all(dir_);
  }
  std::string db_file() const { return (dir_ / "cache" / "kernels.db").string(); }
  std::string db() const { return shell_quote(db_file()); }
  // The environment of a user whose key is `name`.key.
  std::string user(const std::string &name) const {
    return "TCJIT_KEY_FILE=" + shell_quote((dir_ / (name + ".key")).string());
  }
  ToolResult run(const std::string &who) const {
    return run_tool("run --device emu --db " + db() + " " + kSpec, user(who));
  }
  void sql(const std::string &statement) const {
    sqlite3 *raw = nullptr;
    ASSERT_EQ(sqlite3_open(db_file().c_str(), &raw), SQLITE_OK);
    char *error = nullptr;
    const int rc = sqlite3_exec(raw, statement.c_str(), nullptr, nullptr, &error);
    const std::string message = error ? error : "";
    sqlite3_free(error);
    sqlite3_close(raw);
    ASSERT_EQ(rc, SQLITE_OK) << message;
  }
  std::filesystem::path dir_;
};

std::string all(const ToolResult &r) {
  return r.out + r.err;
}

// Reads the one stored binary's PTX and arch.
void read_binary(const std::string &file, std::string &ptx, std::string &arch) {
  sqlite3 *raw = nullptr;
  ASSERT_EQ(sqlite3_open(file.c_str(), &raw), SQLITE_OK);
  sqlite3_stmt *statement = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(raw, "SELECT ptx, arch FROM binaries", -1, &statement, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(statement), SQLITE_ROW);
  ptx = reinterpret_cast<const char *>(sqlite3_column_text(statement, 0));
  arch = reinterpret_cast<const char *>(sqlite3_column_text(statement, 1));
  ASSERT_EQ(sqlite3_step(statement), SQLITE_DONE) << "one binary expected";
  sqlite3_finalize(statement);
  sqlite3_close(raw);
}

TEST_F(RunTrust, APlantedKernelWithConsistentHashesIsNotServed) {
  const ToolResult first = run("alice");
  ASSERT_EQ(first.exit_code, 0) << all(first);
  std::string ptx, arch;
  read_binary(db_file(), ptx, arch);
  // The same entry, returning at once (the rest is dead code), assembled by ptxas.
  const size_t entry = ptx.find(".entry");
  ASSERT_NE(entry, std::string::npos);
  const size_t body = ptx.find('{', ptx.find(')', entry));
  ASSERT_NE(body, std::string::npos);
  const std::string planted = ptx.substr(0, body + 1) + "\n\tret;\n" + ptx.substr(body + 1);
  const std::filesystem::path ptx_file = dir_ / "planted.ptx", cubin_file = dir_ / "planted.cubin";
  std::ofstream(ptx_file, std::ios::binary) << planted;
  const char *ptxas_env = std::getenv("TCJIT_PTXAS");
  const std::string ptxas = ptxas_env ? ptxas_env : "ptxas";
  const std::string assemble = shell_quote(ptxas) + " -arch=" + arch + " " +
                               shell_quote(ptx_file.string()) + " -o " +
                               shell_quote(cubin_file.string()) + " 2>/dev/null";
  if (std::system(assemble.c_str()) != 0) {
    const std::string fallback = "PATH=\"$PATH:/usr/local/cuda/bin\" " + assemble;
    if (std::system(fallback.c_str()) != 0)
      GTEST_SKIP() << "ptxas cannot be run here";
  }
  const std::string cubin = read_file(cubin_file);
  ASSERT_EQ(elf_machine(cubin), kElfMachineCuda);
  std::string hex;
  for (const unsigned char c : cubin) {
    static constexpr char kHex[] = "0123456789abcdef";
    hex += kHex[c >> 4];
    hex += kHex[c & 15];
  }
  std::string quoted;
  for (const char c : planted)
    quoted += c == '\'' ? std::string("''") : std::string(1, c);
  sql("UPDATE binaries SET ptx = '" + quoted + "', cubin = X'" + hex + "', cubin_sha256 = '" +
      kernels_db::sha256_hex(
          std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(cubin.data()), cubin.size())) +
      "'");

  const ToolResult second = run("alice");
  EXPECT_EQ(second.exit_code, 0) << all(second);
  EXPECT_NE(all(second).find("discarded"), std::string::npos) << all(second);
  EXPECT_NE(second.out.find("result:   ok"), std::string::npos) << second.out;
  const ToolResult third = run("alice"); // the kernel stored in its place is served as it is
  EXPECT_EQ(third.exit_code, 0) << all(third);
  EXPECT_NE(third.out.find("earlier"), std::string::npos) << third.out;
  EXPECT_EQ(all(third).find("discarded"), std::string::npos) << all(third);
}

TEST_F(RunTrust, ADamagedStoredPtxNeverFailsTheRun) {
  const ToolResult first = run("alice");
  ASSERT_EQ(first.exit_code, 0) << all(first);
  sql("UPDATE binaries SET ptx = replace(ptx, '%rd1,', '%rd9999,')");
  const ToolResult second = run("alice");
  EXPECT_EQ(second.exit_code, 0) << all(second);
  EXPECT_NE(second.err.find("warning"), std::string::npos) << all(second);
  EXPECT_NE(second.err.find("discarded"), std::string::npos) << all(second);
  EXPECT_NE(second.out.find("result:   ok"), std::string::npos) << second.out;
}

// The stored binary as kernels_db reads it (the fields its MAC covers).
kernels_db::BinaryRecord stored_binary(const std::string &file) {
  kernels_db::BinaryRecord binary;
  sqlite3 *raw = nullptr;
  EXPECT_EQ(sqlite3_open(file.c_str(), &raw), SQLITE_OK);
  sqlite3_stmt *statement = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(raw,
                               "SELECT p.key_text, l.config_json, b.arch, b.toolkit_version, "
                               "b.compiler_version, b.ptx, b.cubin, b.resources_json, "
                               "b.compile_options, b.kernel_identity FROM binaries b JOIN "
                               "problem_binaries l ON l.binary_id = b.id JOIN problems p "
                               "ON p.id = l.problem_id",
                               -1, &statement, nullptr),
            SQLITE_OK);
  EXPECT_EQ(sqlite3_step(statement), SQLITE_ROW);
  auto text = [&](int column) {
    return std::string(reinterpret_cast<const char *>(sqlite3_column_text(statement, column)));
  };
  binary.key = {text(0), text(1), text(2), text(3), text(4)};
  binary.ptx = text(5);
  const auto *cubin = static_cast<const uint8_t *>(sqlite3_column_blob(statement, 6));
  binary.cubin.assign(cubin, cubin + sqlite3_column_bytes(statement, 6));
  binary.resources_json = text(7);
  binary.compile_options = text(8);
  binary.kernel_identity = text(9);
  sqlite3_finalize(statement);
  sqlite3_close(raw);
  return binary;
}

// A kernel with a valid MAC (this user's) whose PTX does not load: set aside, compiled again.
TEST_F(RunTrust, ATrustedKernelThatDoesNotLoadIsSetAside) {
  const ToolResult first = run("alice");
  ASSERT_EQ(first.exit_code, 0) << all(first);
  kernels_db::BinaryRecord binary = stored_binary(db_file());
  const size_t at = binary.ptx.find("%rd1,");
  ASSERT_NE(at, std::string::npos);
  binary.ptx.replace(at, 5, "%rd9999,");
  std::string quoted;
  for (const char c : binary.ptx)
    quoted += c == '\'' ? std::string("''") : std::string(1, c);
  const std::string key = read_file(dir_ / "alice.key");
  sql("UPDATE binaries SET ptx = '" + quoted + "', mac = '" + kernels_db::binary_mac(key, binary) +
      "'");
  const ToolResult second = run("alice");
  EXPECT_EQ(second.exit_code, 0) << all(second);
  EXPECT_NE(second.err.find("does not load"), std::string::npos) << all(second);
  EXPECT_NE(second.err.find("set aside (its row deleted), compiled again"), std::string::npos)
      << all(second);
  EXPECT_NE(second.out.find("result:   ok"), std::string::npos) << second.out;
  EXPECT_EQ(stored_binary(db_file()).ptx.find("%rd9999"), std::string::npos);
}

TEST_F(RunTrust, ADatabaseFromAnotherUsersKeyIsRebuilt) {
  const ToolResult alice = run("alice");
  ASSERT_EQ(alice.exit_code, 0) << all(alice);
  const ToolResult bob = run("bob");
  EXPECT_EQ(bob.exit_code, 0) << all(bob);
  EXPECT_NE(bob.out.find("rebuilt"), std::string::npos) << bob.out;
  EXPECT_EQ(all(bob).find("discarded"), std::string::npos) << all(bob);
  const ToolResult again = run("bob"); // now stored under bob's key
  EXPECT_EQ(again.exit_code, 0) << all(again);
  EXPECT_NE(again.out.find("earlier"), std::string::npos) << again.out;
  EXPECT_EQ(again.out.find("rebuilt"), std::string::npos) << again.out;
}

// `tcjit run` as bob on the cache directory made read-only (chmod, or as root a read-only bind
// mount in a private mount namespace); nullopt when root has no way to make one.
std::optional<ToolResult> run_on_read_only_cache(const RunTrust &test,
                                                 const std::filesystem::path &cache) {
  if (::geteuid() != 0) {
    ::chmod(cache.c_str(), 0555);
    ToolResult bob = test.run("bob");
    ::chmod(cache.c_str(), 0755);
    return bob;
  }
  const std::string dir = shell_quote(cache.string());
  const std::string probe =
      "unshare -m sh -c " + shell_quote("mount --bind -o ro " + dir + " " + dir) + " 2>/dev/null";
  if (std::system(probe.c_str()) != 0)
    return std::nullopt;
  return run_tool("run --device emu --db " + test.db() + " " + kSpec,
                  "unshare -m sh -c " +
                      shell_quote("mount --bind -o ro " + dir + " " + dir + " && exec env " +
                                  test.user("bob") + " \"$0\" \"$@\""));
}

void expect_used_read_only(const ToolResult &bob) {
  EXPECT_EQ(bob.exit_code, 0) << all(bob);
  EXPECT_NE(bob.out.find("read-only"), std::string::npos) << bob.out;
  EXPECT_NE(bob.out.find("nothing was recorded"), std::string::npos) << bob.out;
  EXPECT_NE(bob.out.find("rebuilt"), std::string::npos) << bob.out;
  EXPECT_NE(bob.out.find("result:   ok"), std::string::npos) << bob.out;
}

TEST_F(RunTrust, AReadOnlySharedCacheIsUsedAndNothingRecorded) {
  const ToolResult alice = run("alice");
  ASSERT_EQ(alice.exit_code, 0) << all(alice);
  const auto before = std::filesystem::last_write_time(db_file());
  const std::optional<ToolResult> bob = run_on_read_only_cache(*this, dir_ / "cache");
  if (!bob)
    GTEST_SKIP() << "running as root without a way to make a read-only mount";
  expect_used_read_only(*bob);
  EXPECT_EQ(std::filesystem::last_write_time(db_file()), before);
}

// A shared cache written by a tcjit of the previous schema (3: no `mac` column) that this user
// cannot migrate: it is migrated in memory, its kernels rebuilt, and the file is not written.
TEST_F(RunTrust, AReadOnlySharedCacheOfAnOlderSchemaIsMigratedInMemory) {
  const ToolResult alice = run("alice");
  ASSERT_EQ(alice.exit_code, 0) << all(alice);
  const std::string old_file = (dir_ / "old.db").string();
  {
    kernels_db::Connection old = kernels_db::Connection::open(old_file);
    kernels_db::migrate_to(old, 3);
  }
  const std::string columns = "b.id, l.problem_id, l.config_json, b.arch, b.toolkit_version, "
                              "b.compiler_version, b.ptx, b.cubin, b.cubin_sha256, "
                              "b.resources_json, b.compile_options, b.compile_ms, b.created_ms";
  sql("ATTACH " + std::string("'") + old_file + "' AS old; " +
      "INSERT INTO old.problems SELECT * FROM problems; " + "INSERT INTO old.binaries SELECT " +
      columns +
      " FROM binaries b JOIN problem_binaries l ON l.binary_id = b.id; "
      "INSERT INTO old.results SELECT * FROM results;");
  std::filesystem::rename(old_file, db_file());
  std::filesystem::remove(db_file() + "-wal");
  std::filesystem::remove(db_file() + "-shm");
  const auto before = std::filesystem::last_write_time(db_file());
  const std::optional<ToolResult> bob = run_on_read_only_cache(*this, dir_ / "cache");
  if (!bob)
    GTEST_SKIP() << "running as root without a way to make a read-only mount";
  expect_used_read_only(*bob);
  EXPECT_EQ(std::filesystem::last_write_time(db_file()), before);
  sqlite3 *raw = nullptr;
  ASSERT_EQ(sqlite3_open(db_file().c_str(), &raw), SQLITE_OK);
  sqlite3_stmt *statement = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(raw, "PRAGMA user_version", -1, &statement, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(statement), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(statement, 0), 3) << "the shared file was migrated";
  sqlite3_finalize(statement);
  sqlite3_close(raw);
}

// A decision whose kernel is gone (its binary built by another toolkit, as after an upgrade, or
// pruned): `tcjit tune` finds the problem tuned, builds the decided kernel again and says so, and
// `tcjit run` is then served the tuned kernel from the database.
TEST_F(RunTrust, TuneBuildsAgainTheKernelOfADecisionWhoseKernelIsGone) {
  const std::string tune = "tune " + kSpec + " --device emu --budget 2 --db " + db();
  const ToolResult first = run_tool(tune, user("me"));
  ASSERT_EQ(first.exit_code, 0) << all(first);
  sql("UPDATE binaries SET toolkit_version = '0.0-before-the-upgrade'");
  const ToolResult second = run_tool(tune, user("me"));
  ASSERT_EQ(second.exit_code, 0) << all(second);
  EXPECT_NE(second.out.find("already tuned"), std::string::npos) << all(second);
  EXPECT_NE(second.out.find("its kernel was not stored: built again"), std::string::npos)
      << all(second);
  const ToolResult again = run_tool(tune, user("me"));
  ASSERT_EQ(again.exit_code, 0) << all(again);
  EXPECT_EQ(again.out.find("built again"), std::string::npos) << all(again);
  const ToolResult ran = run("me");
  ASSERT_EQ(ran.exit_code, 0) << all(ran);
  EXPECT_NE(ran.out.find("cache:    tuned (predicted), hit"), std::string::npos) << all(ran);
}

} // namespace
} // namespace tcjit::testing
