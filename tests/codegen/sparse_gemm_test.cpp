// 2:4-sparse GEMMs (sparse=2:4, mma.sp; f16, bf16, s8, u8, tf32, s4, u4): both backends' kernels
// assemble with ptxas for sm_80 and, on the emulator, match the CPU reference computed with the
// pruned dense A (engine/verify_kernel: random A pruned and compressed by
// compiler/reference/sparse_2_4.h), over tails in M and N, K-tiles past K, batch, split-K, lda and
// the epilogue's bias and activations, and K of many K-tiles through 3-4 stages (the metadata's
// stage slots, plan/sparse_metadata.h).
#include "compiler/dsl/parser.h"
#include "engine/cubin_build.h"
#include "engine/kernel_compile.h"
#include "engine/verify_kernel.h"
#include "runtime/emu/emu_device.h"
#include "tests/codegen/spec_config_case.h"

#include <gtest/gtest.h>

#include <string>

namespace tcjit {
namespace {

const Case kCases[] = {
    {"gemm m=64 n=64 k=64 a=f16:row b=f16:col c=f32:row acc=f32 sparse=2:4", "32x32x32 w16x16 s2"},
    {"gemm m=64 n=32 k=128 a=f16:row b=f16:row c=f16:row acc=f32 sparse=2:4", "64x32x64 w32x16 s3"},
    {"gemm m=65 n=63 k=96 a=f16:row b=f16:col c=f32:row acc=f32 sparse=2:4", "32x32x64 w16x16 s2"},
    {"gemm m=17 n=9 k=32 a=bf16:row b=bf16:col c=bf16:row acc=f32 sparse=2:4", ""},
    {"gemm m=40 n=24 k=64 batch=3 lda=40 a=f16:row b=f16:col c=f32:row acc=f32 sparse=2:4",
     "32x32x32 w16x16 s2"},
    {"gemm m=48 n=40 k=160 a=bf16:row b=bf16:row c=f32:col acc=f32 alpha=0.5 beta=1 bias=col "
     "act=gelu sparse=2:4",
     "32x32x32 w16x16 s3 k3"},
    {"gemm m=64 n=48 k=128 a=s8:row b=s8:col c=s32:row acc=s32 sparse=2:4", "32x32x64 w16x16 s2"},
    {"gemm m=33 n=40 k=192 a=u8:row b=u8:row c=s32:row acc=s32 sparse=2:4", "32x32x128 w16x16 s3"},
    {"gemm m=40 n=24 k=256 batch=2 a=s8:row b=s8:col c=s8:row acc=s32 alpha=0.05 sparse=2:4",
     "32x32x64 w16x16 s3 k2"},
    // tf32 (mma.sp m16n8k16, 1:2 pairs): f32 with math=tf32/auto, tf32 storage
    {"gemm m=64 n=64 k=64 a=f32:row b=f32:col c=f32:row acc=f32 math=tf32 sparse=2:4",
     "32x32x16 w16x16 s2"},
    {"gemm m=37 n=29 k=48 batch=3 a=f32:row b=f32:row c=f32:row acc=f32 sparse=2:4",
     "32x32x32 w16x16 s3"},
    {"gemm m=33 n=17 k=96 lda=60 a=tf32:row b=tf32:col c=f32:col acc=f32 bias=row act=relu "
     "sparse=2:4",
     "32x32x16 w16x16 s2"},
    {"gemm m=40 n=24 k=128 batch=2 a=f32:row b=f32:col c=f32:row acc=f32 math=tf32 sparse=2:4",
     "32x32x16 w16x16 s3 k2"},
    // K of 8-16 K-tiles through 3- and 4-stage pipelines: every K-tile's metadata differs (random
    // A), so a metadata register read from another stage's slot (or a slot refilled too early)
    // gives wrong products
    {"gemm m=48 n=32 k=512 a=f16:row b=f16:col c=f32:row acc=f32 sparse=2:4", "32x32x32 w16x16 s4"},
    {"gemm m=64 n=64 k=512 a=f16:row b=f16:col c=f32:row acc=f32 sparse=2:4", "64x64x64 w32x32 s3"},
    {"gemm m=40 n=24 k=640 a=bf16:row b=bf16:row c=f32:row acc=f32 sparse=2:4",
     "32x32x64 w16x16 s3"},
    {"gemm m=33 n=32 k=1024 a=s8:row b=s8:col c=s32:row acc=s32 sparse=2:4", "32x32x64 w16x16 s4"},
    {"gemm m=32 n=32 k=768 batch=2 a=u8:row b=u8:col c=s32:row acc=s32 sparse=2:4",
     "32x32x64 w16x16 s3 k2"},
    {"gemm m=32 n=24 k=256 a=tf32:row b=tf32:col c=f32:row acc=f32 sparse=2:4",
     "32x32x16 w16x16 s4"},
    // s4/u4 (mma.sp m16n8k128, 2 kept pairs of every 4 pairs; in bytes the s8 path): mixed
    // pairs, odd M and N, K a multiple of 128 but not of the 256-value K-tile, batch with a
    // padded lda (compressed values), split-K into s8
    {"gemm m=64 n=64 k=256 a=s4:row b=s4:col c=s32:row acc=s32 sparse=2:4", "32x32x128 w16x16 s2"},
    {"gemm m=33 n=41 k=384 a=u4:row b=u4:col c=s32:row acc=s32 sparse=2:4", "32x32x256 w16x16 s3"},
    {"gemm m=40 n=24 k=256 batch=3 lda=160 a=s4:row b=u4:col c=s32:row acc=s32 sparse=2:4", ""},
    {"gemm m=17 n=9 k=128 a=u4:row b=s4:col c=s32:col acc=s32 sparse=2:4", ""},
    {"gemm m=48 n=40 k=512 batch=2 a=s4:row b=s4:col c=s8:row acc=s32 alpha=0.05 sparse=2:4",
     "32x32x128 w16x16 s3 k2"},
};

codegen::CompiledKernel compile(const Case &c, codegen::Backend backend) {
  const OpSpec spec = parse_spec(c.spec).entries.at(0).spec;
  codegen::CompileOptions options;
  options.backend = backend;
  if (*c.config) {
    codegen::TileConfig config;
    std::string error;
    EXPECT_TRUE(codegen::parse_tile_config(c.config, config, error)) << error;
    options.config = config;
  }
  return engine::compile_kernel(spec, options);
}

class SparseGemm : public ::testing::TestWithParam<std::tuple<Case, codegen::Backend>> {};

TEST_P(SparseGemm, PtxasAcceptsTheMmaSpKernel) {
  const auto &[c, backend] = GetParam();
  const codegen::CompiledKernel k = compile(c, backend);
  ASSERT_TRUE(k.ok()) << k.errors[0].field << ": " << k.errors[0].message;
  EXPECT_TRUE(k.plan.mma.sparse);
  EXPECT_EQ(k.plan.mma.ptx.rfind("mma.sp.sync.aligned.m16n8k", 0), 0u);
  EXPECT_NE(k.ptx.find(std::string(k.plan.mma.ptx)), std::string::npos);
  const engine::CubinBuild cubin = engine::build_cubin(k, engine::CubinRoute::ptxas);
  EXPECT_EQ(cubin.error, "") << "ptxas rejects the PTX";
}

TEST_P(SparseGemm, MatchesTheReferenceOfThePrunedA) {
  const auto &[c, backend] = GetParam();
  const codegen::CompiledKernel k = compile(c, backend);
  ASSERT_TRUE(k.ok()) << k.errors[0].field << ": " << k.errors[0].message;
  const OpSpec spec = parse_spec(c.spec).entries.at(0).spec;
  emu::EmuDevice dev;
  const engine::KernelCheck check = engine::run_and_check_kernel(dev, k, spec, /*seed=*/11);
  EXPECT_GT(check.report.count, 0);
  EXPECT_TRUE(check.report.ok()) << check.report.summary();
}

// s4/u4 sparse kernels on every arch tcjit targets (mma.sp m16n8k128 exists from sm_80): both
// backends' PTX assembles with ptxas for sm_80, sm_86, sm_89 and sm_90.
TEST(SparseGemm4Bit, PtxasAcceptsItOnEveryArch) {
  const OpSpec spec =
      parse_spec("gemm m=64 n=64 k=384 a=s4:row b=u4:col c=s32:row acc=s32 sparse=2:4")
          .entries.at(0)
          .spec;
  for (const char *arch : {"sm_80", "sm_86", "sm_89", "sm_90"})
    for (const codegen::Backend backend : {codegen::Backend::llvm, codegen::Backend::cuda_source}) {
      SCOPED_TRACE(std::string(arch) + (backend == codegen::Backend::llvm ? " llvm" : " cuda"));
      codegen::CompileOptions options;
      options.arch = arch;
      options.backend = backend;
      const codegen::CompiledKernel k = engine::compile_kernel(spec, options);
      ASSERT_TRUE(k.ok()) << k.errors[0].field << ": " << k.errors[0].message;
      EXPECT_EQ(k.plan.mma.ptx, "mma.sp.sync.aligned.m16n8k128.row.col.s32.s4.u4.s32");
      EXPECT_NE(k.ptx.find("mma.sp.sync.aligned.m16n8k128.row.col.s32.s4.u4.s32"),
                std::string::npos);
      EXPECT_EQ(engine::build_cubin(k, engine::CubinRoute::ptxas).error, "");
    }
}

INSTANTIATE_TEST_SUITE_P(Cases, SparseGemm,
                         ::testing::Combine(::testing::ValuesIn(kCases),
                                            ::testing::Values(codegen::Backend::llvm,
                                                              codegen::Backend::cuda_source)));

} // namespace
} // namespace tcjit
