// The passes of NVPTX's code generator that tcjit skips (compiler/codegen/llvm/nvptx_emit.h):
// - kPassesWithoutEffect change nothing: over kernels of every kind the PTX is byte for byte the
//   PTX of the full pipeline (CompileOptions::every_codegen_pass). A new LLVM that makes one of
//   them matter fails here, naming the kernel.
// - LSR, skipped in conv wgrad kernels, costs them registers (ptxas sm_80).
// - With TCJIT_LLC_OPT (or TCJIT_LLVM_PIPELINE) set, nothing is skipped.
#include "compiler/codegen/pipeline.h"
#include "compiler/dsl/parser.h"
#include "runtime/jit/entry_resources.h"
#include "runtime/jit/ptxas_compiler.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace tcjit {
namespace {

struct Case {
  const char *spec;
  const char *config; // "" for the default
};

codegen::CompiledKernel compile(const Case &c, bool every_pass, bool wgrad_lsr = false) {
  const ParseResult parsed = parse_spec(c.spec);
  EXPECT_TRUE(parsed.ok()) << c.spec;
  codegen::CompileOptions options;
  if (*c.config) {
    codegen::TileConfig config;
    std::string error;
    EXPECT_TRUE(codegen::parse_tile_config(c.config, config, error)) << error;
    options.config = config;
  }
  options.every_codegen_pass = every_pass;
  options.wgrad_loop_strength_reduction = wgrad_lsr;
  codegen::CompiledKernel k = codegen::compile_gemm(parsed.entries.at(0).spec, options);
  EXPECT_TRUE(k.ok()) << c.spec << ": " << (k.ok() ? "" : k.errors[0].message);
  return k;
}

// Every dtype and mma form, SIMT, f64 with libdevice, col-major D with beta and bias, M/N tails,
// 2:4-sparse, s4, conv fprop and dgrad (wgrad: LSR, below), depthwise, the 7x7 stem.
const Case kCases[] = {
    {"gemm m=4096 n=4096 k=4096 a=f16 b=f16:col c=f16 acc=f32", "128x128x32 w64x64 s3"},
    {"gemm m=4096 n=4096 k=4096 a=bf16 b=bf16:col c=bf16 acc=f32 bias=col act=gelu",
     "128x128x32 w64x64 s3"},
    {"gemm m=4096 n=4096 k=4096 a=f32 b=f32:col c=f32 acc=f32 math=tf32", "128x128x32 w64x64 s3"},
    {"gemm m=4096 n=4096 k=4096 a=s8 b=s8:col c=s8 acc=s32 alpha=0.01", "128x128x64 w64x64 s3"},
    {"gemm m=1000 n=1000 k=1000 a=f16 b=f16:col c=f16 acc=f32", ""},
    {"gemm m=512 n=512 k=512 a=f16:col b=f16:row c=f16:col acc=f32 beta=1 bias=row act=tanh", ""},
    {"gemm m=256 n=256 k=256 a=f32 b=f32:col c=f32 acc=f32 math=f32", ""},
    {"gemm m=256 n=256 k=256 a=f64 b=f64:col c=f64 acc=f64 act=gelu", ""},
    {"gemm m=2048 n=2048 k=2048 a=s4 b=s4:col c=s32 acc=s32", ""},
    {"gemm m=1024 n=1024 k=1024 a=f16 b=f16:col c=f16 acc=f32 sparse=2:4", ""},
    {"gemm m=512 n=512 k=512 a=u8 b=s8:col c=s32 acc=s32 bias=row", ""},
    {"conv2d n=32 h=56 w=56 c=64 k=64 r=3 s=3 pad=1 x=f16 acc=f32 bias=col act=relu",
     "128x128x32 w64x64 s3"},
    {"conv2d n=32 h=56 w=56 c=64 k=64 r=3 s=3 pad=1 stride=2 pass=dgrad x=f16 acc=f32", ""},
    {"conv2d n=8 h=28 w=28 c=128 k=128 r=3 s=3 pad=1 x=s8 acc=s32", ""},
    {"conv2d n=32 h=224 w=224 c=3 k=64 r=7 s=7 pad=3 stride=2 x=f16 acc=f32", ""},
    {"conv2d n=8 h=56 w=56 c=64 k=64 r=3 s=3 pad=1 groups=64 x=f16 acc=f32", ""},
};

TEST(CodegenPasses, TheSkippedPassesChangeNoKernel) {
  for (const Case &c : kCases) {
    SCOPED_TRACE(std::string(c.spec) + " [" + c.config + "]");
    const codegen::CompiledKernel skipped = compile(c, false), every = compile(c, true);
    ASSERT_FALSE(every.ptx.empty());
    EXPECT_TRUE(skipped.ptx == every.ptx)
        << "a pass of kPassesWithoutEffect (compiler/codegen/llvm/nvptx_emit.cpp) changed "
        << every.plan.kernel_name << ": measure its kernels again, and take it off the list";
  }
}

// The one kernel measured to differ: a split-K GEMM in which NaryReassociate folds two adds (the
// SASS is the same).
const Case kSplitK{"gemm m=64 n=48 k=4096 a=f16 b=f16:col c=f16 acc=f32", "32x32x32 w16x16 s3 k4"};

// The gate is on: the split-K kernel comes out without the fold.
TEST(CodegenPasses, TheGateSkipsThem) {
  const codegen::CompiledKernel skipped = compile(kSplitK, false), every = compile(kSplitK, true);
  ASSERT_FALSE(every.ptx.empty());
  EXPECT_NE(skipped.ptx, every.ptx);
}

// Sets an environment variable for one scope.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : name_(name) { setenv(name, value, 1); }
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;
  ~ScopedEnv() { unsetenv(name_); }

private:
  const char *name_;
};

// An override of LLVM's level (here the level tcjit uses anyway) or pipeline runs every pass: the
// split-K kernel keeps the fold whether every_codegen_pass is asked or not.
TEST(CodegenPasses, AnLlvmOverrideRunsEveryPass) {
  ASSERT_EQ(std::getenv("TCJIT_LLC_OPT"), nullptr);
  ASSERT_EQ(std::getenv("TCJIT_LLVM_PIPELINE"), nullptr);
  {
    const ScopedEnv level("TCJIT_LLC_OPT", "1");
    const codegen::CompiledKernel asked = compile(kSplitK, false), every = compile(kSplitK, true);
    ASSERT_FALSE(every.ptx.empty());
    EXPECT_EQ(asked.ptx, every.ptx);
  }
  {
    const ScopedEnv pipeline("TCJIT_LLVM_PIPELINE", "function(early-cse,loop-mssa(licm))");
    const codegen::CompiledKernel asked = compile(kSplitK, false), every = compile(kSplitK, true);
    ASSERT_FALSE(every.ptx.empty());
    EXPECT_EQ(asked.ptx, every.ptx);
  }
}

int registers(const codegen::CompiledKernel &k) {
  jit::PtxCompileOptions sm80;
  sm80.sm_arch = 80;
  const jit::CompiledPtx cubin = jit::compile_ptx_with_ptxas(k.ptx, "wgrad.ptx", sm80);
  const jit::EntryResources *r = jit::find_entry_resources(cubin.resources, k.plan.kernel_name);
  return r ? r->registers : -1;
}

// Without LSR a wgrad kernel's main loop keeps fewer induction variables: fewer registers (f16
// 3x3 at its default config: 128 against 168 with LSR).
TEST(CodegenPasses, AWgradKernelIsLeanerWithoutLoopStrengthReduction) {
  for (const Case c :
       {Case{"conv2d n=32 h=56 w=56 c=64 k=64 r=3 s=3 pad=1 pass=wgrad x=f16 acc=f32", ""},
        Case{"conv2d n=32 h=56 w=56 c=256 k=64 r=1 s=1 pass=wgrad x=bf16 acc=f32", ""}}) {
    SCOPED_TRACE(c.spec);
    const codegen::CompiledKernel without = compile(c, false), with = compile(c, false, true);
    ASSERT_NE(without.ptx, with.ptx);
    if (!jit::ptxas_available())
      GTEST_SKIP() << "no ptxas";
    const int lean = registers(without), full = registers(with);
    ASSERT_GT(lean, 0);
    EXPECT_LT(lean, full);
  }
}

} // namespace
} // namespace tcjit
