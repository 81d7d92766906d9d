// The two backends side by side (differential testing): for each GEMM and convolution of the
// matrices, the LLVM backend's kernel and the CUDA C++ backend's (NVRTC) are built from one plan,
// run on the emulator on the same inputs and checked against the CPU reference under the
// tolerance model; both must pass. Their ptxas resources and emulator counters are compared and
// printed (a table at the end; run the binary itself to see the whole table).
#include "compiler/dsl/parser.h"
#include "engine/kernel_compile.h"
#include "engine/verify_kernel.h"
#include "runtime/emu/emu_device.h"
#include "tests/codegen/spec_config_case.h"
#include "tests/common/test_names.h"
#include "tuner/candidate.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace tcjit {
namespace {

// The GEMM matrix of tests/codegen/gemm_emu_test.cpp, in small: every mma form and SIMT, every
// layout kind (ldmatrix, ldmatrix.trans, element-wise fragments), tails, batch and leading
// dimensions, alpha/beta/bias, activations, rasterization, split-K.
const Case kCases[] = {
    {"gemm m=64 n=64 k=64 a=f16:row b=f16:col c=f32:row acc=f32", "32x32x32 w16x16 s2"},
    {"gemm m=64 n=64 k=64 a=f16:col b=f16:row c=f16:row acc=f32", "64x64x32 w32x32 s3"},
    {"gemm m=32 n=48 k=96 a=f16:row b=f16:row c=f16:col acc=f32", "32x32x32 w16x16 s2"},
    {"gemm m=128 n=128 k=64 a=f16:row b=f16:col c=f16:row acc=f32", ""},
    {"gemm m=65 n=63 k=40 a=f16:row b=f16:col c=f32:row acc=f32", "32x32x32 w16x16 s2"},
    {"gemm m=33 n=31 k=66 a=f16:col b=f16:col c=f32:row acc=f32", "32x32x32 w16x16 s2"},
    {"gemm m=48 n=40 k=32 a=f16:row b=f16:col c=f32:row acc=f32 alpha=2 beta=-1.5 bias=col "
     "act=relu",
     ""},
    {"gemm m=48 n=40 k=32 a=f16:col b=f16:row c=f16:col acc=f32 alpha=0.5 beta=1 bias=row "
     "act=tanh",
     ""},
    {"gemm m=40 n=24 k=48 batch=3 a=f16:row b=f16:col c=f32:row acc=f32", "32x32x32 w16x16 s2"},
    {"gemm m=64 n=40 k=64 a=bf16:row b=bf16:col c=bf16:row acc=f32 act=gelu", ""},
    {"gemm m=33 n=17 k=24 a=bf16:col b=bf16:row c=f32:row acc=f32 act=sigmoid", ""},
    {"gemm m=64 n=48 k=32 a=f32:row b=f32:col c=f32:row acc=f32 math=tf32 act=swish", ""},
    {"gemm m=19 n=21 k=13 a=f32:col b=f32:row c=f32:row acc=f32 math=tf32 act=softplus", ""},
    {"gemm m=64 n=48 k=128 a=s8:row b=s8:col c=s32:row acc=s32", ""},
    {"gemm m=64 n=48 k=128 a=u8:col b=u8:row c=s32:row acc=s32", ""},
    {"gemm m=20 n=36 k=48 a=s8:col b=s8:row c=s8:row acc=s32 alpha=0.05 act=elu", ""},
    {"gemm m=40 n=24 k=20 a=f64:row b=f64:col c=f64:row acc=f64 act=gelu_tanh", ""},
    {"gemm m=9 n=7 k=5 a=f64:col b=f64:row c=f64:col acc=f64 beta=1 act=softplus", ""},
    {"gemm m=64 n=64 k=24 a=f32:row b=f32:col c=f32:row acc=f32 math=f32", ""},
    {"gemm m=23 n=45 k=11 a=f32:col b=f32:row c=f32:col acc=f32 math=f32 bias=row", ""},
    {"gemm m=80 n=112 k=32 a=f16:row b=f16:col c=f16:row acc=f32", "16x16x32 w16x16 s2 g3"},
    {"gemm m=64 n=48 k=256 a=f16:row b=f16:col c=f16:row acc=f32", "32x32x32 w16x16 s3 k4"},
    {"gemm m=33 n=17 k=100 batch=2 a=f16:col b=f16:row c=f32:col acc=f32 act=gelu beta=1 "
     "bias=col",
     "32x32x32 w16x16 s2 k3"},
    {"gemm m=40 n=24 k=192 a=s8 b=s8:col c=s8 acc=s32 alpha=0.1", "32x32x64 w16x16 s3 k2"},
    {"gemm m=40 n=24 k=64 a=f64 b=f64 c=f64 acc=f64 beta=1", "32x32x16 w16x16 s3 k2"},
    // mixed 8-bit (.s8.u8, .u8.s8) and f16 accumulation (f16x2 registers widened to f32)
    {"gemm m=64 n=48 k=128 a=s8:row b=u8:col c=s32:row acc=s32", ""},
    {"gemm m=33 n=17 k=72 batch=2 a=u8:col b=s8:row c=s8:row acc=s32 alpha=0.01 bias=col", ""},
    {"gemm m=40 n=24 k=192 a=u8 b=s8:col c=s32 acc=s32", "32x32x64 w16x16 s3 k2"},
    // the main loop's incremental copies (formulas.h linear_copy) over every A/B layout with
    // M/N/K tails, leading dimensions, batch and split-K, K-tiles fewer than the stages (the
    // cursor starts past K), and the direct epilogue's per-line addresses (row- and col-major D)
    {"gemm m=77 n=90 k=45 batch=2 a=f32:row lda=52 b=f32:col c=f32:row acc=f32 math=tf32 beta=1",
     "64x64x16 w32x32 s3"},
    {"gemm m=77 n=90 k=45 a=f32:col b=f32:row ldb=96 c=f32:col acc=f32 math=tf32",
     "64x64x16 w32x32 s4"},
    {"gemm m=70 n=33 k=100 a=f32:row b=f32:row c=f32:row acc=f32 math=tf32",
     "64x32x16 w32x32 s3 k3"},
    {"gemm m=50 n=66 k=12 a=f32:col b=f32:col c=f32:col acc=f32 math=tf32", "32x64x16 w16x32 s4"},
    {"gemm m=130 n=150 k=320 a=s8:row b=s8:col c=s32:row acc=s32", "128x128x64 w64x64 s3"},
    {"gemm m=100 n=60 k=200 batch=2 a=u8:row b=s8:col c=s32:col acc=s32 bias=row",
     "64x64x64 w32x32 s3 k2"},
    {"gemm m=64 n=48 k=128 a=f16:row b=f16:col c=f16:row acc=f16", ""},
    {"gemm m=33 n=31 k=66 batch=2 a=f16:col b=f16:row c=f32:col acc=f16 act=relu bias=row",
     "32x32x32 w16x16 s2"},
    {"gemm m=64 n=48 k=256 a=f16 b=f16:col c=f16 acc=f16 beta=1", "32x32x32 w16x16 s3 k4"},
    // packed sub-byte inputs: s4, u4, s4 x u4, b1 and/xor (tails, batch, split-K, epilogue)
    {"gemm m=64 n=48 k=256 a=s4:row b=s4:col c=s32:row acc=s32", ""},
    {"gemm m=33 n=17 k=96 batch=2 a=u4 b=u4:col c=s32:col acc=s32 alpha=2 bias=col act=relu",
     "32x32x64 w16x16 s2"},
    {"gemm m=40 n=24 k=320 a=s4 b=u4:col c=s8 acc=s32 alpha=0.1", "32x32x128 w16x16 s3 k2"},
    {"gemm m=64 n=40 k=512 a=b1 b=b1:col c=s32 acc=s32", ""},
    {"gemm m=21 n=13 k=384 batch=2 a=b1 b=b1:col c=s32 acc=s32 bop=xor bias=row",
     "32x32x256 w16x16 s2 k2"},
};

// Convolutions (drawn from tests/codegen/conv_emu_test.cpp): every pass for each dtype with the
// gathers (im2col, strided, tap rows) over strides, padding and dilation; groups with per-group
// bias (also through split-K's reduce kernel); conv3d; channel padding (the _pad_channels kernel);
// the direct depthwise kernel (fprop and dgrad); the epilogue's bias, activation and beta.
const Case kConvCases[] = {
    // f16, bf16, tf32, s8 and SIMT f32: fprop, dgrad, wgrad
    {"conv2d n=2 h=7 w=7 c=16 k=8 r=3 s=2 pad=2,1 dilation=2 x=f16 acc=f32", "64x32x32 w32x32 s3"},
    {"conv2d n=1 h=9 w=7 c=8 k=16 r=3 s=3 pad=1 stride=2 pass=dgrad x=f16 acc=f32",
     "64x32x32 w32x32 s3"},
    {"conv2d n=2 h=5 w=6 c=16 k=24 r=3 s=3 pad=1 pass=wgrad x=f16 acc=f32", "64x32x32 w32x32 s3"},
    {"conv2d n=1 h=9 w=7 c=8 k=16 r=3 s=3 pad=1 stride=2 x=bf16 acc=f32", "32x64x32 w32x32 s2"},
    {"conv2d n=2 h=7 w=7 c=16 k=8 r=3 s=2 pad=2,1 dilation=2 pass=dgrad x=bf16 acc=f32",
     "32x64x32 w32x32 s2"},
    {"conv2d n=1 h=9 w=7 c=8 k=16 r=3 s=3 pad=1 stride=2 pass=wgrad x=bf16 acc=f32",
     "32x64x32 w32x32 s2"},
    {"conv2d n=3 h=4 w=4 c=12 k=20 r=1 s=1 x=f32 acc=f32 math=tf32", "64x32x16 w32x32 s3"},
    {"conv2d n=2 h=5 w=6 c=16 k=24 r=3 s=3 pad=1 pass=dgrad x=f32 acc=f32 math=tf32",
     "64x32x16 w32x32 s3"},
    {"conv2d n=2 h=7 w=7 c=16 k=8 r=3 s=2 pad=2,1 dilation=2 pass=wgrad x=f32 acc=f32 math=tf32",
     "64x32x16 w32x32 s3"},
    {"conv2d n=2 h=5 w=6 c=16 k=24 r=3 s=3 pad=1 x=s8 acc=s32 alpha=0.05", "64x32x64 w32x32 s3"},
    {"conv2d n=2 h=5 w=6 c=16 k=24 r=3 s=3 pad=1 x=u8 acc=s32", "64x32x64 w32x32 s3"},
    {"conv2d n=1 h=9 w=7 c=8 k=16 r=3 s=3 pad=1 stride=2 pass=dgrad x=s32 y=u8 filter=u8 acc=s32",
     ""},
    {"conv2d n=2 h=5 w=6 c=16 k=24 r=3 s=3 pad=1 pass=wgrad x=u8 acc=s32", ""},
    {"conv2d n=2 h=5 w=6 c=16 k=24 r=3 s=3 pad=1 x=f16 acc=f16", ""},
    {"conv2d n=1 h=9 w=7 c=8 k=16 r=3 s=3 pad=1 stride=2 pass=dgrad x=s8 acc=s32 alpha=0.05",
     "64x32x64 w32x32 s3"},
    {"conv2d n=3 h=4 w=4 c=12 k=20 r=1 s=1 pass=wgrad x=s8 acc=s32 alpha=0.05",
     "64x32x64 w32x32 s3"},
    {"conv2d n=2 h=6 w=5 c=3 k=8 r=3 s=3 pad=1 x=f32 acc=f32 math=f32", "32x32x8 w32x32 s2"},
    {"conv2d n=2 h=7 w=7 c=16 k=8 r=3 s=2 pad=2,1 dilation=2 pass=dgrad x=f32 acc=f32 math=f32",
     "32x32x8 w32x32 s2"},
    {"conv2d n=2 h=5 w=6 c=16 k=24 r=3 s=3 pad=1 pass=wgrad x=f32 acc=f32 math=f32",
     "32x32x8 w32x32 s2"},
    {"conv2d n=1 h=5 w=5 c=8 k=8 r=3 s=3 pad=1 x=f64 acc=f64", ""},
    {"conv2d n=2 h=5 w=5 c=16 k=16 r=3 s=3 pad=1 x=s8 y=s8 acc=s32", ""},
    // groups: per-group bias, beta, activations; split-K (wgrad's long K; bias in the reduce)
    {"conv2d n=2 h=5 w=5 c=16 k=32 r=3 s=3 pad=1 groups=2 x=f16 acc=f32 bias=col act=relu",
     "64x32x32 w32x32 s3"},
    {"conv2d n=1 h=6 w=6 c=32 k=16 r=1 s=3 pad=0,1 stride=2 groups=4 pass=dgrad x=bf16 acc=f32 "
     "alpha=0.5 beta=0.25 bias=col act=gelu",
     "32x32x32 w16x16 s2"},
    {"conv2d n=2 h=4 w=5 c=24 k=12 r=2 s=2 groups=3 pass=wgrad x=f32 acc=f32 math=tf32 "
     "act=sigmoid",
     ""},
    {"conv2d n=2 h=6 w=6 c=16 k=16 r=3 s=3 pad=1 groups=2 x=f16 acc=f32 bias=col",
     "32x32x32 w16x16 s3 k3"},
    {"conv2d n=4 h=6 w=6 c=8 k=16 r=3 s=3 pad=1 pass=wgrad x=f16 acc=f32", "32x32x32 w16x16 s3 k4"},
    {"conv2d n=2 h=5 w=5 c=8 k=16 r=3 s=3 pad=1 x=f16 acc=f32 alpha=1.5 beta=0.5 bias=col "
     "act=gelu_tanh",
     ""},
    // conv3d
    {"conv3d n=1 d=4 h=5 w=4 c=8 k=16 t=3 r=3 s=3 pad=1 x=f16 acc=f32", "32x32x32 w16x16 s3"},
    {"conv3d n=2 d=5 h=4 w=4 c=16 k=8 t=3 r=1 s=2 pad=1,0,0 stride=2,1,2 dilation=1,2,1 groups=2 "
     "pass=dgrad x=bf16 acc=f32",
     "32x32x32 w16x16 s2"},
    {"conv3d n=1 d=4 h=5 w=4 c=8 k=16 t=3 r=3 s=3 pad=1 pass=wgrad x=f16 acc=f32",
     "32x32x32 w16x16 s3"},
    // channel padding (c = 3 copied to 8 channels first), beside the narrow-vector kernel (its
    // default config: at 64x32x32 w32x32 s3 both backends spill, LLVM 56 B, NVRTC 264 B)
    {"conv2d n=2 h=9 w=9 c=3 k=16 r=7 s=7 pad=3 stride=2 x=f16 acc=f32 bias=col act=relu",
     "64x32x32 w32x32 s3 pc8"},
    {"conv2d n=2 h=9 w=9 c=3 k=16 r=7 s=7 pad=3 stride=2 x=f16 acc=f32 bias=col act=relu", ""},
    {"conv2d n=2 h=9 w=9 c=3 k=16 r=3 s=3 pad=1 x=f32 acc=f32 math=tf32", "32x32x16 w16x16 pc4"},
    {"conv3d n=1 d=3 h=5 w=5 c=3 k=8 t=3 r=3 s=3 pad=1 x=f16 acc=f32", "32x32x32 w16x16 pc8 k2"},
    // depthwise: the direct kernel
    {"conv2d n=2 h=7 w=6 c=32 k=32 groups=32 r=3 s=3 pad=1 x=f16 acc=f32", ""},
    {"conv2d n=1 h=9 w=9 c=24 k=24 groups=24 r=5 s=5 pad=2 stride=2 pass=dgrad x=f16 acc=f32", ""},
    {"conv2d n=2 h=6 w=6 c=16 k=16 groups=16 r=3 s=3 pad=1 stride=2 pass=dgrad x=f32 acc=f32 "
     "math=tf32",
     ""},
    {"conv2d n=2 h=6 w=6 c=16 k=16 groups=16 r=3 s=3 pad=1 stride=2 x=s8 acc=s32 alpha=0.1", ""},
    {"conv2d n=2 h=6 w=6 c=40 k=40 groups=40 r=3 s=3 pad=1 x=f16 acc=f32 alpha=0.5 beta=1.5 "
     "bias=col act=swish",
     "16x32x8 w16x16"},
    {"conv3d n=1 d=5 h=5 w=5 c=8 k=8 groups=8 t=3 r=3 s=3 pad=1 stride=2 pass=dgrad x=f16 acc=f32",
     ""},
};

struct Side {
  int registers = -1, spill = -1;
  double instr_per_mma = 0;
  uint64_t bank_conflicts = 0;
  double load_efficiency = 0;
  double compile_ms = 0;
  bool staged_epilogue = false;                   // the plan stages the epilogue in shared memory
  uint64_t store_requests = 0, store_sectors = 0; // global stores of the kernel
};

std::vector<std::string> &table() {
  static std::vector<std::string> rows;
  return rows;
}

Side run_side(const OpSpec &spec, codegen::CompileOptions options, codegen::Backend backend,
              const std::string &what) {
  SCOPED_TRACE(what + " [" + codegen::to_string(backend) + "]");
  Side side;
  options.backend = backend;
  const codegen::CompiledKernel k = engine::compile_kernel(spec, options);
  if (!k.ok()) {
    ADD_FAILURE() << k.errors[0].field << ": " << k.errors[0].message;
    return side;
  }
  side.compile_ms = k.total_ms();
  side.staged_epilogue = k.plan.stage_epilogue;
  const engine::CubinBuild cubin = engine::build_cubin(k, engine::CubinRoute::ptxas);
  EXPECT_EQ(cubin.error, "") << "ptxas rejects the PTX";
  if (const jit::EntryResources *r =
          jit::find_entry_resources(cubin.resources, k.plan.kernel_name)) {
    side.registers = r->registers;
    side.spill = r->spill_bytes();
  }
  emu::EmuDevice dev;
  const engine::KernelCheck check = engine::run_and_check_kernel(dev, k, spec, /*seed=*/7);
  EXPECT_GT(check.report.count, 0);
  EXPECT_TRUE(check.report.ok()) << check.report.summary();
  if (check.counters) {
    const emu::LaunchCounters &c = *check.counters;
    side.instr_per_mma = c.mma_instructions ? double(c.warp_instructions) / c.mma_instructions : 0;
    side.bank_conflicts = c.shared_bank_conflicts;
    side.load_efficiency = c.global_load_efficiency();
    side.store_requests = c.global_store_requests;
    side.store_sectors = c.global_store_sectors;
  }
  return side;
}

class BackendDiff : public ::testing::TestWithParam<Case> {};

TEST_P(BackendDiff, BothBackendsMatchTheReference) {
  const Case &c = GetParam();
  const OpSpec spec = parse_spec(c.spec).entries.at(0).spec;
  codegen::CompileOptions options;
  if (*c.config) {
    codegen::TileConfig config;
    std::string error;
    ASSERT_TRUE(codegen::parse_tile_config(c.config, config, error)) << error;
    options.config = config;
  }
  const std::string what =
      std::string(c.spec) + (*c.config ? std::string(" [") + c.config + "]" : "");
  const Side llvm = run_side(spec, options, codegen::Backend::llvm, what);
  const Side nvrtc = run_side(spec, options, codegen::Backend::cuda_source, what);
  // Both kernels follow one plan: the same swizzled shared-memory layout, so the same bank
  // behaviour, the staged epilogue's slab included.
  EXPECT_EQ(nvrtc.bank_conflicts, llvm.bank_conflicts) << what;
  EXPECT_EQ(nvrtc.bank_conflicts, 0u) << what;
  // A staged epilogue stores D in the plan's vectors in both: the same global store requests and
  // sectors (from the fragments, an f16 D takes 4x the requests of 8-element vectors).
  if (llvm.staged_epilogue) {
    EXPECT_EQ(nvrtc.store_requests, llvm.store_requests) << what;
    EXPECT_EQ(nvrtc.store_sectors, llvm.store_sectors) << what;
  }
  EXPECT_EQ(nvrtc.spill, 0) << what << ": the NVRTC kernel spills";
  // instructions per mma; "-" for a kernel without mma (depthwise)
  auto per_mma = [](double v) {
    if (v <= 0)
      return std::string("    -");
    char text[16];
    std::snprintf(text, sizeof text, "%5.2f", v);
    return std::string(text);
  };
  char row[512];
  std::snprintf(row, sizeof row, "%-120.120s | %4d %4d | %s %s | %3.0f%% %3.0f%% | %6.1f %6.1f",
                what.c_str(), llvm.registers, nvrtc.registers, per_mma(llvm.instr_per_mma).c_str(),
                per_mma(nvrtc.instr_per_mma).c_str(), 100 * llvm.load_efficiency,
                100 * nvrtc.load_efficiency, llvm.compile_ms, nvrtc.compile_ms);
  table().push_back(row);
}

std::string case_name(const ::testing::TestParamInfo<Case> &info) {
  return ::tcjit::test::test_name(info.param.spec, info.param.config);
}

INSTANTIATE_TEST_SUITE_P(Matrix, BackendDiff, ::testing::ValuesIn(kCases), case_name);
INSTANTIATE_TEST_SUITE_P(Conv, BackendDiff, ::testing::ValuesIn(kConvCases), case_name);

// The comparison, printed after the matrix: registers, warp-instructions per mma (emulator),
// global load efficiency, spec -> PTX milliseconds; LLVM first, NVRTC second.
class PrintTable : public ::testing::Environment {
public:
  void TearDown() override {
    if (table().empty())
      return;
    std::printf("\n%-120s | regs llvm/nvrtc | instr/mma | load eff | spec->PTX ms\n", "case");
    for (const std::string &r : table())
      std::printf("%s\n", r.c_str());
  }
};
const auto *const kPrintTable = ::testing::AddGlobalTestEnvironment(new PrintTable);

} // namespace
} // namespace tcjit
