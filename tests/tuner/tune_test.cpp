// The tune driver end to end on this GPU-less machine: the cost model fed by ptxas and the
// emulator's probe of one CTA, results and the winner stored in a kernels_db, resumed after a
// stop, skipped when finished; the strategies on a synthetic measurer with a known optimum;
// sharding, budgets and the pruning rules per arch.
#include "compiler/dsl/parser.h"
#include "compiler/spec/problem_key.h"
#include "engine/kernel_cache.h"
#include "engine/kernel_records.h"
#include "runtime/device_factory.h"
#include "support/fnv1a.h"
#include "tests/kernels_db/db_test_util.h"
#include "tuner/chosen_configs.h"
#include "tuner/cost_model.h"
#include "tuner/heuristic.h"
#include "tuner/measure_model.h"
#include "tuner/measure_replay.h"
#include "tuner/ranking.h"
#include "tuner/search_space.h"
#include "tuner/size_range.h"
#include "tuner/tune.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <set>

namespace tcjit::tuner {
namespace {

using kernels_db::testing::TempDir;

TuneTask task_of(const std::string &text, const std::string &arch = "sm_80") {
  const ParseResult parsed = parse_spec(text);
  EXPECT_TRUE(parsed.ok()) << text;
  TuneTask t;
  t.spec = parsed.entries.front().spec;
  t.arch = arch;
  t.key = make_problem_key(t.spec, arch, false);
  return t;
}

constexpr const char *kSmall = "gemm m=256 n=128 k=128 a=f16 b=f16:col c=f16 acc=f32";

TEST(Tune, ModelAndEmulatorFillTheDatabaseAndTheRuntimeUsesTheWinner) {
  TempDir dir;
  auto db = kernels_db::KernelsDb::open(dir.file("k.db"));
  auto emu = device::open_device("emu");
  auto measurer = make_model_measurer(a100_model(), emu.get());
  const TuneTask task = task_of(kSmall);
  TuneOptions options;
  options.measurer = measurer.get();
  options.budget.candidates = 6;
  options.jobs = 2;
  size_t progress_calls = 0;
  options.on_progress = [&](const TuneProgress &p) {
    ++progress_calls;
    EXPECT_LE(p.done, p.planned);
  };
  const TuneResult r = tune_problem(task, options, &db);
  EXPECT_FALSE(r.already_tuned);
  EXPECT_FALSE(r.interrupted);
  EXPECT_EQ(r.outcomes.size(), 6u);
  EXPECT_EQ(progress_calls, 6u);
  EXPECT_GT(r.space_size, 100u);
  ASSERT_TRUE(r.best.has_value());
  // Every outcome is stored, as a prediction, never as a measurement.
  const auto results = db.results(task.key.text);
  EXPECT_EQ(results.size(), 6u);
  for (const kernels_db::ResultRecord &res : results) {
    EXPECT_EQ(res.provenance.kind, kernels_db::ProvenanceKind::predicted);
    EXPECT_EQ(res.tuner_version, tuner_version(*measurer));
    if (res.status == kernels_db::ResultStatus::ok) {
      EXPECT_NE(res.message.find("verified on the emulator"), std::string::npos) << res.message;
    }
  }
  const auto best = db.best_result(task.key.text, "sm_80");
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->timing->median_us, r.best_measurement.timing->median_us); // (ties are possible)
  // The runtime's chooser now takes the tuned config first, and its binary is stored.
  engine::KernelRequest request;
  request.arch = "sm_80";
  std::string note;
  const auto chosen = chosen_configs(task.spec, task.key, request, &db, note);
  ASSERT_FALSE(chosen.empty());
  EXPECT_EQ(chosen.front(), *r.best);
  EXPECT_EQ(note, "tuned (predicted)");
  const engine::ServedKernel src = serve_kernel(task.spec, task.key, request, &db);
  ASSERT_TRUE(src.ok());
  EXPECT_EQ(src.origin, engine::KernelOrigin::database) << src.how;
  EXPECT_EQ(src.kernel.config, *r.best);
  // A second run finds the problem finished and runs nothing.
  const TuneResult again = tune_problem(task, options, &db);
  EXPECT_TRUE(again.already_tuned);
  EXPECT_EQ(again.measured, 0u);
  EXPECT_EQ(again.best, r.best);
}

// A convolution tunes like a GEMM: candidates of both channel strategies built, each verified on
// the emulator against reference_conv (the whole layer at n = 1), the winner stored and taken by
// the runtime's chooser.
TEST(Tune, AConvolutionTunesAndTheRuntimeUsesTheWinner) {
  TempDir dir;
  auto db = kernels_db::KernelsDb::open(dir.file("k.db"));
  auto emu = device::open_device("emu");
  auto measurer = make_model_measurer(a100_model(), emu.get());
  const TuneTask task = task_of("conv2d n=4 h=10 w=10 c=3 k=32 r=3 s=3 pad=1 x=f16 acc=f32");
  TuneOptions options;
  options.measurer = measurer.get();
  options.budget.candidates = 100; // the whole small space below
  options.jobs = 2;
  options.strategy = StrategyKind::exhaustive;
  SpaceOptions space;
  space.cta_sizes = {32, 64};
  space.warp_sizes = {32};
  space.warp_counts = {1, 2, 4};
  space.stages = {3};
  space.split_k = {1};
  space.raster_groups = {1};
  space.k_bytes = {32};
  space.narrower_vectors = false;
  options.space = space;
  const TuneResult r = tune_problem(task, options, &db);
  ASSERT_TRUE(r.best.has_value());
  std::set<int> pads;
  for (const auto &o : r.outcomes) {
    pads.insert(o.config.pad_c);
    EXPECT_EQ(o.measurement.status, kernels_db::ResultStatus::ok)
        << codegen::to_string(o.config) << ": " << o.measurement.message;
  }
  EXPECT_EQ(pads, (std::set<int>{0, 8}));
  for (const kernels_db::ResultRecord &res : db.results(task.key.text)) {
    if (res.status == kernels_db::ResultStatus::ok) {
      EXPECT_NE(res.message.find("verified on the emulator"), std::string::npos) << res.message;
    }
  }
  engine::KernelRequest request;
  request.arch = "sm_80";
  std::string note;
  const auto chosen = chosen_configs(task.spec, task.key, request, &db, note);
  ASSERT_FALSE(chosen.empty());
  EXPECT_EQ(chosen.front(), *r.best);
  const engine::ServedKernel src = serve_kernel(task.spec, task.key, request, &db);
  ASSERT_TRUE(src.ok());
  EXPECT_EQ(src.kernel.config, *r.best);
}

TEST(Tune, AStoppedRunLosesNothingAndTheNextOneContinues) {
  TempDir dir;
  auto db = kernels_db::KernelsDb::open(dir.file("k.db"));
  auto measurer = make_model_measurer(a100_model(), nullptr); // ptxas resources only
  const TuneTask task = task_of(kSmall);
  // The runtime compiled (and stored) its default kernel for the problem before any tune.
  engine::KernelRequest request;
  request.arch = "sm_80";
  ASSERT_TRUE(serve_kernel(task.spec, task.key, request, &db).ok());
  std::atomic<bool> stop{false};
  TuneOptions options;
  options.measurer = measurer.get();
  options.budget.candidates = 5;
  options.jobs = 2;
  options.stop = &stop;
  options.on_progress = [&](const TuneProgress &p) {
    if (p.done == 2)
      stop = true; // as the SIGINT handler of `tcjit tune` does
  };
  const TuneResult first = tune_problem(task, options, &db);
  EXPECT_TRUE(first.interrupted);
  EXPECT_EQ(first.measured, 2u);
  EXPECT_EQ(db.results(task.key.text).size(), 2u);
  // Not finished (no decision stored), whatever binaries the problem has: the runtime does not
  // call it tuned, and the next run continues where this one stopped.
  std::string note;
  chosen_configs(task.spec, task.key, request, &db, note);
  EXPECT_EQ(note, "");
  stop = false;
  options.on_progress = nullptr;
  const TuneResult second = tune_problem(task, options, &db);
  EXPECT_FALSE(second.already_tuned);
  EXPECT_FALSE(second.interrupted);
  EXPECT_EQ(second.reused, 2u);
  EXPECT_EQ(second.measured, 3u);
  EXPECT_EQ(db.results(task.key.text).size(), 5u);
  EXPECT_TRUE(tune_problem(task, options, &db).already_tuned);
  chosen_configs(task.spec, task.key, request, &db, note);
  EXPECT_EQ(note, "tuned (predicted)");
  // --retune with a larger budget goes on from the 5 stored results.
  options.retune = true;
  options.budget.candidates = 7;
  const TuneResult third = tune_problem(task, options, &db);
  EXPECT_FALSE(third.already_tuned);
  EXPECT_EQ(third.reused, 5u);
  EXPECT_EQ(third.measured, 2u);
}

// With `name` set to `value`, tune_problem throws Error naming both before anything is stored; with
// it unset, the same tune measures its 2 candidates, none failed (no stored failure was reused).
template <typename Error>
void expect_refused_before_anything_is_stored(const char *name, const char *value) {
  TempDir dir;
  auto db = kernels_db::KernelsDb::open(dir.file("k.db"));
  auto measurer = make_model_measurer(a100_model(), nullptr);
  const TuneTask task = task_of(kSmall);
  TuneOptions options;
  options.measurer = measurer.get();
  options.budget.candidates = 2;
  setenv(name, value, 1);
  try {
    tune_problem(task, options, &db);
    ADD_FAILURE() << name << "=" << value << " was accepted";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find(std::string(name) + "='" + value + "'"), std::string::npos)
        << e.what();
  }
  unsetenv(name);
  EXPECT_TRUE(db.results(task.key.text).empty());
  const TuneResult r = tune_problem(task, options, &db);
  EXPECT_EQ(r.failed, 0u);
  EXPECT_EQ(r.measured, 2u);
}

// A bad TCJIT_EPILOGUE_UNROLL would fail every candidate's build, and a stored failure is reused by
// the next run: the tune is refused before anything is stored.
TEST(Tune, ABadEpilogueUnrollValueIsRefusedBeforeAnythingIsStored) {
  expect_refused_before_anything_is_stored<std::runtime_error>("TCJIT_EPILOGUE_UNROLL", "yes");
}

// Likewise every candidate's check against the CPU reference on a bad TCJIT_REFERENCE_SIMD.
TEST(Tune, ABadReferenceSimdValueIsRefusedBeforeAnythingIsStored) {
  expect_refused_before_anything_is_stored<std::invalid_argument>("TCJIT_REFERENCE_SIMD", "sse9");
}

// And every build on a bad TCJIT_LLC_OPT.
TEST(Tune, ABadLlcLevelIsRefusedBeforeAnythingIsStored) {
  expect_refused_before_anything_is_stored<std::runtime_error>("TCJIT_LLC_OPT", "fast");
}

TEST(Tune, ABudgetSmallerThanTheBuildThreadsIsKept) {
  auto measurer = make_model_measurer(a100_model(), nullptr);
  TuneOptions options;
  options.measurer = measurer.get();
  options.budget.candidates = 1;
  options.jobs = 4;
  const TuneResult r = tune_problem(task_of(kSmall), options, nullptr);
  ASSERT_TRUE(r.best.has_value());
  EXPECT_EQ(r.measured, 1u);
}

// A measurer with a known answer: the model's static prediction, perturbed by up to +-40% by a
// hash of the config, so the optimum is not the model's first choice.
class SyntheticMeasurer final : public Measurer {
public:
  std::string name() const override { return "synthetic"; }
  bool needs_build() const override { return false; }
  Measurement measure(const TuneTask &task, const codegen::TileConfig &c,
                      const BuiltCandidate *) override {
    ++calls;
    Measurement m;
    m.provenance.kind = kernels_db::ProvenanceKind::measured;
    const double s = seconds(task, c);
    m.timing = kernels_db::Timing{s * 1e6, s * 1e6, s * 1e6, 0};
    return m;
  }
  static double seconds(const TuneTask &task, const codegen::TileConfig &c) {
    const uint64_t h = support::fnv1a64(codegen::to_string(c));
    const double noise = double(h % 1000) / 1000.0 * 0.8 - 0.4;
    return predict_config(a100_model(), task.spec, c, false).seconds * (1 + noise);
  }
  int calls = 0;
};

// Records the configs in the order measured; the default chooser's config (when set) runs in half
// the time the model predicts, every other config at the prediction.
class OrderMeasurer final : public Measurer {
public:
  std::string name() const override { return "order"; }
  bool needs_build() const override { return false; }
  Measurement measure(const TuneTask &task, const codegen::TileConfig &c,
                      const BuiltCandidate *) override {
    order.push_back(c);
    Measurement m;
    m.provenance.kind = kernels_db::ProvenanceKind::measured;
    double s = predict_config(a100_model(), task.spec, c, false).seconds;
    if (fast && c == *fast)
      s /= 2;
    m.timing = kernels_db::Timing{s * 1e6, s * 1e6, s * 1e6, 0};
    return m;
  }
  std::vector<codegen::TileConfig> order;
  std::optional<codegen::TileConfig> fast;
};

// The model's order leaves the default chooser's config (the best of a smaller space) out of its
// top 8 for ResNet-50's stem; the tuner measures it first anyway, so a tuned problem is never
// slower than the untuned default (on an H200 the stem's 8 best-predicted configs ran at half the
// default's speed: bench/results/2026-11-28-gpu-quick.md).
TEST(Tune, TheDefaultChoosersConfigIsMeasuredFirst) {
  for (const char *text : {"conv2d n=32 h=224 w=224 c=3 k=64 r=7 s=7 pad=3 stride=2 x=f16 acc=f32",
                           "gemm m=4096 n=4096 k=4096 a=f16 b=f16:col c=f16 acc=f32"}) {
    const TuneTask task = task_of(text);
    const std::vector<codegen::TileConfig> chosen = heuristic_configs(task.spec, "sm_80", false, 1);
    ASSERT_EQ(chosen.size(), 1u) << text;
    const SearchSpace space = enumerate_space(task.spec, "sm_80", false, a100_model());
    const std::vector<RankedConfig> ranked =
        rank_by_model(task.spec, space.legal, false, a100_model());
    size_t rank = ranked.size();
    for (size_t r = 0; r < ranked.size(); ++r)
      if (ranked[r].config == chosen.front())
        rank = r;
    ASSERT_LT(rank, ranked.size()) << text << ": the default config is in the tuner's space";
    OrderMeasurer measurer;
    measurer.fast = chosen.front();
    TuneOptions options;
    options.measurer = &measurer;
    options.strategy = StrategyKind::model_topk;
    options.budget.candidates = 4;
    const TuneResult r = tune_problem(task, options, nullptr);
    ASSERT_EQ(measurer.order.size(), 4u) << text;
    EXPECT_EQ(measurer.order.front(), chosen.front()) << text;
    ASSERT_TRUE(r.best.has_value()) << text;
    EXPECT_EQ(*r.best, chosen.front()) << text << " (the model ranks it " << rank << ")";
    // Then the model's order, without the default config again.
    for (size_t i = 1; i < measurer.order.size(); ++i)
      EXPECT_NE(measurer.order[i], chosen.front()) << text;
  }
}

// A few hundred configs of the space: the strategy tests run under ASan too.
SpaceOptions small_space() {
  SpaceOptions small;
  small.cta_sizes = {32, 64, 128};
  small.k_bytes = {32, 64};
  small.stages = {2, 3};
  small.split_k = {1, 2, 4};
  small.warp_sizes = {32, 64};
  small.raster_groups = {1};
  small.narrower_vectors = false;
  return small;
}

TEST(Strategies, FindTheKnownOptimumWithinTheirBudget) {
  const TuneTask task = task_of("gemm m=512 n=512 k=2048 a=f16 b=f16:col c=f16 acc=f32");
  const SpaceOptions small = small_space();
  const SearchSpace space = enumerate_space(task.spec, "sm_80", false, a100_model(), small);
  ASSERT_GT(space.legal.size(), 100u);
  ASSERT_LT(space.legal.size(), 2000u);
  double optimum = INFINITY;
  for (const codegen::TileConfig &c : space.legal)
    optimum = std::min(optimum, SyntheticMeasurer::seconds(task, c));
  // Exhaustive over the whole space finds it exactly; seeded random, anneal and model-topk get
  // within 10% with a budget of a fraction of the space.
  for (StrategyKind kind : {StrategyKind::exhaustive, StrategyKind::random, StrategyKind::anneal,
                            StrategyKind::model_topk}) {
    SyntheticMeasurer measurer;
    TuneOptions options;
    options.measurer = &measurer;
    options.space = small;
    options.strategy = kind;
    options.budget.candidates = kind == StrategyKind::exhaustive ? 0 : space.legal.size() / 5;
    const TuneResult r = tune_problem(task, options, nullptr);
    ASSERT_TRUE(r.best.has_value()) << to_string(kind);
    const double found = r.best_measurement.seconds();
    if (kind == StrategyKind::exhaustive) {
      EXPECT_EQ(size_t(measurer.calls), space.legal.size());
      EXPECT_NEAR(found, optimum, optimum * 1e-9);
    } else {
      EXPECT_EQ(size_t(measurer.calls), space.legal.size() / 5) << to_string(kind);
      EXPECT_LE(found, optimum * 1.10) << to_string(kind);
    }
    // The same seed gives the same run.
    SyntheticMeasurer again;
    options.measurer = &again;
    EXPECT_EQ(tune_problem(task, options, nullptr).best, r.best) << to_string(kind);
  }
}

// The same on replay data, as a tuning run would be simulated from another machine's
// measurements: every config of the space "measured" (the synthetic times, stored as measured
// results and exported with `tcjit db export`'s format), then each strategy replays the file.
TEST(Strategies, FindTheKnownOptimumOnReplayData) {
  TempDir dir;
  const TuneTask task = task_of("gemm m=512 n=512 k=2048 a=f16 b=f16:col c=f16 acc=f32");
  const SpaceOptions small = small_space();
  const SearchSpace space = enumerate_space(task.spec, "sm_80", false, a100_model(), small);
  double optimum = INFINITY;
  codegen::TileConfig best_config;
  {
    auto db = kernels_db::KernelsDb::open(dir.file("measured.db"));
    db.put_problem(engine::problem_record(task.spec, task.key, "sm_80"));
    for (const codegen::TileConfig &c : space.legal) {
      const double s = SyntheticMeasurer::seconds(task, c);
      if (s < optimum) {
        optimum = s;
        best_config = c;
      }
      kernels_db::ResultRecord r;
      r.problem_key = task.key.text;
      r.config_json = engine::config_json(c);
      r.arch = "sm_80";
      r.timing = kernels_db::Timing{s * 1e6, s * 1e6, s * 1e6, 0};
      r.provenance.device = "NVIDIA A100-SXM4-80GB";
      r.tuner_version = "another machine";
      db.put_result(r);
    }
    std::ofstream out(dir.file("measured.jsonl"));
    db.export_jsonl(out);
  }
  for (StrategyKind kind : {StrategyKind::exhaustive, StrategyKind::random, StrategyKind::anneal,
                            StrategyKind::model_topk}) {
    auto replay = make_replay_measurer(dir.file("measured.jsonl"));
    TuneOptions options;
    options.measurer = replay.get();
    options.space = small;
    options.strategy = kind;
    options.budget.candidates = kind == StrategyKind::exhaustive ? 0 : space.legal.size() / 5;
    const TuneResult r = tune_problem(task, options, nullptr);
    ASSERT_TRUE(r.best.has_value()) << to_string(kind);
    EXPECT_EQ(r.failed, 0u) << to_string(kind); // every config was in the file
    EXPECT_EQ(r.best_measurement.provenance.kind, kernels_db::ProvenanceKind::measured);
    if (kind == StrategyKind::exhaustive)
      EXPECT_EQ(*r.best, best_config);
    else
      EXPECT_LE(r.best_measurement.seconds(), optimum * 1.10) << to_string(kind);
  }
}

TEST(Strategies, NamesRoundTrip) {
  for (StrategyKind k : {StrategyKind::exhaustive, StrategyKind::random, StrategyKind::anneal,
                         StrategyKind::model_topk})
    EXPECT_EQ(parse_strategy(to_string(k)), k);
  EXPECT_FALSE(parse_strategy("greedy"));
}

TEST(Shards, CoverEveryProblemExactlyOnce) {
  for (size_t count : {0u, 1u, 7u, 100u})
    for (size_t shards : {1u, 2u, 3u, 16u}) {
      std::multiset<size_t> seen;
      for (size_t i = 0; i < shards; ++i)
        for (size_t index : shard_indices(count, i, shards))
          seen.insert(index);
      ASSERT_EQ(seen.size(), count);
      for (size_t i = 0; i < count; ++i)
        EXPECT_EQ(seen.count(i), 1u);
    }
  EXPECT_THROW(shard_indices(10, 3, 3), std::invalid_argument);
  EXPECT_THROW(shard_indices(10, 0, 0), std::invalid_argument);
}

TEST(Budgets, ParseCountsAndTimes) {
  Budget b;
  std::string error;
  ASSERT_TRUE(parse_budget("200", b, error));
  EXPECT_EQ(b.candidates, 200u);
  EXPECT_EQ(b.seconds, 0);
  ASSERT_TRUE(parse_budget("10m", b, error));
  EXPECT_EQ(b.candidates, 0u);
  EXPECT_EQ(b.seconds, 600);
  ASSERT_TRUE(parse_budget("90s", b, error));
  EXPECT_EQ(b.seconds, 90);
  ASSERT_TRUE(parse_budget("2h", b, error));
  EXPECT_EQ(b.seconds, 7200);
  for (const char *bad : {"", "0", "-5", "1.5", "10x", "m", "nan"}) {
    EXPECT_FALSE(parse_budget(bad, b, error)) << bad;
    EXPECT_NE(error.find("budget"), std::string::npos) << error;
  }
}

TEST(Pruning, SharedMemoryPerBlockDependsOnTheArch) {
  // 256x128x32 f16 in 5 stages needs 120 KiB: more than sm_86/sm_89's 99 KiB per block, less
  // than sm_80's 163 KiB and sm_90's 227 KiB.
  const TuneTask task = task_of("gemm m=4096 n=4096 k=4096 a=f16 b=f16:col c=f16 acc=f32");
  const codegen::TileConfig c{256, 128, 32, 64, 64, 5, 1, 1, 8, 8};
  for (const char *arch : {"sm_80", "sm_90"})
    EXPECT_TRUE(prune_reasons(task.spec, c, arch, false, gpu_model_for_arch(arch)).empty()) << arch;
  for (const char *arch : {"sm_86", "sm_89"}) {
    const auto why = prune_reasons(task.spec, c, arch, false, gpu_model_for_arch(arch));
    ASSERT_FALSE(why.empty()) << arch;
    EXPECT_EQ(why.front().rule, "shared_memory") << why.front().reason;
    EXPECT_NE(why.front().reason.find("122880"), std::string::npos) << why.front().reason;
  }
}

TEST(Pruning, EachRuleSaysWhy) {
  const TuneTask task = task_of("gemm m=64 n=4096 k=4096 a=f16 b=f16:col c=f16 acc=f32");
  const GpuModel &gpu = a100_model();
  auto rule = [&](const codegen::TileConfig &c) {
    const auto why = prune_reasons(task.spec, c, "sm_80", false, gpu);
    return why.empty() ? std::string("legal") : why.front().rule + ": " + why.front().reason;
  };
  EXPECT_EQ(rule({64, 128, 32, 32, 64, 3, 1, 1, 8, 8}), "legal");
  EXPECT_EQ(rule({256, 128, 32, 64, 64, 3, 1, 1, 8, 8}).substr(0, 14), "oversized_tile");
  EXPECT_EQ(rule({64, 256, 32, 16, 16, 3, 1, 1, 8, 8}).substr(0, 7), "threads"); // 64 warps
  EXPECT_EQ(rule({64, 128, 32, 64, 128, 3, 1, 1, 8, 8}).substr(0, 9), "registers");
  EXPECT_EQ(rule({64, 128, 32, 32, 64, 3, 64, 1, 8, 8}).substr(0, 7), "codegen"); // split_k > 16
  EXPECT_EQ(rule({64, 128, 32, 32, 64, 3, 1, 8, 8, 8}).substr(0, 12), "raster_group");
  const TuneTask short_k = task_of("gemm m=64 n=64 k=128 a=f16 b=f16:col c=f16 acc=f32");
  const auto why =
      prune_reasons(short_k.spec, {64, 64, 32, 32, 32, 3, 4, 1, 8, 8}, "sm_80", false, gpu);
  ASSERT_FALSE(why.empty());
  EXPECT_EQ(why.front().rule, "split_k");
  EXPECT_NE(why.front().reason.find("fewer than the 3 pipeline stages"), std::string::npos);
  const TuneTask misaligned = task_of("gemm m=64 n=64 k=36 a=f16 b=f16:col c=f16 acc=f32");
  const auto vec =
      prune_reasons(misaligned.spec, {64, 64, 32, 32, 32, 3, 1, 1, 8, 8}, "sm_80", false, gpu);
  ASSERT_FALSE(vec.empty());
  EXPECT_EQ(vec.front().rule, "alignment") << vec.front().reason;
}

} // namespace
} // namespace tcjit::tuner

namespace tcjit::tuner {
namespace {

// The mixed 8-bit forms and f16 accumulation are searched like the others: their spaces have
// legal configs, f16 accumulators count half the registers of f32 ones, and a tune run of each
// verifies its candidates on the emulator and stores a winner.
TEST(SearchSpace, MixedEightBitAndF16AccumulationAreTuned) {
  const GpuModel &gpu = a100_model();
  const codegen::TileConfig big{128, 128, 32, 64, 64, 3, 1, 1, 8, 8};
  const TuneTask f32acc = task_of("gemm m=512 n=512 k=512 a=f16 b=f16:col c=f16 acc=f32");
  const TuneTask f16acc = task_of("gemm m=512 n=512 k=512 a=f16 b=f16:col c=f16 acc=f16");
  // a 64x64 warp tile: 4 x 8 mma tiles, 4 f32 or 2 f16x2 accumulator registers each
  EXPECT_EQ(estimated_registers(f32acc.spec, big, false) -
                estimated_registers(f16acc.spec, big, false),
            4 * 8 * 2);
  TempDir dir;
  auto db = kernels_db::KernelsDb::open(dir.file("k.db"));
  auto emu = device::open_device("emu");
  auto measurer = make_model_measurer(a100_model(), emu.get());
  for (const char *text : {"gemm m=96 n=80 k=128 a=s8 b=u8:col c=s32 acc=s32",
                           "gemm m=96 n=80 k=128 a=u8 b=s8:col c=s8 acc=s32 alpha=0.01",
                           "gemm m=96 n=80 k=128 a=f16 b=f16:col c=f16 acc=f16"}) {
    SCOPED_TRACE(text);
    const TuneTask task = task_of(text);
    const SearchSpace space = enumerate_space(task.spec, "sm_80", false, gpu);
    EXPECT_GT(space.legal.size(), 50u);
    TuneOptions options;
    options.measurer = measurer.get();
    options.budget.candidates = 2;
    options.jobs = 1;
    const TuneResult r = tune_problem(task, options, &db);
    ASSERT_TRUE(r.best.has_value());
    for (const kernels_db::ResultRecord &res : db.results(task.key.text))
      EXPECT_EQ(res.status, kernels_db::ResultStatus::ok) << res.message;
  }
}

// enumerate_space derives each spec's part of the rules once (codegen::spec_facts): every config
// it lists must be judged as prune_reasons and validate_tile_config judge that config alone, with
// the same first reason for a pruned one. The specs cover channel padding (c = 3: two passes of
// the space), a strided dgrad (no split-K), depthwise, packed s4, 2:4 sparsity, a short K and
// symbolic sizes.
TEST(SearchSpace, EveryConfigIsJudgedAsItIsAlone) {
  SpaceOptions options;
  options.cta_sizes = {16, 64, 256};
  options.k_bytes = {32, 128};
  options.warp_sizes = {16, 64, 128};
  options.stages = {2, 6};
  options.split_k = {1, 4, 16};
  const GpuModel &gpu = a100_model();
  for (const char *text :
       {"gemm m=4096 n=4096 k=4096 a=f16 b=f16:col c=f16 acc=f32",
        "gemm m=64 n=40 k=96 a=bf16:col b=bf16 c=bf16 acc=f32 act=gelu bias=col",
        "gemm m=? n=4096 k=1..8192 a=f32 b=f32:col c=f32 acc=f32",
        "gemm m=512 n=512 k=1024 a=s4 b=s4:col c=s32 acc=s32",
        "gemm m=512 n=512 k=512 a=f16 b=f16:col c=f16 acc=f32 sparse=2:4",
        "conv2d n=8 h=56 w=56 c=3 k=64 r=7 s=7 pad=3 stride=2 x=f16 acc=f32",
        "conv2d n=8 h=14 w=14 c=64 k=32 r=3 s=3 pad=1 stride=2 x=f16 acc=f32 pass=dgrad",
        "conv2d n=8 h=28 w=28 c=64 k=64 r=3 s=3 pad=1 groups=64 x=f16 acc=f32"}) {
    SCOPED_TRACE(text);
    const TuneTask task = task_of(text);
    const SearchSpace space = enumerate_space(task.spec, "sm_80", false, gpu, options);
    ASSERT_FALSE(space.legal.empty());
    ASSERT_FALSE(space.pruned.empty());
    for (const codegen::TileConfig &c : space.legal) {
      EXPECT_TRUE(prune_reasons(task.spec, c, "sm_80", false, gpu).empty()) << to_string(c);
      EXPECT_TRUE(codegen::validate_tile_config(task.spec, c, "sm_80", false).empty())
          << to_string(c);
    }
    size_t padded_split_k = 0;
    for (const PrunedConfig &p : space.pruned) {
      const std::vector<PrunedConfig> alone =
          prune_reasons(task.spec, p.config, "sm_80", false, gpu);
      ASSERT_FALSE(alone.empty()) << to_string(p.config);
      EXPECT_EQ(alone.front().rule + ": " + alone.front().reason, p.rule + ": " + p.reason);
      // A padded config's split-K rule counts the K-tiles its kernel runs: K = 7 * 7 * 8 padded
      // channels, not the spec's 7 * 7 * 3 (the cost model predicts that kernel too).
      if (p.config.pad_c != 0 && p.rule == "split_k") {
        ++padded_split_k;
        EXPECT_NE(p.reason.find("of k=392,"), std::string::npos) << p.reason;
      }
    }
    if (task.spec.kind != OpKind::gemm && task.spec.conv.c == 3) {
      EXPECT_GT(padded_split_k, 0u);
    }
  }
}

TEST(SizeRange, RepresentativeSizesAndBucketsCoverTheRangeOnce) {
  const TuneTask ranged = task_of("gemm m=1..1000 n=64 k=64 a=f16 b=f16:col c=f16 acc=f32");
  std::string error;
  const std::vector<TuneTask> sizes = representative_tasks(ranged, error);
  ASSERT_FALSE(sizes.empty()) << error;
  std::vector<int64_t> ms;
  for (const TuneTask &t : sizes)
    ms.push_back(t.spec.gemm.m.value);
  EXPECT_EQ(ms, (std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000}));
  // Winners alternate between two configs: buckets of equal neighbours merge; the union of the
  // buckets is 1..1000 with no overlap.
  std::vector<TuneResult> results(sizes.size());
  const codegen::TileConfig a{32, 32, 32, 16, 16, 3, 1, 1, 8, 8};
  const codegen::TileConfig b{64, 64, 32, 32, 32, 3, 1, 1, 8, 8};
  for (size_t i = 0; i < sizes.size(); ++i) {
    results[i].best = ms[i] <= 32 ? a : b;
    results[i].best_measurement.timing = kernels_db::Timing{1, 1, 1, 0};
  }
  const std::vector<SizeBucket> buckets = dispatch_buckets(ranged, sizes, results);
  ASSERT_EQ(buckets.size(), 2u);
  EXPECT_EQ(buckets[0].config, a);
  EXPECT_EQ(buckets[0].ranges.at("m"), (std::pair<int64_t, int64_t>{1, 45})); // sqrt(32*64)
  EXPECT_EQ(buckets[1].config, b);
  EXPECT_EQ(buckets[1].ranges.at("m"), (std::pair<int64_t, int64_t>{46, 1000}));
  const TuneTask any = task_of("gemm m=? n=64 k=64 a=f16 b=f16:col c=f16 acc=f32");
  EXPECT_TRUE(representative_tasks(any, error).empty());
  EXPECT_NE(error.find("m=? cannot be tuned"), std::string::npos) << error;
}

TEST(SizeRange, ATunedRangeIsServedFromTheDatabaseAlone) {
  TempDir dir;
  const std::string text = "gemm m=1..128 n=64 k=64 a=f16 b=f16:col c=f16 acc=f32";
  {
    auto db = kernels_db::KernelsDb::open(dir.file("k.db"));
    auto measurer = make_model_measurer(a100_model(), nullptr);
    const TuneTask ranged = task_of(text);
    std::string error;
    const std::vector<TuneTask> sizes = representative_tasks(ranged, error);
    ASSERT_EQ(sizes.size(), 8u) << error;
    TuneOptions options;
    options.measurer = measurer.get();
    options.budget.candidates = 2;
    std::vector<TuneResult> results;
    for (const TuneTask &t : sizes)
      results.push_back(tune_problem(t, options, &db));
    const int entries = store_dispatch_table(ranged, sizes, results, db);
    EXPECT_GE(entries, 1);
    const auto table = db.find_dispatch_table(ranged.key.text, "sm_80");
    ASSERT_TRUE(table.has_value());
    EXPECT_EQ(int(table->entries.size()), entries);
    // Every config of the table has its kernel stored for the ranged spec.
    for (const kernels_db::DispatchEntry &e : table->entries)
      EXPECT_EQ(db.find_binary({ranged.key.text, e.config_json, "sm_80", engine::toolkit_version(),
                                engine::compiler_version()})
                    .status,
                kernels_db::LookupStatus::hit);
    // The runtime's chooser takes the table's config first, and finds its kernel.
    engine::KernelRequest request;
    request.arch = "sm_80";
    request.compile_on_miss = false;
    const engine::ServedKernel src = serve_kernel(ranged.spec, ranged.key, request, &db);
    ASSERT_TRUE(src.ok()) << (src.errors.empty() ? "" : src.errors.front());
    EXPECT_EQ(src.origin, engine::KernelOrigin::database);
    EXPECT_NE(src.how.find("tuned (predicted"), std::string::npos) << src.how;
  }
}

} // namespace
} // namespace tcjit::tuner

namespace tcjit::tuner {
namespace {

TEST(SizeRange, AContiguousRangeGetsVectorsEverySizeAllows) {
  // k=1..256 with row-major A: the ranged spec is aligned to 1 element along k, its
  // representative sizes (k=2, 4, ..., 256) to up to 8. The table's kernels load what every k
  // allows, and build.
  TempDir dir;
  auto db = kernels_db::KernelsDb::open(dir.file("k.db"));
  auto measurer = make_model_measurer(a100_model(), nullptr);
  const TuneTask ranged = task_of("gemm m=64 n=64 k=1..256 a=f16 b=f16:col c=f16 acc=f32");
  std::string error;
  const std::vector<TuneTask> sizes = representative_tasks(ranged, error);
  ASSERT_EQ(sizes.size(), 9u) << error;
  TuneOptions options;
  options.measurer = measurer.get();
  options.budget.candidates = 1;
  std::vector<TuneResult> results;
  for (const TuneTask &t : sizes)
    results.push_back(tune_problem(t, options, &db));
  EXPECT_EQ(sizes.back().max_vec_a, 1); // k=256 alone would allow 8
  EXPECT_EQ(results.back().best->vec_a, 1);
  ASSERT_GE(store_dispatch_table(ranged, sizes, results, db), 1);
  for (const SizeBucket &b : dispatch_buckets(ranged, sizes, results)) {
    EXPECT_EQ(b.config.vec_a, 1) << codegen::to_string(b.config);
    EXPECT_EQ(b.config.vec_b, 1) << codegen::to_string(b.config);
  }
}

} // namespace
} // namespace tcjit::tuner
