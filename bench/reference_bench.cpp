// How fast the CPU references are: they run in every GEMM/conv test and in `tcjit run`.
#include "compiler/dsl/parser.h"
#include "compiler/reference/conv_reference.h"
#include "compiler/reference/gemm_reference.h"
#include "compiler/reference/random_fill.h"
#include "compiler/spec/shape.h"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

std::vector<uint8_t> random_buffer(tcjit::DType t, int64_t count, uint64_t seed) {
  std::vector<uint8_t> buf(static_cast<size_t>((count * tcjit::dtype_bits(t) + 7) / 8) + 16);
  tcjit::fill_random(t, buf.data(), count, seed);
  return buf;
}

void BM_ReferenceGemmF16(benchmark::State &state) {
  const int64_t n = state.range(0);
  const std::string text = "gemm m=" + std::to_string(n) + " n=" + std::to_string(n) +
                           " k=" + std::to_string(n) + " a=f16:row b=f16:col c=f16:row";
  const tcjit::OpSpec spec = tcjit::parse_spec(text).entries.at(0).spec;
  const tcjit::OperandSizes z = tcjit::operand_sizes(spec);
  auto a = random_buffer(tcjit::DType::f16, z.a, 1);
  auto b = random_buffer(tcjit::DType::f16, z.b, 2);
  auto c = random_buffer(tcjit::DType::f16, z.c, 3);
  for (auto _ : state) {
    auto r =
        tcjit::reference_gemm(spec, {a.data(), b.data(), c.data(), nullptr}, tcjit::MathMode::tf32);
    benchmark::DoNotOptimize(r);
  }
  state.counters["MAC/s"] =
      benchmark::Counter(double(n) * n * n, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ReferenceGemmF16)
    ->Arg(256)
    ->Arg(512)
    ->Arg(1024)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_ReferenceConvF16(benchmark::State &state) {
  const tcjit::OpSpec spec =
      tcjit::parse_spec("conv2d n=4 h=28 w=28 c=64 k=64 r=3 s=3 pad=1 x=f16:nhwc")
          .entries.at(0)
          .spec;
  const tcjit::OperandSizes z = tcjit::operand_sizes(spec);
  auto x = random_buffer(tcjit::DType::f16, z.x, 1);
  auto f = random_buffer(tcjit::DType::f16, z.filter, 2);
  auto y = random_buffer(tcjit::DType::f16, z.y, 3);
  for (auto _ : state) {
    auto r =
        tcjit::reference_conv(spec, {x.data(), f.data(), y.data(), nullptr}, tcjit::MathMode::tf32);
    benchmark::DoNotOptimize(r);
  }
  state.counters["MAC/s"] = benchmark::Counter(*tcjit::flop_count(spec) / 2,
                                               benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ReferenceConvF16)->Unit(benchmark::kMillisecond)->UseRealTime();

} // namespace

BENCHMARK_MAIN();
