// kernels_db lookup latency: an in-process cache hit (goal < 1 us) and a database hit (goal
// < 100 us), the latter both on an open connection with the cache bypassed and on a freshly
// opened connection.
#include "kernels_db/kernels_db.h"

#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>
#include <unistd.h>

namespace {

namespace kdb = tcjit::kernels_db;

struct BenchDb {
  std::filesystem::path dir;
  std::filesystem::path path;
  kdb::BinaryQuery query;

  BenchDb() {
    dir = std::filesystem::temp_directory_path() / ("tcjit_db_bench_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    path = dir / "kernels.db";
    kdb::KernelsDb db = kdb::KernelsDb::open(path);
    // 200 problems with 4 configs each, cubins of 32 KiB.
    for (int i = 0; i < 200; ++i) {
      kdb::ProblemRecord problem;
      problem.key_text = "gemm:f16:sm_80:m" + std::to_string(1024 + i) + ":n4096:k4096";
      problem.key_hash = 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(i + 1);
      problem.op = "gemm";
      problem.dtype = "f16";
      problem.arch = "sm_80";
      problem.spec_text = "gemm m=" + std::to_string(1024 + i) + " n=4096 k=4096";
      problem.shape_json = "{\"m\":" + std::to_string(1024 + i) + ",\"n\":4096,\"k\":4096}";
      db.put_problem(problem);
      for (int tile : {64, 128, 256, 512}) {
        kdb::BinaryRecord binary;
        binary.key = {problem.key_text, "{\"tile_m\":" + std::to_string(tile) + ",\"tile_n\":128}",
                      "sm_80", "12.4", "0.1.0"};
        binary.ptx = std::string(8192, 'p');
        binary.cubin.assign(32768, static_cast<uint8_t>(tile & 0xff));
        binary.resources_json = "{\"registers\":128}";
        db.put_binary(binary);
      }
    }
    query = {"gemm:f16:sm_80:m1100:n4096:k4096", std::string("{\"tile_m\":128,\"tile_n\":128}"),
             "sm_80", "12.4", "0.1.0"};
  }
  ~BenchDb() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

BenchDb &bench_db() {
  static BenchDb instance;
  return instance;
}

void BM_CacheHit(benchmark::State &state) {
  kdb::KernelsDb db = kdb::KernelsDb::open(bench_db().path);
  const kdb::BinaryQuery &query = bench_db().query;
  if (db.find_binary(query).status != kdb::LookupStatus::hit)
    state.SkipWithError("setup: no binary");
  for (auto _ : state)
    benchmark::DoNotOptimize(db.find_binary(query));
}
BENCHMARK(BM_CacheHit)->ThreadRange(1, 2);

void BM_DbHitOpenConnection(benchmark::State &state) {
  kdb::KernelsDb db = kdb::KernelsDb::open(bench_db().path);
  const kdb::BinaryQuery &query = bench_db().query;
  for (auto _ : state) {
    db.clear_cache();
    benchmark::DoNotOptimize(db.find_binary(query));
  }
}
BENCHMARK(BM_DbHitOpenConnection);

// Opens a connection and looks up a binary. Another connection stays open meanwhile, as in a
// machine where some tcjit process uses the database (otherwise each close of the last
// connection checkpoints the WAL and deletes it, which is measured separately below).
void BM_DbHitFreshConnection(benchmark::State &state) {
  const kdb::BinaryQuery &query = bench_db().query;
  kdb::KernelsDb keeper = kdb::KernelsDb::open(bench_db().path);
  for (auto _ : state) {
    kdb::KernelsDb db = kdb::KernelsDb::open(bench_db().path);
    benchmark::DoNotOptimize(db.find_binary(query));
  }
}
BENCHMARK(BM_DbHitFreshConnection);

void BM_DbHitFreshConnectionLastUser(benchmark::State &state) {
  const kdb::BinaryQuery &query = bench_db().query;
  for (auto _ : state) {
    kdb::KernelsDb db = kdb::KernelsDb::open(bench_db().path);
    benchmark::DoNotOptimize(db.find_binary(query));
  }
}
BENCHMARK(BM_DbHitFreshConnectionLastUser);

} // namespace

BENCHMARK_MAIN();
