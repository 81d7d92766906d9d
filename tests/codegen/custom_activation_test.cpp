// User-defined activations (act=custom:FILE, compiled by the CUDA C++ backend) in GEMMs and
// convolutions: the checks of the
// text, compile errors at the user's own lines, the LLVM backend's refusal, and kernels with the
// user's function verified on the emulator against the reference (which evaluates the function
// alone on the device and measures its spread per element; compiler/reference/custom_activation.h).
#include "compiler/codegen/plan/custom_activation.h"
#include "compiler/dsl/parser.h"
#include "compiler/spec/problem_key.h"
#include "engine/custom_activation.h"
#include "engine/kernel_compile.h"
#include "engine/verify_kernel.h"
#include "runtime/emu/emu_device.h"
#include "tests/common/test_names.h"

#include <gtest/gtest.h>

#include <string>

namespace tcjit {
namespace {

// `spec_text` (without act) with act=custom:`path` holding `source`.
OpSpec custom_spec(const std::string &spec_text, const std::string &path,
                   const std::string &source) {
  const ParseResult parsed = parse_spec(spec_text + " act=custom:" + path);
  EXPECT_TRUE(parsed.ok()) << spec_text;
  OpSpec spec = parsed.entries.at(0).spec;
  EXPECT_EQ(spec.epilogue.act, Activation::custom);
  EXPECT_EQ(spec.epilogue.custom.path, path);
  spec.epilogue.custom.source = source;
  return spec;
}

codegen::CompiledKernel compile(const OpSpec &spec, codegen::Backend backend,
                                const std::string &config = "") {
  codegen::CompileOptions options;
  options.backend = backend;
  if (!config.empty()) {
    codegen::TileConfig c;
    std::string error;
    EXPECT_TRUE(codegen::parse_tile_config(config, c, error)) << error;
    options.config = c;
  }
  return engine::compile_kernel(spec, options);
}

std::string first_error(const codegen::CompiledKernel &k) {
  return k.ok() ? std::string() : k.errors[0].field + ": " + k.errors[0].message;
}

constexpr const char *kGemm = "gemm m=48 n=40 k=64 a=f16:row b=f16:col c=f16:row acc=f32";

// Helper names that the generated kernel also uses: the namespace keeps them apart.
constexpr const char *kLeaky = R"(// leaky relu, clipped at 6
__device__ float mma(float x) { return x > 6.0f ? 6.0f : x; }
__device__ float activation(float x) { return x > 0.0f ? x : 0.1f * x; }
__device__ float act(float x) { return mma(activation(x)); }
)";

TEST(CustomActivationText, ProblemsNameTheFileAndLine) {
  EXPECT_EQ(codegen::custom_activation_problem({"a.cu", kLeaky}), "");
  EXPECT_NE(codegen::custom_activation_problem({"a.cu", ""}).find("a.cu: the file is empty"),
            std::string::npos);
  const std::string include =
      codegen::custom_activation_problem({"a.cu", "// math\n  #  include <math.h>\n"});
  EXPECT_NE(include.find("a.cu:2: #include is not available"), std::string::npos) << include;
  const std::string binary =
      codegen::custom_activation_problem({"a.cu", std::string("x\ny\n\0z", 6)});
  EXPECT_NE(binary.find("a.cu:3: byte 0x00 is not text"), std::string::npos) << binary;
  const std::string big = codegen::custom_activation_problem(
      {"a.cu", std::string(codegen::kMaxCustomActivationBytes + 1, ' ')});
  EXPECT_NE(big.find("over the limit of 65536"), std::string::npos) << big;
}

// The check kernel's source keeps the user's line numbers (#line 1 "FILE") and returns to its own.
TEST(CustomActivationText, EmbeddingKeepsTheUsersLines) {
  const std::string src =
      codegen::custom_activation_kernel_source({"dir/my \"act\".cu", kLeaky}, DType::f32);
  EXPECT_NE(src.find("#line 1 \"dir/my \\\"act\\\".cu\"\n// leaky relu"), std::string::npos) << src;
  EXPECT_NE(src.find("namespace tcjit_user {"), std::string::npos);
  // The #line after the text names the line that follows it in the generated file.
  const size_t resume = src.find("#line ", src.find("#line 1") + 1);
  ASSERT_NE(resume, std::string::npos);
  const int lines_before = static_cast<int>(std::count(src.begin(), src.begin() + resume, '\n'));
  EXPECT_EQ(src.substr(resume, src.find(' ', resume + 6) - resume),
            "#line " + std::to_string(lines_before + 2));
}

TEST(CustomActivationCompile, TheLlvmBackendRefusesWithTheFix) {
  const codegen::CompiledKernel k =
      compile(custom_spec(kGemm, "a.cu", kLeaky), codegen::Backend::llvm);
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.errors[0].field, "backend");
  EXPECT_NE(k.errors[0].message.find("only the CUDA C++ backend compiles it; use --backend nvrtc"),
            std::string::npos)
      << k.errors[0].message;
}

TEST(CustomActivationCompile, ErrorsAtTheUsersLines) {
  const codegen::CompiledKernel typo =
      compile(custom_spec(kGemm, "acts/typo.cu",
                          "// slope\n__device__ float act(float x) {\n"
                          "  return x * slope;\n}\n"),
              codegen::Backend::cuda_source);
  const std::string e = first_error(typo);
  EXPECT_NE(e.find("act: act=custom:acts/typo.cu does not compile:\n"), std::string::npos) << e;
  EXPECT_NE(e.find("acts/typo.cu:3: error: identifier \"slope\" is undefined"), std::string::npos)
      << e;
  EXPECT_NE(e.find("return x * slope;"), std::string::npos) << "the line itself: " << e;
  EXPECT_EQ(e.find("tcjit_custom_activation_check"), std::string::npos) << e;

  const codegen::CompiledKernel none =
      compile(custom_spec(kGemm, "other.cu", "__device__ float other(float x) { return x; }\n"),
              codegen::Backend::cuda_source);
  EXPECT_NE(first_error(none).find("act=custom:other.cu must define __device__ float act(float x)"),
            std::string::npos)
      << first_error(none);

  const codegen::CompiledKernel include =
      compile(custom_spec(kGemm, "inc.cu",
                          "#include <cuda_fp16.h>\n__device__ float act(float "
                          "x) { return x; }\n"),
              codegen::Backend::cuda_source);
  EXPECT_NE(first_error(include).find("act: inc.cu:1: #include is not available"),
            std::string::npos)
      << first_error(include);
}

// The kernel's name and the problem key follow the text, not the path: an edited file never
// reuses a kernel compiled from its old text, and the same text from another path is the same
// problem.
TEST(CustomActivationCompile, NameAndKeyFollowTheText) {
  const OpSpec a = custom_spec(kGemm, "a.cu", kLeaky);
  OpSpec edited = a;
  edited.epilogue.custom.source += "// edited\n";
  const codegen::CompiledKernel ka = compile(a, codegen::Backend::cuda_source);
  const codegen::CompiledKernel ke = compile(edited, codegen::Backend::cuda_source);
  ASSERT_TRUE(ka.ok()) << first_error(ka);
  ASSERT_TRUE(ke.ok()) << first_error(ke);
  EXPECT_NE(ka.plan.kernel_name, ke.plan.kernel_name);
  EXPECT_NE(ka.plan.kernel_name.find("_custom" + custom_activation_digest(a.epilogue.custom)),
            std::string::npos)
      << ka.plan.kernel_name;
  EXPECT_NE(make_problem_key(a, "sm_80", false).text,
            make_problem_key(edited, "sm_80", false).text);
  EXPECT_NE(make_problem_key(a, "sm_80", false)
                .text.find(" act=custom:#" + custom_activation_digest(a.epilogue.custom) + " "),
            std::string::npos)
      << make_problem_key(a, "sm_80", false).text;
  // the same text read from elsewhere is the same problem
  OpSpec moved = a;
  moved.epilogue.custom.path = "elsewhere/b.cu";
  EXPECT_EQ(make_problem_key(a, "sm_80", false).text, make_problem_key(moved, "sm_80", false).text);
}

// The user's macros end with the text: `#define K ...` does not rename the kernel's parameter K,
// and a trailing backslash continuation does not swallow the generated code.
TEST(CustomActivationCompile, MacrosStayInTheUsersText) {
  const OpSpec spec = custom_spec(kGemm, "macros.cu",
                                  "#define K 0.5f\n#define  M(x) ((x) * K)\n"
                                  "__device__ float act(float x) { return M(x); }\n// end \\");
  const codegen::CompiledKernel k = compile(spec, codegen::Backend::cuda_source);
  ASSERT_TRUE(k.ok()) << first_error(k);
  EXPECT_NE(k.cuda_source.find("#undef K\n#undef M\n"), std::string::npos);
  emu::EmuDevice dev;
  const engine::KernelCheck check = engine::run_and_check_kernel(dev, k, spec, 5);
  EXPECT_TRUE(check.report.ok()) << check.report.summary();
}

struct Case {
  const char *spec;
  const char *config; // "" = default
  const char *source;
};

constexpr const char *kSoftsign =
    "__device__ float act(float x) { return x / (1.0f + fabsf(x)); }\n";
// A step: discontinuous at 0, where the spread of the reference covers a rounding's flip.
constexpr const char *kStep = "__device__ float act(float x) { return x > 0.0f ? 1.0f : 0.0f; }\n";
constexpr const char *kCubeF64 = "__device__ float act(float x) { return x; }\n"
                                 "__device__ double act(double x) { return x * x * x - x; }\n";
// Undefined below -1 (NaN): float outputs must be NaN there, integer outputs the saturated 0.
constexpr const char *kNanBelow =
    "__device__ float act(float x) { return x < -1.0f ? sqrtf(x) : x; }\n";
constexpr const char *kMish = R"(// mish: x * tanh(softplus(x))
__device__ float softplus(float x) { return x > 20.0f ? x : log1pf(expf(x)); }
__device__ float act(float x) { return x * tanhf(softplus(x)); }
)";

const Case kCases[] = {
    {"gemm m=48 n=40 k=64 a=f16:row b=f16:col c=f16:row acc=f32 alpha=2 beta=-1 bias=col", "",
     kLeaky},
    {"gemm m=33 n=17 k=24 a=bf16:col b=bf16:row c=f32:row acc=f32", "", kMish},
    {"gemm m=64 n=48 k=32 a=f32:row b=f32:col c=f32:row acc=f32 math=tf32 bias=row", "", kSoftsign},
    {"gemm m=20 n=36 k=48 a=s8:col b=s8:row c=s8:row acc=s32 alpha=0.05", "", kLeaky},
    {"gemm m=40 n=24 k=20 a=f64:row b=f64:col c=f64:row acc=f64 beta=1", "", kCubeF64},
    {"gemm m=64 n=48 k=64 a=f16:row b=f16:col c=f32:row acc=f32 alpha=0.1", "", kStep},
    {"gemm m=33 n=17 k=100 batch=2 a=f16:col b=f16:row c=f32:col acc=f32 beta=1 bias=col",
     "32x32x32 w16x16 s2 k3", kMish},
    {"gemm m=32 n=24 k=48 a=s8:row b=s8:col c=s8:row acc=s32 alpha=0.02", "", kNanBelow},
    {"gemm m=32 n=24 k=32 a=f16:row b=f16:col c=f32:row acc=f32", "", kNanBelow},
    // convolutions: implicit GEMM, grouped with per-group bias, dgrad, the depthwise kernel
    {"conv2d n=2 h=6 w=5 c=16 k=24 r=3 s=3 pad=1 x=f16 bias=col", "", kLeaky},
    {"conv2d n=2 h=5 w=5 c=32 k=16 r=3 s=3 pad=1 groups=2 x=bf16 bias=col", "", kMish},
    {"conv2d n=1 h=9 w=7 c=8 k=16 r=3 s=3 pad=1 stride=2 pass=dgrad x=f16", "", kStep},
    {"conv2d n=2 h=6 w=6 c=32 k=32 r=3 s=3 pad=1 groups=32 x=f16 beta=1", "", kSoftsign},
};

void PrintTo(const Case &c, std::ostream *os) {
  *os << c.spec << (*c.config ? std::string(" [") + c.config + "]" : std::string());
}

class CustomActivationEmu : public ::testing::TestWithParam<Case> {};

TEST_P(CustomActivationEmu, MatchesTheReference) {
  const Case &c = GetParam();
  const OpSpec spec = custom_spec(c.spec, "act.cu", c.source);
  const codegen::CompiledKernel k = compile(spec, codegen::Backend::cuda_source, c.config);
  ASSERT_TRUE(k.ok()) << first_error(k);
  EXPECT_NE(k.cuda_source.find("#line 1 \"act.cu\""), std::string::npos);
  emu::EmuDevice dev;
  const engine::KernelCheck check = engine::run_and_check_kernel(dev, k, spec, /*seed=*/11);
  EXPECT_GT(check.report.count, 0);
  EXPECT_TRUE(check.report.ok()) << check.report.summary();
}

INSTANTIATE_TEST_SUITE_P(Matrix, CustomActivationEmu, ::testing::ValuesIn(kCases),
                         [](const auto &info) {
                           return ::tcjit::test::test_name(info.param.spec, info.param.config);
                         });

// The check is not vacuous: a kernel compiled with one function, checked against another, fails.
TEST(CustomActivationVerify, AKernelOfAnotherFunctionFails) {
  const OpSpec twice =
      custom_spec(kGemm, "act.cu", "__device__ float act(float x) { return 2.0f * x; }\n");
  OpSpec thrice = twice;
  thrice.epilogue.custom.source = "__device__ float act(float x) { return 3.0f * x; }\n";
  const codegen::CompiledKernel k = compile(twice, codegen::Backend::cuda_source);
  ASSERT_TRUE(k.ok()) << first_error(k);
  emu::EmuDevice dev;
  EXPECT_TRUE(engine::run_and_check_kernel(dev, k, twice, 3).report.ok());
  const engine::KernelCheck wrong = engine::run_and_check_kernel(dev, k, thrice, 3);
  EXPECT_GT(wrong.report.mismatches, wrong.report.count / 2) << wrong.report.summary();
}

// The function alone on the emulator: in the epilogue's type, each input rounded to it first.
TEST(CustomActivationVerify, EvaluatesOnTheDevice) {
  emu::EmuDevice dev;
  const std::vector<double> xs = {-2.0, 0.0, 0.1, 1.0, 10.0};
  const std::vector<double> y =
      engine::evaluate_custom_activation(dev, {"a.cu", kLeaky}, DType::f32, xs);
  ASSERT_EQ(y.size(), xs.size());
  EXPECT_EQ(y[0], static_cast<double>(0.1f * -2.0f));
  EXPECT_EQ(y[1], 0.0);
  EXPECT_EQ(y[2], static_cast<double>(0.1f));
  EXPECT_EQ(y[3], 1.0);
  EXPECT_EQ(y[4], 6.0);
  const std::vector<double> d =
      engine::evaluate_custom_activation(dev, {"c.cu", kCubeF64}, DType::f64, {{0.1, 3.0}});
  EXPECT_EQ(d[0], 0.1 * 0.1 * 0.1 - 0.1);
  EXPECT_EQ(d[1], 24.0);
}

} // namespace
} // namespace tcjit
