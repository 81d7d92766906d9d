// engine::run_and_check_kernel with a ReferenceCache (what the CUDA measurer checks every candidate
// config of one problem with): the CPU reference is computed once per spec, seed and math mode,
// and a kernel checked against a cached reference is still judged right or wrong as without it.
#include "compiler/codegen/pipeline.h"
#include "compiler/dsl/parser.h"
#include "engine/verify_kernel.h"
#include "runtime/device/device.h"
#include "runtime/device_factory.h"

#include <gtest/gtest.h>

#include <string>

namespace tcjit {
namespace {

OpSpec spec_of(const std::string &text) {
  return parse_spec(text).entries.front().spec;
}

codegen::CompiledKernel compiled(const OpSpec &spec, const std::string &config_text) {
  codegen::CompileOptions options;
  codegen::TileConfig config;
  std::string error;
  EXPECT_TRUE(codegen::parse_tile_config(config_text, config, error)) << error;
  options.config = config;
  codegen::CompiledKernel kernel = codegen::compile_gemm(spec, options);
  EXPECT_TRUE(kernel.ok());
  return kernel;
}

TEST(ReferenceCache, OneReferenceServesEveryConfigOfAProblem) {
  const OpSpec spec =
      spec_of("gemm m=96 n=80 k=64 a=f16 b=f16:col c=f16 acc=f32 bias=col act=relu");
  const codegen::CompiledKernel small = compiled(spec, "32x32x32 w16x16 s2");
  const codegen::CompiledKernel large = compiled(spec, "64x64x32 w32x32 s3");
  auto dev = device::open_device("emu");
  engine::ReferenceCache cache;

  const engine::KernelCheck first = engine::run_and_check_kernel(*dev, small, spec, 3, {}, &cache);
  EXPECT_TRUE(first.report.ok()) << first.report.summary();
  EXPECT_FALSE(first.reference_reused);
  const engine::KernelCheck second = engine::run_and_check_kernel(*dev, large, spec, 3, {}, &cache);
  EXPECT_TRUE(second.report.ok()) << second.report.summary();
  EXPECT_TRUE(second.reference_reused);

  // Another seed means other inputs: computed again.
  const engine::KernelCheck reseeded =
      engine::run_and_check_kernel(*dev, large, spec, 4, {}, &cache);
  EXPECT_TRUE(reseeded.report.ok()) << reseeded.report.summary();
  EXPECT_FALSE(reseeded.reference_reused);
}

TEST(ReferenceCache, AnotherSpecIsNotJudgedByTheCachedReference) {
  const OpSpec relu = spec_of("gemm m=64 n=64 k=32 a=f16 b=f16:col c=f16 acc=f32 act=relu");
  const OpSpec plain = spec_of("gemm m=64 n=64 k=32 a=f16 b=f16:col c=f16 acc=f32 alpha=2");
  const codegen::CompiledKernel relu_kernel = compiled(relu, "32x32x32 w16x16 s2");
  auto dev = device::open_device("emu");
  engine::ReferenceCache cache;
  ASSERT_TRUE(engine::run_and_check_kernel(*dev, relu_kernel, relu, 1, {}, &cache).report.ok());
  // The relu kernel checked as the alpha=2 problem: the cached relu reference must not be used,
  // and the kernel is wrong for that problem.
  const engine::KernelCheck wrong =
      engine::run_and_check_kernel(*dev, relu_kernel, plain, 1, {}, &cache);
  EXPECT_FALSE(wrong.reference_reused);
  EXPECT_FALSE(wrong.report.ok());
  // And a kernel that is wrong for the cached problem is caught with the cached reference.
  const engine::KernelCheck relu_again =
      engine::run_and_check_kernel(*dev, relu_kernel, relu, 1, {}, &cache);
  EXPECT_FALSE(relu_again.reference_reused); // the cache holds alpha=2's now
  const codegen::CompiledKernel plain_kernel = compiled(plain, "32x32x32 w16x16 s2");
  const engine::KernelCheck plain_as_relu =
      engine::run_and_check_kernel(*dev, plain_kernel, relu, 1, {}, &cache);
  EXPECT_TRUE(plain_as_relu.reference_reused);
  EXPECT_FALSE(plain_as_relu.report.ok());
}

TEST(ReferenceCache, AConvolutionsReferenceIsSharedToo) {
  const OpSpec spec = spec_of("conv2d n=2 h=8 w=8 c=16 k=32 r=3 s=3 pad=1 x=f16 acc=f32");
  codegen::CompileOptions options;
  const codegen::CompiledKernel kernel = codegen::compile_gemm(spec, options);
  ASSERT_TRUE(kernel.ok());
  auto dev = device::open_device("emu");
  engine::ReferenceCache cache;
  const engine::KernelCheck first = engine::run_and_check_kernel(*dev, kernel, spec, 2, {}, &cache);
  const engine::KernelCheck second =
      engine::run_and_check_kernel(*dev, kernel, spec, 2, {}, &cache);
  EXPECT_TRUE(first.report.ok()) << first.report.summary();
  EXPECT_TRUE(second.report.ok()) << second.report.summary();
  EXPECT_FALSE(first.reference_reused);
  EXPECT_TRUE(second.reference_reused);
}

} // namespace
} // namespace tcjit
