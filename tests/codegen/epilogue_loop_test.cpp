// The epilogue's passes as a loop (compiler/codegen/plan/epilogue_loop.h): both backends emit the
// pass's alpha/beta/bias/activation once and loop over the passes, picking the pass's
// accumulators by a switch. Checked: every activation, in the staged epilogue
// (row- and col-major D) and the direct one, with alpha, beta, bias, tails and split-K, on the
// emulator against the CPU reference under the tolerance model, for both backends, looped and
// unrolled (TCJIT_EPILOGUE_UNROLL=1); and that the activation's code does not grow with the warp
// tile's row-blocks (unrolled, it doubles when they double).
#include "compiler/codegen/plan/epilogue_loop.h"
#include "compiler/dsl/parser.h"
#include "engine/kernel_compile.h"
#include "engine/verify_kernel.h"
#include "runtime/emu/emu_device.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace tcjit {
namespace {

codegen::CompiledKernel compile(const std::string &text, const std::string &config,
                                codegen::Backend backend) {
  const ParseResult parsed = parse_spec(text);
  EXPECT_TRUE(parsed.ok()) << text;
  codegen::CompileOptions options;
  options.backend = backend;
  codegen::TileConfig c;
  std::string error;
  EXPECT_TRUE(codegen::parse_tile_config(config, c, error)) << error;
  options.config = c;
  return engine::compile_kernel(parsed.entries.at(0).spec, options);
}

void expect_matches(const std::string &text, const std::string &config, codegen::Backend backend,
                    bool looped = true) {
  SCOPED_TRACE(text + " [" + config + "] " + codegen::to_string(backend) +
               (looped ? "" : " TCJIT_EPILOGUE_UNROLL=1"));
  const codegen::CompiledKernel k = compile(text, config, backend);
  ASSERT_TRUE(k.ok()) << k.errors[0].field << ": " << k.errors[0].message;
  EXPECT_EQ(k.plan.epilogue_loop, looped);
  emu::EmuDevice dev;
  const engine::KernelCheck check =
      engine::run_and_check_kernel(dev, k, parse_spec(text).entries.at(0).spec, /*seed=*/3);
  EXPECT_GT(check.report.count, 0);
  EXPECT_TRUE(check.report.ok()) << check.report.summary();
}

size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

TEST(EpilogueLoop, EveryEpilogueLoopsUnlessUnrollIsAsked) {
  const std::string gemm = "gemm m=64 n=64 k=64 a=s8:row b=s8:col c=s32:row acc=s32";
  for (const char *act : {"", " act=relu", " act=gelu"})
    EXPECT_TRUE(
        compile(gemm + act, "64x64x64 w32x32 s2", codegen::Backend::llvm).plan.epilogue_loop);
  setenv("TCJIT_EPILOGUE_UNROLL", "1", 1);
  const codegen::CompiledKernel unrolled =
      compile(gemm + " act=gelu", "64x64x64 w32x32 s2", codegen::Backend::llvm);
  unsetenv("TCJIT_EPILOGUE_UNROLL");
  EXPECT_FALSE(unrolled.plan.epilogue_loop);
  // Other code, so another kernel for the caches: a kernel stored with one setting is never served
  // under the other.
  const codegen::CompiledKernel looped =
      compile(gemm + " act=gelu", "64x64x64 w32x32 s2", codegen::Backend::llvm);
  EXPECT_NE(codegen::kernel_identity(unrolled.plan), codegen::kernel_identity(looped.plan));
}

// Any other value is an error naming it: "yes" or "true" used to unroll silently, "false" too.
TEST(EpilogueLoop, AnUnknownUnrollValueIsAnErrorNamingIt) {
  for (const char *value : {"yes", "false", "2", " 1"}) {
    setenv("TCJIT_EPILOGUE_UNROLL", value, 1);
    codegen::KernelPlan plan;
    try {
      codegen::plan_epilogue_loop(plan);
      ADD_FAILURE() << "TCJIT_EPILOGUE_UNROLL='" << value << "' was accepted";
    } catch (const std::runtime_error &e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(std::string("'") + value + "'"), std::string::npos) << message;
      EXPECT_NE(message.find("give 1"), std::string::npos) << message;
    }
  }
  for (const char *value : {"", "0"}) {
    setenv("TCJIT_EPILOGUE_UNROLL", value, 1);
    EXPECT_FALSE(codegen::epilogue_unroll_requested()) << "'" << value << "'";
  }
  unsetenv("TCJIT_EPILOGUE_UNROLL");
  EXPECT_FALSE(codegen::epilogue_unroll_requested());
}

// Each activation in each epilogue shape (2 row-blocks x 4 column-blocks per warp; tails in M and
// N; staged row-major, staged col-major, direct, s8 output, split-K's reduce), both backends.
TEST(EpilogueLoop, EveryActivationMatchesTheReferenceInBothBackends) {
  const char *acts[] = {"none", "relu",      "tanh",     "sigmoid", "elu",
                        "gelu", "gelu_tanh", "softplus", "swish"};
  const char *shapes[] = {
      "gemm m=70 n=72 k=40 a=bf16:row b=bf16:col c=bf16:row acc=f32 alpha=0.5 bias=col",
      "gemm m=64 n=56 k=32 a=f16:row b=f16:col c=f16:col acc=f32 beta=0.75 bias=row",
      "gemm m=61 n=66 k=32 a=f16:col b=f16:row c=f32:row acc=f32 alpha=1.5 beta=-0.5 bias=col",
      "gemm m=72 n=64 k=64 a=s8:row b=s8:col c=s8:row acc=s32 alpha=0.02 bias=col",
  };
  int i = 0;
  for (const char *act : acts)
    for (const char *shape : shapes) {
      const std::string text = std::string(shape) + " act=" + act;
      if (text.find("a=s8") != std::string::npos && std::string(act) == "none") // exact integers
        expect_matches("gemm m=72 n=64 k=64 a=s8:row b=s8:col c=s32:row acc=s32",
                       "64x64x64 w32x32 s2", codegen::Backend::llvm);
      const std::string config =
          std::string(text.find("a=s8") != std::string::npos ? "64x64x64" : "64x64x32") +
          " w32x32 s2";
      expect_matches(text, config,
                     (i++ % 2) ? codegen::Backend::llvm : codegen::Backend::cuda_source);
    }
  for (codegen::Backend backend : {codegen::Backend::llvm, codegen::Backend::cuda_source}) {
    expect_matches(std::string(shapes[0]) + " act=gelu", "64x64x32 w32x32 s2", backend);
    expect_matches(std::string(shapes[2]) + " act=softplus", "64x64x32 w32x32 s2 k2", backend);
    expect_matches("gemm m=72 n=64 k=64 a=s8:row b=s8:col c=s8:col acc=s32", "64x64x64 w32x32 s2",
                   backend);
  }
}

// The unrolled epilogue (TCJIT_EPILOGUE_UNROLL=1, kept to measure against) computes the same
// values: each epilogue shape with an activation, alpha, beta and bias, both backends.
TEST(EpilogueLoop, TheUnrolledEpilogueMatchesTheReferenceInBothBackends) {
  const struct {
    const char *text, *config;
  } cases[] = {
      // staged, row-major D
      {"gemm m=70 n=72 k=40 a=bf16:row b=bf16:col c=bf16:row acc=f32 alpha=0.5 bias=col act=gelu",
       "64x64x32 w32x32 s2"},
      // staged, col-major D
      {"gemm m=64 n=56 k=32 a=f16:row b=f16:col c=f16:col acc=f32 beta=0.75 bias=row act=tanh",
       "64x64x32 w32x32 s2"},
      // direct (f32 D), and split-K's reduce
      {"gemm m=61 n=66 k=32 a=f16:col b=f16:row c=f32:row acc=f32 alpha=1.5 beta=-0.5 bias=col "
       "act=swish",
       "64x64x32 w32x32 s2"},
      {"gemm m=61 n=66 k=64 a=f16:col b=f16:row c=f32:row acc=f32 alpha=1.5 beta=-0.5 bias=col "
       "act=softplus",
       "64x64x32 w32x32 s2 k2"},
      // s8 D
      {"gemm m=72 n=64 k=64 a=s8:row b=s8:col c=s8:row acc=s32 alpha=0.02 bias=col act=relu",
       "64x64x64 w32x32 s2"},
  };
  setenv("TCJIT_EPILOGUE_UNROLL", "1", 1);
  for (codegen::Backend backend : {codegen::Backend::llvm, codegen::Backend::cuda_source})
    for (const auto &c : cases)
      expect_matches(c.text, c.config, backend, /*looped=*/false);
  unsetenv("TCJIT_EPILOGUE_UNROLL");
}

// One pass's code, whatever the number of passes: the activation's ex2.approx count is the same
// for a warp tile of 2 and of 4 mma row-blocks (unrolled it doubles), in the staged epilogue and
// the direct one, in both backends.
TEST(EpilogueLoop, ActivationCodeDoesNotGrowWithTheRowBlocks) {
  for (codegen::Backend backend : {codegen::Backend::llvm, codegen::Backend::cuda_source})
    for (const char *out : {"c=bf16:row", "c=f32:row"}) {
      const std::string text =
          std::string("gemm m=256 n=256 k=64 a=bf16:row b=bf16:col acc=f32 act=sigmoid ") + out;
      SCOPED_TRACE(text + " " + codegen::to_string(backend));
      const codegen::CompiledKernel two = compile(text, "64x128x32 w32x64 s3", backend);
      const codegen::CompiledKernel four = compile(text, "128x128x32 w64x64 s3", backend);
      ASSERT_TRUE(two.ok() && four.ok());
      EXPECT_EQ(two.plan.tiles_m, 2);
      EXPECT_EQ(four.plan.tiles_m, 4);
      const size_t n2 = count(two.ptx, "ex2.approx"), n4 = count(four.ptx, "ex2.approx");
      EXPECT_GT(n2, 0u);
      EXPECT_EQ(n4, n2);
    }
}

} // namespace
} // namespace tcjit
