// The default chooser and the cost model on cases with a clear answer:
// split-K for small M*N with long K, smaller tiles where one wave would be mostly empty, no
// split-K for large M*N, the memory-bound skinny GEMM, and the model's sanity targets on A100.
#include "compiler/dsl/parser.h"
#include "tuner/cost_model.h"
#include "tuner/heuristic.h"
#include "tuner/ranking.h"
#include "tuner/search_space.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace tcjit::tuner {
namespace {

// f16 in, f16 out, f32 accumulate unless the text says otherwise.
OpSpec spec_of(std::string text) {
  if (text.find(" a=") == std::string::npos && text.find(" x=") == std::string::npos)
    text += " a=f16 b=f16 c=f16 acc=f32";
  const ParseResult parsed = parse_spec(text);
  EXPECT_TRUE(parsed.ok()) << text << (parsed.ok() ? "" : parsed.errors.front().render());
  return parsed.entries.front().spec;
}

Prediction predicted(const std::string &text, const codegen::TileConfig &c) {
  return predict_config(a100_model(), spec_of(text), c, false);
}

TEST(Heuristic, LongKWithSmallOutputTakesSplitK) {
  // One 128x128 CTA on a 108-SM A100 runs 256 K-tiles alone; split-K spreads K over the SMs.
  const OpSpec spec = spec_of("gemm m=128 n=128 k=8192");
  const auto configs = heuristic_configs(spec, "sm_80", false);
  ASSERT_FALSE(configs.empty());
  const codegen::TileConfig &best = configs.front();
  EXPECT_GT(best.split_k, 1) << codegen::to_string(best);
  const Prediction chosen = predict_config(a100_model(), spec, best, false);
  const Prediction old_default =
      predict_config(a100_model(), spec, codegen::default_tile_config(spec, "sm_80", false), false);
  EXPECT_LT(chosen.seconds * 4, old_default.seconds)
      << codegen::to_string(best) << " " << chosen.seconds << " vs " << old_default.seconds;
}

TEST(Heuristic, SkinnyGemmFillsTheMachine) {
  // m=16: the old 64x128 tile made 32 CTAs for 108 SMs.
  const OpSpec spec = spec_of("gemm m=16 n=4096 k=4096");
  const codegen::TileConfig best = heuristic_configs(spec, "sm_80", false).front();
  const Prediction p = predict_config(a100_model(), spec, best, false);
  EXPECT_GE(p.ctas, 108) << codegen::to_string(best);
  EXPECT_LE(best.bm, 32) << codegen::to_string(best);
  // It is memory-bound: B alone is 32 MiB, read once.
  EXPECT_EQ(p.bound, "dram") << codegen::to_string(best);
}

TEST(Heuristic, LargeSquareGemmTakesNoSplitKAndABigTile) {
  const OpSpec spec = spec_of("gemm m=4096 n=4096 k=4096");
  const codegen::TileConfig best = heuristic_configs(spec, "sm_80", false).front();
  EXPECT_EQ(best.split_k, 1) << codegen::to_string(best);
  // CUTLASS's A100 f16 defaults at this size are 128x256 / 256x128 tiles: smaller ones need more
  // L2 bandwidth per mma than the L2 sustains (CostModel.SmallTilesAreL2BoundOnLargeGemms).
  EXPECT_GE(best.bm * best.bn, 128 * 256) << codegen::to_string(best);
  EXPECT_GE(best.wm * best.wn, 64 * 64) << codegen::to_string(best);
  // Split-K loses for large M*N: the same kernel (the same registers) with 4 slices is predicted
  // slower.
  codegen::TileConfig split = best;
  split.split_k = 4;
  CandidateFacts facts;
  facts.registers = 200;
  const Prediction with = predict_config(a100_model(), spec, split, false, facts);
  const Prediction without = predict_config(a100_model(), spec, best, false, facts);
  ASSERT_TRUE(with.launchable && without.launchable);
  EXPECT_GT(with.seconds, without.seconds);
}

TEST(CostModel, A100F16LargeGemmNearCublasClass) {
  // cuBLAS-class kernels reach roughly 80-90% of the 312 TFLOPS peak at 4096^3 f16.
  const OpSpec spec = spec_of("gemm m=4096 n=4096 k=4096");
  const codegen::TileConfig best = heuristic_configs(spec, "sm_80", false).front();
  const Prediction p = predict_config(a100_model(), spec, best, false);
  EXPECT_GE(p.fraction_of_peak, 0.75) << codegen::to_string(best) << " " << p.tflops;
  EXPECT_LE(p.fraction_of_peak, 0.92) << codegen::to_string(best) << " " << p.tflops;
}

TEST(CostModel, SmallTilesAreL2BoundOnLargeGemms) {
  // 64x128x32 tiles, 4 CTAs per SM, read (64+128)*32*2 B per 2*64*128*32 FLOP: at A100's 2048
  // FLOP/clk per SM that is 48 B/clk, more than the 47 B/clk the L2 gives each of 108 SMs even at
  // its datasheet rate, and about 35 at the rate it sustains. CUTLASS's default tiles for 4096^3
  // (128x256x64 and 256x128x64, 3 stages) need half the bytes per FLOP and stay tensor-bound.
  const std::string big = "gemm m=4096 n=4096 k=4096";
  const Prediction small = predicted(big, {64, 128, 32, 64, 64, 3, 1, 1, 8, 8});
  EXPECT_EQ(small.bound, "l2");
  for (const codegen::TileConfig &cutlass :
       {codegen::TileConfig{128, 256, 64, 64, 64, 3, 1, 1, 8, 8},
        codegen::TileConfig{256, 128, 64, 64, 64, 3, 1, 1, 8, 8}}) {
    const Prediction p = predicted(big, cutlass);
    EXPECT_EQ(p.bound, "tensor") << codegen::to_string(cutlass);
    EXPECT_LT(p.seconds * 1.1, small.seconds) << codegen::to_string(cutlass);
  }
}

TEST(CostModel, MostlyEmptyWaveLoses) {
  // m=n=1024: 128x256 tiles make 32 CTAs (a third of the SMs); 64x128 make 128.
  const codegen::TileConfig big{128, 256, 32, 64, 64, 3, 1, 1, 8, 8};
  const codegen::TileConfig small{64, 128, 32, 32, 64, 3, 1, 1, 8, 8};
  EXPECT_LT(predicted("gemm m=1024 n=1024 k=4096", small).seconds,
            predicted("gemm m=1024 n=1024 k=4096", big).seconds);
}

TEST(CostModel, OneCtaPerSmLosesToTwo) {
  // Equal tiles and loops; 200 registers x 256 threads fit once per SM, 128 registers twice.
  const OpSpec spec = spec_of("gemm m=4096 n=4096 k=4096");
  const codegen::TileConfig c{128, 128, 32, 64, 32, 3, 1, 1, 8, 8};
  CandidateFacts fat, lean;
  fat.registers = 200;
  lean.registers = 128;
  fat.instructions_per_mma = lean.instructions_per_mma = 6;
  const Prediction f = predict_config(a100_model(), spec, c, false, fat);
  const Prediction l = predict_config(a100_model(), spec, c, false, lean);
  EXPECT_EQ(f.ctas_per_sm, 1);
  EXPECT_EQ(l.ctas_per_sm, 2);
  EXPECT_LT(l.seconds, f.seconds);
}

TEST(CostModel, BankConflictsLose) {
  // The same kernel with twice the shared-memory wavefronts per mma (2-way conflicts) becomes
  // shared-bound and slower.
  const OpSpec spec = spec_of("gemm m=4096 n=4096 k=4096");
  const codegen::TileConfig c{128, 128, 32, 64, 64, 3, 1, 1, 8, 8};
  CandidateFacts clean, conflicted;
  clean.registers = conflicted.registers = 224;
  clean.shared_wavefronts_per_mma = 1.5;
  conflicted.shared_wavefronts_per_mma = 3.0;
  const Prediction a = predict_config(a100_model(), spec, c, false, clean);
  const Prediction b = predict_config(a100_model(), spec, c, false, conflicted);
  EXPECT_EQ(b.bound, "shared");
  EXPECT_GT(b.seconds, a.seconds * 1.2);
}

TEST(CostModel, UncoalescedLoadsLoseWhereL2Binds) {
  // m=n=1024 with 64x64 tiles is L2-bound; loads that use half of each sector they move (a
  // narrow, strided access) double that term.
  const OpSpec spec = spec_of("gemm m=1024 n=1024 k=1024");
  const codegen::TileConfig c{64, 64, 32, 32, 64, 3, 1, 1, 8, 8};
  CandidateFacts coalesced, strided;
  coalesced.registers = strided.registers = 128;
  coalesced.global_load_efficiency = 1;
  strided.global_load_efficiency = 0.5;
  const Prediction a = predict_config(a100_model(), spec, c, false, coalesced);
  const Prediction b = predict_config(a100_model(), spec, c, false, strided);
  EXPECT_EQ(a.bound, "l2");
  EXPECT_DOUBLE_EQ(b.l2_cycles, 2 * a.l2_cycles);
  EXPECT_GT(b.seconds, a.seconds * 1.5);
}

TEST(CostModel, SpillingConfigIsPrunedBeforeCompiling) {
  // tf32 with 64x64 warp tiles needs 128 accumulators plus converted fragments: over 255.
  const OpSpec spec = spec_of("gemm m=4096 n=4096 k=4096 a=f32 b=f32 c=f32 acc=f32 math=tf32");
  const codegen::TileConfig c{128, 128, 16, 64, 64, 3, 1, 1, 4, 4};
  const auto why = prune_reasons(spec, c, "sm_80", false, a100_model());
  ASSERT_FALSE(why.empty());
  EXPECT_EQ(why.front().rule, "registers") << why.front().reason;
}

TEST(Heuristic, EveryDtypeGetsAValidConfig) {
  for (const char *text :
       {"gemm m=512 n=512 k=512", "gemm m=512 n=512 k=512 a=bf16 b=bf16 c=bf16 acc=f32",
        "gemm m=512 n=512 k=512 a=f32 b=f32 c=f32 acc=f32 math=tf32",
        "gemm m=512 n=512 k=512 a=f32 b=f32 c=f32 acc=f32 math=f32",
        "gemm m=512 n=512 k=512 a=s8 b=s8:col c=s32 acc=s32",
        "gemm m=512 n=512 k=512 a=f64 b=f64 c=f64 acc=f64", "gemm m=? n=? k=?",
        "gemm m=1..8192 n=4096 k=4096"}) {
    const OpSpec spec = spec_of(text);
    for (const char *arch : {"sm_80", "sm_86", "sm_89", "sm_90"}) {
      const auto configs = heuristic_configs(spec, arch, false);
      ASSERT_FALSE(configs.empty()) << text << " " << arch;
      for (const codegen::TileConfig &c : configs)
        EXPECT_TRUE(codegen::validate_tile_config(spec, c, arch, false).empty())
            << text << " " << arch << " " << codegen::to_string(c);
    }
  }
}

// A 2:4-sparse GEMM's space holds the mma.sp m16n8k32 shapes: K-tiles of whole sparse mmas
// (bk a multiple of 32), both the 32 and 64 of the default k-bytes.
TEST(SparseSpace, CoversTheSparseMmaShapes) {
  const OpSpec spec = spec_of("gemm m=1024 n=1024 k=1024 a=f16 b=f16:col c=f16 acc=f32 sparse=2:4");
  const SearchSpace space = enumerate_space(spec, "sm_80", false, a100_model());
  ASSERT_FALSE(space.legal.empty());
  bool bk32 = false, bk64 = false;
  for (const codegen::TileConfig &c : space.legal) {
    EXPECT_EQ(c.bk % 32, 0) << codegen::to_string(c);
    bk32 = bk32 || c.bk == 32;
    bk64 = bk64 || c.bk == 64;
  }
  EXPECT_TRUE(bk32);
  EXPECT_TRUE(bk64);
  EXPECT_FALSE(heuristic_configs(spec, "sm_80", false).empty());
}

// The cost model's sparse K-tile (cost_model.cpp, ktile_counts; docs/perf_model.md): the shared
// footprint is the compressed A tile (bm x bk/2), B's and the metadata's stage slot (bm x bk/8
// bytes), not a dense A; the shared traffic counts A's ldmatrix of the compressed tile and one
// metadata ld.shared per m-tile and k-step. 128x128x64 w64x32 s3, f16 (8 warps, 4 x 4 mma tiles,
// 2 k-steps: 32 mma per warp and K-tile):
// - footprint 3 x ((128*32 + 128*64) * 2 + 128*64/8) = 76800 B (ptxas reports the same), where a
//   dense A would make it 98304 B;
// - loads per warp: A 4 m16 tiles x 2 ldmatrix.x4 (32 compressed halves), B 2 x 4, metadata 4 x 2:
//   24; wavefronts 4 x 16 + 8 = 72; copies of 24576 B (A 8192, B 16384) in 128-byte wavefronts
//   over 8 warps: 24, plus the metadata's 1024 B: 1 -> (72 + 25) / 32 per mma;
// - instructions: 1 + (24 loads + 8 prmt + 3 x (6 + 1) copies + 20) / 32.
TEST(SparseCostModel, CountsTheCompressedAAndTheMetadata) {
  const OpSpec sparse =
      spec_of("gemm m=1024 n=1024 k=1024 a=f16 b=f16:col c=f16 acc=f32 sparse=2:4");
  const OpSpec dense = spec_of("gemm m=1024 n=1024 k=1024 a=f16 b=f16:col c=f16 acc=f32");
  codegen::TileConfig c{128, 128, 64, 64, 32, 3, 1, 1, 0, 0};
  const KernelFeatures k = kernel_features(sparse, c, false, {});
  EXPECT_EQ(k.shared_bytes, 76800);
  EXPECT_EQ(kernel_features(dense, c, false, {}).shared_bytes, 98304);
  EXPECT_DOUBLE_EQ(k.shared_wavefronts_per_mma, (72.0 + 25.0) / 32);
  EXPECT_DOUBLE_EQ(k.instructions_per_mma, 1 + (24.0 + 8 + 3 * 7 + 20) / 32);
}

// A sparse s4 GEMM's space holds the mma.sp m16n8k128 shapes: K-tiles of whole sparse mmas in
// values (128 and 256 of the default 64- and 128-byte K-tiles; the 32-byte one is too shallow).
TEST(SparseSpace, CoversTheSparse4BitShapes) {
  const OpSpec spec = spec_of("gemm m=1024 n=1024 k=1024 a=s4 b=u4:col c=s32 acc=s32 sparse=2:4");
  const SearchSpace space = enumerate_space(spec, "sm_80", false, a100_model());
  ASSERT_FALSE(space.legal.empty());
  bool bk128 = false, bk256 = false;
  for (const codegen::TileConfig &c : space.legal) {
    EXPECT_EQ(c.bk % 128, 0) << codegen::to_string(c);
    bk128 = bk128 || c.bk == 128;
    bk256 = bk256 || c.bk == 256;
  }
  EXPECT_TRUE(bk128);
  EXPECT_TRUE(bk256);
  EXPECT_FALSE(heuristic_configs(spec, "sm_80", false).empty());
}

// The stem-like layer with c = 7: the space holds both channel strategies, each legal config
// with its own vector widths.
TEST(ConvSpace, HoldsBothChannelStrategies) {
  const OpSpec spec = spec_of("conv2d n=8 h=28 w=28 c=7 k=64 r=3 s=3 pad=1 x=f16 acc=f32");
  SpaceOptions o = heuristic_space_options(spec, false);
  const SearchSpace space = enumerate_space(spec, "sm_80", false, a100_model(), o);
  size_t padded = 0, narrow = 0;
  for (const codegen::TileConfig &c : space.legal) {
    if (c.pad_c == 8) {
      ++padded;
      EXPECT_EQ(c.vec_a, 8) << codegen::to_string(c);
    } else {
      ++narrow;
      EXPECT_EQ(c.pad_c, 0);
      EXPECT_EQ(c.vec_a, 1) << codegen::to_string(c);
    }
  }
  EXPECT_GT(padded, 0u);
  EXPECT_GT(narrow, 0u);
  o.channel_padding = false;
  for (const codegen::TileConfig &c : enumerate_space(spec, "sm_80", false, a100_model(), o).legal)
    EXPECT_EQ(c.pad_c, 0);
}

// The chooser decides per problem: padding c = 3 to 8 multiplies the math by 8/3, which the
// narrow loads' cost does not outweigh; padding c = 7 to 8 costs 8/7 and wins. Each choice beats
// the other strategy's best.
TEST(ConvSpace, TheChooserPicksTheChannelStrategyPerProblem) {
  for (const auto &[c, want_pad] : {std::pair{3, false}, {7, true}}) {
    const OpSpec spec = spec_of("conv2d n=64 h=56 w=56 c=" + std::to_string(c) +
                                " k=64 r=3 s=3 pad=1 x=f16 acc=f32");
    const auto configs = heuristic_configs(spec, "sm_80", false);
    ASSERT_FALSE(configs.empty());
    EXPECT_EQ(configs.front().pad_c != 0, want_pad)
        << c << ": " << codegen::to_string(configs.front());
    const SearchSpace space =
        enumerate_space(spec, "sm_80", false, a100_model(), heuristic_space_options(spec, false));
    const std::vector<RankedConfig> ranked = rank_by_model(spec, space.legal, false, a100_model());
    const auto other = std::find_if(ranked.begin(), ranked.end(), [&](const RankedConfig &r) {
      return (r.config.pad_c != 0) != want_pad;
    });
    ASSERT_NE(other, ranked.end());
    EXPECT_LT(predict_config(a100_model(), spec, configs.front(), false).seconds,
              other->prediction.seconds);
  }
}

// A convolution's DRAM traffic is its tensors', not the implicit matrix's: a 3x3 im2col A is 9x
// x, which L2 serves.
TEST(ConvSpace, DramTrafficIsTheTensorsNotTheIm2colMatrix) {
  const OpSpec spec = spec_of("conv2d n=32 h=56 w=56 c=64 k=64 r=3 s=3 pad=1 x=f16 acc=f32");
  const Problem p = model_problem(spec);
  EXPECT_EQ(p.a_elements, 32.0 * 56 * 56 * 64);
  EXPECT_EQ(p.b_elements, 64.0 * 9 * 64);
  EXPECT_EQ(p.m, 32 * 56 * 56);
  EXPECT_EQ(p.k, 9 * 64);
}

} // namespace
} // namespace tcjit::tuner

namespace tcjit::tuner {
namespace {

// Packed sub-byte inputs: the full space's K-tiles are 32/64/128 bytes, i.e. 64/128/256 s4 values
// and 256/512/1024 b1 values (never below the mma's k); every legal config passes the code
// generator; the model takes the s4 and b1 peaks (A100: 1248 and 4992 TOPS, 2x and 8x s8).
TEST(PackedSpace, KTilesCountValuesAndTheModelUsesTheirPeaks) {
  for (const auto &[text, bks] :
       {std::pair<std::string, std::set<int>>{"gemm m=512 n=512 k=1024 a=s4 b=s4:col c=s32 acc=s32",
                                              {64, 128, 256}},
        {"gemm m=512 n=512 k=1024 a=u4 b=s4:col c=s32 acc=s32", {64, 128, 256}},
        {"gemm m=512 n=512 k=2048 a=b1 b=b1:col c=s32 acc=s32 bop=xor", {256, 512, 1024}}}) {
    const OpSpec spec = spec_of(text);
    SpaceOptions o;
    o.cta_sizes = {64, 128};
    o.warp_sizes = {32, 64};
    o.split_k = {1};
    const SearchSpace space = enumerate_space(spec, "sm_80", false, a100_model(), o);
    ASSERT_FALSE(space.legal.empty()) << text << ": " << space.pruned_summary();
    std::set<int> seen;
    for (const codegen::TileConfig &c : space.legal) {
      seen.insert(c.bk);
      EXPECT_TRUE(codegen::validate_tile_config(spec, c, "sm_80", false).empty())
          << text << " " << codegen::to_string(c);
    }
    EXPECT_EQ(seen, bks) << text;
  }
  const GpuModel &a100 = a100_model();
  const double s8 = a100.peak_flops(MathUnit::s8), s4 = a100.peak_flops(MathUnit::s4),
               b1 = a100.peak_flops(MathUnit::b1);
  EXPECT_DOUBLE_EQ(s4 / s8, 2.0);
  EXPECT_DOUBLE_EQ(b1 / s8, 8.0);
  EXPECT_EQ(math_kind_of(spec_of("gemm m=64 n=64 k=64 a=s4 b=s4:col c=s32 acc=s32"), false),
            MathUnit::s4);
  EXPECT_EQ(math_kind_of(spec_of("gemm m=64 n=64 k=128 a=b1 b=b1:col c=s32 acc=s32"), false),
            MathUnit::b1);
}

} // namespace
} // namespace tcjit::tuner

namespace tcjit::tuner {
namespace {

codegen::TileConfig config_of(const OpSpec &spec, const std::string &text) {
  codegen::TileConfig c = codegen::default_tile_config(spec, "sm_90", false);
  std::string error;
  EXPECT_TRUE(codegen::parse_tile_config(text, c, error)) << text << ": " << error;
  return c;
}

// Each K-tile ends at a barrier that drains its CTA's tensor pipe; only another resident CTA fills
// it. The model has no barrier term: on the H200 at 4096^3 f16 it predicted 128x256 with bk32 and
// bk64 within 0.1%, and bk64 measured 1.24x faster (one CTA per SM). A near-tie with one CTA per
// SM goes to the wider bk, in either order of the space; with more CTAs per SM the barrier key is
// not what decides.
TEST(Ranking, ANearTieWithOneCtaPerSmGoesToFewerKTiles) {
  const OpSpec spec = spec_of("gemm m=4096 n=4096 k=4096 a=f16 b=f16:col c=f16 acc=f32");
  const codegen::TileConfig bk32 = config_of(spec, "128x256x32 w64x64 s3"),
                            bk64 = config_of(spec, "128x256x64 w64x64 s3");
  for (const GpuModel *gpu : {&a100_model(), &h100_model()}) {
    const Prediction p32 = predict_config(*gpu, spec, bk32, false),
                     p64 = predict_config(*gpu, spec, bk64, false);
    ASSERT_EQ(p32.ctas_per_sm, 1) << gpu->name;
    ASSERT_EQ(p64.ctas_per_sm, 1) << gpu->name;
    ASSERT_LT(std::abs(p32.seconds / p64.seconds - 1), 0.005) << gpu->name << ": not a near-tie";
    for (const auto &space : {std::vector{bk32, bk64}, std::vector{bk64, bk32}}) {
      const std::vector<RankedConfig> ranked = rank_by_model(spec, space, false, *gpu);
      ASSERT_EQ(ranked.size(), 2u);
      EXPECT_EQ(ranked.front().config.bk, 64) << gpu->name;
    }
  }
  // two CTAs per SM (128x128 tiles on the H100): the order is the registers' and the rest's, the
  // same whichever comes first in the space
  const codegen::TileConfig small32 = config_of(spec, "128x128x32 w64x64 s3"),
                            small64 = config_of(spec, "128x128x64 w64x64 s3");
  ASSERT_GT(predict_config(h100_model(), spec, small64, false).ctas_per_sm, 1);
  ASSERT_GT(predict_config(h100_model(), spec, small32, false).ctas_per_sm, 1);
  const auto forward = rank_by_model(spec, {small32, small64}, false, h100_model());
  const auto backward = rank_by_model(spec, {small64, small32}, false, h100_model());
  ASSERT_EQ(forward.size(), 2u);
  ASSERT_EQ(backward.size(), 2u);
  EXPECT_EQ(forward.front().config.bk, backward.front().config.bk);
}

// rank_by_model derives the spec's part of the predictions once per channel padding: each ranked
// config's prediction must be the one predict_config gives that config alone, every launchable
// legal config must be ranked once, and the order must follow the model's time in 1% buckets,
// then no split-K first. A c = 3 convolution ranks both channel strategies (pad_c 0 and 8).
TEST(Ranking, EachPredictionIsTheConfigsOwnAndTheOrderFollowsTheModel) {
  SpaceOptions options;
  options.k_bytes = {32, 64};
  options.stages = {2, 3};
  options.split_k = {1, 4};
  for (const char *text : {"gemm m=1024 n=512 k=4096 a=f16 b=f16:col c=f16 acc=f32",
                           "conv2d n=8 h=56 w=56 c=3 k=64 r=7 s=7 pad=3 stride=2 x=f16 acc=f32"}) {
    SCOPED_TRACE(text);
    const OpSpec spec = spec_of(text);
    const SearchSpace space = enumerate_space(spec, "sm_80", false, a100_model(), options);
    const std::vector<RankedConfig> ranked = rank_by_model(spec, space.legal, false, a100_model());
    size_t launchable = 0;
    std::set<int> pads;
    for (const codegen::TileConfig &c : space.legal) {
      launchable += predict_config(a100_model(), spec, c, false).launchable;
      pads.insert(c.pad_c);
    }
    EXPECT_EQ(pads.size(), spec.kind == OpKind::gemm ? 1u : 2u);
    ASSERT_GT(launchable, 100u);
    ASSERT_EQ(ranked.size(), launchable);
    std::set<size_t> indices;
    double best = ranked.front().prediction.seconds;
    for (const RankedConfig &r : ranked) {
      ASSERT_LT(r.index, space.legal.size());
      EXPECT_EQ(r.config, space.legal[r.index]);
      indices.insert(r.index);
      const Prediction alone = predict_config(a100_model(), spec, r.config, false);
      EXPECT_EQ(r.prediction.seconds, alone.seconds) << to_string(r.config);
      EXPECT_EQ(r.prediction.tflops, alone.tflops) << to_string(r.config);
      EXPECT_EQ(r.prediction.ctas_per_sm, alone.ctas_per_sm) << to_string(r.config);
      best = std::min(best, r.prediction.seconds);
    }
    EXPECT_EQ(indices.size(), ranked.size());
    auto bucket = [&](const RankedConfig &r) {
      return std::lround(std::log(r.prediction.seconds / best) / std::log(1.01));
    };
    for (size_t i = 1; i < ranked.size(); ++i) {
      const RankedConfig &a = ranked[i - 1], &b = ranked[i];
      ASSERT_LE(bucket(a), bucket(b)) << i;
      if (bucket(a) == bucket(b)) {
        ASSERT_LE(a.config.split_k, b.config.split_k) << i;
      }
    }
  }
}

} // namespace
} // namespace tcjit::tuner
