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

// n^3 GEMMs of `types` (the DSL's a=, b=, c=, acc=), the operands random.
void reference_gemm_loop(benchmark::State &state, const std::string &types) {
  const int64_t n = state.range(0);
  const std::string text = "gemm m=" + std::to_string(n) + " n=" + std::to_string(n) +
                           " k=" + std::to_string(n) + " " + types;
  const tcjit::OpSpec spec = tcjit::parse_spec(text).entries.at(0).spec;
  const tcjit::OperandSizes z = tcjit::operand_sizes(spec);
  auto a = random_buffer(spec.gemm.a.dtype, z.a, 1);
  auto b = random_buffer(spec.gemm.b.dtype, z.b, 2);
  auto c = random_buffer(spec.gemm.c.dtype, z.c, 3);
  for (auto _ : state) {
    auto r =
        tcjit::reference_gemm(spec, {a.data(), b.data(), c.data(), nullptr}, tcjit::MathMode::tf32);
    benchmark::DoNotOptimize(r);
  }
  state.counters["MAC/s"] =
      benchmark::Counter(double(n) * n * n, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_ReferenceGemmF16(benchmark::State &state) {
  reference_gemm_loop(state, "a=f16:row b=f16:col c=f16:row");
}
BENCHMARK(BM_ReferenceGemmF16)
    ->Arg(256)
    ->Arg(512)
    ->Arg(1024)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The s8 GEMM of bench/emu_run_rate.py (int16 kernels where the CPU has AVX2).
void BM_ReferenceGemmS8(benchmark::State &state) {
  reference_gemm_loop(state, "a=s8:row b=s8:col c=s32:row acc=s32");
}
BENCHMARK(BM_ReferenceGemmS8)->Arg(512)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

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
