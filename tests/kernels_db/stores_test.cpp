// Problems, binaries and results: every store and lookup, invalidation by version, hash checks.
#include "db_test_util.h"

#include "kernels_db/connection.h"
#include "kernels_db/error.h"
#include "kernels_db/kernels_db.h"
#include "kernels_db/key_hash.h"
#include "kernels_db/sha256.h"

#include <gtest/gtest.h>

#include <thread>

namespace tcjit::kernels_db {
namespace {

using testing::sample_binary;
using testing::sample_config;
using testing::sample_problem;
using testing::sample_result;
using testing::TempDir;

class KernelsDbStores : public ::testing::Test {
protected:
  TempDir dir;
  std::filesystem::path path = dir.file("kernels.db");
  KernelsDb db = KernelsDb::open(path);
  ProblemRecord problem = sample_problem(0);

  void SetUp() override { db.put_problem(problem); }

  BinaryQuery query_for(const BinaryRecord &binary) {
    return {binary.key.problem_key, binary.key.config_json, binary.key.arch,
            binary.key.toolkit_version, binary.key.compiler_version};
  }
};

TEST_F(KernelsDbStores, ProblemRoundTripsWithFullRangeHashes) {
  for (uint64_t hash :
       {0ull, 1ull, 0x7fffffffffffffffull, 0x8000000000000000ull, 0xffffffffffffffffull}) {
    ProblemRecord p = sample_problem(static_cast<int>(hash & 0xff) + 100);
    p.key_text += ":" + std::to_string(hash);
    p.key_hash = hash;
    db.put_problem(p);
    const auto found = db.find_problem(p.key_text);
    ASSERT_TRUE(found);
    EXPECT_EQ(found->key_hash, hash);
    EXPECT_EQ(found->op, "gemm");
    EXPECT_EQ(found->shape_json,
              "{\"k\":64,\"m\":1024,\"n\":" + std::to_string(512 + (hash & 0xff) + 100) + "}");
    const auto by_hash = db.show(format_key_hash(hash));
    ASSERT_EQ(by_hash.size(), 1u);
    EXPECT_EQ(by_hash[0].problem.key_text, p.key_text);
  }
  EXPECT_FALSE(db.find_problem("no such key"));
}

TEST_F(KernelsDbStores, PutProblemUpdatesAndCanonicalizesShape) {
  ProblemRecord p = problem;
  p.shape_json = "{ \"n\" : 2, \"m\" : 1 }";
  p.spec_text = "gemm m=1 n=2";
  db.put_problem(p);
  const auto found = db.find_problem(p.key_text);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->shape_json, "{\"m\":1,\"n\":2}");
  EXPECT_EQ(found->spec_text, "gemm m=1 n=2");
  p.shape_json = "[1,2]";
  EXPECT_THROW(db.put_problem(p), DbError);
  p.shape_json = "{not json";
  EXPECT_THROW(db.put_problem(p), DbError);
}

TEST_F(KernelsDbStores, BinaryLookupMatchesConfigByValue) {
  const BinaryRecord binary = sample_binary(problem, 128);
  db.put_binary(binary);
  BinaryQuery query = query_for(binary);
  query.config_json = "{ \"stages\": 3, \"tile_n\": 128, \"tile_m\": 128 }"; // reordered
  const BinaryLookup found = db.find_binary(query);
  ASSERT_EQ(found.status, LookupStatus::hit);
  EXPECT_EQ(found.binary->cubin, binary.cubin);
  EXPECT_EQ(found.binary->ptx, binary.ptx);
  EXPECT_EQ(found.binary->cubin_sha256, sha256_hex(binary.cubin));
  EXPECT_EQ(found.binary->key.config_json, "{\"stages\":3,\"tile_m\":128,\"tile_n\":128}");
  EXPECT_EQ(found.binary->resources_json,
            "{\"registers\":128,\"shared_bytes\":49152,\"spill_bytes\":0}");
  EXPECT_EQ(found.binary->compile_options, binary.compile_options);
  EXPECT_DOUBLE_EQ(found.binary->compile_ms, 12.5);
  EXPECT_TRUE(found.warnings.empty());
  query.config_json = sample_config(64);
  EXPECT_EQ(db.find_binary(query).status, LookupStatus::miss);
}

TEST_F(KernelsDbStores, LookupNeverReturnsABinaryOfAnotherArchToolkitOrCompiler) {
  const BinaryRecord binary = sample_binary(problem, 128, "sm_80", "12.4", "0.1.0");
  db.put_binary(binary);
  const BinaryQuery exact = query_for(binary);
  EXPECT_EQ(db.find_binary(exact).status, LookupStatus::hit); // now cached too
  BinaryQuery other_arch = exact;
  other_arch.arch = "sm_86";
  EXPECT_EQ(db.find_binary(other_arch).status, LookupStatus::miss);
  BinaryQuery other_toolkit = exact;
  other_toolkit.toolkit_version = "12.5";
  EXPECT_EQ(db.find_binary(other_toolkit).status, LookupStatus::miss);
  BinaryQuery other_compiler = exact;
  other_compiler.compiler_version = "0.1.1";
  EXPECT_EQ(db.find_binary(other_compiler).status, LookupStatus::miss);
  other_compiler.config_json.reset();
  EXPECT_EQ(db.find_binary(other_compiler).status, LookupStatus::miss);
  // A fresh connection without the cache agrees.
  KernelsDb fresh = KernelsDb::open(path);
  EXPECT_EQ(fresh.find_binary(other_arch).status, LookupStatus::miss);
  EXPECT_EQ(fresh.find_binary(exact).status, LookupStatus::hit);
  // The stale binary stays queryable.
  const auto details = fresh.show(problem.key_text);
  ASSERT_EQ(details.size(), 1u);
  EXPECT_EQ(details[0].binaries.size(), 1u);
}

TEST_F(KernelsDbStores, LookupWithoutConfigPrefersTheFastestMeasuredConfig) {
  for (int tile : {64, 128, 256})
    db.put_binary(sample_binary(problem, tile));
  db.put_result(sample_result(problem, 64, 30.0));
  db.put_result(sample_result(problem, 128, 10.0));
  db.put_result(sample_result(problem, 256, 20.0));
  BinaryQuery query{problem.key_text, std::nullopt, "sm_80", "12.4", "0.1.0"};
  BinaryLookup found = db.find_binary(query);
  ASSERT_EQ(found.status, LookupStatus::hit);
  EXPECT_EQ(found.binary->key.config_json, "{\"stages\":3,\"tile_m\":128,\"tile_n\":128}");
  // A new faster measurement changes the answer (the cache is cleared by writes).
  db.put_result(sample_result(problem, 256, 5.0));
  found = db.find_binary(query);
  EXPECT_EQ(found.binary->key.config_json, "{\"stages\":3,\"tile_m\":256,\"tile_n\":128}");
}

TEST_F(KernelsDbStores, DamagedCubinIsIgnoredWithAWarning) {
  const BinaryRecord good = sample_binary(problem, 128);
  const BinaryRecord bad = sample_binary(problem, 64);
  db.put_binary(good);
  db.put_binary(bad);
  db.put_result(sample_result(problem, 64, 1.0)); // the damaged one would be preferred
  {
    Connection raw = Connection::open(path);
    raw.exec("UPDATE binaries SET cubin = zeroblob(64) WHERE id IN (SELECT binary_id FROM "
             "problem_binaries WHERE config_json LIKE '%\"tile_m\":64%')");
  }
  db.clear_cache();
  BinaryQuery exact_bad = query_for(bad);
  BinaryLookup lookup = db.find_binary(exact_bad);
  EXPECT_EQ(lookup.status, LookupStatus::corrupt);
  EXPECT_FALSE(lookup.binary);
  ASSERT_EQ(lookup.warnings.size(), 1u);
  EXPECT_NE(lookup.warnings[0].find("sha256 mismatch"), std::string::npos);
  BinaryQuery any{problem.key_text, std::nullopt, "sm_80", "12.4", "0.1.0"};
  lookup = db.find_binary(any);
  ASSERT_EQ(lookup.status, LookupStatus::hit);
  EXPECT_EQ(lookup.binary->cubin, good.cubin);
  EXPECT_EQ(lookup.warnings.size(), 1u);
  // Rebuilding (put_binary again) repairs it.
  db.put_binary(bad);
  EXPECT_EQ(db.find_binary(exact_bad).status, LookupStatus::hit);
  // check reports damage too.
  {
    Connection raw = Connection::open(path);
    raw.exec("UPDATE binaries SET cubin = x'00' WHERE id IN (SELECT binary_id FROM "
             "problem_binaries WHERE config_json LIKE '%\"tile_m\":64%')");
  }
  const CheckReport report = KernelsDb::check(path);
  EXPECT_FALSE(report.ok);
  EXPECT_TRUE(report.problems.empty());
  EXPECT_EQ(report.bad_cubins.size(), 1u);
  EXPECT_EQ(report.binaries_checked, 2);
}

TEST_F(KernelsDbStores, BinaryOfUnknownProblemIsRejected) {
  ProblemRecord unknown = sample_problem(99);
  try {
    db.put_binary(sample_binary(unknown, 128));
    FAIL();
  } catch (const DbError &error) {
    EXPECT_EQ(error.kind(), DbErrorKind::not_found);
    EXPECT_NE(error.how_to_fix().find("put_problem"), std::string::npos);
  }
  EXPECT_THROW(db.put_result(sample_result(unknown, 128, 1.0)), DbError);
  BinaryRecord bad_config = sample_binary(problem, 128);
  bad_config.key.config_json = "{tile";
  EXPECT_THROW(db.put_binary(bad_config), DbError);
}

TEST_F(KernelsDbStores, ResultsAreKeptRankedAndDeduplicated) {
  EXPECT_TRUE(db.put_result(sample_result(problem, 128, 10.0)));
  EXPECT_FALSE(db.put_result(sample_result(problem, 128, 10.0))); // identical row
  EXPECT_TRUE(db.put_result(sample_result(problem, 128, 10.0, "NVIDIA A100-SXM4-80GB",
                                          1700000001000))); // another measurement
  EXPECT_TRUE(db.put_result(sample_result(problem, 64, 8.0, "NVIDIA A10")));
  ResultRecord failed = sample_result(problem, 512, 0);
  failed.status = ResultStatus::illegal;
  failed.timing.reset();
  failed.tflops.reset();
  failed.message = "needs 300 KB of shared memory";
  EXPECT_TRUE(db.put_result(failed));
  ResultRecord predicted = sample_result(problem, 32, 1.0);
  predicted.provenance = {ProvenanceKind::predicted, "", "", std::nullopt, "roofline-v1"};
  EXPECT_TRUE(db.put_result(predicted));
  ResultRecord no_timing = sample_result(problem, 32, 1.0);
  no_timing.timing.reset();
  EXPECT_THROW(db.put_result(no_timing), DbError);

  const auto results = db.results(problem.key_text);
  ASSERT_EQ(results.size(), 5u);
  EXPECT_EQ(results[0].provenance.device, "NVIDIA A10"); // 8 us, measured
  EXPECT_EQ(results[3].provenance.kind, ProvenanceKind::predicted);
  EXPECT_EQ(results[4].status, ResultStatus::illegal);
  EXPECT_EQ(results[4].message, "needs 300 KB of shared memory");
  EXPECT_EQ(results[1].provenance.clock_mhz, 1410);

  const auto best = db.best_result(problem.key_text, "sm_80");
  ASSERT_TRUE(best);
  EXPECT_DOUBLE_EQ(best->timing->median_us, 8.0);
  const auto best_a100 = db.best_result(problem.key_text, "sm_80", "NVIDIA A100-SXM4-80GB");
  ASSERT_TRUE(best_a100);
  EXPECT_DOUBLE_EQ(best_a100->timing->median_us, 10.0);
  EXPECT_EQ(best_a100->config_json, "{\"stages\":3,\"tile_m\":128,\"tile_n\":128}");
  EXPECT_FALSE(db.best_result(problem.key_text, "sm_90"));
}

TEST_F(KernelsDbStores, CacheServesConcurrentReaders) {
  const BinaryRecord binary = sample_binary(problem, 128);
  db.put_binary(binary);
  const BinaryQuery query = query_for(binary);
  std::vector<std::thread> threads;
  std::atomic<int> hits{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i)
        if (db.find_binary(query).status == LookupStatus::hit)
          ++hits;
    });
  for (auto &thread : threads)
    thread.join();
  EXPECT_EQ(hits.load(), 800);
}

TEST_F(KernelsDbStores, ThreadsShareOneKernelsDb) {
  for (int tile : {64, 128})
    db.put_binary(sample_binary(problem, tile));
  const BinaryQuery any{problem.key_text, std::nullopt, "sm_80", "12.4", "0.1.0"};
  std::atomic<bool> failed{false};
  std::thread writer([&] {
    for (int i = 0; i < 50; ++i)
      db.put_result(sample_result(problem, i % 2 == 0 ? 64 : 128, 50.0 - i));
  });
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t)
    readers.emplace_back([&] {
      for (int i = 0; i < 100; ++i) {
        if (db.find_binary(any).status != LookupStatus::hit)
          failed = true;
        db.best_result(problem.key_text, "sm_80");
        db.list({});
      }
    });
  writer.join();
  for (auto &reader : readers)
    reader.join();
  EXPECT_FALSE(failed.load());
  EXPECT_EQ(db.results(problem.key_text).size(), 50u);
  EXPECT_DOUBLE_EQ(db.best_result(problem.key_text, "sm_80")->timing->median_us, 1.0);
  // The last (fastest) result is for tile 128: config-less lookups follow it.
  EXPECT_EQ(db.find_binary(any).binary->key.config_json,
            "{\"stages\":3,\"tile_m\":128,\"tile_n\":128}");
}

} // namespace
} // namespace tcjit::kernels_db
