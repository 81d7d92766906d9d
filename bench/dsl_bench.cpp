// How long the front of the pipeline takes: DSL text -> OpSpec -> canonical key.
#include "compiler/dsl/parser.h"
#include "compiler/spec/problem_key.h"

#include <benchmark/benchmark.h>

namespace {

constexpr const char *kGemm =
    "gemm m=1024 n=1000 k=2048 a=bf16:row b=bf16:row c=f32:row acc=f32 alpha=1 beta=1 bias=col "
    "act=gelu";

void BM_ParseSpec(benchmark::State &state) {
  for (auto _ : state) {
    tcjit::ParseResult r = tcjit::parse_spec(kGemm);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_ParseSpec);

void BM_ParseAndKey(benchmark::State &state) {
  for (auto _ : state) {
    tcjit::ParseResult r = tcjit::parse_spec(kGemm);
    tcjit::ProblemKey key = tcjit::make_problem_key(r.entries.front().spec, "sm_80", false);
    benchmark::DoNotOptimize(key);
  }
}
BENCHMARK(BM_ParseAndKey);

} // namespace

BENCHMARK_MAIN();
