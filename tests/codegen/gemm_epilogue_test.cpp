// The shared-memory-staged epilogue (compiler/codegen/llvm/epilogue.h): for f16, bf16 and s8 output
// the warp stages its accumulators in shared memory and stores D (and loads C) in coalesced
// vectors. Checked on the PTX emulator against the CPU reference, with its counters: 100% global
// store sector efficiency and no shared bank conflicts on aligned full tiles; every tail,
// alignment, epilogue and config still matches the reference. Also: the plan's decision, and the
// staging swizzle (plan/formulas.h), evaluated on the host (bijective, conflict-free for every warp
// tile and vector width).
#include "gemm_runner.h"

#include "compiler/codegen/plan/kernel_plan.h"
#include "compiler/dsl/parser.h"

#include <gtest/gtest.h>

#include <set>

namespace tcjit::codegen::test {
namespace {

// expect_matches() (gemm_runner.h), and every spec here takes the staged path.
EmuRun expect_staged_matches(const std::string &spec, const std::string &config = "") {
  EmuRun r = expect_matches(spec, config);
  EXPECT_TRUE(r.kernel.plan.stage_epilogue) << spec;
  return r;
}

KernelPlan plan_of(const std::string &text, const std::string &config = "") {
  ParseResult parsed = parse_spec(text);
  EXPECT_TRUE(parsed.ok()) << text;
  const OpSpec spec = parsed.entries.at(0).spec;
  TileConfig c = default_tile_config(spec, "sm_80", false);
  std::string err;
  EXPECT_TRUE(parse_tile_config(config, c, err)) << err;
  return plan_kernel(spec, resolve_vectors(spec, c), "sm_80", false);
}

// --- the plan ----------------------------------------------------------------------------------
TEST(EpiloguePlan, StagedForNarrowTensorCoreOutputsOnly) {
  KernelPlan p = plan_of("gemm m=512 n=512 k=512 a=f16:row b=f16:col c=f16:row acc=f32");
  EXPECT_TRUE(p.stage_epilogue);
  EXPECT_EQ(p.stage_lines, 16);
  EXPECT_EQ(p.stage_line_len, 64);
  EXPECT_EQ(p.stage_vec, 8);
  EXPECT_EQ(p.stage_bytes, 4 * 16 * 64 * 4);
  EXPECT_EQ(p.smem_bytes, 3 * (128 * 32 + 128 * 32) * 2); // the pipeline's is larger
  EXPECT_NE(describe(p).find("staged through shared memory"), std::string::npos);

  p = plan_of("gemm m=512 n=512 k=512 a=bf16:row b=bf16:col c=bf16:col acc=f32");
  EXPECT_TRUE(p.stage_epilogue);
  EXPECT_EQ(p.stage_lines, 8);
  EXPECT_EQ(p.stage_line_len, 64);

  p = plan_of("gemm m=512 n=512 k=512 a=s8:row b=s8:col c=s8:row acc=s32 alpha=0.5");
  EXPECT_TRUE(p.stage_epilogue);
  EXPECT_EQ(p.stage_vec, 8); // 8 bytes: vectors of at most 8 accumulators (two 16 B smem loads)

  // alignment limits the vector
  EXPECT_EQ(plan_of("gemm m=64 n=66 k=64 a=f16:row b=f16:col c=f16:row acc=f32").stage_vec, 2);
  EXPECT_EQ(plan_of("gemm m=64 n=67 k=64 a=f16:row b=f16:col c=f16:row acc=f32").stage_vec, 1);

  // the pipeline's shared memory is too small for a tiny config: it grows
  p = plan_of("gemm m=64 n=64 k=64 a=f16:row b=f16:col c=f16:row acc=f32", "32x32x16 w16x16 s2");
  EXPECT_TRUE(p.stage_epilogue);
  EXPECT_EQ(p.smem_bytes, std::max(2 * (32 * 16 + 32 * 16) * 2, p.stage_bytes));

  // direct: 4-byte and wider outputs, split-K, SIMT, f64
  EXPECT_FALSE(plan_of("gemm m=512 n=512 k=512 a=f16 b=f16:col c=f32 acc=f32").stage_epilogue);
  EXPECT_FALSE(plan_of("gemm m=512 n=512 k=512 a=s8 b=s8:col c=s32 acc=s32").stage_epilogue);
  EXPECT_FALSE(
      plan_of("gemm m=512 n=512 k=512 a=f16 b=f16:col c=f16 acc=f32", "k4").stage_epilogue);
  EXPECT_FALSE(
      plan_of("gemm m=512 n=512 k=512 a=f32 b=f32:col c=f32 acc=f32 math=f32").stage_epilogue);
  EXPECT_FALSE(plan_of("gemm m=512 n=512 k=512 a=f64 b=f64:col c=f64 acc=f64").stage_epilogue);
  EXPECT_NE(describe(plan_of("gemm m=512 n=512 k=512 a=f16 b=f16:col c=f32 acc=f32"))
                .find("direct from the fragments"),
            std::string::npos);
}

// The staging swizzle on the host: a bijection of each warp's slab onto itself, and the bank
// conflict rules of the emulator (runtime/emu/memory_access.cpp: 4-byte accesses per warp, 8-byte
// per half-warp, 16-byte per quarter-warp) give one wavefront for every fragment store and every
// read-back load, for every warp-tile extent and vector width.
int wavefronts(const std::vector<int64_t> &addr, int size) {
  const int lanes_per_phase = size <= 4 ? 32 : 128 / size;
  int extra = 0;
  for (size_t first = 0; first < addr.size(); first += static_cast<size_t>(lanes_per_phase)) {
    std::set<int64_t> words[32];
    for (size_t l = first; l < std::min(addr.size(), first + lanes_per_phase); ++l)
      for (int64_t w = addr[l] / 4; w <= (addr[l] + size - 1) / 4; ++w)
        words[w % 32].insert(w);
    size_t worst = 0;
    for (const auto &s : words)
      worst = std::max(worst, s.size());
    extra += static_cast<int>(worst) - 1;
  }
  return extra;
}

TEST(EpiloguePlan, StagingSwizzleIsBijectiveAndConflictFree) {
  for (MatrixLayout layout : {MatrixLayout::row, MatrixLayout::col})
    for (int len : {16, 32, 64, 128})
      for (int vec : {1, 2, 4, 8}) {
        SCOPED_TRACE(std::string(layout == MatrixLayout::row ? "row" : "col") + " len " +
                     std::to_string(len) + " vec " + std::to_string(vec));
        KernelPlan p;
        p.out_layout = layout;
        p.stage_lines = layout == MatrixLayout::row ? 16 : 8;
        p.stage_line_len = len;
        p.stage_vec = vec;
        std::set<int64_t> seen;
        for (int line = 0; line < p.stage_lines; ++line)
          for (int pos = 0; pos < len; ++pos) {
            const int64_t o = staging_offset(p, line, pos);
            EXPECT_GE(o, 0);
            EXPECT_LT(o, p.stage_lines * len * 4);
            seen.insert(o);
          }
        EXPECT_EQ(seen.size(), static_cast<size_t>(p.stage_lines * len));
        // fragment stores: m16n8 accumulators (g, 2q + {0,1}) and (g + 8, ...)
        if (layout == MatrixLayout::row) {
          for (int ni = 0; ni < len / 8; ++ni)
            for (int h = 0; h < 2; ++h) {
              std::vector<int64_t> a;
              for (int lane = 0; lane < 32; ++lane)
                a.push_back(staging_offset(p, (lane >> 2) + 8 * h, ni * 8 + 2 * (lane & 3)));
              EXPECT_EQ(wavefronts(a, 8), 0) << "store ni " << ni << " h " << h;
            }
        } else {
          for (int mi = 0; mi < len / 16; ++mi)
            for (int i = 0; i < 4; ++i) {
              std::vector<int64_t> a;
              for (int lane = 0; lane < 32; ++lane)
                a.push_back(staging_offset(p, 2 * (lane & 3) + (i & 1),
                                           mi * 16 + (lane >> 2) + 8 * (i >> 1)));
              EXPECT_EQ(wavefronts(a, 4), 0) << "store mi " << mi << " i " << i;
            }
        }
        // read-back: item = lane + 32 * it, (line, pos) = (item / (len/vec), vec * item % ...)
        const int per_line = len / vec, items = p.stage_lines * per_line;
        const int chunk = std::min(vec, 4);
        for (int it = 0; it * 32 < items; ++it)
          for (int j = 0; j < vec; j += chunk) {
            std::vector<int64_t> a;
            for (int lane = 0; lane < 32 && it * 32 + lane < items; ++lane) {
              const int item = it * 32 + lane;
              a.push_back(staging_offset(p, item / per_line, item % per_line * vec + j));
            }
            EXPECT_EQ(wavefronts(a, 4 * chunk), 0) << "load it " << it << " j " << j;
          }
      }
}

// --- aligned full tiles: coalesced stores, no bank conflicts ----------------------------------
TEST(EpilogueStaged, FullStoreEfficiencyAndNoBankConflictsWhenAligned) {
  struct Case {
    const char *spec;
    const char *config;
  };
  for (const Case &c : std::initializer_list<Case>{
           {"gemm m=128 n=128 k=64 a=f16:row b=f16:col c=f16:row acc=f32", ""},
           {"gemm m=128 n=128 k=64 a=f16:row b=f16:col c=f16:col acc=f32", ""},
           {"gemm m=128 n=128 k=64 a=f16:col b=f16:row c=f16:row acc=f32 beta=1 bias=col", ""},
           {"gemm m=128 n=128 k=64 a=bf16:row b=bf16:col c=bf16:row acc=f32", ""},
           {"gemm m=128 n=128 k=64 a=bf16:row b=bf16:row c=bf16:col acc=f32 beta=0.5", ""},
           {"gemm m=128 n=128 k=128 a=s8:row b=s8:col c=s8:row acc=s32 alpha=0.05", ""},
           {"gemm m=128 n=128 k=128 a=s8:row b=s8:col c=s8:col acc=s32 alpha=0.05", ""},
           {"gemm m=128 n=128 k=128 a=s8:row b=s8:col c=s8:row acc=s32", ""}, // exact integers
           {"gemm m=64 n=64 k=64 a=f16:row b=f16:col c=f16:row acc=f32", "64x64x32 w32x32 s3"},
           {"gemm m=64 n=64 k=64 a=f16:row b=f16:col c=f16:col acc=f32", "32x32x16 w16x16 s2"},
           {"gemm m=128 n=128 k=64 a=f16:row b=f16:col c=f16:row acc=f32", "128x64x32 w64x32 s4"},
       }) {
    SCOPED_TRACE(std::string(c.spec) + " [" + c.config + "]");
    EmuRun r = expect_staged_matches(c.spec, c.config);
    ASSERT_TRUE(r.kernel.ok());
    EXPECT_TRUE(r.kernel.plan.stage_epilogue);
    const emu::LaunchCounters &n = r.counters;
    EXPECT_GT(n.global_store_sectors, 0u);
    EXPECT_EQ(n.global_bytes_written, 32 * n.global_store_sectors); // 100% store efficiency
    EXPECT_EQ(n.shared_bank_conflicts, 0u);
    const std::string spec = c.spec;
    if (spec.find("beta") != spec.npos && spec.find("bias") == spec.npos) { // C: full sectors
      EXPECT_EQ(n.global_bytes_read, 32 * n.global_load_sectors);
    }
  }
}

TEST(EpilogueStaged, WideVectors) {
  // 16-byte stores for 16-bit outputs: 128x128 f16 D = 32 KiB in 2048 stores of 16 bytes
  EmuRun r = expect_staged_matches("gemm m=128 n=128 k=64 a=f16:row b=f16:col c=f16:row acc=f32");
  EXPECT_EQ(r.counters.global_store_requests, 128u * 128 * 2 / 16 / 32);
  EXPECT_NE(r.kernel.ptx.find("st.global.v4"), std::string::npos);
  r = expect_staged_matches("gemm m=128 n=128 k=128 a=s8:row b=s8:col c=s8:col acc=s32 alpha=0.5");
  EXPECT_EQ(r.counters.global_store_requests, 128u * 128 / 8 / 32); // 8-byte stores
}

// --- everything else must match the reference --------------------------------------------------
const char *kConfigs[] = {"64x64x32 w32x32 s3", "128x128x32 w64x64 s3", "32x32x16 w16x16 s2",
                          "128x64x32 w64x32 s4"};

TEST(EpilogueStaged, TailsAndAlignments) {
  for (const char *out : {"f16:row", "f16:col", "bf16:row", "s8:col", "s8:row"})
    for (int ci : {0, 2}) {
      const char *config = out[0] != 's' ? kConfigs[ci]
                           : ci == 0     ? "64x64x64 w32x32 s3"
                                         : "32x32x32 w16x16 s2"; // s8: bk >= 32
      const std::string c =
          std::string(" c=") + out + " acc=" + (out[0] == 's' ? "s32 alpha=0.05" : "f32");
      const std::string ab = out[0] == 's'   ? "a=s8:row b=s8:col"
                             : out[0] == 'b' ? "a=bf16:row b=bf16:col"
                                             : "a=f16:row b=f16:col";
      expect_staged_matches("gemm m=65 n=64 k=64 " + ab + c, config); // M tail
      expect_staged_matches("gemm m=64 n=65 k=64 " + ab + c, config); // N tail (alignment 1)
      expect_staged_matches("gemm m=1 n=1 k=1 " + ab + c, config);    // tiny
      expect_staged_matches("gemm m=33 n=31 k=64 " + ab + c, config); // alignment 1, both tails
      expect_staged_matches("gemm m=34 n=38 k=64 " + ab + c, config); // alignment 2
      expect_staged_matches("gemm m=36 n=44 k=64 " + ab + c, config); // alignment 4
      expect_staged_matches("gemm m=72 n=40 k=64 " + ab + c, config); // alignment 8, partial tiles
    }
}

TEST(EpilogueStaged, LeadingDimensionsAndBatch) {
  expect_staged_matches("gemm m=40 n=24 k=48 batch=3 a=f16:row b=f16:col c=f16:row acc=f32 beta=1",
                        kConfigs[0]);
  expect_staged_matches(
      "gemm m=40 n=24 k=48 batch=2 a=f16:col lda=48 b=f16:row ldb=32 c=f16:row ldc=40 "
      "acc=f32 beta=1",
      kConfigs[0]);
  expect_staged_matches(
      "gemm m=40 n=24 k=48 batch=2 a=bf16 b=bf16 c=bf16:col ldc=44 acc=f32 beta=-1", kConfigs[2]);
  expect_staged_matches(
      "gemm m=70 n=90 k=64 batch=2 a=s8 b=s8:col c=s8 acc=s32 alpha=0.02 beta=0.5",
      "64x64x64 w32x32 s3");
}

TEST(EpilogueStaged, EpiloguesAndConfigs) {
  for (const char *config : kConfigs) {
    expect_staged_matches(
        "gemm m=96 n=80 k=64 a=f16:row b=f16:col c=f16:row acc=f32 alpha=2 beta=-1.5 "
        "bias=row act=relu",
        config);
    expect_staged_matches(
        "gemm m=96 n=80 k=64 a=f16:col b=f16:row c=f16:col acc=f32 alpha=0.5 beta=1 "
        "bias=col act=gelu",
        config);
    expect_staged_matches("gemm m=80 n=96 k=64 a=bf16:row b=bf16:row c=bf16:row acc=f32 beta=0.25 "
                          "bias=col act=sigmoid",
                          config);
    expect_staged_matches("gemm m=80 n=96 k=64 a=bf16:col b=bf16:col c=bf16:col acc=f32 bias=row "
                          "act=tanh",
                          config);
  }
  for (const char *config : {"64x64x64 w32x32 s3", "128x128x64 w64x32 s3", "32x32x32 w16x16 s2"}) {
    expect_staged_matches(
        "gemm m=96 n=80 k=128 a=s8:row b=s8:col c=s8:row acc=s32 alpha=0.02 beta=0.5 "
        "bias=col act=relu",
        config);
    expect_staged_matches(
        "gemm m=96 n=80 k=128 a=s8:col b=s8:row c=s8:col acc=s32 alpha=0.02 bias=row", config);
    expect_staged_matches("gemm m=96 n=80 k=128 a=s8:row b=s8:col c=s8:col acc=s32",
                          config); // exact
  }
}

} // namespace
} // namespace tcjit::codegen::test
