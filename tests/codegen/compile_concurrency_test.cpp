// compile_gemm is safe to call from several threads at once: the same specs compiled one after
// the other and then from 8 threads at the same moment (several rounds) give byte-identical PTX,
// the same ptxas verdicts and no errors. The specs cover every process-wide piece of state the
// pipeline touches: the NVPTX target registry, libdevice linking (gelu, tanh), NVPTX's
// process-wide call-sequence counter (the calls to libdevice functions), the ptxas scratch files,
// and the split-K module with two kernels.
#include "compiler/codegen/pipeline.h"
#include "compiler/dsl/parser.h"
#include "ptxas_run.h"

#include <gtest/gtest.h>

#include <exception>
#include <latch>
#include <string>
#include <thread>
#include <vector>

namespace tcjit::codegen {
namespace {

struct Case {
  const char *name;
  const char *spec;
  const char *config; // "" for the default config
  const char *arch;
};

const Case kCases[] = {
    {"f16", "gemm m=128 n=128 k=64 a=f16:row b=f16:col c=f16:row acc=f32", "", "sm_80"},
    {"bf16_gelu", "gemm m=96 n=64 k=64 a=bf16 b=bf16:col c=bf16 acc=f32 act=gelu bias=col", "",
     "sm_86"},
    {"tf32", "gemm m=64 n=64 k=64 a=f32 b=f32:col c=f32 acc=f32 math=tf32", "", "sm_89"},
    {"s8", "gemm m=64 n=64 k=64 a=s8 b=s8:col c=s32 acc=s32", "", "sm_90"},
    {"f64_tanh", "gemm m=64 n=64 k=32 a=f64 b=f64:col c=f64 acc=f64 act=tanh", "", "sm_80"},
    {"f16_split_k", "gemm m=64 n=64 k=256 a=f16 b=f16:col c=f16 acc=f32", "64x64x32 w32x32 s3 k4",
     "sm_80"},
};
constexpr size_t kCaseCount = std::size(kCases);

struct Outcome {
  std::string ptx;
  std::vector<ConfigError> errors;
  bool ptxas_ok = false;
  int registers = -1;
  std::string exception; // what() of anything compile_gemm threw
};

Outcome compile_case(const Case &c) {
  Outcome out;
  try {
    const ParseResult parsed = parse_spec(c.spec);
    if (!parsed.ok()) {
      out.exception = std::string("spec does not parse: ") + c.spec;
      return out;
    }
    CompileOptions options;
    options.arch = c.arch;
    if (*c.config) {
      TileConfig config;
      std::string error;
      if (!parse_tile_config(c.config, config, error)) {
        out.exception = "bad config: " + error;
        return out;
      }
      options.config = config;
    }
    CompiledKernel k = compile_gemm(parsed.entries.at(0).spec, options);
    if (k.ok()) { // ptxas too, in the same thread, as the runtime compiles
      const PtxasRun p = run_ptxas(k);
      out.ptxas_ok = p.ok;
      out.registers = p.kernel.registers;
    }
    out.ptx = std::move(k.ptx);
    out.errors = std::move(k.errors);
  } catch (const std::exception &e) {
    out.exception = e.what();
  }
  return out;
}

size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

TEST(CompileConcurrency, ThreadsCompileTheSamePtxAsOneThread) {
  // Sequential reference.
  std::vector<Outcome> expected;
  for (const Case &c : kCases) {
    Outcome o = compile_case(c);
    ASSERT_EQ(o.exception, "") << c.name;
    ASSERT_TRUE(o.errors.empty()) << c.name << ": " << o.errors.front().message;
    ASSERT_TRUE(o.ptxas_ok) << c.name;
    ASSERT_FALSE(o.ptx.empty()) << c.name;
    expected.push_back(std::move(o));
  }
  // The cases do exercise what they are here for.
  EXPECT_NE(expected[1].ptx.find("ex2.approx.f32"), std::string::npos)
      << "gelu (f32) is computed inline from the approximate hardware forms";
  EXPECT_EQ(expected[1].ptx.find("call"), std::string::npos) << "no function is called";
  EXPECT_EQ(expected[4].ptx.find("call"), std::string::npos)
      << "f64 tanh: libdevice linked and inlined";
  EXPECT_EQ(expected[4].ptx.find(".func"), std::string::npos);
  EXPECT_EQ(count(expected[5].ptx, ".entry "), 2u) << "split-K: the GEMM and its reduce kernel";

  // Concurrent rounds: 8 threads released together, thread t compiles case (t + round) % 6, so
  // every case runs in several threads at once and next to every other case.
  constexpr int kThreads = 8;
  constexpr int kRounds = 3;
  for (int round = 0; round < kRounds; ++round) {
    std::vector<Outcome> results(kThreads);
    std::latch start(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        start.arrive_and_wait();
        results[t] = compile_case(kCases[(t + round) % kCaseCount]);
      });
    for (std::thread &thread : threads)
      thread.join();
    for (int t = 0; t < kThreads; ++t) {
      const size_t i = (t + round) % kCaseCount;
      const Outcome &got = results[t];
      SCOPED_TRACE(std::string(kCases[i].name) + ", round " + std::to_string(round) + ", thread " +
                   std::to_string(t));
      EXPECT_EQ(got.exception, "");
      EXPECT_TRUE(got.errors.empty());
      EXPECT_TRUE(got.ptxas_ok);
      EXPECT_EQ(got.registers, expected[i].registers);
      EXPECT_TRUE(got.ptx == expected[i].ptx) << "the PTX differs from the sequential compile";
    }
  }
}

} // namespace
} // namespace tcjit::codegen
