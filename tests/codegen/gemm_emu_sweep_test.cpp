// The long sweep (ctest -L long): dtype x A/B layouts x sizes (exact tiles, M/N/K tails, tiny, K <
// BK, reduced alignment) x configs x epilogues, with batch and split-K, on the PTX emulator
// against the CPU reference; the aligned size also without shared-memory bank conflicts and at
// 100% global load efficiency.
#include "gemm_runner.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tcjit::codegen::test {
namespace {

struct SweepDtype {
  const char *name;
  const char *ab;    // dtype of A and B
  const char *extra; // output and accumulator words
  std::vector<std::string> configs;
};

const SweepDtype kDtypes[] = {
    {"f16", "f16", "c=f16:row acc=f32", {"64x64x32 w32x32 s3", "32x64x64 w16x32 s4 k2"}},
    {"f16_f32out", "f16", "c=f32:col acc=f32", {"128x64x32 w64x32 s2", "64x64x16 w32x32 s5"}},
    {"bf16", "bf16", "c=bf16:row acc=f32", {"64x64x32 w32x32 s3", "64x32x32 w32x16 s2 k3"}},
    {"tf32", "f32", "c=f32:row acc=f32 math=tf32", {"64x64x16 w32x32 s3", "32x32x32 w16x16 s2"}},
    {"s8", "s8", "c=s32:row acc=s32", {"64x64x64 w32x32 s3", "32x64x32 w16x32 s2 k2"}},
    {"s8_s8out", "s8", "c=s8:row acc=s32 alpha=0.03", {"64x64x64 w32x32 s3"}},
    {"f64", "f64", "c=f64:row acc=f64", {"32x32x16 w16x16 s3", "64x32x8 w32x16 s2 k2"}},
    {"simt_f32", "f32", "c=f32:row acc=f32 math=f32", {"64x64x8 w32x32 s3", "32x32x16 w16x32 s2"}},
};

const char *kSizes[] = {"m=64 n=64 k=64", "m=65 n=63 k=40",         "m=1 n=1 k=1",
                        "m=17 n=9 k=8",   "m=70 n=34 k=66 batch=2", "m=31 n=33 k=100"};
const char *kEpilogues[] = {"",
                            "act=relu bias=col",
                            "act=sigmoid beta=1",
                            "act=gelu_tanh bias=row",
                            "act=softplus alpha=0.5",
                            "act=swish beta=-1"};

void PrintTo(const SweepDtype &d, std::ostream *os) {
  *os << d.name << ": a=" << d.ab << " b=" << d.ab << " " << d.extra;
}

class GemmSweep : public ::testing::TestWithParam<SweepDtype> {};

TEST_P(GemmSweep, MatchesReference) {
  const SweepDtype &d = GetParam();
  int n = 0;
  for (const char *la : {"row", "col"})
    for (const char *lb : {"row", "col"})
      for (const char *size : kSizes)
        for (const std::string &config : d.configs) {
          const bool integer_raw = std::string(d.extra).find("c=s32") != std::string::npos;
          const std::string epi = integer_raw ? "" : kEpilogues[n++ % 6];
          const std::string spec = std::string("gemm ") + size + " a=" + d.ab + ":" + la +
                                   " b=" + d.ab + ":" + lb + " " + d.extra + " " + epi;
          SCOPED_TRACE(spec + " [" + config + "]");
          EmuRun r = run_on_emulator(spec, config, 7);
          ASSERT_EQ(r.error, "");
          EXPECT_TRUE(r.report.ok()) << r.report.summary();
          if (std::string(size) == kSizes[0]) { // aligned, whole tiles along K
            EXPECT_EQ(r.counters.shared_bank_conflicts, 0u);
            // operand loads only: the epilogue's bias and C reads follow the output's layout
            if (epi.find("bias") == std::string::npos && epi.find("beta") == std::string::npos) {
              EXPECT_EQ(r.counters.global_bytes_read, 32 * r.counters.global_load_sectors);
            }
          }
        }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, GemmSweep, ::testing::ValuesIn(kDtypes),
                         [](const auto &info) { return std::string(info.param.name); });

} // namespace
} // namespace tcjit::codegen::test
