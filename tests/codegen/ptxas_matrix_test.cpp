// Every generated kernel passes ptxas for its arch: dtype x A/B layouts x configs x archs;
// default configs spill nothing; compiling twice gives byte-identical PTX.
#include "compiler/codegen/pipeline.h"
#include "compiler/codegen/plan/kernel_plan.h"
#include "compiler/dsl/parser.h"
#include "ptxas_run.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tcjit::codegen {
namespace {

OpSpec spec_of(const std::string &text) {
  ParseResult r = parse_spec(text);
  EXPECT_TRUE(r.ok()) << text;
  return r.entries.at(0).spec;
}

CompiledKernel compile(const std::string &spec, const std::string &config, const char *arch) {
  CompileOptions opt;
  opt.arch = arch;
  if (!config.empty()) {
    TileConfig c;
    std::string err;
    EXPECT_TRUE(parse_tile_config(config, c, err)) << err;
    opt.config = c;
  }
  return compile_gemm(spec_of(spec), opt);
}

struct DtypeCase {
  const char *name;
  const char *spec; // %s:%s for the A and B layouts
  std::vector<std::string> configs;
};

const DtypeCase kCases[] = {
    {"f16",
     "gemm m=512 n=512 k=512 a=f16:%s b=f16:%s c=f16:row acc=f32",
     {"", "64x64x32 w32x32 s4", "128x256x32 w64x64 s3", "64x64x64 w32x32 s2 va2 vb4",
      "128x128x32 w64x64 s3 k4"}},
    {"f16_f32out_epilogue",
     "gemm m=500 n=500 k=500 a=f16:%s b=f16:%s c=f32:col acc=f32 act=gelu bias=row beta=1",
     {"", "128x64x32 w64x32 s3"}},
    {"bf16",
     "gemm m=512 n=512 k=512 a=bf16:%s b=bf16:%s c=bf16:row acc=f32 act=swish",
     {"", "64x128x32 w32x64 s4"}},
    {"tf32",
     "gemm m=512 n=512 k=512 a=f32:%s b=f32:%s c=f32:row acc=f32 math=tf32",
     {"", "64x64x32 w32x32 s3"}},
    {"s8", "gemm m=512 n=512 k=512 a=s8:%s b=s8:%s c=s32:row acc=s32", {"", "64x64x64 w32x32 s4"}},
    {"s8_s8out", "gemm m=512 n=512 k=512 a=s8:%s b=s8:%s c=s8:row acc=s32 alpha=0.01", {""}},
    {"u8", "gemm m=512 n=512 k=512 a=u8:%s b=u8:%s c=s32:row acc=s32", {"", "64x64x64 w32x32 s4"}},
    {"simt_f32",
     "gemm m=512 n=512 k=512 a=f32:%s b=f32:%s c=f32:row acc=f32 math=f32",
     {"", "64x64x8 w32x32 s4", "128x128x16 w64x32 s2"}},
    {"f64",
     "gemm m=512 n=512 k=512 a=f64:%s b=f64:%s c=f64:row acc=f64 act=tanh",
     {"", "32x32x16 w16x16 s4"}},
};

void PrintTo(const DtypeCase &c, std::ostream *os) {
  *os << c.name << ": " << c.spec;
}

class PtxasMatrix : public ::testing::TestWithParam<DtypeCase> {};

TEST_P(PtxasMatrix, EveryLayoutAndConfigAssembles) {
  const DtypeCase &dc = GetParam();
  for (const char *la : {"row", "col"})
    for (const char *lb : {"row", "col"}) {
      char spec[256];
      std::snprintf(spec, sizeof spec, dc.spec, la, lb);
      for (const std::string &config : dc.configs) {
        SCOPED_TRACE(std::string(spec) + " [" + config + "]");
        CompiledKernel k = compile(spec, config, "sm_80");
        ASSERT_TRUE(k.ok()) << k.errors.at(0).message;
        const PtxasRun p = run_ptxas(k);
        EXPECT_TRUE(p.ok) << p.log;
        EXPECT_GT(p.kernel.registers, 0);
        EXPECT_LE(p.kernel.registers, 255);
        if (config.empty()) {
          EXPECT_EQ(p.kernel.spill_bytes(), 0)
              << p.kernel.spill_stores << " B spill stores: " << p.log;
        }
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, PtxasMatrix, ::testing::ValuesIn(kCases),
                         [](const auto &info) { return std::string(info.param.name); });

TEST(PtxasArchs, EveryArchAssembles) {
  for (const char *arch : {"sm_80", "sm_86", "sm_89", "sm_90"}) {
    CompiledKernel k = compile(
        "gemm m=1000 n=1000 k=1000 a=f16:row b=f16:col c=f16:row acc=f32 act=relu", "", arch);
    ASSERT_TRUE(k.ok());
    const PtxasRun p = run_ptxas(k);
    EXPECT_TRUE(p.ok) << arch << "\n" << p.log;
    EXPECT_NE(k.ptx.find(std::string(".target ") + arch), std::string::npos) << arch;
  }
  EXPECT_NE(compile("gemm m=8 n=8 k=8 a=f16 b=f16:col c=f16 acc=f32", "", "sm_90")
                .ptx.find(".version 7.8"),
            std::string::npos);
}

// What an H100/H200 runs: one kernel of every family, compiled for sm_90 (the runtime compiles
// for the device's own arch), passes ptxas for sm_90, spilling nothing with its default config.
TEST(PtxasSm90, EveryKernelFamilyAssembles) {
  const std::vector<std::pair<const char *, const char *>> families = {
      {"gemm m=200 n=136 k=72 a=f16:row b=f16:col c=f16:row acc=f32", ""},
      {"gemm m=128 n=96 k=80 a=bf16:row b=bf16:col c=bf16:row acc=f32", ""},
      {"gemm m=96 n=72 k=40 a=f32:row b=f32:col c=f32:row acc=f32 math=tf32", ""},
      {"gemm m=96 n=72 k=40 a=f32:row b=f32:col c=f32:row acc=f32 math=f32", ""},
      {"gemm m=64 n=64 k=63 a=f64:row b=f64:col c=f64:row acc=f64", ""},
      {"gemm m=128 n=128 k=128 a=s8:row b=s8:col c=s32:row acc=s32", ""},
      {"gemm m=64 n=64 k=64 a=s8:row b=s8:col c=s8:row acc=s32 alpha=0.1", ""},
      {"gemm m=64 n=48 k=40 batch=3 a=f16:row b=f16:col c=f16:row acc=f32", ""},
      {"gemm m=64 n=64 k=4096 a=f16:row b=f16:col c=f16:row acc=f32 beta=1",
       "64x64x32 w32x32 s3 k4"},
      {"gemm m=100 n=60 k=30 a=bf16:col b=bf16:row c=f32:col acc=f32 act=gelu bias=col beta=2", ""},
      {"conv2d n=2 h=9 w=9 c=16 k=32 r=3 s=3 pad=1 x=f16 bias=col act=relu", ""},
      {"conv2d n=2 h=9 w=9 c=16 k=32 r=3 s=3 pad=1 pass=dgrad x=f16", ""},
      {"conv2d n=2 h=9 w=9 c=16 k=32 r=3 s=3 pad=1 pass=wgrad x=f16", ""},
      {"conv2d n=2 h=8 w=8 c=32 k=64 r=3 s=3 pad=1 groups=4 x=f16", ""},
      {"conv2d n=2 h=8 w=8 c=32 k=32 r=3 s=3 pad=1 groups=32 x=f16", ""},
      {"conv3d n=1 d=4 h=6 w=6 c=8 k=16 t=3 r=3 s=3 pad=1 x=f16", ""},
  };
  for (const auto &[spec, config] : families) {
    SCOPED_TRACE(std::string(spec) + " [" + config + "]");
    const CompiledKernel k = compile(spec, config, "sm_90");
    ASSERT_TRUE(k.ok()) << k.errors.at(0).message;
    EXPECT_NE(k.ptx.find(".target sm_90"), std::string::npos);
    EXPECT_EQ(k.plan.sm, 90);
    const PtxasRun p = run_ptxas(k);
    EXPECT_TRUE(p.ok) << p.log;
    if (!*config) {
      EXPECT_EQ(p.kernel.spill_bytes(), 0) << p.kernel.spill_stores << " B spill stores: " << p.log;
    }
  }
}

// Configs CUTLASS builds without a spill (its sm_80 Gemm of the same tiles, bench/anchors:
// s8 128x128x64 w64x64 at 230 registers) spill nothing here either. With each store's address
// computed inside its guard, ptxas hoisted all 64 of them and spilled 4 B at 255 registers
// (llvm/epilogue.cpp says how the lines share one address now).
TEST(PtxasCutlassConfigs, SpillNothing) {
  const std::vector<std::pair<const char *, const char *>> cases = {
      {"gemm m=512 n=512 k=512 a=s8:row b=s8:col c=s32:row acc=s32", "128x128x64 w64x64 s3"},
      {"gemm m=512 n=512 k=512 a=s8:row b=s8:col c=s32:row acc=s32", "128x128x64 w64x64 s4"},
      {"gemm m=512 n=512 k=512 a=u8:row b=s8:col c=s32:row acc=s32", "128x128x64 w64x64 s3"},
      {"gemm m=500 n=500 k=500 a=f32:row b=f32:col c=f32:row acc=f32 math=tf32",
       "128x128x16 w64x64 s3"},
  };
  for (const auto &[spec, config] : cases) {
    SCOPED_TRACE(std::string(spec) + " [" + config + "]");
    const CompiledKernel k = compile(spec, config, "sm_80");
    ASSERT_TRUE(k.ok()) << k.errors.at(0).message;
    const PtxasRun p = run_ptxas(k);
    EXPECT_TRUE(p.ok) << p.log;
    EXPECT_EQ(p.kernel.spill_bytes(), 0) << p.log;
    EXPECT_EQ(p.kernel.stack_frame, 0) << p.log;
  }
}

TEST(Determinism, CompileTwiceIdenticalPtx) {
  for (const char *s : {"gemm m=512 n=512 k=512 a=f16:row b=f16:col c=f16:row acc=f32",
                        "gemm m=100 n=60 k=30 a=bf16:col b=bf16:row c=f32:col acc=f32 act=gelu "
                        "bias=col beta=2",
                        "gemm m=64 n=64 k=64 a=s8 b=s8:col c=s8 acc=s32 alpha=0.5"}) {
    CompileOptions opt;
    const OpSpec spec = spec_of(s);
    const std::string first = compile_gemm(spec, opt).ptx;
    EXPECT_FALSE(first.empty());
    EXPECT_EQ(first, compile_gemm(spec, opt).ptx) << s;
  }
}

// kernel_identity() is what lets one compiled kernel serve many problems: every group below
// differs in sizes, leading dimensions (of the same alignment), alpha and beta values; within a
// group the identity is one and the PTX byte-identical; across groups identities differ.
TEST(KernelIdentity, SameIdentitySamePtxAcrossSizes) {
  const std::vector<std::vector<std::string>> groups = {
      {"gemm m=200 n=128 k=64 a=f16:row b=f16:col c=f16:row acc=f32",
       "gemm m=3000 n=256 k=4096 a=f16:row b=f16:col c=f16:row acc=f32",
       "gemm m=? n=4096 k=4096 a=f16:row b=f16:col c=f16:row acc=f32",
       "gemm m=100 n=136 k=72 lda=80 a=f16:row b=f16:col c=f16:row acc=f32 alpha=2"},
      {"gemm m=512 n=512 k=512 a=bf16:row b=bf16:row c=f32:row acc=f32 beta=1 bias=col act=gelu",
       "gemm m=77 n=1000 k=24 a=bf16:row b=bf16:row c=f32:row acc=f32 beta=0.5 alpha=3 bias=col "
       "act=gelu"},
      {"gemm m=128 n=128 k=128 a=s8:row b=s8:col c=s32:row acc=s32",
       "gemm m=256 n=384 k=64 a=s8:row b=s8:col c=s32:row acc=s32"},
      {"gemm m=128 n=128 k=128 a=s8:row b=s8:col c=s32:row acc=s32 alpha=2"}, // not exact
  };
  CompileOptions opt;
  opt.config = TileConfig{128, 128, 64, 64, 32, 3, 1, 1, 0, 0};
  std::vector<std::string> identities;
  for (const auto &group : groups) {
    std::string id, ptx;
    for (const std::string &text : group) {
      const OpSpec spec = spec_of(text);
      CompileOptions o = opt;
      if (spec.gemm.a.dtype != DType::s8)
        o.config = TileConfig{128, 128, 32, 64, 64, 3, 1, 1, 0, 0};
      const CompiledKernel k = compile_gemm(spec, o);
      ASSERT_TRUE(k.ok()) << text;
      const std::string this_id = kernel_identity(k.plan);
      if (id.empty()) {
        id = this_id;
        ptx = k.ptx;
        identities.push_back(id);
        continue;
      }
      EXPECT_EQ(this_id, id) << text;
      EXPECT_EQ(k.ptx, ptx) << text << ": same identity, different PTX";
    }
  }
  for (size_t i = 0; i < identities.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      EXPECT_NE(identities[i], identities[j]);
}

TEST(Pipeline, UserErrorsComeBackNotThrown) {
  CompileOptions opt;
  TileConfig c;
  c.stages = 9;
  opt.config = c;
  CompiledKernel k = compile_gemm(spec_of("gemm m=8 n=8 k=8 a=f16 b=f16 c=f16 acc=f32"), opt);
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.errors[0].field, "stages");
  EXPECT_TRUE(k.ptx.empty());
}

TEST(Pipeline, PassesAreTimedInOrder) {
  CompiledKernel k = compile_gemm(spec_of("gemm m=8 n=8 k=8 a=f16 b=f16 c=f16 acc=f32"), {});
  ASSERT_TRUE(k.ok());
  std::vector<std::string> names;
  for (const StageTime &t : k.times)
    names.push_back(t.name);
  EXPECT_EQ(names, pass_names());
}

TEST(PtxasLog, Parses) {
  const std::vector<jit::EntryResources> all = jit::parse_ptxas_resources(
      "ptxas info    : Compiling entry function 'k' for 'sm_80'\n"
      "ptxas info    : Function properties for k\n"
      "    8 bytes stack frame, 4 bytes spill stores, 8 bytes spill loads\n"
      "ptxas info    : Used 168 registers, used 1 barriers, 32 bytes cmem[0]\n");
  ASSERT_EQ(all.size(), 1u);
  const jit::EntryResources &r = all[0];
  EXPECT_EQ(r.registers, 168);
  EXPECT_EQ(r.spill_stores, 4);
  EXPECT_EQ(r.spill_loads, 8);
  EXPECT_EQ(r.stack_frame, 8);
  EXPECT_EQ(r.constant_bytes, 32);
  EXPECT_GT(r.spill_bytes(), 0);
}

} // namespace
} // namespace tcjit::codegen
