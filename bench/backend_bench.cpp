// The two backends' compile times side by side, measured in one run: spec -> PTX (LLVM's NVPTX
// backend, or CUDA C++ source + NVRTC) and spec -> PTX -> cubin (+ the runtime's ptxas compile),
// for one config per mma form. Report the median:
//   build/bench/bench_backends --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include "compiler/dsl/parser.h"
#include "engine/kernel_compile.h"
#include "tuner/candidate.h"

#include <benchmark/benchmark.h>

namespace {

using tcjit::codegen::Backend;

struct Workload {
  const char *name;
  const char *spec;
  const char *custom_source = nullptr; // act=custom's text (the spec names act=custom:mish.cu)
};

// A user-defined activation (mish), for the cost of act=custom: the check compile of the function
// alone plus the kernel. The LLVM backend refuses it (the benchmark reports the skip).
constexpr const char *kMish =
    R"(__device__ float softplus(float x) { return x > 20.0f ? x : log1pf(expf(x)); }
__device__ float act(float x) { return x * tanhf(softplus(x)); }
)";

constexpr Workload kWorkloads[] = {
    {"f16", "gemm m=4096 n=4096 k=4096 a=f16:row b=f16:col c=f16:row acc=f32"},
    {"f16_gelu_bias", "gemm m=4096 n=4096 k=4096 a=f16:row b=f16:col c=f16:row acc=f32 act=gelu "
                      "bias=col beta=1"},
    {"tf32", "gemm m=4096 n=4096 k=4096 a=f32:row b=f32:col c=f32:row acc=f32 math=tf32"},
    {"s8", "gemm m=4096 n=4096 k=4096 a=s8:row b=s8:col c=s32:row acc=s32"},
    {"f64", "gemm m=4096 n=4096 k=4096 a=f64:row b=f64:col c=f64:row acc=f64"},
    {"f16_custom_mish",
     "gemm m=4096 n=4096 k=4096 a=f16:row b=f16:col c=f16:row acc=f32 "
     "act=custom:mish.cu",
     kMish},
    // ResNet-50's 3x3 layer of stage 3: fprop, dgrad, and a depthwise convolution
    {"conv_fprop_f16", "conv2d n=32 h=28 w=28 c=128 k=128 r=3 s=3 pad=1 x=f16"},
    {"conv_dgrad_f16", "conv2d n=32 h=28 w=28 c=128 k=128 r=3 s=3 pad=1 pass=dgrad x=f16"},
    {"conv_depthwise_f16", "conv2d n=32 h=56 w=56 c=128 k=128 r=3 s=3 pad=1 groups=128 x=f16"},
};

void compile(benchmark::State &state, const Workload &w, Backend backend, bool cubin) {
  tcjit::OpSpec spec = tcjit::parse_spec(w.spec).entries.front().spec;
  if (w.custom_source)
    spec.epilogue.custom.source = w.custom_source;
  tcjit::codegen::CompileOptions options;
  options.arch = "sm_80"; // the code generator's default config for the spec
  options.backend = backend;
  for (auto _ : state) {
    try {
      const tcjit::codegen::CompiledKernel k = tcjit::engine::compile_kernel(spec, options);
      if (!k.ok()) {
        state.SkipWithError(k.errors[0].message.c_str());
        break;
      }
      if (cubin) {
        const tcjit::engine::CubinBuild b =
            tcjit::engine::build_cubin(k, tcjit::engine::CubinRoute::ptxas);
        if (!b.error.empty() || b.stage.empty()) {
          state.SkipWithError("ptxas failed");
          break;
        }
        benchmark::DoNotOptimize(b.cubin.data());
      }
      benchmark::DoNotOptimize(k.ptx.data());
    } catch (const std::exception &e) {
      state.SkipWithError(e.what());
      break;
    }
  }
}

const int kRegistered = [] {
  for (const Workload &w : kWorkloads)
    for (const Backend b : {Backend::llvm, Backend::cuda_source})
      for (const bool cubin : {false, true})
        benchmark::RegisterBenchmark(
            (std::string(cubin ? "SpecToCubin/" : "SpecToPtx/") + w.name + "/" +
             tcjit::codegen::to_string(b))
                .c_str(),
            [w, b, cubin](benchmark::State &s) { compile(s, w, b, cubin); })
            ->Unit(benchmark::kMillisecond);
  return 0;
}();

} // namespace

BENCHMARK_MAIN();
