// A fresh process (a new Runtime on the same database) serves a new size of a stored kernel from
// the database, without compiling: binaries are stored once per kernel identity (kernels_db schema
// 5), which is the same for every size of a kernel.
#include "tcjit/tcjit.hpp"

#include "kernels_db/connection.h"
#include "kernels_db/schema.h"

#include "db_runtime_test_base.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

constexpr const char *kM200 = "gemm m=200 n=64 k=64 a=f16:row b=f16:col c=f16:row acc=f32";
constexpr const char *kM264 = "gemm m=264 n=64 k=64 a=f16:row b=f16:col c=f16:row acc=f32";

class SharedKernelDb : public tcjit::testing::DbRuntimeTest {
protected:
  SharedKernelDb() : DbRuntimeTest("tcjit_api_shared_") {}
};

TEST_F(SharedKernelDb, AFreshRuntimeServesANewSizeOfAStoredKernelWithoutCompiling) {
  std::string config;
  {
    tcjit::Runtime first(options());
    const tcjit::Operation op = first.prepare(kM200);
    EXPECT_EQ(op.origin(), tcjit::Origin::compiled_now);
    config = op.config();
  }
  EXPECT_EQ(count("binaries"), 1);
  tcjit::Runtime second(options()); // another process: nothing in memory
  const tcjit::Operation op = second.prepare(kM264);
  ASSERT_EQ(op.config(), config) << "the default chooser picked another tile for m=264";
  EXPECT_EQ(op.origin(), tcjit::Origin::database); // the code generator was not called
  EXPECT_EQ(count("binaries"), 1);                 // one binary ...
  EXPECT_EQ(count("problem_binaries"), 2);         // ... that both problems use
  tcjit::Runtime third(options());
  EXPECT_EQ(third.prepare(kM264).origin(), tcjit::Origin::database);
}

// A link is data, not trust: a problem linked (by an edit of the file) to a binary this user's
// tcjit stored for another kernel is not served that binary; its own kernel is compiled.
TEST_F(SharedKernelDb, AProblemLinkedToAnotherKernelsBinaryIsNotServedIt) {
  constexpr const char *kRelu = "gemm m=200 n=64 k=64 a=f16:row b=f16:col c=f16:row acc=f32 "
                                "act=relu";
  {
    tcjit::Runtime first(options());
    first.prepare(kM200);
    first.prepare(kRelu);
  }
  ASSERT_EQ(count("binaries"), 2);
  sql("UPDATE problem_binaries SET binary_id = (SELECT MIN(id) FROM binaries); "
      "DELETE FROM binaries WHERE id <> (SELECT MIN(id) FROM binaries)");
  ASSERT_EQ(count("problem_binaries WHERE binary_id = (SELECT MIN(id) FROM binaries)"), 2);
  {
    tcjit::Runtime second(options());
    EXPECT_EQ(second.prepare(kM200).origin(), tcjit::Origin::database);
    EXPECT_EQ(second.prepare(kRelu).origin(), tcjit::Origin::compiled_now);
  }
  tcjit::Runtime third(options());
  EXPECT_EQ(third.prepare(kRelu).origin(), tcjit::Origin::database);
  EXPECT_EQ(count("binaries"), 2);
}

// The MAC tcjit 4 stored (HMAC-SHA256 over the length-prefixed problem key, config, arch, toolkit
// and compiler versions, PTX, cubin, resources and compile options), as 64 hex digits.
std::string schema4_mac(const std::string &key, const std::vector<std::string> &fields) {
  std::string message;
  for (const std::string &field : fields) {
    for (int i = 0; i < 8; ++i)
      message += static_cast<char>((static_cast<uint64_t>(field.size()) >> (8 * i)) & 0xff);
    message += field;
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char *>(message.data()), message.size(), digest, &size);
  std::string hex;
  for (unsigned int i = 0; i < size; ++i) {
    static constexpr char kHex[] = "0123456789abcdef";
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
  }
  return hex;
}

// A kernels database of schema 4 holding the kernel `tcjit run` stored in `current` (schema 5),
// with the MAC tcjit 4 would have stored under this user's key.
void write_schema4_copy(const std::filesystem::path &current, const std::filesystem::path &old,
                        const std::filesystem::path &key_file) {
  std::ifstream in(key_file, std::ios::binary);
  std::ostringstream key;
  key << in.rdbuf();
  namespace kdb = tcjit::kernels_db;
  kdb::Connection v4 = kdb::Connection::open(old);
  kdb::migrate_to(v4, 4);
  v4.exec("ATTACH DATABASE '" + current.string() + "' AS v5");
  v4.exec("INSERT INTO problems SELECT * FROM v5.problems");
  kdb::Statement rows = v4.prepare(
      "SELECT l.problem_id, p.key_text, l.config_json, b.arch, b.toolkit_version, "
      "b.compiler_version, b.ptx, b.cubin, b.cubin_sha256, b.resources_json, b.compile_options, "
      "b.compile_ms, b.created_ms FROM v5.problem_binaries l JOIN v5.binaries b ON b.id = "
      "l.binary_id JOIN v5.problems p ON p.id = l.problem_id");
  while (rows.step()) {
    const std::vector<uint8_t> cubin = rows.column_blob(7);
    const std::string mac =
        schema4_mac(key.str(), {rows.column_text(1), rows.column_text(2), rows.column_text(3),
                                rows.column_text(4), rows.column_text(5), rows.column_text(6),
                                std::string(cubin.begin(), cubin.end()), rows.column_text(9),
                                rows.column_text(10)});
    kdb::Statement insert = v4.prepare(
        "INSERT INTO binaries (problem_id, config_json, arch, toolkit_version, compiler_version, "
        "ptx, cubin, cubin_sha256, resources_json, compile_options, compile_ms, created_ms, mac) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)");
    insert.bind(1, rows.column_int64(0));
    for (int i = 2; i <= 6; ++i)
      insert.bind(i, rows.column_text(i));
    insert.bind_blob(7, cubin);
    insert.bind(8, rows.column_text(8));
    insert.bind(9, rows.column_text(9));
    insert.bind(10, rows.column_text(10));
    insert.bind(11, rows.column_double(11));
    insert.bind(12, rows.column_int64(12));
    insert.bind(13, mac);
    insert.run();
  }
}

// A kernel stored by tcjit 4 (with its valid MAC) is converted by the migration to schema 5 and
// rebuilt on first use (schema 4's MAC covered the problem key, not the kernel identity: it cannot
// vouch for the shared binary); then it is this user's again, and serves every size.
TEST_F(SharedKernelDb, AKernelStoredBySchema4IsRebuiltOnceThenServesEverySize) {
  {
    tcjit::RuntimeOptions o = options();
    o.db_path = (dir_ / "current.db").string();
    tcjit::Runtime first(o);
    EXPECT_EQ(first.prepare(kM200).origin(), tcjit::Origin::compiled_now);
  }
  write_schema4_copy(dir_ / "current.db", dir_ / "kernels.db", dir_ / "user.key");
  {
    tcjit::Runtime converted(options());
    EXPECT_EQ(converted.prepare(kM200).origin(), tcjit::Origin::compiled_now); // rebuilt
  }
  EXPECT_EQ(count("binaries WHERE kernel_identity LIKE 'schema4:%'"), 0);
  EXPECT_EQ(count("binaries WHERE mac IS NOT NULL"), 1);
  tcjit::Runtime again(options());
  EXPECT_EQ(again.prepare(kM200).origin(), tcjit::Origin::database);
  EXPECT_EQ(again.prepare(kM264).origin(), tcjit::Origin::memory);
  tcjit::Runtime fresh(options());
  EXPECT_EQ(fresh.prepare(kM264).origin(), tcjit::Origin::database);
}

} // namespace
