// The tuner's search space: every config of a spec enumerated and checked against the rules
// (tuner::enumerate_space, the full space `tcjit tune` ranks), its legal configs ranked by the
// model (rank_by_model), and the default chooser that runs on every miss of the runtime
// (tuner::heuristic_configs: the small space, ranked by the model).
//   build/bench/bench_tuner --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include "compiler/dsl/parser.h"
#include "tuner/cost_model.h"
#include "tuner/heuristic.h"
#include "tuner/ranking.h"
#include "tuner/search_space.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>

namespace {

constexpr const char *kF16 = "gemm m=4096 n=4096 k=4096 a=f16:row b=f16:col c=f16:row acc=f32";
constexpr const char *kConv =
    "conv2d n=32 h=56 w=56 c=64 k=64 r=3 s=3 pad=1 x=f16 acc=f32 act=relu bias=col beta=1";
constexpr const char *kSymbolic = "gemm m=? n=4096 k=4096 a=bf16:row b=bf16:col c=bf16:row";

tcjit::OpSpec spec_of(const char *text) {
  tcjit::ParseResult r = tcjit::parse_spec(text);
  if (r.entries.empty()) {
    std::fprintf(stderr, "bench_tuner: the spec '%s' does not parse\n", text);
    std::exit(2);
  }
  return r.entries.front().spec;
}

void enumerate(benchmark::State &state, const char *text) {
  const tcjit::OpSpec spec = spec_of(text);
  const tcjit::tuner::GpuModel &gpu = tcjit::tuner::gpu_model_for_arch("sm_80");
  size_t configs = 0;
  for (auto _ : state) {
    tcjit::tuner::SearchSpace space = tcjit::tuner::enumerate_space(spec, "sm_80", false, gpu);
    configs = space.legal.size() + space.pruned.size();
    benchmark::DoNotOptimize(space);
  }
  state.counters["configs"] = double(configs);
}

// Ranks the legal configs of the full space by the model (what `tcjit tune` measures first).
void rank(benchmark::State &state, const char *text) {
  const tcjit::OpSpec spec = spec_of(text);
  const tcjit::tuner::GpuModel &gpu = tcjit::tuner::gpu_model_for_arch("sm_80");
  const tcjit::tuner::SearchSpace space = tcjit::tuner::enumerate_space(spec, "sm_80", false, gpu);
  for (auto _ : state)
    benchmark::DoNotOptimize(tcjit::tuner::rank_by_model(spec, space.legal, false, gpu));
  state.counters["configs"] = double(space.legal.size());
}

void heuristic(benchmark::State &state, const char *text) {
  const tcjit::OpSpec spec = spec_of(text);
  for (auto _ : state)
    benchmark::DoNotOptimize(tcjit::tuner::heuristic_configs(spec, "sm_80", false, 4));
}

void BM_EnumerateSpace_F16(benchmark::State &state) {
  enumerate(state, kF16);
}
void BM_EnumerateSpace_Conv(benchmark::State &state) {
  enumerate(state, kConv);
}
void BM_EnumerateSpace_Symbolic(benchmark::State &state) {
  enumerate(state, kSymbolic);
}
void BM_RankByModel_F16(benchmark::State &state) {
  rank(state, kF16);
}
void BM_RankByModel_Conv(benchmark::State &state) {
  rank(state, kConv);
}
void BM_HeuristicConfigs_F16(benchmark::State &state) {
  heuristic(state, kF16);
}
void BM_HeuristicConfigs_Conv(benchmark::State &state) {
  heuristic(state, kConv);
}
BENCHMARK(BM_EnumerateSpace_F16)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EnumerateSpace_Conv)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EnumerateSpace_Symbolic)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RankByModel_F16)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RankByModel_Conv)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HeuristicConfigs_F16)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HeuristicConfigs_Conv)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
