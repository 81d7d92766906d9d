// fp8 GEMMs (e4m3/e5m2 inputs, f32 accumulators) for sm_89: every input pair and output type,
// tails, odd M/N, batch, split-K, bias and activations, compiled by both backends, assembled by
// ptxas for sm_89, run on the emulator and checked against the CPU reference under the tolerance
// model; explain and compile agree, on sm_89 and in the refusal on sm_80/sm_86.
#include "compiler/codegen/plan/tile_config.h"
#include "compiler/dsl/parser.h"
#include "compiler/spec/explain.h"
#include "compiler/spec/tensor_core_rules.h"
#include "compiler/spec/validate.h"
#include "engine/cubin_build.h"
#include "engine/kernel_compile.h"
#include "engine/verify_kernel.h"
#include "runtime/emu/emu_device.h"
#include "tests/codegen/spec_config_case.h"
#include "tests/common/test_names.h"
#include "tuner/cost_model.h"
#include "tuner/perf_model.h"
#include "tuner/search_space.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tcjit {
namespace {

const Case kCases[] = {
    // the four input pairs x the three outputs (each of the 12 at least once), every layout
    {"gemm m=64 n=64 k=64 a=e4m3:row b=e4m3:col c=f32:row acc=f32", "32x32x32 w16x16 s2"},
    {"gemm m=64 n=48 k=96 a=e4m3:row b=e5m2:col c=f16:row acc=f32", ""},
    {"gemm m=48 n=64 k=64 a=e5m2:col b=e4m3:row c=bf16:row acc=f32", "32x32x32 w16x16 s3"},
    {"gemm m=64 n=32 k=128 a=e5m2:row b=e5m2:row c=f32:col acc=f32", "64x32x64 w32x16 s2"},
    {"gemm m=32 n=32 k=64 a=e4m3:col b=e4m3:col c=f16:col acc=f32", ""},
    {"gemm m=32 n=40 k=64 a=e5m2:row b=e4m3:col c=f32:row acc=f32", ""},
    {"gemm m=40 n=32 k=32 a=e4m3:col b=e5m2:row c=bf16:col acc=f32", ""},
    {"gemm m=32 n=32 k=32 a=e5m2:col b=e5m2:col c=f16:row acc=f32", ""},
    {"gemm m=32 n=48 k=64 a=e4m3:row b=e4m3:row c=bf16:row acc=f32", ""},
    {"gemm m=48 n=32 k=96 a=e4m3:col b=e5m2:col c=f32:row acc=f32", ""},
    {"gemm m=32 n=32 k=64 a=e5m2:row b=e4m3:row c=f16:col acc=f32", ""},
    {"gemm m=32 n=40 k=64 a=e5m2:col b=e5m2:row c=bf16:row acc=f32", ""},
    // tails and odd sizes (K not a multiple of the mma's 32, M/N odd)
    {"gemm m=33 n=17 k=40 a=e4m3:row b=e4m3:col c=f16:row acc=f32", "32x32x32 w16x16 s2"},
    {"gemm m=65 n=63 k=100 a=e5m2:row b=e4m3:col c=f32:row acc=f32", "32x32x64 w16x16 s3"},
    {"gemm m=7 n=9 k=13 a=e4m3:col b=e5m2:row c=bf16:row acc=f32", ""},
    // batch and leading dimensions
    {"gemm m=40 n=24 k=48 batch=3 a=e4m3:row b=e4m3:col c=f32:row acc=f32", "32x32x32 w16x16 s2"},
    {"gemm m=32 n=16 k=64 batch=2 lda=80 ldb=72 ldc=24 a=e5m2:row b=e5m2:col c=f16:row acc=f32",
     ""},
    // split-K (forced), bias, activations, alpha as the per-tensor scale, beta
    {"gemm m=40 n=24 k=256 a=e4m3:row b=e4m3:col c=f16:row acc=f32 alpha=0.0625",
     "32x32x32 w16x16 s3 k4"},
    {"gemm m=33 n=17 k=200 batch=2 a=e5m2:col b=e4m3:row c=f32:col acc=f32 beta=1 bias=col "
     "act=gelu",
     "32x32x32 w16x16 s2 k3"},
    {"gemm m=48 n=40 k=64 a=e4m3:row b=e5m2:col c=bf16:row acc=f32 alpha=0.5 beta=-1.5 bias=row "
     "act=relu",
     ""},
    {"gemm m=48 n=40 k=64 a=e5m2:row b=e5m2:col c=f16:row acc=f32 alpha=2 bias=col act=tanh", ""},
};

codegen::CompileOptions sm89_options(const Case &c) {
  codegen::CompileOptions options;
  options.arch = "sm_89";
  if (*c.config) {
    codegen::TileConfig config;
    std::string error;
    EXPECT_TRUE(codegen::parse_tile_config(c.config, config, error)) << error;
    options.config = config;
  }
  return options;
}

void run_backend(const OpSpec &spec, codegen::CompileOptions options, codegen::Backend backend) {
  SCOPED_TRACE(codegen::to_string(backend));
  options.backend = backend;
  const codegen::CompiledKernel k = engine::compile_kernel(spec, options);
  ASSERT_TRUE(k.ok()) << k.errors[0].field << ": " << k.errors[0].message;
  EXPECT_NE(k.ptx.find("mma.sync.aligned.m16n8k32.row.col.f32.e"), std::string::npos);
  const engine::CubinBuild cubin = engine::build_cubin(k, engine::CubinRoute::ptxas);
  EXPECT_EQ(cubin.error, "") << "ptxas -arch=sm_89 rejects the PTX";
  emu::EmuDevice dev;
  const engine::KernelCheck check = engine::run_and_check_kernel(dev, k, spec, /*seed=*/11);
  EXPECT_GT(check.report.count, 0);
  EXPECT_TRUE(check.report.ok()) << check.report.summary();
  if (check.counters) {
    EXPECT_GT(check.counters->mma_instructions, 0u);
  }
}

class Fp8Gemm : public ::testing::TestWithParam<Case> {};

TEST_P(Fp8Gemm, BothBackendsMatchTheReferenceOnSm89) {
  const Case &c = GetParam();
  const ParseResult parsed = parse_spec(c.spec);
  ASSERT_TRUE(parsed.ok()) << parsed.errors[0].render();
  const OpSpec spec = parsed.entries.at(0).spec;
  run_backend(spec, sm89_options(c), codegen::Backend::llvm);
  run_backend(spec, sm89_options(c), codegen::Backend::cuda_source);
}

std::string case_name(const ::testing::TestParamInfo<Case> &info) {
  return ::tcjit::test::test_name(info.param.spec, info.param.config);
}

INSTANTIATE_TEST_SUITE_P(Sm89, Fp8Gemm, ::testing::ValuesIn(kCases), case_name);

OpSpec parse_one(const std::string &text) {
  const ParseResult parsed = parse_spec(text);
  EXPECT_TRUE(parsed.ok()) << text;
  return parsed.entries.at(0).spec;
}

// The LLVM backend declares PTX 8.4 for an fp8 kernel (the arch's 7.8 is too old for the form);
// other kernels of the arch keep 7.8.
TEST(Fp8Compile, KernelDeclaresPtx84) {
  codegen::CompileOptions options;
  options.arch = "sm_89";
  const codegen::CompiledKernel fp8 =
      codegen::compile_gemm(parse_one("gemm m=64 n=64 k=64 a=e4m3 b=e5m2:col c=f16"), options);
  ASSERT_TRUE(fp8.ok());
  EXPECT_EQ(fp8.plan.ptx_version, 84);
  EXPECT_NE(fp8.ptx.find(".version 8.4"), std::string::npos);
  const codegen::CompiledKernel f16 =
      codegen::compile_gemm(parse_one("gemm m=64 n=64 k=64 a=f16 b=f16:col c=f16"), options);
  ASSERT_TRUE(f16.ok());
  EXPECT_EQ(f16.plan.ptx_version, 78);
}

// explain and compile give the same verdict, from the one table: on sm_89/sm_90 the fp8 form and
// the fp8 peak; on sm_80/sm_86 the same refusal, naming the archs to use.
TEST(Fp8Compile, ExplainAndCompileAgree) {
  for (const char *pair : {"a=e4m3 b=e4m3", "a=e4m3 b=e5m2", "a=e5m2 b=e4m3", "a=e5m2 b=e5m2"}) {
    const OpSpec spec = parse_one(std::string("gemm m=64 n=64 k=64 ") + pair + " c=f32");
    for (const char *arch : {"sm_80", "sm_86", "sm_89", "sm_90"}) {
      SCOPED_TRACE(std::string(pair) + " " + arch);
      const MmaChoice choice = choose_mma(spec, arch, false);
      codegen::CompileOptions options;
      options.arch = arch;
      const codegen::CompiledKernel k = codegen::compile_gemm(spec, options);
      const bool fp8_arch = std::string(arch) >= "sm_89";
      EXPECT_EQ(choice.compiles, fp8_arch);
      EXPECT_EQ(k.ok(), fp8_arch);
      if (fp8_arch) {
        EXPECT_TRUE(choice.tensor_cores);
        EXPECT_EQ(choice.shape, "m16n8k32");
        EXPECT_EQ(choice.unit, MathUnit::fp8);
        EXPECT_NE(k.ptx.find(choice.instruction), std::string::npos);
        EXPECT_EQ(engine::build_cubin(k, engine::CubinRoute::ptxas).error, "")
            << "ptxas -arch=" << arch << " rejects the PTX";
        continue;
      }
      ASSERT_FALSE(k.errors.empty());
      EXPECT_EQ(k.errors[0].message, choice.note);
      EXPECT_NE(choice.note.find("needs sm_89"), std::string::npos) << choice.note;
      EXPECT_NE(choice.note.find("use --arch sm_89 or sm_90"), std::string::npos) << choice.note;
      const std::string report = render_explanation(explain_spec(spec, arch, false));
      EXPECT_NE(report.find("use --arch sm_89 or sm_90"), std::string::npos) << report;
    }
  }
}

std::string validation_errors(const std::string &text) {
  const ParseResult parsed = parse_spec(text);
  std::string all;
  for (const auto &e : parsed.errors)
    all += e.render() + "\n";
  if (parsed.ok())
    for (const SpecError &e : validate_spec(parsed.entries.at(0).spec))
      all += e.key + ": " + e.message + "\n";
  return all;
}

TEST(Fp8Validation, DtypesAndMessages) {
  // defaults: acc=f32, c=f16
  const OpSpec defaults = parse_one("gemm m=8 n=8 k=32 a=e4m3 b=e5m2");
  EXPECT_EQ(defaults.acc, DType::f32);
  EXPECT_EQ(defaults.gemm.c.dtype, DType::f16);
  for (const char *ok :
       {"gemm m=8 n=8 k=32 a=e4m3 b=e5m2 c=bf16 acc=f32", "gemm m=8 n=8 k=32 a=e5m2 b=e5m2 c=f32",
        "gemm m=8 n=8 k=32 a=e5m2 b=e4m3"})
    EXPECT_EQ(validation_errors(ok), "") << ok;
  const std::string fp8_out = validation_errors("gemm m=8 n=8 k=32 a=e4m3 b=e4m3 c=e4m3");
  EXPECT_NE(fp8_out.find("c=e4m3 is not a valid output for e4m3 inputs: e4m3 inputs produce f16, "
                         "bf16 or f32 (use c=f16)"),
            std::string::npos)
      << fp8_out;
  const std::string acc = validation_errors("gemm m=8 n=8 k=32 a=e5m2 b=e5m2 c=f32 acc=f16");
  EXPECT_NE(acc.find("acc=f16 is not allowed for e5m2 inputs: e5m2 accumulates in f32 (use "
                     "acc=f32)"),
            std::string::npos)
      << acc;
  const std::string mixed = validation_errors("gemm m=8 n=8 k=32 a=e4m3 b=f16 c=f32");
  EXPECT_NE(mixed.find("b=f16 does not match a=e4m3"), std::string::npos) << mixed;
  const std::string math = validation_errors("gemm m=8 n=8 k=32 a=e4m3 b=e4m3 math=tf32");
  EXPECT_NE(math.find("math=tf32 does not apply to e4m3 inputs"), std::string::npos) << math;
  const std::string conv = validation_errors("conv2d n=1 h=8 w=8 c=32 k=32 r=3 s=3 x=e4m3");
  EXPECT_NE(conv.find("x=e4m3: fprop has no fp8 kernel: tcjit multiplies e4m3/e5m2 in GEMMs only"),
            std::string::npos)
      << conv;
}

// The tuner searches fp8 tiles on sm_89 (K-tiles of 32 values and up), its model takes the fp8
// peak, and it finds nothing to search on sm_80, where the spec does not compile.
TEST(Fp8Tuner, SearchSpaceAndPeakOnSm89Only) {
  const OpSpec spec = parse_one("gemm m=512 n=512 k=512 a=e4m3 b=e4m3:col c=f16");
  const tuner::SpaceOptions options = tuner::heuristic_space_options(spec, false);
  const tuner::SearchSpace sm89 =
      tuner::enumerate_space(spec, "sm_89", false, tuner::gpu_model_for_arch("sm_89"), options);
  ASSERT_FALSE(sm89.legal.empty());
  for (const codegen::TileConfig &c : sm89.legal)
    EXPECT_GE(c.bk, 32);
  EXPECT_TRUE(
      tuner::enumerate_space(spec, "sm_80", false, tuner::gpu_model_for_arch("sm_80"), options)
          .legal.empty());
  EXPECT_EQ(tuner::kernel_features(spec, sm89.legal.front(), false, {}).math, MathUnit::fp8);
}

} // namespace
} // namespace tcjit
